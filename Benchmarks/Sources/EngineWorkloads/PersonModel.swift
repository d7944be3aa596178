// The object benchmarks' GRDB record, as a server developer declares it. The OpenRealm model
// class is declared in each benchmark's own module, as an application declares its models:
// declared here, every property access would be a call into another module.

import Foundation
import GRDB

public struct PersonRecord: Codable, FetchableRecord, PersistableRecord, Sendable {
    public static let databaseTableName = "person"
    public var id: Int64
    public var name: String
    public var age: Int64
    public var score: Double
    public var email: String?

    public init(id: Int64, name: String, age: Int64, score: Double, email: String?) {
        self.id = id
        self.name = name
        self.age = age
        self.score = score
        self.email = email
    }

    public init(_ row: BenchmarkRow) {
        self.init(id: row.id, name: row.name, age: row.age, score: row.score, email: row.note)
    }

    /// The table as the object benchmarks create it: `age` indexed, like `Person.age`.
    public static func createTable(_ db: Database) throws {
        try db.create(table: databaseTableName) { t in
            t.column("id", .integer).primaryKey()
            t.column("name", .text).notNull()
            t.column("age", .integer).notNull().indexed()
            t.column("score", .double).notNull()
            t.column("email", .text)
        }
    }
}

/// Runs `body` until `minimum` seconds have passed (at least `minimumRuns` times) and returns
/// how many runs per second it made.
public func runsPerSecond(minimum: Double = 1.0, minimumRuns: Int = 3, _ body: () throws -> Void) rethrows -> Double {
    let start = ContinuousClock.now
    var runs = 0
    var elapsed = 0.0
    while runs < minimumRuns || elapsed < minimum {
        try body()
        runs += 1
        let d = ContinuousClock.now - start
        elapsed = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }
    return Double(runs) / elapsed
}
