import RealmStorage

// The schema as the file records it, for code without the model classes (the dynamic API,
// `realm.schema`, tools reading any realm file).
//
// The catalogue (RealmStorage/Catalog) names every table and its columns: name, storage type,
// nullability, list, index, primary key (unique or object key), link target and, since the
// set flag, whether a list holds a set. From that alone this file rebuilds each class:
//
//   | column                                   | property                                   |
//   |------------------------------------------|--------------------------------------------|
//   | removed                                  | none                                       |
//   | `__keys:<name>` beside list `<name>`     | the hidden keys of map `<name>`            |
//   | list with the set flag                   | `MutableSet<T>`                            |
//   | list with a `__keys:` companion          | `Map<String, T>`                           |
//   | other list                               | `List<T>`                                  |
//   | link (target table by key)               | `Target?`, `objectClassName` the table name |
//   | anything else                            | its Swift type; `T?` when nullable         |
//
// What the file cannot say: the Swift names of mapped properties (a class read from the file
// has its column names), integer widths and enums (every integer column is `Int`),
// `LinkingObjects` (computed, no column), embedded classes, and sets in files written before
// the set flag (they read as lists).

/// The type of a property, in Realm's names (`RLMPropertyType`).
///
/// ```swift
/// let property = realm.schema["Dog"]!["age"]!
/// property.type == .int   // true
/// ```
public enum PropertyType: Int, Sendable, CustomStringConvertible {
    /// Integers of every width (`Int`, `Int8` … `Int64`) and integer-backed enums.
    case int = 0
    /// `Bool`.
    case bool = 1
    /// `String` and string-backed enums.
    case string = 2
    /// `Data`.
    case data = 3
    /// `Date`.
    case date = 4
    /// `Float`.
    case float = 5
    /// `Double`.
    case double = 6
    /// A link to an object, or a collection of links.
    case object = 7
    /// `LinkingObjects`: computed from the links of another class.
    case linkingObjects = 8
    /// `AnyRealmValue`.
    case any = 9
    /// `ObjectId`.
    case objectId = 10
    /// `Decimal128`.
    case decimal128 = 11
    /// `UUID`.
    case UUID = 12

    /// The Realm name of the type (`"int"`, `"object"`, `"UUID"`).
    public var description: String {
        switch self {
        case .int: "int"
        case .bool: "bool"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .float: "float"
        case .double: "double"
        case .object: "object"
        case .linkingObjects: "linkingObjects"
        case .any: "any"
        case .objectId: "objectId"
        case .decimal128: "decimal128"
        case .UUID: "UUID"
        }
    }

    init(_ type: ColumnType, computed: Bool) {
        switch type {
        case .int: self = .int
        case .bool: self = .bool
        case .float: self = .float
        case .double: self = .double
        case .string: self = .string
        case .binary: self = .data
        case .timestamp: self = .date
        case .link: self = computed ? .linkingObjects : .object
        case .decimal: self = .decimal128
        case .objectId: self = .objectId
        case .uuid: self = .UUID
        case .mixed: self = .any
        }
    }

    /// The Swift type a property of this type holds (links: `linked`).
    static func swiftName(_ type: ColumnType, linked: String?) -> String {
        switch type {
        case .int: "Int"
        case .bool: "Bool"
        case .float: "Float"
        case .double: "Double"
        case .string: "String"
        case .binary: "Data"
        case .timestamp: "Date"
        case .link: linked ?? "Object"
        case .decimal: "Decimal128"
        case .objectId: "ObjectId"
        case .uuid: "UUID"
        case .mixed: "AnyRealmValue"
        }
    }
}

/// Realm Swift's name for a property of a schema.
public typealias Property = PropertySchema

extension PropertySchema {
    /// The type of the property's values (of its elements, for a collection).
    public var type: PropertyType { PropertyType(columnType, computed: isComputed) }
    /// For a link, a collection of links or linking objects: the class of the objects.
    public var objectClassName: String? { storedTargetName ?? linkTarget?.className() }
    /// Whether the property is a `List`.
    public var isArray: Bool { isList && !isSet && !isMap }
    /// Whether the property is a `MutableSet`.
    public var isSet: Bool { isList && typeName.hasPrefix("MutableSet<") }
    /// Whether the property is a `Map`.
    public var isMap: Bool { mapKeysIndex != nil }

    /// The schema of the class a link, list of links or linking objects leads to; nil for
    /// other properties, or a class the file no longer has.
    func targetSchema() throws(Realm.Error) -> ObjectSchema? {
        if let storedTargetName { return storedSchemas?.schema(named: storedTargetName) }
        return try linkTarget.map { type throws(Realm.Error) in try ObjectSchema.of(type) }
    }
}

/// The classes of a realm: `realm.schema`.
///
/// It describes the file: one `ObjectSchema` per class the file has, with the properties its
/// columns record, whether or not this program has a model class for it.
///
/// ```swift
/// for objectSchema in realm.schema.objectSchema {
///     print(objectSchema.className, objectSchema.properties.map(\.name))
/// }
/// let dog = realm.schema["Dog"]   // nil when the file has no class Dog
/// ```
public struct Schema: Sendable, CustomStringConvertible {
    /// The classes, in the order the file lists them.
    public let objectSchema: [ObjectSchema]

    /// The class named `className`, if the file has it.
    public subscript(className: String) -> ObjectSchema? { objectSchema.first { $0.className == className } }

    /// Every class, one per line.
    public var description: String { objectSchema.map(\.description).joined(separator: "\n") }
}

/// The classes of one version of a file as its catalogue records them (see the top of this
/// file). Each class's schema is built when asked for: link targets are looked up here by
/// name, and building them anew keeps this free of references back from the schemas.
final class StoredSchemas: Sendable {
    let tables: [TableInfo]

    init(tables: [TableInfo]) { self.tables = tables }

    /// The schema of class `name`, with the table column of each property; nil when the file
    /// has no such class.
    func schemaAndColumns(named name: String) -> (schema: ObjectSchema, columns: [ColumnKey])? {
        guard let info = tables.first(where: { $0.name == name }) else { return nil }
        return build(info)
    }

    func schema(named name: String) -> ObjectSchema? { schemaAndColumns(named: name)?.schema }

    /// Whether `other` records the same classes with the same columns (table roots and key
    /// counters, which every commit changes, aside).
    func hasSameShape(as other: [TableInfo]) -> Bool {
        tables.count == other.count && zip(tables, other).allSatisfy { $0.key == $1.key && $0.name == $1.name && $0.columns == $1.columns }
    }

    private func build(_ info: TableInfo) -> (schema: ObjectSchema, columns: [ColumnKey]) {
        let keysPrefix = MigrationObject.mapKeysPrefix
        let live = info.columns.indices.filter { !info.columns[$0].removed }
        let names = Set(live.map { info.columns[$0].name })
        var properties: [PropertySchema] = []
        var columns: [ColumnKey] = []
        for c in live where !info.columns[c].name.hasPrefix(keysPrefix) {
            let spec = info.columns[c]
            let target = spec.linkTarget.flatMap { key in tables.first { $0.key == key }?.name }
            let isMap = spec.isList && names.contains(keysPrefix + spec.name)
            // Links and mixed values are nullable in every file; only a to-one link reads as
            // optional, as the model class must declare it.
            let optional = spec.type == .mixed ? false : spec.nullable
            let element = PropertyType.swiftName(spec.type, linked: target) + (optional && spec.isList ? "?" : "")
            let typeName = isMap ? "Map<String, \(element)>" : spec.isSet ? "MutableSet<\(element)>"
                : spec.isList ? "List<\(element)>" : element + (optional ? "?" : "")
            var property = PropertySchema(name: spec.name, columnName: spec.name, typeName: typeName, isOptional: optional,
                                          isPrimaryKey: spec.unique || spec.isObjectKey, isIndexed: spec.indexed || spec.isObjectKey,
                                          index: properties.count, columnType: spec.type,
                                          linkTarget: spec.type == .link ? DynamicObject.self : nil, isList: spec.isList)
            property.storedTargetName = target
            property.storedSchemas = self
            properties.append(property)
            columns.append(ColumnKey(c))
        }
        // A map's keys: hidden properties after the others, as for a model class.
        for i in properties.indices where properties[i].typeName.hasPrefix("Map<") {
            guard let keys = info.column(named: keysPrefix + properties[i].columnName) else { continue }
            properties[i].mapKeysIndex = properties.count
            properties.append(PropertySchema(name: keysPrefix + properties[i].name, columnName: keysPrefix + properties[i].columnName,
                                             typeName: "Map keys", isOptional: false, isPrimaryKey: false, isIndexed: false,
                                             index: properties.count, columnType: .string, linkTarget: nil, isList: true, isHidden: true))
            columns.append(keys)
        }
        return (ObjectSchema(className: info.name, properties: properties, objectType: DynamicObject.self, wrapperLayout: nil,
                             storedSchemas: self), columns)
    }
}
