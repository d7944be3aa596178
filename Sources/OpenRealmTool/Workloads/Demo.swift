#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RealmStorage

/// Shows the engine doing real work: durable bulk inserts, lookups by key and through an
/// index, a snapshot that keeps its version while the data changes, updates and deletes with
/// their change set, an integrity check and a compacted copy.
enum Demo {
    static func run(folder: String?) throws {
        let directory = try folder ?? makeTemporaryDirectory()
        let path = directory + "/demo.realm"
        let copyPath = directory + "/demo-compacted.realm"
        unlink(path); unlink(path + ".lock"); unlink(copyPath)
        try ObjectDemo.run(directory: directory)
        print("\nOpenRealm storage engine demo in \(directory)")
        let store = try Store.open(path: path)

        let count = 100_000
        var clock = Stopwatch()
        var tx = try store.beginWrite()
        let people = try tx.createTable("Person", columns: [
            ColumnSpec(name: "id", type: .int, unique: true),
            ColumnSpec(name: "name", type: .string),
            ColumnSpec(name: "age", type: .int, indexed: true),
            ColumnSpec(name: "score", type: .double),
            ColumnSpec(name: "email", type: .string, nullable: true),
        ])
        try tx.commit()
        for batch in stride(from: 0, to: count, by: 10_000) {
            tx = try store.beginWrite()
            for id in batch..<(batch + 10_000) {
                try tx.insert(people, values: [.int(Int64(id)), .string("person-\(id)"), .int(Int64(id % 90)),
                                               .double(Double(id) / 7), id % 4 == 0 ? .null : .string("p\(id)@example.org")])
            }
            try tx.commit()
        }
        print("inserted \(count) objects in 10 durable commits: \(clock.lap())")

        let snapshot = store.beginRead()
        let view = try snapshot.table(people)
        var found = 0
        var random = UInt64(12345)
        for _ in 0..<count {
            random = random &* 6364136223846793005 &+ 1442695040888963407
            let key = ObjectKey(Int64(random >> 33) % Int64(count))
            if let row = try view.row(key), case .string = try row.value(ColumnKey(1)) { found += 1 }
        }
        print("read \(found) random objects by key: \(clock.lap())")
        let aged42 = try view.indexLookup(ColumnKey(2), .int(42))
        let byID = try view.indexLookup(ColumnKey(0), .int(77_777))
        print("index: \(aged42.count) people aged 42, id 77777 is object \(byID.first?.value ?? -1): \(clock.lap())")

        tx = try store.beginWrite()
        for key in aged42 { try tx.set(people, key, ColumnKey(3), .double(100)) }
        for id in stride(from: 1, to: count, by: 3) { try tx.delete(people, ObjectKey(Int64(id))) }
        try tx.commit()
        let latest = store.beginRead()
        let changes = try latest.changes(since: snapshot.version).tables[people] ?? TableChanges()
        print("updated \(aged42.count) and deleted \(changes.deleted.count) objects; \(changes.modified.count) modified: \(clock.lap())")
        print("snapshot at version \(snapshot.version.value) still sees \(try view.count()) objects; "
              + "version \(latest.version.value) sees \(try latest.table(people).count())")

        let report = try store.verify()
        print("verify: \(report.nodes) nodes, \(report.objects) objects, \(report.reachableBytes) bytes reachable, "
              + "\(report.freeBytes) free: \(clock.lap())")
        try store.writeCompactedCopy(to: copyPath)
        let copied = try Store.open(path: copyPath)
        let copyReport = try copied.verify()
        print("compacted copy: \(try store.spaceUsage().fileSize) → \(try copied.spaceUsage().fileSize) bytes, "
              + "\(copyReport.objects) objects verified: \(clock.lap())")
    }

    static func makeTemporaryDirectory() throws(ToolFailure) -> String {
        var template = Array("/tmp/openrealm-demo-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!).map { String(cString: $0) } }
        guard let made else { throw ToolFailure("cannot create a temporary folder: \(String(cString: strerror(errno)))") }
        return made
    }
}

struct Stopwatch {
    private var start = ContinuousClock.now

    mutating func lap() -> String {
        let now = ContinuousClock.now
        let elapsed = now - start
        start = now
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        return ms < 1000 ? "\(Int(ms.rounded())) ms" : "\((ms / 100).rounded() / 10) s"
    }
}
