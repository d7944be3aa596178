import Testing
import TestSupport
@testable import RealmStorage

/// Cluster leaves encoded from the node they came from (ClusterLeaf+Reuse.swift): blocks whose
/// rows did not change are copied, blocks that only gained rows at the end are extended. Debug
/// builds, which run these tests, encode every such leaf in full as well and trap unless the
/// bytes are the same, so the random workload below checks the reuse against the full encoder
/// leaf by leaf; the model checks what reads back.
@Suite struct LeafReuseTests {
    /// One column of every kind the codec writes, nullable where that adds null flags.
    static let columns = [
        ColumnSpec(name: "int", type: .int, nullable: true),
        ColumnSpec(name: "bool", type: .bool),
        ColumnSpec(name: "float", type: .float),
        ColumnSpec(name: "double", type: .double, nullable: true),
        ColumnSpec(name: "string", type: .string, nullable: true),
        ColumnSpec(name: "binary", type: .binary),
        ColumnSpec(name: "date", type: .timestamp, nullable: true),
        ColumnSpec(name: "decimal", type: .decimal),
        ColumnSpec(name: "objectId", type: .objectId, nullable: true),
        ColumnSpec(name: "uuid", type: .uuid),
        ColumnSpec(name: "mixed", type: .mixed),
        ColumnSpec(name: "list", type: .int, isList: true),
        ColumnSpec(name: "indexed", type: .int, indexed: true),
    ]
    static let listColumn = 11

    typealias Model = [Int64: DatabaseDump.Row]

    /// A value for column `c`: mostly alike (small numbers, short strings, no nulls), so that
    /// blocks keep their parameters, now and then one that changes them (a wide integer, a
    /// negative one, a long string, a null where there was none).
    static func value(_ c: Int, _ random: inout ReplayableRandom) -> Value {
        let spec = columns[c]
        if spec.nullable && random.chance(5) { return .null }
        let odd = random.chance(4)
        switch spec.type {
        case .int:
            return .int(odd ? Int64.random(in: Int64.min...Int64.max, using: &random) : Int64(random.below(16)))
        case .bool: return .bool(random.chance(50))
        case .float: return .float(Float(random.below(1000)) / 8)
        case .double: return .double(odd ? -1e300 : Double(random.below(1000)) / 3)
        case .string:
            let length = odd ? 60 + random.below(40) : random.below(12)
            return .string(String(repeating: "é", count: length / 2) + String(repeating: "a", count: length % 2))
        case .binary: return .binary(random.bytes(odd ? 80 : random.below(6)))
        case .timestamp:
            return .timestamp(Timestamp(seconds: odd ? -62_000_000_000 : 1_700_000_000 + Int64(random.below(100)),
                                        nanoseconds: Int32(random.below(1_000_000_000))))
        case .decimal, .uuid, .objectId:
            let bytes = Bytes16(a: UInt64(random.below(1 << 20)), b: odd ? .max : UInt64(random.below(4)))
            return spec.type == .objectId ? .objectId(Bytes16(a: bytes.a, b: bytes.b & 0xFFFF_FFFF))
                : spec.type == .uuid ? .uuid(bytes) : .decimal(bytes)
        case .mixed:
            switch random.below(4) {
            case 0: return .int(Int64(random.below(100)))
            case 1: return .string(odd ? String(repeating: "m", count: 70) : "m\(random.below(100))")
            case 2: return .null
            default: return .double(Double(random.below(100)))
            }
        case .link: preconditionFailure("no link column here")
        }
    }

    static func row(_ random: inout ReplayableRandom) -> DatabaseDump.Row {
        var values = (0..<columns.count).map { value($0, &random) }
        values[listColumn] = .null
        let list = (0..<random.below(4)).map { _ in Value.int(Int64(random.below(50))) }
        return DatabaseDump.Row(values: values, lists: [listColumn: list])
    }

    static func expectMatches(_ store: Store, _ table: TableKey, _ model: Model, _ context: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let rows = try #require(try DatabaseDump(store.beginRead()).tables[table.value], sourceLocation: sourceLocation).rows
        #expect(rows == model, "\(context)", sourceLocation: sourceLocation)
    }

    @Test(arguments: [TreeLimits(leafCapacity: 6, innerCapacity: 3), TreeLimits.standard])
    func randomSmallCommitsReadBackAndMatchTheFullEncoding(limits: TreeLimits) throws {
        // Three workloads: a missed edit shows only in some orders of splits and merges.
        let seed = ReplayableRandom.seed("OPENREALM_LEAF_REUSE_SEED")
        for round in 0..<3 { try Self.smallCommits(limits: limits, seed: seed &+ UInt64(round)) }
    }

    static func smallCommits(limits: TreeLimits, seed: UInt64) throws {
        // Printed first: the debug check traps, and a trap prints no expectation message.
        print("LeafReuseTests: OPENREALM_LEAF_REUSE_SEED=\(seed)")
        let directory = TemporaryDirectory()
        var random = ReplayableRandom(seed: seed)
        var model: Model = [:]
        var reused = 0, reusedIndexLeaves = 0
        let table: TableKey
        do {
            let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: limits))
            let setup = try store.beginWrite()
            table = try setup.createTable("Row", columns: columns)
            try setup.commit()
            var nextKey: Int64 = 0
            for round in 0..<1_000 {
                let transaction = try store.beginWrite()
                // Phases of growth, churn and shrinking, so that leaves split and merge too:
                // the chances in percent of an insert, a set and a list set (else a delete).
                let (inserts, sets, listSets) = [(70, 15, 5), (45, 25, 5), (15, 15, 5)][round / 100 % 3]
                for _ in 0..<(1 + random.below(3)) {
                    let keys = model.keys.sorted()
                    let pick = random.below(100)
                    if keys.isEmpty || pick < inserts {
                        // Mostly appends; sometimes an unused key below the last (an insert in
                        // the middle of a leaf).
                        var key = nextKey
                        if random.chance(20), nextKey > 0 { key = Int64(random.below(Int(nextKey))) }
                        guard model[key] == nil else { continue }
                        let row = Self.row(&random)
                        _ = try transaction.insert(table, key: ObjectKey(key), values: row.values, lists: row.lists)
                        model[key] = row
                        nextKey = max(nextKey, key + 1)
                    } else if pick < inserts + sets {
                        let key = keys.randomElement(using: &random)!
                        var c = random.below(Self.columns.count)
                        if c == Self.listColumn { c = 0 }
                        let value = Self.value(c, &random)
                        try transaction.set(table, ObjectKey(key), ColumnKey(c), value)
                        model[key]!.values[c] = value
                    } else if pick < inserts + sets + listSets {
                        let key = keys.randomElement(using: &random)!
                        let list = (0..<random.below(4)).map { _ in Value.int(Int64(random.below(50))) }
                        try transaction.setList(table, ObjectKey(key), ColumnKey(Self.listColumn), list)
                        model[key]!.lists[Self.listColumn] = list
                    } else {
                        let key = keys.randomElement(using: &random)!
                        _ = try transaction.delete(table, ObjectKey(key))
                        model[key] = nil
                    }
                }
                try transaction.commit()
                reused += transaction.reusedBlockCount
                reusedIndexLeaves += transaction.reusedIndexLeafCount
                if round % 20 == 0 { try Self.expectMatches(store, table, model, "seed \(seed), round \(round)") }
            }
            try Self.expectMatches(store, table, model, "seed \(seed), at the end")
            try DatabaseDump.checkIndexes(store.beginRead())
            try store.verify()
        }
        #expect(reused > 1_000, "small commits should mostly copy or extend blocks (seed \(seed): \(reused))")
        #expect(reusedIndexLeaves > 100, "inserts should mostly write index leaves from their nodes (seed \(seed): \(reusedIndexLeaves))")
        let reopened = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: limits))
        try Self.expectMatches(reopened, table, model, "seed \(seed), reopened")
        try reopened.verify()
    }

    @Test func oneObjectAppendsExtendEveryBlockOfTheLastLeaf() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [
            ColumnSpec(name: "n", type: .int), ColumnSpec(name: "name", type: .string),
            ColumnSpec(name: "score", type: .double), ColumnSpec(name: "email", type: .string, nullable: true),
        ])
        try setup.commit()
        var counts: [Int] = []
        var rows: [Int64: DatabaseDump.Row] = [:]
        for i in 0..<30 {
            let transaction = try store.beginWrite()
            let values: [Value] = [.int(Int64(i % 3)), .string("person \(i)"), .double(Double(i)), .null]
            let key = try transaction.insert(table, values: values)
            try transaction.commit()
            counts.append(transaction.reusedBlockCount)
            rows[key.value] = DatabaseDump.Row(values: values, lists: [:])
        }
        // The first commit starts the leaf; each later one extends its keys and four columns,
        // except where a packed array must widen: the keys 0…i at i = 1, 2, 4 and 16 (widths
        // 1, 2, 4 and 8 bits), and the column of i % 3 at i = 1 and 2.
        var expected = [0] + Array(repeating: 5, count: 29)
        for i in [1, 2, 4, 16] { expected[i] -= 1 }
        for i in [1, 2] { expected[i] -= 1 }
        #expect(counts == expected)
        try Self.expectMatches(store, table, rows, "after the appends")
        try store.verify()
    }

    /// A one-field update leaves the keys and every other column of the leaf as they were:
    /// their blocks are the node's bytes, copied. (An untouched column's run is `all(n)`, both
    /// runs the whole node; reuse once asked for them to add up to exactly n, and so copied
    /// nothing for pure updates.)
    @Test func anUpdateCopiesTheUnchangedBlocks() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int), ColumnSpec(name: "s", type: .string),
                                                           ColumnSpec(name: "d", type: .double)])
        for i in 0..<100 { try setup.insert(table, values: [.int(Int64(i)), .string("row \(i)"), .double(Double(i))]) }
        try setup.commit()
        var counts: [Int] = []
        for i in 0..<5 {
            let transaction = try store.beginWrite()
            try transaction.set(table, ObjectKey(Int64(10 + i)), ColumnKey(0), .int(1000 + Int64(i)))
            try transaction.commit()
            counts.append(transaction.reusedBlockCount)
        }
        #expect(counts == [3, 3, 3, 3, 3], "keys, s and d copied; n encoded")
        let read = try store.beginRead().table(table)
        for i in 0..<100 {
            let n = try read.row(ObjectKey(Int64(i)))?.value(ColumnKey(0))
            #expect(n == .int((10..<15).contains(i) ? 1000 + Int64(i - 10) : Int64(i)))
        }
        try store.verify()
    }

    @Test func aLeafDecodedFromItsNodeIsExtendedToo() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let table: TableKey
        do {
            let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe))
            let setup = try store.beginWrite()
            table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int), ColumnSpec(name: "s", type: .string)])
            for i in 0..<10 { try setup.insert(table, values: [.int(Int64(i)), .string("row \(i)")]) }
            try setup.commit()
        }
        // Reopened: nothing is kept from the last commit, so the leaf is decoded from its node.
        let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe))
        let transaction = try store.beginWrite()
        try transaction.insert(table, values: [.int(10), .string("row 10")])
        try transaction.set(table, ObjectKey(3), ColumnKey(0), .int(-3))
        #expect(transaction.reusedLeafCount == 0)
        try transaction.commit()
        // Keys and strings extended; the changed integer column encoded in full.
        #expect(transaction.reusedBlockCount == 2)
        let read = try store.beginRead().table(table)
        #expect(try read.row(ObjectKey(3))?.value(ColumnKey(0)) == .int(-3))
        #expect(try read.row(ObjectKey(10))?.value(ColumnKey(1)) == .string("row 10"))
        #expect(try read.count() == 11)
        try store.verify()
    }

    @Test func indexEntriesGoIntoTheBlockOfTheirLeafsNode() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [
            ColumnSpec(name: "age", type: .int, indexed: true), ColumnSpec(name: "name", type: .string, indexed: true),
        ])
        for i in 0..<200 { try setup.insert(table, values: [.int(Int64(i % 10)), .string("n\(i % 7)")]) }
        try setup.commit()
        var reused: [Int] = []
        for i in 200..<240 {
            let transaction = try store.beginWrite()
            // Each entry lands inside the age index's leaf, at the end of its age's run; the
            // names have suffixes of several lengths, a block this does not extend.
            try transaction.insert(table, values: [.int(Int64(i % 10)), .string(i % 2 == 0 ? "n\(i % 7)" : "name \(i)")])
            if i % 5 == 0 { _ = try transaction.delete(table, ObjectKey(Int64(i - 100))) }
            try transaction.commit()
            reused.append(transaction.reusedIndexLeafCount)
        }
        // The age leaf is written from its node except in commits that also delete.
        #expect(reused == (200..<240).map { $0 % 5 == 0 ? 0 : 1 })
        let read = store.beginRead()
        try DatabaseDump.checkIndexes(read)
        #expect(try read.table(table).indexLookup(ColumnKey(0), .int(3)).count == 24)
        try store.verify()
    }
}
