#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RealmStorage

/// `openrealm bench [--rows n] [folder]`: the engine workload of the storage benchmark, for a quick
/// reading on this machine (the side-by-side comparison lives in Benchmarks/).
///
/// Inserts `rows` rows (object key, a String of 8–16 characters, an Int 0–99, a Double and an
/// optional String) in 10,000-row durable transactions, then reads `rows` random objects by
/// key, every column.
enum Bench {
    static func run(rows: Int, folder: String?) throws {
        let directory = try folder ?? Demo.makeTemporaryDirectory()
        let path = directory + "/bench.realm"
        unlink(path); unlink(path + ".lock")
        let store = try Store.open(path: path)
        var tx = try store.beginWrite()
        let table = try tx.createTable("Row", columns: [
            ColumnSpec(name: "name", type: .string),
            ColumnSpec(name: "bucket", type: .int),
            ColumnSpec(name: "score", type: .double),
            ColumnSpec(name: "note", type: .string, nullable: true),
        ])
        try tx.commit()
        let names = (0..<1024).map { i in String("user\(i)-abcdefghijklmnop".prefix(8 + i % 9)) }
        var random: UInt64 = 0x2545F4914F6CDD1D
        func next() -> UInt64 {
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            return random
        }

        let insertStart = ContinuousClock.now
        var values: [Value] = [.null, .null, .null, .null]
        for batch in stride(from: 0, to: rows, by: 10_000) {
            tx = try store.beginWrite()
            for i in batch..<min(batch + 10_000, rows) {
                values[0] = .string(names[i & 1023])
                values[1] = .int(Int64(i % 100))
                values[2] = .double(Double(i) * 0.25)
                values[3] = i % 2 == 0 ? .null : .string(names[(i >> 3) & 1023])
                try tx.insert(table, values: values)
            }
            try tx.commit()
        }
        let insertSeconds = seconds(ContinuousClock.now - insertStart)

        let read = store.beginRead()
        let view = try read.table(table)
        var checksum = 0
        let lookupStart = ContinuousClock.now
        var rowValues: [Value] = []
        for _ in 0..<rows {
            let key = ObjectKey(Int64(next() % UInt64(rows)))
            guard let row = try view.row(key) else { continue }
            try row.readValues(into: &rowValues)
            if case .int(let v) = rowValues[1] { checksum &+= Int(v) }
        }
        let lookupSeconds = seconds(ContinuousClock.now - lookupStart)
        let size = try store.spaceUsage().fileSize
        print("insert: \(rows) rows in \(format(insertSeconds)) s = \(Int(Double(rows) / insertSeconds)) rows/s")
        print("lookup: \(rows) random keys, every column, in \(format(lookupSeconds)) s = \(Int(Double(rows) / lookupSeconds)) lookups/s (checksum \(checksum))")
        print("file: \(size / 1024) KiB")
        try runWithPrimaryKey(rows: rows, directory: directory, names: names)
    }

    /// The same rows with an `id` column kept unique by a search index (a primary key):
    /// inserts check and maintain the index, lookups go through it.
    static func runWithPrimaryKey(rows: Int, directory: String, names: [String]) throws {
        let path = directory + "/bench-pk.realm"
        unlink(path); unlink(path + ".lock")
        let store = try Store.open(path: path)
        var tx = try store.beginWrite()
        let table = try tx.createTable("Keyed", columns: [
            ColumnSpec(name: "id", type: .int, unique: true),
            ColumnSpec(name: "name", type: .string),
            ColumnSpec(name: "bucket", type: .int),
            ColumnSpec(name: "score", type: .double),
            ColumnSpec(name: "note", type: .string, nullable: true),
        ])
        try tx.commit()
        let insertStart = ContinuousClock.now
        var values: [Value] = [.null, .null, .null, .null, .null]
        for batch in stride(from: 0, to: rows, by: 10_000) {
            tx = try store.beginWrite()
            for i in batch..<min(batch + 10_000, rows) {
                values[0] = .int(Int64(i) * 7)
                values[1] = .string(names[i & 1023])
                values[2] = .int(Int64(i % 100))
                values[3] = .double(Double(i) * 0.25)
                values[4] = i % 2 == 0 ? .null : .string(names[(i >> 3) & 1023])
                try tx.insert(table, values: values)
            }
            try tx.commit()
        }
        let insertSeconds = seconds(ContinuousClock.now - insertStart)
        let view = try store.beginRead().table(table)
        var random: UInt64 = 0x9E3779B97F4A7C15
        var rowValues: [Value] = []
        var found = 0
        let lookupStart = ContinuousClock.now
        for _ in 0..<rows {
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            let id = Int64(random % UInt64(rows)) * 7
            guard let key = try view.indexFirst(ColumnKey(0), .int(id)), let row = try view.row(key) else { continue }
            try row.readValues(into: &rowValues)
            found += 1
        }
        let lookupSeconds = seconds(ContinuousClock.now - lookupStart)
        print("insert with a unique id: \(Int(Double(rows) / insertSeconds)) rows/s")
        print("lookup by unique id, every column: \(Int(Double(rows) / lookupSeconds)) lookups/s (\(found) found)")
        print("file: \(try store.spaceUsage().fileSize / 1024) KiB")
    }

    static func seconds(_ d: Duration) -> Double {
        Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
    }

    static func format(_ s: Double) -> String { "\((s * 1000).rounded() / 1000)" }
}
