import Foundation
@testable import RealmStorage

/// A file grown by a burst that is deleted again, and the ordinary commits after it that shrink
/// it online (OnlineShrink.swift). Every commit is numbered by a counter object, and what the
/// file holds after round r is a function of r, so a reopened or killed file tells which
/// commit it holds.
enum ShrinkWorkload {
    static let tableName = "Shrinking"
    static let counterName = "Counter"
    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "payload", type: .string),
        ColumnSpec(name: "bucket", type: .int, indexed: true),
    ]

    /// Objects that stay, and objects of the burst.
    static let rows: Int64 = 3_000
    static let burst: Int64 = 24_000

    static func payload(_ id: Int64, round: Int) -> String {
        "object \(id) round \(round) " + String(repeating: "p", count: 60 + Int(id % 50))
    }

    static func values(_ id: Int64, round: Int) -> [Value] {
        [.int(id), .string(payload(id, round: round)), .int(id % 17)]
    }

    /// The object a round rewrites.
    static func touched(byRound round: Int) -> Int64 { Int64(round) % rows }

    /// The rows after round `round`: each holds the payload of the last round that touched it.
    static func expected(afterRound round: Int) -> [[Value]] {
        (0..<rows).map { id in
            var last = 0
            if round > 0 {
                // The last r in 1...round with r % rows == id.
                let r = round - ((round - Int(id)) % Int(rows) + Int(rows)) % Int(rows)
                if r >= 1 { last = r }
            }
            return values(id, round: last)
        }
    }

    /// Creates the tables, the burst, then the objects that stay (round 0), and deletes the
    /// burst: the file is left large and mostly free, at round 0, with the live objects at its
    /// end, where a shrink must move every one of them.
    static func grow(_ store: Store) throws {
        let transaction = try store.beginWrite()
        let counter = try transaction.createTable(counterName, columns: [ColumnSpec(name: "round", type: .int)])
        try transaction.insert(counter, key: ObjectKey(0), values: [.int(0)])
        _ = try transaction.createTable(tableName, columns: columns)
        try transaction.commit()
        try insertBurst(store)
        var id: Int64 = 0
        while id < rows {
            let transaction = try store.beginWrite()
            let table = try transaction.table(named: tableName)!.key
            for next in id..<min(id + 1_000, rows) { try transaction.insert(table, key: ObjectKey(next), values: values(next, round: 0)) }
            try transaction.commit()
            id += 1_000
        }
        try deleteBurst(store)
    }

    static func insertBurst(_ store: Store) throws {
        var id = rows
        while id < rows + burst {
            let transaction = try store.beginWrite()
            let table = try transaction.table(named: tableName)!.key
            for next in id..<min(id + 4_000, rows + burst) {
                try transaction.insert(table, key: ObjectKey(next), values: values(next, round: -1))
            }
            try transaction.commit()
            id += 4_000
        }
    }

    static func deleteBurst(_ store: Store) throws {
        let transaction = try store.beginWrite()
        let table = try transaction.table(named: tableName)!.key
        for id in rows..<(rows + burst) { try transaction.delete(table, ObjectKey(id)) }
        try transaction.commit()
    }

    /// One ordinary small commit: the next round rewrites one object and the counter.
    @discardableResult
    static func commitRound(_ store: Store) throws -> Int {
        let transaction = try store.beginWrite()
        let counter = try transaction.table(named: counterName)!.key
        let round = Int(try roundOf(transaction.table(counter))) + 1
        try transaction.set(counter, ObjectKey(0), ColumnKey(0), .int(Int64(round)))
        let table = try transaction.table(named: tableName)!.key
        let id = touched(byRound: round)
        try transaction.set(table, ObjectKey(id), ColumnKey(1), .string(payload(id, round: round)))
        try transaction.commit()
        return round
    }

    static func roundOf(_ view: TableView) throws -> Int64 {
        guard case .int(let round) = try view.row(ObjectKey(0))?.values().first else {
            throw StorageError(.fileCorrupted, "the counter object is missing")
        }
        return round
    }

    /// The round the version holds.
    static func round(_ read: ReadTransaction) throws -> Int {
        Int(try roundOf(try read.table(named: counterName)!))
    }

    static func contents(_ read: ReadTransaction) throws -> [[Value]] { try read.rowValues(ofTable: tableName) }

    /// The size of a compacted copy of the newest version.
    static func compactedSize(_ store: Store, in directory: TemporaryDirectory) throws -> UInt64 {
        let path = directory.path("compacted-\(UUID().uuidString.prefix(8)).realm")
        try store.writeCompactedCopy(to: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return UInt64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
    }

    /// The end of the last byte the version `read` reaches: its logical size less the free
    /// extent that ends there, if any (the file must not be cut below it while it is pinned).
    static func reach(_ read: ReadTransaction) throws -> UInt64 {
        let free = try FreeSpace.decode(head: read.slot.freeListRef, mapping: read.mapping.base, logicalSize: read.slot.logicalSize)
        if let last = free.extents.last, last.end == read.slot.logicalSize { return last.offset }
        return read.slot.logicalSize
    }
}
