import ArgumentParser
import DynamicReading
import OpenRealm

/// `openrealm query <file> <Class> '<predicate>'`: the objects of a class that match a
/// predicate, as a table, JSON or CSV.
struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Print the objects of a class that match a predicate.",
        discussion: """
            The predicate is Realm's query language, as in Realm Swift's filter(_:): \
            "age > 3 AND name BEGINSWITH 'A'", "owner.name == 'Ada'", "ANY toys.price > 3", \
            "tags.@count == 0"; none (or an empty one) matches every object. The file is \
            opened read-only with its own classes (no model needed) and nothing is written \
            beside it.

            Values are written as export writes them (see export --help): links as the \
            target's primary key (or its object key for a class without one), dates in \
            ISO 8601, data in base64, mixed values with their type. --format json prints \
            {"<Class>": [...]}, which import reads back; csv prints a header row and a row an \
            object, lists, sets and maps as JSON text in their cell; the table shows each \
            value on one line, cut to \(QueryCommand.cellLimit) characters.

            Exit status: \(ToolFailure.statusSummary) A predicate that does not parse or does \
            not fit the class (the message gives its offset), an unknown class or a sort key \
            path that names no property holding one value are usage errors (\(ToolFailure.usage)).
            """
    )

    static let cellLimit = 40

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case table, json, csv
    }

    enum Order: EnumerableFlag {
        case ascending, descending

        static func help(for value: Self) -> ArgumentHelp? {
            value == .ascending ? "Sort in ascending order." : "Sort in descending order."
        }
    }

    @Argument(help: ArgumentHelp("The realm file.", valueName: "file"))
    var path: String

    @Argument(help: ArgumentHelp("The class whose objects are queried.", valueName: "Class"))
    var className: String

    @Argument(help: ArgumentHelp("The predicate objects must match (all objects without one).", valueName: "predicate"))
    var predicate = ""

    @OptionGroup var key: KeyFileOption

    @Option(help: ArgumentHelp("Sort by this property, or key path through to-one links (owner.name).", valueName: "key"))
    var sort: String?

    @Flag var order: Order = .ascending

    @Option(help: ArgumentHelp("Print at most this many objects.", valueName: "n"))
    var limit: Int?

    @Option(help: "The output: table, json or csv.")
    var format: Format = .table

    func validate() throws {
        if let limit, limit < 1 { throw ValidationError("--limit must be at least 1") }
        if sort == nil, order == .descending { throw ValidationError("--descending needs --sort") }
    }

    func run() throws {
        let realm = try DynamicFile.openForReading(path: path, key: key.key())
        let schema = try DynamicFile.objectSchema(className, in: realm)
        var results = try realm.dynamicObjects(schema.className)
        if !predicate.allSatisfy(\.isWhitespace) {
            do {
                results = try results.filter(predicate, arguments: [])
            } catch {
                throw ToolFailure(error.message, status: error.code == .invalidQuery ? ToolFailure.usage : ToolFailure.failed)
            }
        }
        if let sort {
            if let problem = SortKeyPath.problem(sort, of: schema, in: realm.schema) {
                throw ToolFailure(problem, status: ToolFailure.usage)
            }
            results = results.sorted(byKeyPath: sort, ascending: order == .ascending)
        }
        let objects = AnySequence(results.prefix(limit ?? Int.max))
        let output = TextOutput(.standardOutput)
        switch format {
        case .table: try output.write(Self.table(objects, schema))
        case .json: try RecordWriter(format: .json, output: output).write([ClassObjects(schema: schema, objects: objects)])
        case .csv: try RecordWriter(format: .csv, output: output).write([ClassObjects(schema: schema, objects: objects)])
        }
        try output.flush()
    }

    /// The objects as a table: a header of property names, a line of dashes, a row an object.
    static func table(_ objects: AnySequence<DynamicObject>, _ schema: ObjectSchema) -> String {
        let encoder = RecordEncoder()
        let header = (schema.primaryKeyProperty == nil ? [RecordEncoder.keyField] : []) + schema.properties.map(\.name)
        var rows: [[String]] = []
        for object in objects {
            rows.append(encoder.fields(of: object, schema).map { cell($0.value) })
        }
        var widths = header.map(\.count)
        for row in rows {
            for (column, text) in row.enumerated() { widths[column] = max(widths[column], text.count) }
        }
        func line(_ cells: [String]) -> String {
            zip(cells, widths).map { $0 + String(repeating: " ", count: $1 - $0.count) }.joined(separator: "  ").trimmingTrailingSpaces() + "\n"
        }
        var text = line(header) + line(widths.map { String(repeating: "-", count: $0) })
        for row in rows { text += line(row) }
        text += "(\(rows.count) object\(rows.count == 1 ? "" : "s"))\n"
        return text
    }

    /// A value on one line: strings as they are, others as their JSON text, cut to `cellLimit`.
    static func cell(_ value: JSONValue) -> String {
        var text: String
        switch value {
        case .string(let string): text = string
        default: text = value.text
        }
        text = text.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r").replacingOccurrences(of: "\t", with: "\\t")
        return text.count > cellLimit ? String(text.prefix(cellLimit - 1)) + "…" : text
    }
}

extension String {
    /// This string without the spaces at its end.
    func trimmingTrailingSpaces() -> String {
        var text = self
        while text.last == " " { text.removeLast() }
        return text
    }
}
