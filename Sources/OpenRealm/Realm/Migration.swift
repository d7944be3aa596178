import Foundation
import RealmStorage

// What a migration block sees.
//
// The block runs inside the migration's one write transaction (Realm+Migration.swift), after
// the new schema's columns and tables exist and before the old schema's leftovers are
// dropped. It sees each object twice:
//
//   | object     | reads from                                       | columns          | writes  |
//   |------------|--------------------------------------------------|------------------|---------|
//   | old object | a snapshot of the file as the migration found it | the old schema's | refused |
//   | new object | the write transaction                            | the new schema's | allowed |
//
// Reading old objects from the snapshot (not from the transaction) is what makes a block
// such as "new.first = old.last; new.last = old.first" correct: a value written to a new
// object never shows through an old one, even where both use the same column.
//
// Values cross the block's boundary as plain Swift values (`MigrationObject.subscript`):
//   1. scalars as their Swift type: Int (every integer width), Bool, Float, Double, String,
//      Data, Date, Decimal128, ObjectId, UUID; null as nil;
//   2. an `AnyRealmValue` property as an `AnyRealmValue` (`.none` for null), as the model
//      class declares it; a link held in one reads as the linked `MigrationObject`, because
//      a migration has no model objects to put in `.object(_:)`;
//   3. a to-one link as a `MigrationObject` (or nil): old objects link to old objects, new
//      ones to new ones;
//   4. a `List` or `MutableSet` as an array (`[MigrationObject]` for links, `[Any?]` for
//      values), a `Map` as `[String: Any?]`.
// Writes take the same forms, and any sequence for a list; a `MigrationObject` of the target
// class for a link; Int, Float and Double convert to a Float or Double column.

/// Changes stored data when the model classes change: runs inside the migration's write
/// transaction, after new properties got their columns and before old ones are dropped.
///
/// ```swift
/// var config = Realm.Configuration(schemaVersion: 2, migrationBlock: { migration, oldVersion in
///     if oldVersion < 2 {
///         migration.enumerateObjects(ofType: "Person") { old, new in
///             new?["fullName"] = "\(old?["firstName"] ?? "") \(old?["lastName"] ?? "")"
///         }
///     }
/// })
/// ```
public typealias MigrationBlock = (_ migration: Migration, _ oldSchemaVersion: UInt64) -> Void

/// Block of `Migration.enumerateObjects(ofType:_:)`: each object as it was and as it is now.
public typealias MigrationObjectEnumerateBlock = (_ oldObject: MigrationObject?, _ newObject: MigrationObject?) -> Void

/// One class's table during a migration and its columns by property name.
typealias MigrationColumns = (table: TableKey, columns: [String: ColumnKey])

/// The migration in progress: enumerate, create, delete and rename while the realm moves from
/// the file's schema to the model classes'.
///
/// Misuse (an unknown class or property, a value of the wrong type, writing an old object)
/// traps with a message naming the rule, as Realm's migration API does.
///
/// ```swift
/// let config = Realm.Configuration(schemaVersion: 2, migrationBlock: { migration, oldSchemaVersion in
///     if oldSchemaVersion < 2 {
///         migration.renameProperty(onType: "Dog", from: "years", to: "age")
///         migration.enumerateObjects(ofType: "Person") { old, new in
///             new?["fullName"] = "\(old?["firstName"] as? String ?? "") \(old?["lastName"] as? String ?? "")"
///         }
///     }
/// })
/// let realm = try Realm(configuration: config)
/// ```
public final class Migration {
    let transaction: WriteTransaction
    /// The file as the migration found it: old objects read from here.
    let snapshot: ReadTransaction
    /// Per class name: the table and its columns before the migration, by property name.
    let oldColumns: [String: MigrationColumns]
    /// Per class name: the table and its columns in the new schema, by property name.
    let newColumns: [String: MigrationColumns]
    /// Tables of classes gone from the new schema whose data `deleteData` deleted: removed
    /// after the block, once the columns that linked to them are dropped.
    private(set) var deletedTables: [TableKey] = []

    init(transaction: WriteTransaction, snapshot: ReadTransaction, oldColumns: [String: MigrationColumns],
         newColumns: [String: MigrationColumns]) {
        self.transaction = transaction
        self.snapshot = snapshot
        self.oldColumns = oldColumns
        self.newColumns = newColumns
    }

    /// Calls `block` for every object of a class, with its old and new versions.
    ///
    /// Objects the block deleted (or `deleteData` removed) are skipped, and objects created
    /// during the migration are not enumerated, as in Realm. For a class new in this version,
    /// whose objects can only have been created by the block, each comes with a nil old object.
    /// A class in neither schema enumerates nothing.
    ///
    /// ```swift
    /// migration.enumerateObjects(ofType: "Dog") { old, new in
    ///     new?["weight"] = Double(old?["age"] as? Int ?? 0) * 2.5
    /// }
    /// ```
    public func enumerateObjects(ofType typeName: String, _ block: MigrationObjectEnumerateBlock) {
        let new = newColumns[typeName]
        do {
            guard let old = oldColumns[typeName] else {
                guard let new else { return }
                for key in try transaction.table(new.table).keys() {
                    block(nil, MigrationObject(migration: self, className: typeName, new, key: key, isOld: false))
                }
                return
            }
            for key in try snapshot.table(old.table).keys() {
                // Looked up again for each object: the block may have deleted it meanwhile.
                guard transaction.tables.contains(where: { $0.key == old.table }),
                      try transaction.table(old.table).contains(key) else { continue }
                block(MigrationObject(migration: self, className: typeName, old, key: key, isOld: true),
                      new.map { MigrationObject(migration: self, className: typeName, $0, key: key, isOld: false) })
            }
        } catch {
            misuse("Cannot enumerate \(typeName) during the migration: \(error)")
        }
    }

    /// Creates an object of the new schema from a dictionary of property values (in the forms
    /// `MigrationObject`'s subscript takes); other properties get their type's default.
    ///
    /// ```swift
    /// let owner = migration.create("Owner", value: ["name": "Ann"])
    /// new?["owner"] = owner
    /// ```
    @discardableResult
    public func create(_ typeName: String, value: [String: Any?] = [:]) -> MigrationObject {
        guard let target = newColumns[typeName] else {
            misuse("Object type '\(typeName)' is not in the new schema: list its class in objectTypes")
        }
        do {
            let info = try transaction.table(target.table).info
            var values = info.columns.map { $0.isList || $0.removed ? Value.null : Value.defaultValue(for: $0.type, nullable: $0.nullable) }
            var lists: [Int: [Value]] = [:]
            for (name, entry) in value {
                for (column, stored) in encode(entry, property: name, of: typeName, target, info) {
                    switch stored {
                    case .value(let value): values[column.index] = value
                    case .list(let elements): lists[column.index] = elements
                    }
                }
            }
            let key = try transaction.insert(target.table, values: values, lists: lists)
            return MigrationObject(migration: self, className: typeName, target, key: key, isOld: false)
        } catch {
            misuse("Cannot create \(typeName) during the migration: \(error)")
        }
    }

    /// Deletes an object: the new object of an enumeration, or one `create` returned.
    public func delete(_ object: MigrationObject) {
        ensure(!object.isOld, "Cannot delete the old object of a migration: delete the new object")
        do { _ = try transaction.delete(object.table, object.key) } catch { misuse("\(error)") }
    }

    /// Deletes every object of a class; when the new schema no longer has the class, its table
    /// goes too. Returns whether the file had such a class.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard let table = (oldColumns[typeName] ?? newColumns[typeName])?.table,
              transaction.tables.contains(where: { $0.key == table }) else { return false }
        do {
            try transaction.clear(table)
        } catch {
            misuse("Cannot delete the data of \(typeName): \(error)")
        }
        if newColumns[typeName] == nil && !deletedTables.contains(table) { deletedTables.append(table) }
        return true
    }

    /// Moves a property's values to its new name: `oldName` must be in the old schema,
    /// `newName` in the new one, with the same type (a required property may become
    /// optional, not the reverse).
    ///
    /// ```swift
    /// migration.renameProperty(onType: "Dog", from: "name", to: "title")
    /// ```
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        guard let (table, oldProperties) = oldColumns[typeName], let old = oldProperties[oldName] else {
            misuse("Cannot rename property '\(typeName).\(oldName)': it does not exist in the old schema")
        }
        guard let new = newColumns[typeName]?.columns[newName] else {
            misuse("Cannot rename property to '\(typeName).\(newName)': it does not exist in the new schema")
        }
        do {
            let from = try snapshot.table(table)
            let to = try transaction.table(table)
            let fromSpec = from.info.columns[old.index], toSpec = to.info.columns[new.index]
            let fromTarget = fromSpec.linkTarget.flatMap { snapshot.top.table($0)?.name }
            let toTarget = toSpec.linkTarget.flatMap { target in transaction.tables.first { $0.key == target }?.name }
            guard fromSpec.type == toSpec.type, fromSpec.isList == toSpec.isList, fromTarget == toTarget,
                  toSpec.nullable || !fromSpec.nullable else {
                misuse("Cannot rename property '\(typeName).\(oldName)' to '\(newName)': the type changes from "
                                    + "\(Self.typeName(fromSpec, fromTarget)) to \(Self.typeName(toSpec, toTarget)); "
                                    + "convert the values in enumerateObjects instead")
            }
            var pairs = [(old, new)]
            if let oldKeys = oldProperties[MigrationObject.mapKeysPrefix + oldName],
               let newKeys = newColumns[typeName]?.columns[MigrationObject.mapKeysPrefix + newName] {
                pairs.append((oldKeys, newKeys))
            }
            for key in try from.keys() where try transaction.table(table).contains(key) {
                for (source, destination) in pairs {
                    if fromSpec.isList {
                        try transaction.setList(table, key, destination, try from.list(key, source))
                    } else {
                        try transaction.set(table, key, destination, try from.value(key, source))
                    }
                }
            }
        } catch {
            misuse("Cannot rename \(typeName).\(oldName) to \(newName): \(error)")
        }
    }

    static func typeName(_ spec: ColumnSpec, _ target: String?) -> String {
        let element = target ?? "\(spec.type)"
        return spec.isList ? "list of \(element)" : spec.nullable && spec.type != .link ? "optional \(element)" : element
    }

    // MARK: Values

    /// The object `key` of table `table` as a migration object: old objects link to old ones,
    /// new to new. Nil when the object no longer exists.
    func object(table: TableKey, key: ObjectKey, isOld: Bool) throws(StorageError) -> MigrationObject? {
        let info = isOld ? snapshot.top.table(table) : transaction.tables.first { $0.key == table }
        guard let info, try (isOld ? snapshot.table(table) : transaction.table(table)).contains(key) else { return nil }
        // A class the new schema dropped keeps its old columns in the transaction until the end.
        guard let columns = isOld ? oldColumns[info.name] : newColumns[info.name] ?? oldColumns[info.name] else { return nil }
        return MigrationObject(migration: self, className: info.name, columns, key: key, isOld: isOld)
    }

    /// What a write stores in one column.
    enum Stored {
        case value(Value)
        case list([Value])
    }

    /// The stored form of `value` for property `name` of class `className`: one value, or a
    /// list's elements (a map also fills its keys column).
    func encode(_ value: Any?, property name: String, of className: String, _ target: MigrationColumns,
                _ info: TableInfo) -> [(ColumnKey, Stored)] {
        guard let column = target.columns[name] else {
            misuse("Invalid property name '\(name)' for '\(className)'")
        }
        let spec = info.columns[column.index]
        let value = ValueConversion.unwrapped(value)
        guard spec.isList else { return [(column, .value(stored(value, in: spec, "\(className).\(name)")))] }
        if let keysColumn = target.columns[MigrationObject.mapKeysPrefix + name] {
            guard value != nil else { return [(column, .list([])), (keysColumn, .list([]))] }
            guard let dictionary = value as? [String: Any] else {
                misuse("Invalid value '\(value!)' for \(className).\(name): a Map takes a [String: Value] dictionary")
            }
            let entries = dictionary.sorted { $0.key < $1.key }
            return [(column, .list(entries.map { stored(ValueConversion.unwrapped($0.value), in: spec, "\(className).\(name)") })),
                    (keysColumn, .list(entries.map { .string($0.key) }))]
        }
        guard let value else { return [(column, .list([]))] }
        guard !(value is String), let sequence = value as? any Sequence else {
            misuse("Invalid value '\(value)' for \(className).\(name): a list takes an array")
        }
        func elements<S: Sequence>(_ sequence: S) -> [Any?] { sequence.map { ValueConversion.unwrapped($0) } }
        return [(column, .list(elements(sequence).map { stored($0, in: spec, "\(className).\(name)") }))]
    }

    /// One Swift value as a value (or list element) of a column of `spec`.
    func stored(_ value: Any?, in spec: ColumnSpec, _ property: String) -> Value {
        guard let value else { return .null }
        if let object = value as? MigrationObject {
            if spec.type == .mixed { return .typedLink(object.table, object.key) }
            let targetName = spec.linkTarget.flatMap { target in transaction.tables.first { $0.key == target }?.name } ?? "no class"
            ensure(spec.type == .link && object.table == spec.linkTarget,
                         "Cannot set \(property) to an object of \(object.className): it links to \(targetName)")
            return .link(object.key)
        }
        if value is Object {
            misuse("Cannot set \(property) to a model object during a migration: "
                                + "link to a MigrationObject from migration.create or enumerateObjects")
        }
        if case .object? = value as? AnyRealmValue {
            misuse("Cannot set \(property) to AnyRealmValue.object during a migration: assign the MigrationObject itself")
        }
        guard let persistable = value as? _Persistable, !type(of: persistable)._rlmKind.isList,
              type(of: persistable)._rlmKind.linkTarget == nil else {
            misuse("Invalid value '\(value)' for \(property)")
        }
        let converted = persistable._rlmSet().value
        // Numbers widen as Realm's dynamic setters convert them; anything else stays as given
        // and the engine refuses a mismatch.
        switch (spec.type, converted) {
        case (.double, .int(let v)): return .double(Double(v))
        case (.double, .float(let v)): return .double(Double(v))
        case (.float, .int(let v)): return .float(Float(v))
        case (.float, .double(let v)): return .float(Float(v))
        default: return converted
        }
    }
}

/// An object during a migration, read and written by property name.
///
/// ```swift
/// migration.enumerateObjects(ofType: "Dog") { old, new in
///     let owner = old?["owner"] as? MigrationObject          // a link
///     new?["ownerName"] = owner?["name"] as? String ?? ""
///     new?["tags"] = ["good", "loud"]                        // a List<String>
/// }
/// ```
public final class MigrationObject: CustomStringConvertible {
    unowned let migration: Migration
    let className: String
    let table: TableKey
    let columns: [String: ColumnKey]
    let key: ObjectKey
    /// An object as it was before the migration: read from the snapshot, never written.
    let isOld: Bool

    /// The hidden companion column of a `Map` property holding its keys.
    static let mapKeysPrefix = "__keys:"

    init(migration: Migration, className: String, _ columns: MigrationColumns, key: ObjectKey, isOld: Bool) {
        self.migration = migration
        self.className = className
        self.table = columns.table
        self.columns = columns.columns
        self.key = key
        self.isOld = isOld
    }

    /// A property's value: Int, Bool, Float, Double, String, Data, Date, Decimal128, ObjectId,
    /// UUID or nil; an `AnyRealmValue` for an `AnyRealmValue` property; a `MigrationObject`
    /// (or nil) for a link; an array for a `List` or `MutableSet` (`[MigrationObject]` for
    /// links) and `[String: Any?]` for a `Map`. Setting takes the same forms and needs the new
    /// object.
    public subscript(name: String) -> Any? {
        get {
            guard let column = columns[name] else { misuse("Invalid property name '\(name)' for '\(className)'") }
            do {
                let view = try isOld ? migration.snapshot.table(table) : migration.transaction.table(table)
                let spec = view.info.columns[column.index]
                guard spec.isList else { return try value(try view.value(key, column), spec) }
                let elements = try view.list(key, column)
                if spec.type == .link {
                    return try elements.compactMap { element throws(StorageError) in try value(element, spec) as? MigrationObject }
                }
                let values = try elements.map { element throws(StorageError) in try value(element, spec) }
                guard let keysColumn = columns[Self.mapKeysPrefix + name] else { return values }
                let keys = try view.list(key, keysColumn).map { key -> String in if case .string(let s) = key { s } else { "" } }
                return Dictionary(zip(keys, values), uniquingKeysWith: { _, last in last })
            } catch {
                misuse("Cannot read \(className).\(name) during the migration: \(error)")
            }
        }
        set {
            ensure(!isOld, "Cannot modify the old object of a migration: set the property on the new object")
            do {
                let info = try migration.transaction.table(table).info
                let target = (table: table, columns: columns)
                for (column, stored) in migration.encode(newValue, property: name, of: className, target, info) {
                    switch stored {
                    case .value(let value): try migration.transaction.set(table, key, column, value)
                    case .list(let elements): try migration.transaction.setList(table, key, column, elements)
                    }
                }
            } catch {
                misuse("Cannot set \(className).\(name) during the migration: \(error)")
            }
        }
    }

    /// The class, whether it is the old or the new object, and its key, for debugging.
    public var description: String { "\(className)(\(isOld ? "old" : "new") object \(key.value))" }

    /// One stored value (or list element) of a column of `spec`, in its Swift form.
    private func value(_ value: Value, _ spec: ColumnSpec) throws(StorageError) -> Any? {
        switch value {
        case .link(let target):
            guard let table = spec.linkTarget else { return nil }
            return try migration.object(table: table, key: target, isOld: isOld)
        case .typedLink(let table, let target):
            return try migration.object(table: table, key: target, isOld: isOld)
        default:
            return spec.type == .mixed ? AnyRealmValue._rlmGet(_StoredValue(value)) : Self.swiftValue(value)
        }
    }

    static func swiftValue(_ value: Value) -> Any? {
        switch value {
        case .null: return nil
        case .int(let v): return Int(truncatingIfNeeded: v)
        case .bool(let v): return v
        case .float(let v): return v
        case .double(let v): return v
        case .string(let v): return v
        case .binary(let v): return Data(v)
        case .timestamp: return Date._rlmGet(_StoredValue(value))
        case .decimal: return Decimal128._rlmGet(_StoredValue(value))
        case .objectId: return ObjectId._rlmGet(_StoredValue(value))
        case .uuid: return UUID._rlmGet(_StoredValue(value))
        case .link(let k), .typedLink(_, let k): return k.value
        }
    }
}
