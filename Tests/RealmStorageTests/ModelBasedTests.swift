import Testing
import TestSupport
@testable import RealmStorage

/// Random operation sequences against the engine and a plain in-memory model. Every pinned
/// snapshot must equal the model as it was at that snapshot's version, indexes must answer
/// like a scan of the model, and change sets must describe the difference between versions.
@Suite struct ModelBasedTests {
    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "name", type: .string, nullable: true, indexed: true),
        ColumnSpec(name: "bucket", type: .int, indexed: true),
        ColumnSpec(name: "score", type: .double),
        ColumnSpec(name: "flag", type: .bool, nullable: true),
        ColumnSpec(name: "when", type: .timestamp),
        ColumnSpec(name: "blob", type: .binary, nullable: true),
        ColumnSpec(name: "tags", type: .int, isList: true),
    ]

    /// Operations per run: 10,000 in the optimised run CI makes (`.ci/run`), half that in debug
    /// builds, which run about ten times slower.
    #if DEBUG
    static let operations = 5_000
    #else
    static let operations = 10_000
    #endif

    struct Pinned {
        var read: ReadTransaction
        var model: TableDump
    }

    /// Each tree shape with node checksums, and the smallest and the standard with
    /// authentication tags and 16-byte footprints (NodeSealing.swift, on a plain file).
    @Test(arguments: zip([TreeLimits(leafCapacity: 3, innerCapacity: 3, leafBytes: 4096), TreeLimits(leafCapacity: 16, innerCapacity: 4), .standard,
                          TreeLimits(leafCapacity: 3, innerCapacity: 3, leafBytes: 4096), .standard],
                         [SealingMode.checksum, .checksum, .checksum, .authenticated, .authenticated]))
    func randomOperationsMatchTheModel(limits: TreeLimits, sealing: SealingMode) throws {
        let seed = SeededRandom.seed("MODEL_SEED")
        var random = SeededRandom(seed: seed)
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: sealing.applied(to: StoreOptions(limits: limits)))
        var tx = try store.beginWrite()
        let table = try tx.createTable("Thing", columns: Self.columns)
        try tx.commit()

        var committed = TableDump()
        var working = TableDump()
        var pinned: [Pinned] = []
        var nextID: Int64 = 0
        tx = try store.beginWrite()
        var operations = 0

        func randomName() -> Value {
            switch Int.random(in: 0..<10, using: &random) {
            case 0: return .null
            case 1: return .string(String(repeating: "long-", count: Int.random(in: 10...40, using: &random)) + "\(Int.random(in: 0..<5, using: &random))")
            default: return .string("n\(Int.random(in: 0..<50, using: &random))")
            }
        }
        func randomRow() -> [Value] {
            nextID += 1
            return [.int(nextID), randomName(), .int(Int64.random(in: 0..<20, using: &random)),
                    .double(Double(Int.random(in: -1000...1000, using: &random)) / 8),
                    random.chance(0.3) ? .null : .bool(random.chance(0.5)),
                    .timestamp(Timestamp(seconds: Int64.random(in: -1_000_000_000...4_000_000_000, using: &random),
                                         nanoseconds: Int32.random(in: 0..<1_000_000_000, using: &random))),
                    random.chance(0.5) ? .null : .binary((0..<Int.random(in: 0..<(random.chance(0.02) ? 20_000 : 40), using: &random)).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
                    .null]
        }
        func randomList() -> [Value] {
            (0..<Int.random(in: 0..<6, using: &random)).map { _ in .int(Int64.random(in: -5...5, using: &random)) }
        }
        func check(_ condition: Bool, _ what: @autoclosure () -> String) {
            #expect(condition, "\(what()) — replay with MODEL_SEED=\(seed)")
        }

        while operations < Self.operations {
            operations += 1
            let keys = Array(working.rows.keys)
            switch Int.random(in: 0..<100, using: &random) {
            case 0..<30:
                let row = randomRow()
                let list = random.chance(0.3) ? randomList() : []
                let key = try tx.insert(table, values: row, lists: list.isEmpty ? [:] : [7: list])
                working.rows[key.value] = row
                if !list.isEmpty { working.lists[key.value] = [7: list] }
            case 30..<33 where !keys.isEmpty:
                // A duplicate primary key is refused and changes nothing.
                let existing = working.rows[keys.randomElement(using: &random)!]!
                var row = randomRow()
                row[0] = existing[0]
                let transaction = tx
                let outcome = Result { () throws(StorageError) in try transaction.insert(table, values: row) }
                switch outcome {
                case .success: check(false, "duplicate id accepted")
                case .failure(let error): check(error.code == .duplicateKey, "duplicate id gave \(error)")
                }
            case 33..<55 where !keys.isEmpty:
                let key = keys.randomElement(using: &random)!
                let column = Int.random(in: 1...6, using: &random)
                let value = randomRow()[column]
                try tx.set(table, ObjectKey(key), ColumnKey(column), value)
                working.rows[key]![column] = value
            case 55..<60 where !keys.isEmpty:
                let key = keys.randomElement(using: &random)!
                let list = randomList()
                try tx.setList(table, ObjectKey(key), ColumnKey(7), list)
                working.lists[key] = list.isEmpty ? nil : [7: list]
            case 60..<75 where !keys.isEmpty:
                let key = keys.randomElement(using: &random)!
                check(try tx.delete(table, ObjectKey(key)), "delete of existing \(key) returned false")
                working.rows[key] = nil
                working.lists[key] = nil
            case 75..<85:
                try tx.commit()
                committed = working
                if random.chance(0.1) { try store.verify() }
                tx = try store.beginWrite()
            case 85..<88:
                tx.rollback()
                working = committed
                tx = try store.beginWrite()
            case 88..<92:
                // Pin the newest committed version (the write transaction does not block readers).
                pinned.append(Pinned(read: store.beginRead(), model: committed))
            case 92..<95 where !pinned.isEmpty:
                pinned.remove(at: Int.random(in: 0..<pinned.count, using: &random))
            case 95..<98 where !pinned.isEmpty:
                let p = pinned.randomElement(using: &random)!
                let view = try p.read.table(table)
                let dump = try TableDump(view)
                if dump != p.model {
                    let differing = Set(dump.rows.keys).union(p.model.rows.keys).filter { dump.rows[$0] != p.model.rows[$0] }.sorted().prefix(3)
                    let listDiff = Set(dump.lists.keys).union(p.model.lists.keys).filter { dump.lists[$0] != p.model.lists[$0] }.sorted().prefix(3)
                    let detail = differing.map { "\($0): engine \(dump.rows[$0].map { "\($0)" } ?? "-") model \(p.model.rows[$0].map { "\($0)" } ?? "-")" }
                    let listDetail = listDiff.map { "\($0): engine \(String(describing: dump.lists[$0])) model \(String(describing: p.model.lists[$0]))" }
                    check(false, "snapshot \(p.read.version) differs from its model after \(operations) operations: \(detail) \(listDetail)")
                }
                let bucket = Int64.random(in: 0..<20, using: &random)
                let viaIndex = Set(try view.indexLookup(ColumnKey(2), .int(bucket)).map(\.value))
                let viaScan = Set(p.model.rows.filter { $0.value[2] == .int(bucket) }.keys)
                check(viaIndex == viaScan, "index lookup of bucket \(bucket) differs from a scan")
                let range = Set(try view.indexRange(ColumnKey(1), from: .init(.string("n1"), inclusive: true), to: .init(.string("n3"), inclusive: false)).map(\.value))
                let rangeScan = Set(p.model.rows.filter {
                    Value.compare($0.value[1], .string("n1")) >= 0 && Value.compare($0.value[1], .string("n3")) < 0
                }.keys)
                check(range == rangeScan, "index range differs from a scan")
                // Changes from this snapshot to the newest version.
                let latest = store.beginRead()
                let changes = try latest.changes(since: p.read.version).tables[table] ?? TableChanges()
                let newest = try TableDump(latest.table(table))
                let before = Set(p.model.rows.keys), after = Set(newest.rows.keys)
                check(Set(changes.inserted) == after.subtracting(before), "inserted keys in the change set")
                check(Set(changes.deleted) == before.subtracting(after), "deleted keys in the change set")
                let differing = before.intersection(after).filter { p.model.rows[$0] != newest.rows[$0] || p.model.lists[$0] != newest.lists[$0] }
                check(Set(changes.modified).isSuperset(of: differing), "modified keys in the change set")
            default:
                break
            }
        }
        try tx.commit()
        committed = working
        for p in pinned {
            check(try TableDump(p.read.table(table)) == p.model, "snapshot \(p.read.version) differs at the end")
        }
        pinned.removeAll()
        try store.verify()
        let final = try TableDump(store.beginRead().table(table))
        check(final == committed, "final state differs from the model")
    }
}
