import Foundation
import RealmStorage

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

/// The migration in progress: enumerate, create, delete and rename while the realm moves from
/// the file's schema to the model classes'.
public final class Migration {
    let transaction: WriteTransaction
    /// Per class name: the table and its columns before the migration, by property name.
    let oldColumns: [String: (table: TableKey, columns: [String: ColumnKey])]
    /// Per class name: the table and its columns in the new schema, by property name.
    var newColumns: [String: (table: TableKey, columns: [String: ColumnKey])]

    init(transaction: WriteTransaction, oldColumns: [String: (table: TableKey, columns: [String: ColumnKey])],
         newColumns: [String: (table: TableKey, columns: [String: ColumnKey])]) {
        self.transaction = transaction
        self.oldColumns = oldColumns
        self.newColumns = newColumns
    }

    /// Calls `block` for every object of a class, with its old and new versions.
    public func enumerateObjects(ofType typeName: String, _ block: MigrationObjectEnumerateBlock) {
        guard let table = (newColumns[typeName] ?? oldColumns[typeName])?.table else { return }
        let keys: [ObjectKey]
        do { keys = try transaction.table(table).keys() } catch { preconditionFailure("\(error)") }
        for key in keys {
            let old = oldColumns[typeName].map { MigrationObject(migration: self, table: $0.table, columns: $0.columns, key: key, writable: false) }
            let new = newColumns[typeName].map { MigrationObject(migration: self, table: $0.table, columns: $0.columns, key: key, writable: true) }
            block(old, new)
        }
    }

    /// Creates an object of the new schema from a dictionary of property values.
    @discardableResult
    public func create(_ typeName: String, value: [String: Any?] = [:]) -> MigrationObject {
        guard let (table, columns) = newColumns[typeName] else {
            preconditionFailure("Object type '\(typeName)' is not in the new schema")
        }
        do {
            let info = try transaction.table(table).info
            var values = info.columns.map { $0.isList || $0.removed ? Value.null : Value.defaultValue(for: $0.type, nullable: $0.nullable) }
            for (name, entry) in value {
                guard let column = columns[name] else { preconditionFailure("Invalid property name '\(name)' for '\(typeName)'") }
                values[column.index] = MigrationObject.stored(entry)
            }
            let key = try transaction.insert(table, values: values)
            return MigrationObject(migration: self, table: table, columns: columns, key: key, writable: true)
        } catch {
            preconditionFailure("Cannot create \(typeName) during the migration: \(error)")
        }
    }

    /// Deletes an object.
    public func delete(_ object: MigrationObject) {
        do { _ = try transaction.delete(object.table, object.key) } catch { preconditionFailure("\(error)") }
    }

    /// Deletes every object of a class, and the class's table when the new schema does not
    /// have it. Returns whether there was such a table.
    @discardableResult
    public func deleteData(forType typeName: String) -> Bool {
        guard let table = (oldColumns[typeName] ?? newColumns[typeName])?.table, transaction.tables.contains(where: { $0.key == table }) else { return false }
        do {
            try transaction.clear(table)
        } catch {
            preconditionFailure("\(error)")
        }
        return true
    }

    /// Moves a property's data to a new name (the new name's column was added by the
    /// migration; the old one is dropped after the block).
    public func renameProperty(onType typeName: String, from oldName: String, to newName: String) {
        guard let old = oldColumns[typeName]?.columns[oldName] else {
            preconditionFailure("Cannot rename property '\(typeName).\(oldName)': it does not exist in the old schema")
        }
        guard let (table, columns) = newColumns[typeName], let new = columns[newName] else {
            preconditionFailure("Cannot rename property to '\(typeName).\(newName)': it does not exist in the new schema")
        }
        do {
            for key in try transaction.table(table).keys() {
                try transaction.set(table, key, new, try transaction.table(table).value(key, old))
            }
        } catch {
            preconditionFailure("Cannot rename \(typeName).\(oldName) to \(newName): \(error)")
        }
    }
}

/// An object during a migration, read and written by property name.
public final class MigrationObject: CustomStringConvertible {
    unowned let migration: Migration
    let table: TableKey
    let columns: [String: ColumnKey]
    let key: ObjectKey
    let writable: Bool

    init(migration: Migration, table: TableKey, columns: [String: ColumnKey], key: ObjectKey, writable: Bool) {
        self.migration = migration
        self.table = table
        self.columns = columns
        self.key = key
        self.writable = writable
    }

    /// A property's value (Int, Bool, Float, Double, String, Data, Date, nil, or a
    /// `MigrationObject` for a link). Setting needs the new object.
    public subscript(name: String) -> Any? {
        get {
            guard let column = columns[name] else { preconditionFailure("Invalid property name '\(name)'") }
            do {
                return Self.swiftValue(try migration.transaction.table(table).value(key, column))
            } catch {
                preconditionFailure("\(error)")
            }
        }
        set {
            precondition(writable, "Cannot modify the old object of a migration: set the property on the new object")
            guard let column = columns[name] else { preconditionFailure("Invalid property name '\(name)'") }
            do {
                try migration.transaction.set(table, key, column, Self.stored(newValue))
            } catch {
                preconditionFailure("Cannot set \(name) during the migration: \(error)")
            }
        }
    }

    public var description: String { "MigrationObject(\(key.value))" }

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
        case .link(let k): return k.value
        case .decimal: return Decimal128._rlmGet(_StoredValue(value))
        case .objectId: return ObjectId._rlmGet(_StoredValue(value))
        case .uuid: return UUID._rlmGet(_StoredValue(value))
        case .typedLink(_, let k): return k.value
        }
    }

    static func stored(_ value: Any?) -> Value {
        guard let value else { return .null }
        if let object = value as? MigrationObject { return .link(object.key) }
        if let persistable = value as? _Persistable { return persistable._rlmSet().value }
        preconditionFailure("Invalid value '\(value)' for a migration property")
    }
}
