// A thin, low-level door into the storage engine for tools and benchmarks.
//
// The engine (`RealmStorage`) shows its API with `package` access only, so nothing outside
// this package can reach it. Benchmarks live in their own package (`Benchmarks/`, so the
// library never depends on a benchmark harness or a peer database) and need to drive the
// engine without the object layer on top. This module re-exports just enough of it: open a
// file, run write transactions, read a snapshot, verify.
//
// This is not the user API. It has no schema of objects, no notifications, no async, and
// it may change with the engine at any time. It is a module and product of its own
// (`_OpenRealmEngine`, underscored as not for users) so that the `OpenRealm` module users
// import does not carry it; reach it with `import _OpenRealmEngine`. Its declarations are
// plainly `public`: the separate module, not an `@_spi` label, keeps them out of the user's
// way. What it needs of `OpenRealm` (a realm's store) is `package`.
//
// Conversions between the public mirror types and the engine's own are plain switches;
// hot paths (`insert`, `readRow(_:into:)`) reuse buffers so a benchmark measures the engine,
// not this wrapper.

import OpenRealm
import RealmStorage

// MARK: - Errors

/// A failure reported by the storage engine, as seen through this facade.
///
/// `code` is the engine's error code (`invalidArgument`, `duplicateKey`, `ioFailure`, …);
/// `message` says what went wrong.
public struct EngineError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The engine's error code, e.g. `"duplicateKey"`.
    public var code: String
    /// What went wrong and how to fix it.
    public var message: String
    /// The file involved, when there is one.
    public var path: String?

    public init(code: String, message: String, path: String? = nil) {
        self.code = code
        self.message = message
        self.path = path
    }

    init(_ error: StorageError) {
        self.init(code: error.code.rawValue, message: error.message, path: error.path)
    }

    public var description: String {
        path.map { "\(code): \(message) (file: \($0))" } ?? "\(code): \(message)"
    }
}

// MARK: - Values and columns

/// One stored value: the public mirror of the engine's `Value`.
public enum EngineValue: Hashable, Sendable {
    case null
    case int(Int64)
    case bool(Bool)
    case float(Float)
    case double(Double)
    case string(String)
    case binary([UInt8])
    case timestamp(seconds: Int64, nanoseconds: Int32)
    /// The object key of the linked object in the column's target table.
    case link(Int64)
    /// A decimal128's BID bits.
    case decimal(low: UInt64, high: UInt64)
    case objectId([UInt8])
    case uuid([UInt8])
    /// A link from a mixed column: table and object key.
    case typedLink(table: UInt32, key: Int64)

    init(_ value: Value) {
        switch value {
        case .null: self = .null
        case .int(let v): self = .int(v)
        case .bool(let v): self = .bool(v)
        case .float(let v): self = .float(v)
        case .double(let v): self = .double(v)
        case .string(let v): self = .string(v)
        case .binary(let v): self = .binary(v)
        case .timestamp(let t): self = .timestamp(seconds: t.seconds, nanoseconds: t.nanoseconds)
        case .link(let k): self = .link(k.value)
        case .decimal(let d): self = .decimal(low: d.a, high: d.b)
        case .objectId(let o): self = .objectId(o.bytes(12))
        case .uuid(let u): self = .uuid(u.bytes(16))
        case .typedLink(let t, let k): self = .typedLink(table: t.value, key: k.value)
        }
    }

    var engineValue: Value {
        switch self {
        case .null: return .null
        case .int(let v): return .int(v)
        case .bool(let v): return .bool(v)
        case .float(let v): return .float(v)
        case .double(let v): return .double(v)
        case .string(let v): return .string(v)
        case .binary(let v): return .binary(v)
        case .timestamp(let s, let n): return .timestamp(Timestamp(seconds: s, nanoseconds: n))
        case .link(let k): return .link(ObjectKey(k))
        case .decimal(let low, let high): return .decimal(Bytes16(a: low, b: high))
        case .objectId(let bytes): return .objectId(Bytes16(bytes))
        case .uuid(let bytes): return .uuid(Bytes16(bytes))
        case .typedLink(let t, let k): return .typedLink(TableKey(t), ObjectKey(k))
        }
    }
}

/// The scalar type of a column.
public enum EngineColumnType: Sendable, Hashable {
    case int, bool, float, double, string, binary, timestamp
    /// A link to an object of the table `target`.
    case link(target: EngineTableID)
}

/// The identity of a table in the file; stable across renames.
public struct EngineTableID: Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    init(_ key: TableKey) { rawValue = key.value }
    var key: TableKey { TableKey(rawValue) }
    public var description: String { "table:\(rawValue)" }
}

/// The description of one column for `EngineWriteTransaction.createTable`.
///
/// Only scalar columns: list columns exist in the engine but are not offered here.
public struct EngineColumn: Hashable, Sendable {
    public var name: String
    public var type: EngineColumnType
    public var nullable: Bool
    /// Maintain a search index on the column.
    public var indexed: Bool
    /// Refuse a second object with the same value (a primary key); implies `indexed`.
    public var unique: Bool

    public init(_ name: String, _ type: EngineColumnType, nullable: Bool = false, indexed: Bool = false, unique: Bool = false) {
        self.name = name
        self.type = type
        self.nullable = nullable
        self.indexed = indexed || unique
        self.unique = unique
    }

    var spec: ColumnSpec {
        let columnType: ColumnType
        var target: TableKey?
        switch type {
        case .int: columnType = .int
        case .bool: columnType = .bool
        case .float: columnType = .float
        case .double: columnType = .double
        case .string: columnType = .string
        case .binary: columnType = .binary
        case .timestamp: columnType = .timestamp
        case .link(let table): columnType = .link; target = table.key
        }
        return ColumnSpec(name: name, type: columnType, nullable: nullable, indexed: indexed, unique: unique, linkTarget: target)
    }
}

/// How commits reach the disk.
public enum EngineDurability: Sendable, Hashable {
    /// One sync per commit, before the commit returns.
    case full
    /// No syncs: a machine crash may lose recent commits.
    case unsafe
    /// Nothing on disk; the store lives while it is open.
    case memOnly
}

/// What `EngineStore.verify()` walked.
public struct EngineVerifyReport: Sendable, Hashable {
    public var version: UInt64
    public var tables: Int
    public var objects: Int
    public var nodes: Int
    /// The bytes of the file the version accounts for (header to its logical end).
    public var logicalSize: UInt64
    public var freeBytes: UInt64
}

// MARK: - Store

/// An open realm file, driven directly through the storage engine.
///
/// A low-level facade for tools and benchmarks, not the user API: no object schema, no
/// notifications. One store is shared by every opener of the same path in this process.
///
/// ```swift
/// import _OpenRealmEngine
///
/// let store = try EngineStore(path: "/tmp/bench.realm", durability: .full)
/// let items = try store.write { tx in
///     try tx.createTable("Item", columns: [EngineColumn("id", .int, unique: true)])
/// }
/// let key = try store.write { tx in try tx.insert(items, values: [.int(7)]) }
/// let values = try store.read().row(table: items, key: key)   // [.int(7)]
/// ```
public final class EngineStore: Sendable {
    let store: Store

    /// Opens (or creates) the realm file at `path`.
    ///
    /// - Throws: `EngineError` with `invalidDatabase`, `fileCorrupted`, `fileNotFound`,
    ///   `permissionDenied` or `incompatibleLockFile` (another process opened it with a
    ///   different lock file layout, or has it open through a lock file deleted or replaced
    ///   since). Other processes may have it open too.
    public init(path: String, durability: EngineDurability = .full) throws(EngineError) {
        let engineDurability: Durability
        switch durability {
        case .full: engineDurability = .full
        case .unsafe: engineDurability = .unsafe
        case .memOnly: engineDurability = .memOnly
        }
        do throws(StorageError) {
            store = try Store.open(path: path, options: StoreOptions(durability: engineDurability))
        } catch {
            throw EngineError(error)
        }
    }

    public var path: String { store.path }

    /// The newest committed version.
    public var latestVersion: UInt64 { store.latestVersion.value }

    /// Runs `body` in the write transaction and commits it; rolls back when `body` throws.
    ///
    /// Waits for the write lane (one writer at a time). Do not let the transaction escape
    /// `body`: after the commit every call on it throws `transactionEnded`.
    ///
    /// - Throws: what `body` throws, or `EngineError` (`permissionDenied`, `outOfDiskSpace`,
    ///   `ioFailure`, …) from beginning or committing.
    @discardableResult
    public func write<Result>(_ body: (EngineWriteTransaction) throws -> Result) throws -> Result {
        let transaction: WriteTransaction
        do throws(StorageError) {
            transaction = try store.beginWrite()
        } catch {
            throw EngineError(error)
        }
        let wrapper = EngineWriteTransaction(transaction)
        let result: Result
        do {
            result = try body(wrapper)
        } catch {
            transaction.rollback()
            throw error
        }
        do throws(StorageError) {
            try transaction.commit()
        } catch {
            throw EngineError(error)
        }
        return result
    }

    /// A snapshot of the newest committed version; it stays readable (and pinned) while
    /// you hold it.
    public func read() -> EngineSnapshot {
        EngineSnapshot(store.beginRead())
    }

    /// Checks the integrity of the newest version and of the free space.
    ///
    /// - Throws: `EngineError` with `fileCorrupted`, naming the first inconsistency.
    @discardableResult
    public func verify() throws(EngineError) -> EngineVerifyReport {
        do throws(StorageError) {
            let report = try store.verify()
            return EngineVerifyReport(version: report.version.value, tables: report.tables, objects: report.objects,
                                      nodes: report.nodes, logicalSize: report.logicalSize, freeBytes: report.freeBytes)
        } catch {
            throw EngineError(error)
        }
    }
}

// MARK: - Write transaction

/// The write transaction inside `EngineStore.write`. Reads see its own changes.
///
/// Not thread-safe: use it from the closure that received it.
public final class EngineWriteTransaction {
    let transaction: WriteTransaction
    /// Reused by `insert` so that converting a row allocates nothing once warmed up: the
    /// engine copies the values it keeps, so the buffer is uniquely ours again on return.
    private var scratch: [Value] = []

    init(_ transaction: WriteTransaction) {
        self.transaction = transaction
    }

    /// Creates an empty table.
    ///
    /// - Throws: `EngineError` with `invalidArgument` (the name exists, a column repeats, a
    ///   link names no table).
    @discardableResult
    public func createTable(_ name: String, columns: [EngineColumn]) throws(EngineError) -> EngineTableID {
        do throws(StorageError) {
            return EngineTableID(try transaction.createTable(name, columns: columns.map(\.spec)))
        } catch {
            throw EngineError(error)
        }
    }

    /// The table named `name`, as this transaction sees it.
    public func table(named name: String) -> EngineTableID? {
        transaction.tables.first { $0.name == name }.map { EngineTableID($0.key) }
    }

    /// Inserts an object with one value per column, in column order. Without `key` the
    /// next unused object key is taken.
    ///
    /// - Returns: the object key.
    /// - Throws: `EngineError` with `invalidArgument` (count or type), `valueTooLarge`,
    ///   `duplicateKey` (the key, or a unique column's value, exists).
    @discardableResult
    public func insert(_ table: EngineTableID, key: Int64? = nil, values: [EngineValue]) throws(EngineError) -> Int64 {
        // Work on a local copy taken out of the property: every access to a class's stored
        // property is checked for exclusivity at run time, which cost more than the
        // conversion itself. Taking it out (and leaving an empty array) keeps it unique.
        var buffer = scratch
        scratch = []
        defer { scratch = buffer }
        if buffer.count == values.count {
            for i in values.indices { buffer[i] = values[i].engineValue }
        } else {
            buffer = values.map(\.engineValue)
        }
        do throws(StorageError) {
            return try transaction.insert(table.key, key: key.map(ObjectKey.init), values: buffer).value
        } catch {
            throw EngineError(error)
        }
    }

    /// Sets column `column` (its position) of object `key`.
    ///
    /// - Throws: `EngineError` with `invalidArgument` (no such object, column or type),
    ///   `valueTooLarge`, `duplicateKey`.
    public func set(_ table: EngineTableID, key: Int64, column: Int, to value: EngineValue) throws(EngineError) {
        do throws(StorageError) {
            try transaction.set(table.key, ObjectKey(key), ColumnKey(column), value.engineValue)
        } catch {
            throw EngineError(error)
        }
    }

    /// Deletes object `key`; returns false when it did not exist.
    ///
    /// - Throws: `EngineError` with `invalidArgument` (no such table).
    @discardableResult
    public func delete(_ table: EngineTableID, key: Int64) throws(EngineError) -> Bool {
        do throws(StorageError) {
            return try transaction.delete(table.key, ObjectKey(key))
        } catch {
            throw EngineError(error)
        }
    }

    /// Number of objects in `table`, this transaction's changes included.
    public func count(_ table: EngineTableID) throws(EngineError) -> Int {
        do throws(StorageError) {
            return try transaction.table(table.key).count()
        } catch {
            throw EngineError(error)
        }
    }

    /// The values of object `key` (list columns read as `.null`), or nil when it does not exist.
    public func row(table: EngineTableID, key: Int64) throws(EngineError) -> [EngineValue]? {
        do throws(StorageError) {
            guard let row = try transaction.table(table.key).row(ObjectKey(key)) else { return nil }
            return try row.values().map(EngineValue.init)
        } catch {
            throw EngineError(error)
        }
    }
}

// MARK: - Snapshot

/// A pinned, immutable version of the file. Safe to share between threads.
public final class EngineSnapshot: Sendable {
    let transaction: ReadTransaction

    init(_ transaction: ReadTransaction) {
        self.transaction = transaction
    }

    public var version: UInt64 { transaction.version.value }

    /// The names of the tables, in creation order.
    public var tableNames: [String] { transaction.tables.map(\.name) }

    /// The table named `name`.
    public func table(named name: String) -> EngineTableID? {
        transaction.tables.first { $0.name == name }.map { EngineTableID($0.key) }
    }

    /// A reader for one table, for loops that read many objects: it resolves the table once.
    ///
    /// - Throws: `EngineError` with `invalidArgument` when the table does not exist.
    public func reader(for table: EngineTableID) throws(EngineError) -> EngineTableReader {
        do throws(StorageError) {
            return EngineTableReader(snapshot: self, view: try transaction.table(table.key))
        } catch {
            throw EngineError(error)
        }
    }

    /// Number of objects in `table`.
    public func count(_ table: EngineTableID) throws(EngineError) -> Int {
        try reader(for: table).count()
    }

    /// The values of object `key`, or nil when it does not exist.
    public func row(table: EngineTableID, key: Int64) throws(EngineError) -> [EngineValue]? {
        try reader(for: table).row(key)
    }

    /// Reads every column of object `key` into `values` (replacing its contents, keeping
    /// its capacity). Returns false, leaving `values` empty, when the object does not exist.
    public func readRow(table: EngineTableID, key: Int64, into values: inout [EngineValue]) throws(EngineError) -> Bool {
        var reader = try reader(for: table)
        return try reader.readRow(key, into: &values)
    }
}

/// Reads objects of one table of a snapshot. Keeps the snapshot alive.
///
/// Hold it in a `var`: `readRow(_:into:)` reuses a buffer stored in the reader.
public struct EngineTableReader {
    // The view reads straight from the snapshot's mapping, which stays valid while the
    // snapshot (held here) pins its version.
    let snapshot: EngineSnapshot
    let view: TableView
    /// The engine reads a whole row into this buffer (starting every column's cache misses
    /// at once), then `readRow` converts it. Reused so that a lookup loop allocates nothing.
    private var scratch: [Value] = []

    init(snapshot: EngineSnapshot, view: TableView) {
        self.snapshot = snapshot
        self.view = view
    }

    public var table: EngineTableID { EngineTableID(view.key) }

    /// Number of objects.
    public func count() throws(EngineError) -> Int {
        do throws(StorageError) {
            return try view.count()
        } catch {
            throw EngineError(error)
        }
    }

    /// The values of object `key` (list columns read as `.null`), or nil when it does not exist.
    public func row(_ key: Int64) throws(EngineError) -> [EngineValue]? {
        var reader = self
        var values: [EngineValue] = []
        return try reader.readRow(key, into: &values) ? values : nil
    }

    /// Reads every column of object `key` into `values`, replacing its contents but keeping
    /// its capacity, so a loop that reuses one array (and this reader) allocates nothing per
    /// object. List columns read as `.null`. Returns false, leaving `values` empty, when
    /// there is no such object.
    public mutating func readRow(_ key: Int64, into values: inout [EngineValue]) throws(EngineError) -> Bool {
        do throws(StorageError) {
            guard let row = try view.row(ObjectKey(key)) else {
                values.removeAll(keepingCapacity: true)
                return false
            }
            try row.readValues(into: &scratch)
            // Overwrite in place when the caller's array already has one slot per column
            // (the steady state of a lookup loop): cheaper than emptying and appending.
            if values.count != scratch.count {
                values.removeAll(keepingCapacity: true)
                values.append(contentsOf: repeatElement(.null, count: scratch.count))
            }
            for c in scratch.indices { values[c] = EngineValue(scratch[c]) }
            return true
        } catch {
            values.removeAll(keepingCapacity: true)
            throw EngineError(error)
        }
    }
}

// MARK: - Compressed copies

/// What the cache of an LZ4-compressed copy has done (File/FaultRegion.swift).
public struct EngineCompressedCounts: Sendable, Equatable {
    /// Whether blocks are decompressed on demand (false: the copy was inflated at open, and
    /// `fallbackReason` says why).
    public var onDemand: Bool
    public var fallbackReason: String?
    /// The most blocks kept resident, and the most that ever were at once.
    public var budget: Int
    public var peakResident: Int
    /// Blocks decompressed so far, and of them those that did not verify.
    public var installs: Int
    public var damaged: Int
}

extension Realm {
    /// For a realm opened from an LZ4-compressed copy, what its cache has done; nil otherwise.
    public var compressedCounts: EngineCompressedCounts? {
        store.compressedCounts.map {
            EngineCompressedCounts(onDemand: $0.onDemand, fallbackReason: $0.fallbackReason, budget: $0.budget, peakResident: $0.peakResident, installs: $0.installs, damaged: $0.damaged)
        }
    }
}
