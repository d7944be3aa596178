import RealmStorage

/// The classes of a realm file as its catalogue stores them, named in Realm Swift's terms:
/// what `schema` prints, as a table or as model source.
///
/// The catalogue keeps what the file needs, not every detail of the model that wrote it, so
/// some distinctions do not survive (the dynamic object API will read the same catalogue):
/// every integer size reads as `Int`, an `EmbeddedObject` as an `Object`, a `PersistableEnum` as its raw type, and `LinkingObjects` (computed, no column)
/// and `propertiesMapping()` (the column's name is the property's) do not show. Properties come
/// in the file's column order: links after the others (added once every table exists).
struct StoredSchema {
    struct Property: Equatable {
        var name: String
        /// The Swift type as a model declares it: `Int`, `String?`, `List<Dog>`, `Map<String, Int>`.
        var typeName: String
        var isPrimaryKey: Bool
        var isIndexed: Bool
    }

    struct Class: Equatable {
        var name: String
        var properties: [Property]
    }

    /// The classes, by name.
    var classes: [Class]

    /// The prefix of the hidden column holding a `Map` property's keys (ObjectSchema.swift).
    static let mapKeysPrefix = "__keys:"

    init(_ read: ReadTransaction) {
        let names = Dictionary(read.tables.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
        classes = read.tables.map { info in
            let columns = info.columns.filter { !$0.removed }
            let maps = Set(columns.filter { $0.name.hasPrefix(Self.mapKeysPrefix) }.map { String($0.name.dropFirst(Self.mapKeysPrefix.count)) })
            let properties = columns.filter { !$0.name.hasPrefix(Self.mapKeysPrefix) }.map { column in
                Property(name: column.name, typeName: Self.typeName(column, isMap: maps.contains(column.name), tables: names),
                         isPrimaryKey: column.unique || column.isObjectKey, isIndexed: column.indexed && !column.unique)
            }
            return Class(name: info.name, properties: properties)
        }.sorted { $0.name < $1.name }
    }

    /// The Swift type a model declares for `column`.
    static func typeName(_ column: ColumnSpec, isMap: Bool, tables: [TableKey: String]) -> String {
        let element: String
        switch column.type {
        case .int: element = "Int"
        case .bool: element = "Bool"
        case .float: element = "Float"
        case .double: element = "Double"
        case .string: element = "String"
        case .binary: element = "Data"
        case .timestamp: element = "Date"
        case .decimal: element = "Decimal128"
        case .objectId: element = "ObjectId"
        case .uuid: element = "UUID"
        case .mixed: element = "AnyRealmValue"
        case .link: element = column.linkTarget.flatMap { tables[$0] } ?? "Object"
        }
        // A mixed value holds nil itself; a to-one link is always optional; lists and sets of
        // links hold no nil, maps of links do (`Map<String, Dog?>`).
        let optional = column.nullable && column.type != .mixed && !(column.isList && !isMap && column.type == .link)
        let value = optional ? element + "?" : element
        if isMap { return "Map<String, \(value)>" }
        // The catalogue marks a set's column (ColumnSpec.isSet): it printed as a List, and the
        // model `--swift` wrote did not match the file.
        if column.isSet { return "MutableSet<\(value)>" }
        if column.isList { return "List<\(value)>" }
        return value
    }

    /// The classes as a table: one line per class, one per property with its traits.
    var text: String {
        var lines: [String] = []
        for type in classes {
            lines.append(type.name)
            let width = type.properties.map(\.name.count).max() ?? 0
            for property in type.properties {
                let traits = [property.isPrimaryKey ? "primary key" : nil, property.isIndexed ? "indexed" : nil].compactMap { $0 }
                let line = "  " + property.name.padding(width + 2) + property.typeName
                lines.append(traits.isEmpty ? line : line.padding(width + 4 + 24) + traits.joined(separator: ", "))
            }
        }
        return lines.isEmpty ? "(no classes)\n" : lines.joined(separator: "\n") + "\n"
    }

    /// The classes as Realm Swift model source: compiles with `import OpenRealm` (and Foundation
    /// for `Data`, `Date` and `UUID`).
    func swiftSource(file: String) -> String {
        var lines = [
            "// The model classes of \(file), as `openrealm schema --swift` reads them from the file.",
            "// Integer sizes, EmbeddedObject, enums and LinkingObjects are not stored as such: check them.",
            "import Foundation",
            "import OpenRealm",
        ]
        for type in classes {
            lines.append("")
            lines.append("final class \(Self.identifier(type.name)): Object {")
            for property in type.properties {
                let wrapper = property.isPrimaryKey ? "@Persisted(primaryKey: true)" : property.isIndexed ? "@Persisted(indexed: true)" : "@Persisted"
                lines.append("    \(wrapper) var \(Self.identifier(property.name)): \(property.typeName)")
            }
            lines.append("}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// `name` as a Swift identifier: keywords in backticks.
    static func identifier(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "protocol", "public", "static", "struct", "subscript",
        "typealias", "var", "break", "case", "continue", "default", "defer", "do", "else", "fallthrough", "for",
        "guard", "if", "in", "repeat", "return", "switch", "where", "while", "as", "catch", "false", "is", "nil",
        "rethrows", "super", "self", "Self", "throw", "throws", "true", "try", "Any", "Type",
    ]
}
