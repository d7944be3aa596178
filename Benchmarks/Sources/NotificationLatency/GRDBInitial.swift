// The peer for `.initial` (issue 27): the same rows in SQLite through GRDB, and the time from
// starting a `ValueObservation` of the equivalent request to its first value (scheduled
// `.immediate`, so the first fetch runs inside `start`, as `.initial` runs inside
// `observe` + `refresh`). GRDB fetches the records; OpenRealm's initial call hands over lazy
// results, having read every object's sort values to order them.

import Foundation
import GRDB

struct ItemRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "item"
    var id: Int
    var score: Int
    var name: String
}

/// The first-value times of the two observed requests (sorted by score; score above half,
/// sorted by name), in milliseconds, on `rows` loaded into a new database in `folder`: the
/// records, as a GRDB user observes them, and the ids alone (what `.initial` computes: the
/// ordered keys, objects read lazily).
@MainActor func grdbInitialTimes(_ rows: [(id: Int, score: Int, name: String)], folder: URL)
    throws -> (sorted: Double, filtered: Double, sortedIDs: Double, filteredIDs: Double) {
    let pool = try DatabasePool(path: folder.appendingPathComponent("items.sqlite").path)
    try pool.write { db in
        try db.create(table: "item") { t in
            t.primaryKey("id", .integer)
            t.column("score", .integer).indexed()
            t.column("name", .text)
        }
        let insert = try db.cachedStatement(sql: "INSERT INTO item (id, score, name) VALUES (?, ?, ?)")
        for row in rows { try insert.execute(arguments: [row.id, row.score, row.name]) }
    }

    func firstValue<Value: Collection & Sendable>(_ fetch: @escaping @Sendable (Database) throws -> Value) -> Double {
        let start = ContinuousClock.now
        var first: Double?
        var count = 0
        let cancellable = ValueObservation.tracking(fetch)
            .start(in: pool, scheduling: .immediate, onError: { error in fatalError("GRDB observation failed: \(error)") }) { items in
                if first == nil { first = milliseconds(since: start); count = items.count }
            }
        cancellable.cancel()
        precondition(count > 0, "the first value was not delivered at once")
        return first!
    }
    let sortedRequest = ItemRecord.order(Column("score"))
    let filteredRequest = ItemRecord.filter(Column("score") > rows.count / 2).order(Column("name"))
    return (firstValue { db in try sortedRequest.fetchAll(db) },
            firstValue { db in try filteredRequest.fetchAll(db) },
            firstValue { db in try Int.fetchAll(db, sortedRequest.select(Column("id"))) },
            firstValue { db in try Int.fetchAll(db, filteredRequest.select(Column("id"))) })
}
