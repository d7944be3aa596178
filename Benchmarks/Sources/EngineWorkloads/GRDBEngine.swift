// The peer: GRDB (SQLite) as its users would tune it for speed — a DatabasePool (WAL),
// synchronous = FULL, one cached prepared statement per loop, row cursors that reuse one
// row. `id INTEGER PRIMARY KEY` is SQLite's rowid, so a lookup is one B-tree descent.

import GRDB

public final class GRDBEngine: BenchmarkEngine {
    public static let name = "GRDB"
    public let pool: DatabasePool

    public init(directory: String) throws {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            // FULL: the WAL is synced at every commit, the same durability as OpenRealm's
            // `.full` (SQLite's WAL default, NORMAL, may lose the last commits on power loss).
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: directory + "/bench.sqlite", configuration: configuration)
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS item (
                    id INTEGER PRIMARY KEY,
                    name TEXT NOT NULL,
                    age INTEGER NOT NULL,
                    score REAL NOT NULL,
                    note TEXT)
                """)
        }
    }

    public func insert(_ rows: ArraySlice<BenchmarkRow>, batchSize: Int) throws {
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + batchSize, rows.endIndex)
            try pool.write { db in
                let statement = try db.cachedStatement(sql: "INSERT INTO item (id, name, age, score, note) VALUES (?, ?, ?, ?, ?)")
                for row in rows[start..<end] {
                    statement.setUncheckedArguments([row.id, row.name, row.age, row.score, row.note])
                    try statement.execute()
                }
            }
            start = end
        }
    }

    public func lookup(_ keys: [Int64]) throws -> LookupChecksum {
        try pool.read { db in
            let statement = try db.cachedStatement(sql: "SELECT id, name, age, score, note FROM item WHERE id = ?")
            var checksum = LookupChecksum()
            for key in keys {
                statement.setUncheckedArguments([key])
                let rows = try Row.fetchCursor(statement)
                guard let row = try rows.next() else { throw LookupFailure(engine: Self.name, key: key) }
                let name: String = row[1]
                let note: String? = row[4]
                checksum.add(id: row[0], name: name.utf8.count, age: row[2], score: row[3], note: note?.utf8.count)
            }
            return checksum
        }
    }

    public func count() throws -> Int {
        try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM item") ?? 0 }
    }

    public func close() throws {
        try pool.close()
    }
}
