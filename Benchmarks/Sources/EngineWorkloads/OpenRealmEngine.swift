// OpenRealm through the engine facade (`_OpenRealmEngine`): the storage engine without the
// object layer. The facade's types stay `package` here: they are not this library's to publish.

import _OpenRealmEngine

public final class OpenRealmEngine: BenchmarkEngine {
    public static let name = "OpenRealm"
    // The id is also the object key (keys are handed out from 0 in insertion order), the
    // counterpart of SQLite's INTEGER PRIMARY KEY rowid: like SQLite, no separate index.
    package static let columns = [
        EngineColumn("id", .int),
        EngineColumn("name", .string),
        EngineColumn("age", .int),
        EngineColumn("score", .double),
        EngineColumn("note", .string, nullable: true),
    ]

    package let store: EngineStore
    package let table: EngineTableID

    public convenience init(directory: String) throws {
        try self.init(directory: directory, durability: .full)
    }

    package init(directory: String, durability: EngineDurability) throws {
        store = try EngineStore(path: directory + "/bench.realm", durability: durability)
        if let existing = store.read().table(named: "Item") {
            table = existing
        } else {
            table = try store.write { tx in try tx.createTable("Item", columns: Self.columns) }
        }
    }

    /// Object keys are handed out from 0 in insertion order, so on a fresh table the
    /// object key of a row equals its id: lookups by id go straight to the object.
    public func insert(_ rows: ArraySlice<BenchmarkRow>, batchSize: Int) throws {
        var values = [EngineValue](repeating: .null, count: Self.columns.count)
        var start = rows.startIndex
        while start < rows.endIndex {
            let end = min(start + batchSize, rows.endIndex)
            try store.write { tx in
                for row in rows[start..<end] {
                    values[0] = .int(row.id)
                    values[1] = .string(row.name)
                    values[2] = .int(row.age)
                    values[3] = .double(row.score)
                    values[4] = row.note.map(EngineValue.string) ?? .null
                    try tx.insert(table, values: values)
                }
            }
            start = end
        }
    }

    public func lookup(_ keys: [Int64]) throws -> LookupChecksum {
        var reader = try store.read().reader(for: table)
        var values: [EngineValue] = []
        values.reserveCapacity(Self.columns.count)
        var checksum = LookupChecksum()
        for key in keys {
            guard try reader.readRow(key, into: &values),
                  case .int(let id) = values[0], case .string(let name) = values[1],
                  case .int(let age) = values[2], case .double(let score) = values[3] else {
                throw LookupFailure(engine: Self.name, key: key)
            }
            var note: Int?
            if case .string(let text) = values[4] { note = text.utf8.count }
            checksum.add(id: id, name: name.utf8.count, age: age, score: score, note: note)
        }
        return checksum
    }

    public func count() throws -> Int {
        try store.read().count(table)
    }

    /// Runs the integrity check and returns the number of objects it walked.
    public func verifiedObjectCount() throws -> Int {
        try store.verify().objects
    }

    public func close() throws {}
}

public struct LookupFailure: Error, CustomStringConvertible {
    public var engine: String
    public var key: Int64
    public var description: String { "\(engine): no row (or an unexpected row) for key \(key)" }
}
