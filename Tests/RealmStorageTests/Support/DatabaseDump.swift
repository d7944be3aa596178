@testable import RealmStorage

/// Everything one version holds that a user can see: each table's schema, key counter and
/// objects, the schema blob and the version number. The crash, fault and damage suites
/// compare engine versions against a plain model of this type.
struct DatabaseDump: Equatable, Sendable, CustomStringConvertible {
    struct Table: Equatable, Sendable {
        var name: String
        var columns: [ColumnSpec]
        var nextObjectKey: Int64
        var rows: [Int64: Row]
    }

    /// One object: its value columns (`.null` at list and removed columns, as `Row.values()`
    /// reads them) and the elements of each live list column.
    struct Row: Equatable, Sendable {
        var values: [Value]
        var lists: [Int: [Value]]
    }

    var version: UInt64
    var nextTableKey: UInt32
    var schemaBlob: [UInt8]?
    var tables: [UInt32: Table]

    /// A freshly created file: version 1, no tables.
    static let genesis = DatabaseDump(version: 1, nextTableKey: 1, schemaBlob: nil, tables: [:])

    init(version: UInt64, nextTableKey: UInt32, schemaBlob: [UInt8]?, tables: [UInt32: Table]) {
        self.version = version
        self.nextTableKey = nextTableKey
        self.schemaBlob = schemaBlob
        self.tables = tables
    }

    /// Reads every object of every table of `read`.
    init(_ read: ReadTransaction) throws(StorageError) {
        version = read.version.value
        nextTableKey = read.top.nextTableKey
        schemaBlob = try read.schemaBlob()
        tables = [:]
        for info in read.tables {
            let view = try read.table(info.key)
            var rows: [Int64: Row] = [:]
            try view.forEachRow { (row) throws(StorageError) -> Bool in
                var lists: [Int: [Value]] = [:]
                for (c, spec) in info.columns.enumerated() where spec.isList && !spec.removed {
                    lists[c] = try row.list(ColumnKey(c))
                }
                rows[row.key.value] = Row(values: try row.values(), lists: lists)
                return true
            }
            guard try view.count() == rows.count else {
                throw StorageError(.fileCorrupted, "table \(info.name) counts \(try view.count()) objects but holds \(rows.count)")
            }
            tables[info.key.value] = Table(name: info.name, columns: info.columns, nextObjectKey: info.nextObjectKey, rows: rows)
        }
    }

    /// Checks every index of `read` against its table, object by object.
    static func checkIndexes(_ read: ReadTransaction) throws(StorageError) {
        for info in read.tables {
            let view = try read.table(info.key)
            for (c, spec) in info.columns.enumerated() where spec.indexed && !spec.removed && !spec.isList {
                let column = ColumnKey(c)
                guard try view.indexCount(column) == view.count() else {
                    throw StorageError(.fileCorrupted, "index \(info.name).\(spec.name) has \(try view.indexCount(column)) entries for \(try view.count()) objects")
                }
                try view.forEachRow { (row) throws(StorageError) -> Bool in
                    let value = try row.value(column)
                    guard try view.indexLookup(column, value).contains(row.key) else {
                        throw StorageError(.fileCorrupted, "index \(info.name).\(spec.name) does not find \(row.key) by \(value)")
                    }
                    return true
                }
            }
        }
    }

    var objectCount: Int { tables.values.reduce(0) { $0 + $1.rows.count } }

    var description: String {
        let names = tables.keys.sorted().map { "\(tables[$0]!.name):\(tables[$0]!.rows.count)" }
        return "v\(version) [\(names.joined(separator: ", "))]"
    }

    /// The first few differences from `other`, for failure messages (full dumps are too long).
    func differences(from other: DatabaseDump) -> String {
        var found: [String] = []
        if version != other.version { found.append("version \(version) vs \(other.version)") }
        if nextTableKey != other.nextTableKey { found.append("nextTableKey \(nextTableKey) vs \(other.nextTableKey)") }
        if schemaBlob != other.schemaBlob { found.append("schema blob differs") }
        for key in Set(tables.keys).union(other.tables.keys).sorted() {
            guard let mine = tables[key], let theirs = other.tables[key] else {
                found.append("table \(key) exists in only one")
                continue
            }
            if mine.name != theirs.name { found.append("table \(key) named \(mine.name) vs \(theirs.name)") }
            if mine.columns != theirs.columns { found.append("table \(mine.name): columns differ") }
            if mine.nextObjectKey != theirs.nextObjectKey {
                found.append("table \(mine.name): nextObjectKey \(mine.nextObjectKey) vs \(theirs.nextObjectKey)")
            }
            let differing = Set(mine.rows.keys).union(theirs.rows.keys).sorted().filter { mine.rows[$0] != theirs.rows[$0] }
            for row in differing.prefix(3) {
                found.append("table \(mine.name) object \(row): \(mine.rows[row].map { "\($0.values) \($0.lists)" } ?? "missing") vs \(theirs.rows[row].map { "\($0.values) \($0.lists)" } ?? "missing")")
            }
            if differing.count > 3 { found.append("table \(mine.name): \(differing.count - 3) more objects differ") }
        }
        return found.isEmpty ? "no differences" : found.prefix(8).joined(separator: "; ")
    }
}
