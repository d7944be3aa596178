import ArgumentParser
import Foundation
import OpenRealm

/// `openrealm export <file> --format json|ndjson|csv [--class C] [--output path]`: a realm's
/// objects as text that `import` reads back.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a realm file's objects as JSON, NDJSON or CSV.",
        discussion: """
            json: {"<Class>": [{...}, ...], ...}, every class (or the one --class names); \
            ndjson: an object a line, its class in "@class"; csv: one class (--class, unless \
            the file has only one), a header row of property names.

            Values: numbers and true/false as JSON has them (a float or double that is not \
            finite as "NaN", "Infinity", "-Infinity"); data in base64; dates in ISO 8601, UTC, \
            to the microsecond; Decimal128, ObjectId and UUID as text; a mixed value as \
            {"type": "int", "value": 3}; null for nil; lists and sets as arrays, maps as \
            objects; a link as the target's primary key, or for a class without one its \
            object key, which each object of such a class carries as "@key". In csv a value \
            that is not a string is its JSON text, null an empty cell and the empty string "".

            The file is opened read-only and nothing is written beside it. A progress bar is \
            drawn on a terminal when writing to --output.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @Argument(help: ArgumentHelp("The realm file.", valueName: "file"))
    var path: String

    @OptionGroup var key: KeyFileOption

    @Option(help: "The output format: json, ndjson or csv.")
    var format: RecordFormat = .json

    @Option(name: .customLong("class"), help: ArgumentHelp("Export only this class.", valueName: "Class"))
    var className: String?

    @Option(help: ArgumentHelp("Write to this file (must not exist) instead of standard output.", valueName: "path"))
    var output: String?

    func run() throws {
        let realm = try DynamicFile.openForReading(path: path, key: key.key())
        let schemas = try className.map { [try DynamicFile.objectSchema($0, in: realm)] }
            ?? realm.schema.objectSchema.sorted { $0.className < $1.className }
        if format == .csv, schemas.count != 1 {
            throw ToolFailure("csv holds one class: name it with --class (the file has: \(DynamicFile.classNames(realm)))", status: ToolFailure.usage)
        }
        var classes: [ClassObjects] = []
        var total = 0
        for schema in schemas {
            let objects = try realm.dynamicObjects(schema.className)
            total += objects.count
            classes.append(ClassObjects(schema: schema, objects: AnySequence(objects)))
        }
        guard let output else {
            try RecordWriter(format: format, output: TextOutput(.standardOutput)).write(classes)
            return
        }
        let handle = try Self.create(output)
        // A partial export is removed: a file at `output` is a whole one.
        var finished = false
        defer {
            try? handle.close()
            if !finished { try? FileManager.default.removeItem(atPath: output) }
        }
        let bar = ProgressBar.counter(label: "exporting", total: total)
        try RecordWriter(format: format, output: TextOutput(handle)).write(classes) { bar?($0, false) }
        bar?(total, true)
        try handle.synchronize()
        finished = true
        print("exported \(total) object\(total == 1 ? "" : "s") of \(schemas.count) class\(schemas.count == 1 ? "" : "es") to \(output)")
    }

    /// The file `path`, created empty for writing.
    ///
    /// - Throws: `ToolFailure` when it exists or cannot be created.
    static func create(_ path: String) throws(ToolFailure) -> FileHandle {
        guard !FileManager.default.fileExists(atPath: path) else {
            throw ToolFailure("\(path) exists: export writes a new file (remove it or choose another --output)")
        }
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else {
            throw ToolFailure("cannot create \(path)")
        }
        return handle
    }
}
