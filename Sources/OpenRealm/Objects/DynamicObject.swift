import Foundation
import RealmStorage

// Objects read and written by property name, without their model class.
//
// A `DynamicObject` is an ordinary managed object (ObjectBase: realm, binding, key) whose
// binding is to a class read from the file (Schema.swift, `Realm.dynamicBinding`): its
// properties are the table's columns, so it reads files written by any program. Values cross
// the subscript as Realm Swift's dynamic subscript gives them:
//
//   | property                    | value                                                    |
//   |-----------------------------|----------------------------------------------------------|
//   | Int, Bool, Float, Double, String, Data, Date, Decimal128, ObjectId, UUID | that type; nil for null |
//   | to-one link                 | `DynamicObject?`                                         |
//   | AnyRealmValue               | `AnyRealmValue`, a link as `.object(DynamicObject)`      |
//   | List / MutableSet / Map     | live `List<T>`, `MutableSet<T>`, `Map<String, T>`: T the element type (`T?` for optional elements), `DynamicObject` for links (`DynamicObject?` in a map) |
//
// Setting takes the same forms, and what `create` takes (an array for a list or set, a
// `[String: V]` dictionary for a map, an `NSNumber` for a number); a link takes a managed
// object of the target class in the same realm. A value that does not fit fails the write as
// `create`'s do (Realm+WriteFailure.swift): the write throws `invalidArgument` at its end.

/// An object read and written by property name, for code without the model class: every
/// object `realm.dynamicObjects(_:)` and `realm.dynamicObject(ofType:forPrimaryKey:)` return.
///
/// ```swift
/// let dogs = try realm.dynamicObjects("Dog").filter("age > %@", 2)
/// for dog in dogs {
///     let name = dog["name"] as? String
///     let owner = dog["owner"] as? DynamicObject       // a link
///     let toys = dog.dynamicList("toys")               // a List<DynamicObject>
///     print(name ?? "", owner?["name"] ?? "nil", toys.count)
/// }
/// try realm.write { dogs.first?["age"] = 5 }
/// ```
///
/// Its properties are those the file records (`objectSchema`), named by the file's column
/// names. Reading or setting a name the class lacks traps, as in Realm Swift: check names that
/// come from users against `realm.schema` first.
@dynamicMemberLookup
public final class DynamicObject: Object {
    /// The value of property `key` (see the type's discussion for the types); setting it
    /// needs a write transaction.
    public override subscript(key: String) -> Any? {
        get { dynamicValue(property(key)) }
        set { setDynamicValue(newValue, property(key)) }
    }

    /// `object.name` for `object["name"]`.
    public subscript(dynamicMember member: String) -> Any? {
        get { self[member] }
        set { self[member] = newValue }
    }

    /// The class name and the values of the properties that are not collections.
    public override var description: String {
        guard _isManaged, !isInvalidated else { return _isManaged ? "[invalid object]" : "DynamicObject (unmanaged)" }
        let fields = schema.properties.filter { !$0.isList }.map { "\($0.name) = \(dynamicValue($0).map { "\($0)" } ?? "nil")" }
        return "\(schema.className) { \(fields.joined(separator: "; ")) }"
    }

    private func property(_ name: String) -> PropertySchema {
        ensure(_isManaged, "A DynamicObject is read from a realm (realm.dynamicObjects(_:)); this one is unmanaged")
        guard let property = schema[name] else { misuse("Invalid property name '\(name)' for class '\(schema.className)'") }
        return property
    }

    // MARK: Reading

    /// The Swift value of `property`, as the table at the top of this file gives it.
    func dynamicValue(_ property: PropertySchema) -> Any? {
        if property.isList { return collection(property) }
        return Self.swiftValue(read(property.index).value, of: property, in: binding, realm: managedRealm)
    }

    /// A stored value of a property that is not a collection, as the subscript gives it (also
    /// the old and new values of change notifications).
    static func swiftValue(_ value: Value, of property: PropertySchema, in binding: TableBinding, realm: Realm) -> Any? {
        switch value {
        case .null:
            return property.columnType == .mixed ? AnyRealmValue.none : nil
        case .link(let key):
            return binding.linkTargets[property.index].map { realm.dynamicObject(table: $0, key: key) }
        case .typedLink(let table, let key):
            return AnyRealmValue.object(realm.dynamicObject(table: table, key: key))
        default:
            return property.columnType == .mixed ? AnyRealmValue._rlmGet(_StoredValue(value)) : MigrationObject.swiftValue(value)
        }
    }

    /// The live collection of a list, set or map property, typed by its elements.
    private func collection(_ property: PropertySchema) -> Any {
        // Opens the element type: one generic body for every element type.
        func make<T: _Persistable>(_: T.Type) -> Any {
            if property.isMap { return Map<String, T>(owner: self, property: property.index) }
            if property.isSet, let element = T.self as? any (_Persistable & Hashable).Type { return set(element) }
            return List<T>(owner: self, property: property.index)
        }
        func set<T: _Persistable & Hashable>(_: T.Type) -> Any { MutableSet<T>(owner: self, property: property.index) }
        if property.columnType == .link {
            return property.isMap ? make(DynamicObject?.self) : make(DynamicObject.self)
        }
        return make(Self.swiftType(property.columnType, optional: property.isOptional))
    }

    /// The Swift type of a stored value that is not a link.
    static func swiftType(_ type: ColumnType, optional: Bool) -> any _Persistable.Type {
        switch type {
        case .int: optional ? Int?.self : Int.self
        case .bool: optional ? Bool?.self : Bool.self
        case .float: optional ? Float?.self : Float.self
        case .double: optional ? Double?.self : Double.self
        case .string: optional ? String?.self : String.self
        case .binary: optional ? Data?.self : Data.self
        case .timestamp: optional ? Date?.self : Date.self
        case .decimal: optional ? Decimal128?.self : Decimal128.self
        case .objectId: optional ? ObjectId?.self : ObjectId.self
        case .uuid: optional ? UUID?.self : UUID.self
        case .mixed, .link: AnyRealmValue.self
        }
    }

    // MARK: Writing

    private func setDynamicValue(_ newValue: Any?, _ property: PropertySchema) {
        let realm = managedRealm
        ensureValid(in: realm)
        _ = realm.requireWriteTransaction("modify managed objects")
        let stored: _StoredValue
        do {
            stored = try storedValue(newValue, for: property)
        } catch {
            realm.failWrite(error)
            return
        }
        write(property.index, stored, isPrimaryKey: property.isPrimaryKey)
        if let keys = stored.mapKeys, let keysIndex = property.mapKeysIndex {
            writeList(keysIndex, keys.map { _StoredValue(.string($0)) })
        }
    }

    /// `value` in the stored form of `property`, converted as `create` converts values.
    ///
    /// - Throws: `invalidArgument` when it does not fit.
    func storedValue(_ value: Any?, for property: PropertySchema) throws(Realm.Error) -> _StoredValue {
        let what = "\(schema.className).\(property.name)"
        let target = binding.linkTargets.indices.contains(property.index) ? binding.linkTargets[property.index] : nil
        if property.columnType == .link {
            return try linkValue(value, property: property, target: target, what)
        }
        func convert<T: _Persistable>(_: T.Type) throws(Realm.Error) -> _StoredValue {
            do {
                // A link in a mixed value needs no class, only an object of this realm.
                let stored = try ValueConversion.convert(value, to: T.self) { _, _ in DynamicObject() }._rlmSet()
                try checkObjects(in: stored, what)
                return stored
            } catch let error as Realm.Error {
                throw error
            } catch {
                throw Realm.Error(.invalidArgument, "Invalid value '\(ValueConversion.describe(value))' for property '\(what)' "
                                  + "of type \(property.typeName)" + ((error as? ValueMismatch)?.detail.map { ": \($0)" } ?? ""))
            }
        }
        let element = Self.swiftType(property.columnType, optional: property.isOptional)
        func collection<T: _Persistable>(_: T.Type) throws(Realm.Error) -> _StoredValue {
            if property.isMap { return try convert(Map<String, T>.self) }
            if property.isSet, let element = T.self as? any (_Persistable & Hashable).Type { return try set(element) }
            return try convert(List<T>.self)
        }
        func set<T: _Persistable & Hashable>(_: T.Type) throws(Realm.Error) -> _StoredValue { try convert(MutableSet<T>.self) }
        return property.isList ? try collection(element) : try convert(element)
    }

    /// A link or a collection of links: managed objects of `target`'s table in this realm.
    private func linkValue(_ value: Any?, property: PropertySchema, target: TableKey?, _ what: String) throws(Realm.Error) -> _StoredValue {
        func link(_ element: Any?) throws(Realm.Error) -> _StoredValue {
            guard let element = ValueConversion.unwrapped(element) else { return _StoredValue(.null) }
            guard let object = element as? Object, let managed = object._managed, managed.realm === realm, managed.table == target else {
                throw Realm.Error(.invalidArgument, "Invalid value '\(ValueConversion.describe(element))' for property '\(what)': "
                                  + "it links to \(property.objectClassName ?? "?"); give an object of that class read from this realm")
            }
            return _StoredValue(.link(managed.key))
        }
        guard property.isList else { return try link(value) }
        guard let value = ValueConversion.unwrapped(value) else { return _StoredValue(.null, elements: [], mapKeys: property.isMap ? [] : nil) }
        if property.isMap {
            guard let dictionary = value as? [String: Any?] else {
                throw Realm.Error(.invalidArgument, "Invalid value for property '\(what)': a map takes a [String: DynamicObject?] dictionary")
            }
            let entries = dictionary.sorted { $0.key < $1.key }
            var elements: [_StoredValue] = []
            for entry in entries { elements.append(try link(entry.value)) }
            return _StoredValue(.null, elements: elements, mapKeys: entries.map(\.key))
        }
        guard !(value is String), let sequence = value as? any Sequence else {
            throw Realm.Error(.invalidArgument, "Invalid value for property '\(what)': a list or set takes an array of objects")
        }
        var elements: [_StoredValue] = []
        for element in Array(sequence) as [Any] {
            let stored = try link(element)
            guard !stored.value.isNull else { throw Realm.Error(.invalidArgument, "Invalid value for property '\(what)': nil in a list of objects") }
            elements.append(stored)
        }
        return _StoredValue(.null, elements: elements)
    }

    /// Refuses an object in a mixed value (or a collection of them) that this realm does not
    /// manage: there is no model class to add it as.
    private func checkObjects(in stored: _StoredValue, _ what: String) throws(Realm.Error) {
        for value in [stored] + (stored.elements ?? []) {
            guard let object = value.object else { continue }
            guard let managed = object._managed, managed.realm === realm else {
                throw Realm.Error(.invalidArgument, "Invalid value for property '\(what)': an object in an AnyRealmValue must be "
                                  + "one read from this realm")
            }
        }
    }
}

extension Object {
    /// `subscript(key:)` of a model class: the property's Swift value.
    func modelValue(forKey key: String) -> Any? {
        let (property, field) = modelProperty(key)
        if _isManaged { return field.type.swiftValue(read(property.index)) }
        let base = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        let value = field.type.wrapper(at: base + field.offset).value(in: self)
        if let optional = value as? any OptionalMarker { return optional.wrappedValue }
        return value
    }

    /// `subscript(key:)` of a model class: sets the property from a loosely typed value, as
    /// `create` converts it. On a managed object a value that does not fit fails the write
    /// (`invalidArgument`); on an unmanaged one it traps, as `Object(value:)` does.
    func setModelValue(_ value: Any?, forKey key: String) {
        let (property, field) = modelProperty(key)
        let objects: LinkedObjectMaker = { type, value in
            let object = type.init()
            _ = try? Realm.fill(object, from: value, copying: nil) { type, _ in type.init() }
            return object
        }
        let failure: ValueMismatch
        do {
            guard let realm = _realm else {
                let base = UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
                return try field.type.setUnmanaged(value, at: base + field.offset, objects: objects)
            }
            _ = realm.requireWriteTransaction("modify managed objects")
            let stored = try field.type.stored(value, objects: objects)
            write(property.index, stored, isPrimaryKey: property.isPrimaryKey)
            if let keys = stored.mapKeys, let keysIndex = property.mapKeysIndex {
                writeList(keysIndex, keys.map { _StoredValue(.string($0)) })
            }
            return
        } catch {
            failure = error
        }
        let error = Realm.Error(.invalidArgument, "Invalid value '\(ValueConversion.describe(value))' for property "
                                + "'\(Self.className()).\(property.name)' of type \(property.typeName)" + (failure.detail.map { ": \($0)" } ?? ""))
        guard let realm = _realm else { misuse(error.message) }
        realm.failWrite(error)
    }

    /// The property named `key` of a model class and its `@Persisted` field.
    private func modelProperty(_ key: String) -> (PropertySchema, (label: String, offset: Int, type: PersistedProperty.Type)) {
        let schema: ObjectSchema
        do { schema = try ObjectSchema.of(type(of: self)) } catch { misuse("\(error)") }
        guard let property = schema[key], !property.isHidden else { misuse("Invalid property name '\(key)' for class '\(schema.className)'") }
        let fields = ObjectSchema.persistedFields(of: type(of: self))
        // The fields are the visible properties, in the same order (ObjectSchema.discover).
        ensure(property.index < fields.count, "\(schema.className): a @Persisted property is missing from the schema")
        return (property, fields[property.index])
    }
}

extension Object {
    /// The list of objects property `propertyName` holds, its elements as `DynamicObject`s.
    ///
    /// ```swift
    /// for dog in person.dynamicList("dogs") { print(dog["name"] ?? "") }
    /// ```
    ///
    /// Traps when the class has no such property or it is not a list of objects.
    public func dynamicList(_ propertyName: String) -> List<DynamicObject> {
        dynamicCollection(propertyName, "a List of objects")
    }

    /// The set of objects property `propertyName` holds, its elements as `DynamicObject`s.
    ///
    /// Traps when the class has no such property or it is not a set of objects (a file
    /// written before sets were recorded as such holds them as lists: `dynamicList`).
    public func dynamicMutableSet(_ propertyName: String) -> MutableSet<DynamicObject> {
        dynamicCollection(propertyName, "a MutableSet of objects")
    }

    /// The map of objects property `propertyName` holds, its values as `DynamicObject`s.
    ///
    /// Traps when the class has no such property or it is not a map of objects.
    public func dynamicMap<Key: _MapKey>(_ propertyName: String) -> Map<Key, DynamicObject?> {
        dynamicCollection(propertyName, "a Map of objects")
    }

    /// Property `propertyName` read through a `DynamicObject` of the same row (of this one,
    /// for a dynamic object), as a `C`.
    private func dynamicCollection<C>(_ propertyName: String, _ kind: String) -> C {
        ensure(_isManaged, "dynamicList, dynamicMutableSet and dynamicMap read managed objects: add the object to a realm first")
        var dynamic = self as? DynamicObject
        var name = propertyName
        if dynamic == nil {
            // The row as the file records it: properties by their column names.
            let schema: ObjectSchema
            do { schema = try ObjectSchema.of(type(of: self)) } catch { misuse("\(error)") }
            guard let property = schema[propertyName] else { misuse("Invalid property name '\(propertyName)' for class '\(schema.className)'") }
            name = property.columnName
            dynamic = managedRealm.dynamicObject(table: table, key: key)
        }
        guard let collection = dynamic![name] as? C else {
            misuse("Property '\(propertyName)' of '\(dynamic!.schema.className)' is not \(kind)")
        }
        return collection
    }
}
