import ArgumentParser
import Foundation
import OpenRealm

/// `openrealm import <file> <input> --format json|ndjson|csv [--class C]`: objects written by
/// `export` (or in its forms) added to a realm file that has their classes.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add objects from JSON, NDJSON or CSV to a realm file.",
        discussion: """
            The input is in the forms export writes (see export --help): json \
            {"<Class>": [{...}, ...]}, ndjson an object a line with its class in "@class" (or \
            --class), csv one class (--class) with a header row of property names. <input> \
            - reads standard input. The file must exist and have the classes (open it once \
            with the app's model classes); a property missing from a record gets its type's \
            default.

            Links name their target by primary key (an object of the input or already in the \
            file), or, for a class without one, by the "@key" of an object of the input. The \
            whole import is one write transaction: a record that does not fit (a value of the \
            wrong type, an unknown class or property, a duplicate primary key, a link to an \
            object that is not there, text that is not JSON or CSV) stops it with its line or \
            record number, and nothing is written. A progress bar is drawn on a terminal.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @Argument(help: ArgumentHelp("The realm file to add to.", valueName: "file"))
    var path: String

    @Argument(help: ArgumentHelp("The file to read (- for standard input).", valueName: "input"))
    var input: String

    @OptionGroup var key: KeyFileOption

    @Option(help: "The input format: json, ndjson or csv.")
    var format: RecordFormat = .json

    @Option(name: .customLong("class"), help: ArgumentHelp("The class of the records (csv; ndjson records without @class); for json, import only this class.", valueName: "Class"))
    var className: String?

    func validate() throws {
        if format == .csv, className == nil { throw ValidationError("a csv import holds one class: name it with --class") }
    }

    func run() throws {
        let text = try Self.read(input)
        let realm = try DynamicFile.openForWriting(path: path, key: key.key())
        if let className { _ = try DynamicFile.objectSchema(className, in: realm) }
        let records = try InputReader.records(text, format: format, className: className, input: input == "-" ? "standard input" : input,
                                              classes: realm.schema)
        let bar = ProgressBar.counter(label: "importing", total: records.count * 2)
        try Importer(realm: realm, records: records).run { done, total in bar?(done, done == total) }
        print("imported \(records.count) object\(records.count == 1 ? "" : "s") into \(path)")
    }

    /// The text of `input` (standard input for -).
    static func read(_ input: String) throws(ToolFailure) -> String {
        let data: Data?
        if input == "-" {
            data = try? FileHandle.standardInput.readToEnd() ?? Data()
        } else {
            data = FileManager.default.contents(atPath: input)
        }
        guard let data else { throw ToolFailure("cannot read \(input)") }
        guard let text = String(data: data, encoding: .utf8) else { throw ToolFailure("\(input) is not UTF-8 text") }
        return text
    }
}
