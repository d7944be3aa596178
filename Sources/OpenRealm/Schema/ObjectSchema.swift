@_spi(Reflection) import Swift
import RealmStorage

// Schema discovery without the Objective-C runtime.
//
// The properties of a model class are its stored fields whose type is a `@Persisted` wrapper
// (field `_name`), in declaration order, superclass fields first, as the compiler recorded them
// in the class's field metadata: name, offset in the instance and type (`_forEachField`). The
// settings of each wrapper (primary key, indexed, origin of a LinkingObjects) are read from one
// instance made with `init()`, through those offsets. The result is cached per class.
//
// Nothing here guesses: not `Mirror`, which a model conforming to `CustomReflectable` replaces
// with whatever it likes (an empty schema, and `add` storing nothing), and not Swift's layout
// rules re-derived by hand. Every address read or written is an offset the runtime gave.
//
// A managed object's wrapper must find its column without a string lookup per access. The
// accessor only knows the wrapper's address, so the first access (once per class and
// property) looks its offset up among the fields and caches offset → column; the wrapper then
// remembers its column for the rest of the object's life.

/// One persisted property of a model class.
///
/// ```swift
/// for property in schema.properties where property.isIndexed {
///     print(property.name, property.typeName)   // "name String"
/// }
/// ```
public struct PropertySchema: @unchecked Sendable, Equatable {
    // @unchecked: `linkTarget` is a metatype, immutable.
    /// The Swift property name.
    public var name: String
    /// The column name in the file (`propertiesMapping()`), usually the same.
    public var columnName: String
    /// The Swift type of the property, as written: `"Int"`, `"List<Dog>"`, `"Map<String, Int>"`.
    public var typeName: String
    /// Whether the property can hold nil (or, for a collection, nil elements).
    public var isOptional: Bool
    /// Whether the property is its class's primary key.
    public var isPrimaryKey: Bool
    /// Whether the property has a search index (primary keys are indexed).
    public var isIndexed: Bool
    /// Position of the property in its class (`Realm` maps it to the table's column).
    var index: Int
    /// How the file stores the property.
    var columnType: ColumnType
    /// For links: the class linked to.
    var linkTarget: Object.Type?
    /// A `List` property.
    var isList = false
    /// A `LinkingObjects` property: computed, no column.
    var isComputed = false
    /// For `LinkingObjects`: the property of `linkTarget` that links here.
    var originProperty: String?
    /// For a `Map`: the index of the hidden property holding its keys.
    var mapKeysIndex: Int?
    /// The keys column of a `Map` (not a Swift property).
    var isHidden = false
    /// For a link of a class read from the file (`ObjectSchema.stored`): the class linked to,
    /// by name, found among `storedSchemas` (`linkTarget` is then `DynamicObject`).
    var storedTargetName: String?
    /// For a property of a class read from the file: the file's classes at that version.
    var storedSchemas: StoredSchemas?

    /// Whether two properties are the same in every respect, their position and column included.
    public static func == (a: PropertySchema, b: PropertySchema) -> Bool {
        a.name == b.name && a.columnName == b.columnName && a.typeName == b.typeName && a.isOptional == b.isOptional
            && a.isPrimaryKey == b.isPrimaryKey && a.isIndexed == b.isIndexed && a.index == b.index && a.columnType == b.columnType
            && a.linkTarget.map(ObjectIdentifier.init) == b.linkTarget.map(ObjectIdentifier.init) && a.isList == b.isList
            && a.isComputed == b.isComputed && a.originProperty == b.originProperty
            && a.mapKeysIndex == b.mapKeysIndex && a.isHidden == b.isHidden
    }

    /// Stored in a column of the table (not computed).
    var isStored: Bool { !isComputed }

    /// The column for this property; links need the target table's key.
    func columnSpec(linkTarget: TableKey? = nil) -> ColumnSpec {
        var spec = ColumnSpec(name: columnName, type: columnType, nullable: isOptional, isList: isList, indexed: isIndexed,
                              unique: isPrimaryKey, linkTarget: linkTarget)
        // Recorded so that the file tells a set from a list to code without this class.
        spec.isSet = isSet
        return spec
    }

    /// The column of a new table: a non-optional integer primary key becomes the object key
    /// (no index; lookups descend the object tree directly).
    func newTableColumnSpec() -> ColumnSpec {
        isPrimaryKey && columnType == .int && !isOptional && !isList ? .objectKey(name: columnName) : columnSpec()
    }
}

/// The persisted shape of a class: of a model class, or of a class as the file records it
/// (`realm.schema`, the dynamic API).
///
/// ```swift
/// let schema = realm.schema["Dog"]!
/// print(schema)   // Dog { _id: ObjectId (primary key), name: String, age: Int }
/// let key = schema.primaryKeyProperty?.name   // "_id"
/// ```
public final class ObjectSchema: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: everything is immutable after init (`indexesByWrapperOffset` is a lock); the
    // wrapper readers are functions and metatypes that are never mutated.
    /// The class name: the Swift class's name unless `className()` is overridden.
    public let className: String
    /// Every property, in declaration order, with the hidden companion columns of `Map`
    /// properties after them: a property's `index` is its position here.
    let allProperties: [PropertySchema]
    /// The model class; `DynamicObject` for a class read from the file.
    let objectType: Object.Type
    /// For a class read from the file (Schema.swift): the file's classes at that version,
    /// where its links find their targets. Nil for a model class.
    let storedSchemas: StoredSchemas?
    /// Whether the schema was read from the file rather than from a model class.
    var isStored: Bool { storedSchemas != nil }
    /// The persisted properties, in declaration order (for a class read from the file, in the
    /// file's column order).
    public var properties: [PropertySchema] { allProperties.filter { !$0.isHidden } }
    /// The property named `propertyName`, if the class has one.
    public subscript(propertyName: String) -> PropertySchema? { allProperties.first { $0.name == propertyName && !$0.isHidden } }
    /// The primary key property, if the class has one.
    public var primaryKeyProperty: PropertySchema? { allProperties.first { $0.isPrimaryKey } }
    /// Instances are owned by a parent object (`EmbeddedObject`).
    public var isEmbedded: Bool { objectType is EmbeddedObject.Type }

    /// The stored link and list-of-link properties whose targets are embedded objects.
    var embeddedLinks: [PropertySchema] {
        allProperties.filter { $0.isStored && $0.columnType == .link && ($0.linkTarget.map { $0 is EmbeddedObject.Type } ?? false) }
    }

    private let indexesByWrapperOffset = Locked([Int: Int]())

    /// Per property, where its wrapper lies in an instance and how to read it, from the field
    /// metadata: lets `add` read an unmanaged object's values directly. (Nil only for a layout
    /// whose wrappers do not match the properties, which the field metadata cannot give; the
    /// callers keep a slower path for it.)
    let wrapperLayout: [(offset: Int, type: PersistedProperty.Type)]?
    /// Per property, where its wrapper lies and a function reading its unmanaged value.
    private let unmanagedReaders: [(offset: Int, read: (UnsafeRawPointer) -> _StoredValue)]?
    /// Per property, where its wrapper's `managedIndex` lies in an instance.
    private let managedIndexOffsets: [Int]?
    /// The readers again when every property is a plain value (no link, list, map, mixed
    /// value or computed property): `add` then copies the values straight into its array.
    private let flatReaders: [(offset: Int, reader: PlainReader)]?

    init(className: String, properties: [PropertySchema], objectType: Object.Type,
         wrapperLayout: [(offset: Int, type: PersistedProperty.Type)]?, storedSchemas: StoredSchemas? = nil) {
        self.className = className
        self.storedSchemas = storedSchemas
        self.allProperties = properties
        self.objectType = objectType
        self.wrapperLayout = wrapperLayout
        self.managedIndexOffsets = wrapperLayout?.map { $0.offset + $0.type.managedIndexOffset }
        self.unmanagedReaders = wrapperLayout?.map { (offset: $0.offset, read: $0.type.unmanagedReader) }
        let flat = properties.allSatisfy {
            $0.isStored && !$0.isHidden && !$0.isList && $0.mapKeysIndex == nil && $0.linkTarget == nil && $0.columnType != .link && $0.columnType != .mixed
        }
        self.flatReaders = flat && wrapperLayout?.count == properties.count
            ? wrapperLayout?.map { (offset: $0.offset, reader: $0.type.plainReader) } : nil
    }

    /// Stores the unmanaged values of `object` into `values` at `columns` (one per property)
    /// when every property is a plain value; false, touching nothing, otherwise.
    func writeFlatValues(of object: Object, columns: [ColumnKey], into values: inout [Value]) -> Bool {
        guard let readers = flatReaders else { return false }
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        // Through the buffers: each subscript of the arrays checked its bounds and each store
        // into `values` its uniqueness (every property of every object added).
        values.withUnsafeMutableBufferPointer { values in
            readers.withUnsafeBufferPointer { readers in
                columns.withUnsafeBufferPointer { columns in
                    for i in readers.indices { values[columns[i].index] = readers[i].reader.value(at: base + readers[i].offset) }
                }
            }
        }
        return true
    }

    /// Points every wrapper of a managed object at its property (when the layout is known),
    /// so that no access needs to look its property up.
    func markManaged(_ object: Object) {
        guard let offsets = managedIndexOffsets else { return }
        let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        // The offsets come from the confirmed layout; each points at an `Int` field.
        for (index, offset) in offsets.enumerated() { (base + offset).storeBytes(of: index, as: Int.self) }
    }

    /// The Swift values of an object's properties, managed or not, in property order (for
    /// copying one object into another).
    func unmanagedValuesOrManaged(of object: Object) -> [Any?] {
        Self.persistedChildren(of: object).map { child -> Any? in child.1.value(in: object) }
    }

    /// The values of an unmanaged object's properties, in property order.
    func unmanagedValues(of object: Object) -> [_StoredValue] {
        guard let readers = unmanagedReaders else {
            return Self.persistedChildren(of: object).map { $0.1.unmanagedValue }
        }
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        return readers.map { $0.read(base + $0.offset) }
    }

    /// The class and its properties, for debugging: `Dog { name: String, age: Int }`.
    public var description: String {
        "\(className) { " + allProperties.filter { !$0.isHidden }.map { "\($0.name): \($0.typeName)\($0.isPrimaryKey ? " (primary key)" : $0.isIndexed ? " (indexed)" : "")" }
            .joined(separator: ", ") + " }"
    }


    func property(named name: String) -> PropertySchema? { allProperties.first { $0.name == name } }

    // MARK: Discovery

    private static let cache = Locked([ObjectIdentifier: ObjectSchema]())

    /// The schema of `type`, discovered once.
    ///
    /// - Throws: `Realm.Error` (`invalidSchema`) naming the rule a model breaks.
    static func of(_ type: Object.Type) throws(Realm.Error) -> ObjectSchema {
        if let cached = cache.withLock({ $0[ObjectIdentifier(type)] }) { return cached }
        let schema = try discover(type)
        return cache.withLock { cache in
            if let raced = cache[ObjectIdentifier(type)] { return raced }
            cache[ObjectIdentifier(type)] = schema
            return schema
        }
    }

    /// The schema of `type`, discovered afresh and not kept (see `Realm.schemaProblems`).
    static func discoveredWithoutCaching(_ type: Object.Type) throws(Realm.Error) -> ObjectSchema {
        if let cached = cache.withLock({ $0[ObjectIdentifier(type)] }) { return cached }
        return try discover(type)
    }

    /// A class whose schema this process has discovered, by its class name.
    static func knownClass(named name: String) -> Object.Type? {
        cache.withLock { $0.values.first { $0.className == name }?.objectType }
    }

    static let maxClassNameBytes = 57
    static let maxPropertyNameBytes = 63

    private static func discover(_ type: Object.Type) throws(Realm.Error) -> ObjectSchema {
        // Its objects take the schema of the class they were read as, from the file.
        guard type != DynamicObject.self else {
            throw Realm.Error(.invalidSchema, "DynamicObject is not a model class: its objects come from realm.dynamicObjects(_:), "
                              + "and what needs a model class (type-safe queries, change notifications, Frozen results) does not take them")
        }
        let className = type.className()
        guard !className.isEmpty, className.utf8.count <= maxClassNameBytes else {
            throw Realm.Error(.invalidSchema, "class name \(className) is \(className.utf8.count) bytes of UTF-8; the limit is \(maxClassNameBytes)")
        }
        let prototype = type.init()
        let mapping = type.propertiesMapping()
        var properties: [PropertySchema] = []
        for (label, property) in persistedChildren(of: prototype) {
            let name = String(label.dropFirst())
            let columnName = mapping[name] ?? name
            guard !columnName.isEmpty, columnName.utf8.count <= maxPropertyNameBytes else {
                throw Realm.Error(.invalidSchema, "\(className).\(name): property names are limited to \(maxPropertyNameBytes) bytes of UTF-8")
            }
            if property.propertyKind.isComputed && property.originProperty == nil {
                throw Realm.Error(.invalidSchema, "\(className).\(name): LinkingObjects needs an origin: @Persisted(originProperty: \"…\")")
            }
            if property.propertyKind.type == .link && !property.isOptional && !property.propertyKind.isList && !property.propertyKind.isComputed {
                throw Realm.Error(.invalidSchema, "\(className).\(name): a to-one link must be optional (declare it as `\(property.propertyKind.name)?`)")
            }
            properties.append(PropertySchema(name: name, columnName: columnName, typeName: property.propertyKind.name,
                                             isOptional: property.isOptional, isPrimaryKey: property.isPrimaryKey,
                                             isIndexed: property.isIndexed, index: properties.count, columnType: property.propertyKind.type,
                                             linkTarget: property.propertyKind.linkTarget, isList: property.propertyKind.isList,
                                             isComputed: property.propertyKind.isComputed, originProperty: property.originProperty))
        }
        // A map keeps its keys in a companion list column, as a hidden property after the
        // Swift ones (so that property indexes still match the wrappers' order).
        let visible = properties.count
        for i in 0..<visible where properties[i].typeName.hasPrefix("Map<") {
            properties[i].mapKeysIndex = properties.count
            properties.append(PropertySchema(name: "__keys:" + properties[i].name, columnName: "__keys:" + properties[i].columnName,
                                             typeName: "Map keys", isOptional: false, isPrimaryKey: false, isIndexed: false,
                                             index: properties.count, columnType: .string, linkTarget: nil, isList: true, isHidden: true))
        }
        let keys = properties.filter(\.isPrimaryKey)
        if type is EmbeddedObject.Type, let key = keys.first {
            throw Realm.Error(.invalidSchema, "\(className).\(key.name): embedded objects cannot have a primary key")
        }
        guard keys.count <= 1 else {
            throw Realm.Error(.invalidSchema, "\(className) declares \(keys.count) primary keys (\(keys.map(\.name).joined(separator: ", "))); a class can have only one")
        }
        guard Set(properties.map(\.columnName)).count == properties.count else {
            throw Realm.Error(.invalidSchema, "\(className) maps two properties to the same name")
        }
        return ObjectSchema(className: className, properties: properties, objectType: type,
                            wrapperLayout: confirmedLayout(of: prototype, persisted: visible))
    }

    // MARK: Wrapper layout

    /// The `@Persisted` fields of `type`'s instances, superclass fields first, from the
    /// runtime's field metadata: each field's name (`_name`), offset and wrapper type.
    static func persistedFields(of type: Object.Type) -> [(label: String, offset: Int, type: PersistedProperty.Type)] {
        var fields: [(label: String, offset: Int, type: PersistedProperty.Type)] = []
        // `.classType` (bit 0) spelled by its raw value: the standard library declares the
        // option as a mutable static, which Swift 6 refuses to read from here.
        let read = _forEachField(of: type, options: _EachFieldOptions(rawValue: 1 << 0)) { name, offset, fieldType, _ in
            if let wrapper = fieldType as? PersistedProperty.Type { fields.append((String(cString: name), offset, wrapper)) }
            return true
        }
        // Only a non-class type is refused, and a model is a class.
        assert(read, "\(type) is not a class")
        return fields
    }

    /// Where each `@Persisted` wrapper of the prototype's class lies, in property order.
    static func confirmedLayout(of prototype: Object, persisted count: Int) -> [(offset: Int, type: PersistedProperty.Type)]? {
        let layout = persistedFields(of: type(of: prototype)).map { (offset: $0.offset, type: $0.type) }
        return layout.count == count ? layout : nil
    }

    /// The `@Persisted` wrappers of `object`, superclass properties first, with their field
    /// names (`_name`).
    static func persistedChildren(of object: Object) -> [(String, PersistedProperty)] {
        let base = UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
        return persistedFields(of: type(of: object)).map { ($0.label, $0.type.wrapper(at: base + $0.offset)) }
    }

    // MARK: Columns of managed wrappers

    /// The index of the property whose wrapper lies at `address` within `object`, from the
    /// wrapper's offset among the class's fields, the same in every instance of the class.
    func propertyIndex(ofWrapperAt address: UnsafeMutableRawPointer, _ wrapperType: PersistedProperty.Type, in object: Object) -> Int {
        let offset = address - UnsafeMutableRawPointer(Unmanaged.passUnretained(object).toOpaque())
        if let index = indexesByWrapperOffset.withLock({ $0[offset] }) { return index }
        let fields = Self.persistedFields(of: type(of: object))
        guard let field = fields.first(where: { $0.offset == offset }), let property = property(named: String(field.label.dropFirst())) else {
            misuse("\(className): a @Persisted property is missing from the schema")
        }
        indexesByWrapperOffset.withLock { $0[offset] = property.index }
        return property.index
    }
}
