import Testing
import TestSupport
@testable import RealmStorage

/// Non-unique indexes take inserts in batches (pending entries merged before the next read,
/// schema change or commit). Random edits with long runs of inserts between reads; every read
/// inside the transaction and after each commit must find exactly what a scan finds.
@Suite struct IndexBatchTests {
    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "bucket", type: .int, indexed: true),
        ColumnSpec(name: "name", type: .string, nullable: true, indexed: true),
        ColumnSpec(name: "score", type: .double),
    ]

    /// The engine's view of the two indexed columns against the model, value by value.
    static func check(_ view: TableView, _ model: [Int64: [Value]], extra: ColumnKey?, seed: UInt64, _ when: String) throws {
        var buckets: [Value: Set<Int64>] = [:], names: [Value: Set<Int64>] = [:]
        for (key, values) in model {
            buckets[values[1], default: []].insert(key)
            names[values[2], default: []].insert(key)
        }
        for bucket in 0..<8 {
            let value = Value.int(Int64(bucket))
            let viaIndex = Set(try view.indexLookup(ColumnKey(1), value).map(\.value))
            #expect(viaIndex == buckets[value] ?? [], "bucket \(bucket) \(when) — seed \(seed)")
            #expect(try view.indexMatchCount(ColumnKey(1), value) == viaIndex.count, "count of bucket \(bucket) \(when) — seed \(seed)")
        }
        for name: Value in [.null, .string("n0"), .string("n3"), .string(String(repeating: "long-", count: 8) + "1")] {
            let viaIndex = Set(try view.indexLookup(ColumnKey(2), name).map(\.value))
            #expect(viaIndex == names[name] ?? [], "name \(name) \(when) — seed \(seed)")
            #expect(try view.indexMatchCount(ColumnKey(2), name) == viaIndex.count, "count of name \(name) \(when) — seed \(seed)")
        }
        if let extra {
            // A column added with an index holds its default for every object.
            #expect(Set(try view.indexLookup(extra, .int(0)).map(\.value)) == Set(model.keys), "added column \(when) — seed \(seed)")
        }
        #expect(try view.count() == model.count, "count \(when) — seed \(seed)")
    }

    @Test(arguments: [(TreeLimits(leafCapacity: 3, innerCapacity: 3, leafBytes: 4096), UInt64(11)),
                      (TreeLimits(leafCapacity: 16, innerCapacity: 4), UInt64(12)),
                      (TreeLimits.standard, UInt64(13))])
    func batchedInsertsMatchAScan(limits: TreeLimits, seed: UInt64) throws {
        var random = ReplayableRandom(seed: seed)
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(limits: limits))
        var tx = try store.beginWrite()
        let table = try tx.createTable("Thing", columns: Self.columns)
        try tx.commit()

        var committed: [Int64: [Value]] = [:]
        var working: [Int64: [Value]] = [:]
        var committedExtra: ColumnKey?
        var extra: ColumnKey?
        var nextID: Int64 = 0
        var lastInserted: ObjectKey?
        tx = try store.beginWrite()

        func randomName() -> Value {
            switch random.below(10) {
            case 0: return .null
            case 1: return .string(String(repeating: "long-", count: 8) + "\(random.below(3))")
            default: return .string("n\(random.below(6))")
            }
        }
        /// Values for every column; removed columns (their places stay) take null.
        func row(columns: Int) -> [Value] {
            nextID += 1
            var values: [Value] = [.int(nextID), .int(Int64(random.below(8))), randomName(), .double(Double(random.below(100)))]
            for c in 4..<columns { values.append(c == extra?.index ? .int(0) : .null) }
            return values
        }

        for step in 0..<2_500 {
            let keys = Array(working.keys)
            switch random.below(100) {
            case 0..<55:
                // Runs of inserts with no read in between: the entries stay pending.
                for _ in 0..<(1 + random.below(random.chance(10) ? 300 : 20)) {
                    let values = row(columns: try tx.columnCount(table))
                    let key = try tx.insert(table, values: values)
                    working[key.value] = Array(values.prefix(4))
                    lastInserted = key
                }
            case 55..<60 where lastInserted != nil && working[lastInserted!.value] != nil:
                // The newest object goes again (its entries are the last pending ones).
                #expect(try tx.delete(table, lastInserted!))
                working[lastInserted!.value] = nil
                lastInserted = nil
            case 60..<66 where !keys.isEmpty:
                let key = keys.randomElement(using: &random)!
                #expect(try tx.delete(table, ObjectKey(key)))
                working[key] = nil
            case 66..<74 where !keys.isEmpty:
                let key = keys.randomElement(using: &random)!
                let column = 1 + random.below(2)
                let value: Value = column == 1 ? .int(Int64(random.below(8))) : randomName()
                try tx.set(table, ObjectKey(key), ColumnKey(column), value)
                working[key]![column] = value
            case 74..<82:
                try Self.check(tx.table(table), working, extra: extra, seed: seed, "inside the write at step \(step)")
            case 82..<88:
                try tx.commit()
                committed = working
                committedExtra = extra
                try Self.check(store.beginRead().table(table), committed, extra: committedExtra, seed: seed, "after the commit at step \(step)")
                if random.chance(20) { try store.verify() }
                tx = try store.beginWrite()
            case 88..<91:
                tx.rollback()
                working = committed
                extra = committedExtra
                lastInserted = nil
                tx = try store.beginWrite()
            case 91..<94:
                // Dropping and rebuilding an index with entries pending.
                try tx.setIndex(table, ColumnKey(1), indexed: false, unique: false)
                try tx.setIndex(table, ColumnKey(1), indexed: true, unique: false)
            case 94..<96:
                if let column = extra {
                    try tx.removeColumn(table, column)
                    extra = nil
                } else {
                    extra = try tx.addColumn(table, ColumnSpec(name: "extra\(step)", type: .int, indexed: true))
                }
            case 96..<97:
                try tx.clear(table)
                working = [:]
                lastInserted = nil
            case 97..<99:
                // A part under a savepoint, kept or undone, with entries pending from before.
                let savepoint = try tx.savepoint()
                let before = working
                for _ in 0..<(1 + random.below(40)) {
                    let values = row(columns: try tx.columnCount(table))
                    let key = try tx.insert(table, values: values)
                    working[key.value] = Array(values.prefix(4))
                }
                if let key = working.keys.randomElement(using: &random) {
                    let value = Value.int(Int64(random.below(8)))
                    try tx.set(table, ObjectKey(key), ColumnKey(1), value)
                    working[key]![1] = value
                }
                if random.chance(50) {
                    try tx.rollback(to: savepoint)
                    working = before
                }
                tx.releaseSavepoint(savepoint)
                lastInserted = nil
            default:
                break
            }
        }
        try tx.commit()
        try store.verify()
        try Self.check(store.beginRead().table(table), working, extra: extra, seed: seed, "at the end")
    }

    /// A sorted batch that falls between two entries of a leaf goes in there in place; the
    /// leaf still holds every entry of its source node, on both sides of the batch. A batch
    /// that meets an entry, or spreads over several gaps, takes the merge.
    @Test func aBatchBetweenTwoEntriesGoesInInPlace() {
        func entries(_ values: [Int64]) -> [IndexEntry] { values.map { IndexEntry(value: .int($0), key: $0) } }
        let leaf = IndexLeaf(entries: entries([10, 20, 50, 60]))
        leaf.matchSource(Ref(4096))
        leaf.merge(entries([30, 40])[...])
        #expect(leaf.entries == entries([10, 20, 30, 40, 50, 60]))
        #expect(leaf.source?.entries.leading == 2 && leaf.source?.entries.trailing == 2)
        #expect(leaf.source?.entries.holdsAll(of: 4) == true)
        leaf.merge(entries([40, 45])[...])
        #expect(leaf.entries == entries([10, 20, 30, 40, 45, 50, 60]), "the entry already there is not doubled")
        leaf.merge(entries([5, 25, 55])[...])
        #expect(leaf.entries == entries([5, 10, 20, 25, 30, 40, 45, 50, 55, 60]))
        leaf.merge(entries([1])[...])
        #expect(leaf.entries.first == entries([1])[0] && leaf.count == 11)
    }

    /// Entries compare their inline prefixes word by word; that must equal byte order
    /// (shorter first on a tie), including against prefixes kept on the heap; so must the
    /// length of the bytes two prefixes share.
    @Test func entryOrderIsByteOrder() {
        var random = ReplayableRandom(seed: 21)
        func prefix() -> [UInt8] {
            // Few distinct bytes and many zeros, so that ties and zero padding are common.
            (0..<random.below(random.chance(20) ? 40 : 26)).map { _ in [0, 0, 1, 0xFF, 0x50][random.below(5)] }
        }
        for _ in 0..<20_000 {
            let a = prefix(), b = random.chance(30) ? prefix() : a + prefix().prefix(random.below(3))
            let x = IndexEntry(prefix: a, key: 1), y = IndexEntry(prefix: b, key: 1)
            let expected = compareBytes(a, b)
            #expect(x.comparePrefix(y) == expected, "\(a) vs \(b)")
            #expect(y.comparePrefix(x) == -expected, "\(b) vs \(a)")
            #expect((x < y) == (expected < 0) && (x == y) == (expected == 0))
            let limit = random.below(30)
            let common = zip(a, b).prefix { $0 == $1 }.count
            #expect(x.sharedPrefixLength(with: y, limit: limit) == min(limit, common), "shared \(a) \(b) \(limit)")
        }
    }

    /// A view that leaves index inserts pending answers through unique indexes and refuses
    /// the indexes it lacks entries for; a flushing view then answers through every index.
    @Test func unflushedViewsRefuseIncompleteIndexes() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        let tx = try store.beginWrite()
        let table = try tx.createTable("Thing", columns: Self.columns)
        let key = try tx.insert(table, values: [.int(7), .int(3), .string("n0"), .double(1)])
        let unflushed = try tx.table(table, flushingIndexes: false)
        #expect(try unflushed.indexFirst(ColumnKey(0), .int(7)) == key)
        #expect(try unflushed.value(key, ColumnKey(2)) == .string("n0"))
        let refused = Result { () throws(StorageError) in try unflushed.indexLookup(ColumnKey(1), .int(3)) }
        guard case .failure(let error) = refused else {
            Issue.record("a lookup through an index with pending entries was answered")
            return
        }
        #expect(error.code == .invalidArgument)
        #expect(try tx.table(table).indexLookup(ColumnKey(1), .int(3)) == [key])
        try tx.commit()
    }

    /// The direct encoding of integers and links equals the general one.
    @Test func directEntriesEqualEncodedOnes() {
        var random = ReplayableRandom(seed: 31)
        var values: [Value] = [.int(.min), .int(.max), .int(0), .int(-1), .link(ObjectKey(0)), .link(ObjectKey(.max)), .null, .string("x")]
        for _ in 0..<2_000 {
            let bits = Int64(bitPattern: random.next())
            values.append(.int(bits))
            values.append(.link(ObjectKey(bits)))
        }
        for value in values {
            let direct = IndexEntry(value: value, key: 5)
            let encoded = IndexEntry(prefix: IndexKey.prefix(value).bytes, key: 5)
            #expect(direct == encoded && direct.prefix == encoded.prefix, "\(value)")
        }
    }

    /// The radix sort of pending entries (object keys ascending) orders like a comparison
    /// sort, whichever bytes of the prefixes vary.
    @Test func radixSortOrdersLikeComparison() {
        var random = ReplayableRandom(seed: 41)
        for round in 0..<200 {
            // Each round varies a different mix of words, bytes and lengths.
            let masks = (0..<3).map { _ in random.chance(50) ? UInt64(0) : (random.chance(50) ? 0xFF : random.next()) }
            let keys = (0..<(1 + random.below(300))).map { i in
                InlineSortKey(w0: random.next() & masks[0], w1: random.next() & masks[1], w2: random.next() & masks[2],
                              count: round % 3 == 0 ? UInt8(random.below(25)) : 9, key: Int64(i * 3), position: Int32(i))
            }
            #expect(InlineSortKey.sorted(keys) == keys.sorted(), "round \(round)")
            #expect(InlineSortKey.sorted(keys.reversed()) == keys.sorted(), "round \(round), keys descending")
        }
    }

    /// A transaction with more pending entries than the limit merges them as it goes and
    /// still finds every one.
    @Test func longTransactionsMergeAsTheyGo() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        let tx = try store.beginWrite()
        let table = try tx.createTable("Thing", columns: [ColumnSpec(name: "bucket", type: .int, indexed: true)])
        let count = WriteTransaction.pendingIndexEntryLimit + 1_000
        for i in 0..<count { _ = try tx.insert(table, values: [.int(Int64(i % 7))]) }
        try tx.commit()
        try store.verify()
        let view = try store.beginRead().table(table)
        let found = try (0..<7).map { try view.indexLookup(ColumnKey(0), .int(Int64($0))).count }
        #expect(found.reduce(0, +) == count)
        #expect(found[0] == (count + 6) / 7)
    }

    /// A first batch of entries into an empty index lands in its one leaf, far past capacity:
    /// it is cut into full leaves (the last one keeps taking the appends), each entry where a
    /// lookup finds it.
    @Test func aFirstBatchIntoAnEmptyIndexIsCutIntoFullLeaves() throws {
        let dir = TemporaryDirectory()
        let capacity = 8
        let store = try Store.open(path: dir.path(), options: StoreOptions(limits: TreeLimits(leafCapacity: capacity, innerCapacity: 8)))
        let tx = try store.beginWrite()
        let table = try tx.createTable("Thing", columns: [ColumnSpec(name: "bucket", type: .int, indexed: true)])
        let count = 1_003
        for i in 0..<count { try tx.insert(table, values: [.int(Int64(i / 10))]) }
        try tx.commit()
        let view = try store.beginRead().table(table)
        var sizes: [Int] = []
        _ = try view.indexTree(ColumnKey(0)).forEachLeaf { (location) throws(StorageError) -> Bool in
            guard case .clean(let node) = location else { return true }
            sizes.append(try IndexFormat.leafCount(node))
            return true
        }
        #expect(sizes.reduce(0, +) == count)
        #expect(sizes.dropLast().allSatisfy { $0 == capacity }, "\(sizes)")
        for bucket in [0, 37, 100] {
            #expect(try view.indexLookup(ColumnKey(0), .int(Int64(bucket))).map(\.value) == Array((bucket * 10)..<min(count, bucket * 10 + 10)).map(Int64.init))
        }
        try store.verify()
    }

    /// Integers wait as plain pairs until something else comes to their column (a null):
    /// then they join the other entries in order. Removing the newest pending one (an insert
    /// undone at once) and a rollback to a savepoint find it in either kind.
    @Test func pendingIntegersAndOtherValuesMixInOneColumn() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(limits: TreeLimits(leafCapacity: 4, innerCapacity: 4)))
        let tx = try store.beginWrite()
        let table = try tx.createTable("Thing", columns: [ColumnSpec(name: "n", type: .int, nullable: true, indexed: true)])
        var model: [Int64: Value] = [:]
        func insert(_ value: Value) throws {
            let key = try tx.insert(table, values: [value])
            model[key.value] = value
        }
        // Keys out of order too (explicit keys), which the integer sort must order by key.
        for i in 0..<40 { try insert(.int(Int64((i * 7) % 5 - 2))) }
        try tx.insert(table, key: ObjectKey(1_000), values: [.int(1)]); model[1_000] = .int(1)
        try tx.insert(table, key: ObjectKey(500), values: [.int(1)]); model[500] = .int(1)
        let doomed = try tx.insert(table, values: [.int(3)])
        _ = try tx.delete(table, doomed)       // the newest pending integer, taken back
        try insert(.null)                       // the integers join the entries
        for i in 0..<20 { try insert(i % 3 == 0 ? .null : .int(Int64(i % 4))) }
        let point = try tx.savepoint()
        let undone = try tx.insert(table, values: [.int(2)])
        try tx.rollback(to: point)
        #expect(try tx.table(table).row(undone) == nil)
        func check(_ view: TableView, _ when: String) throws {
            for value: Value in [.null, .int(-2), .int(-1), .int(0), .int(1), .int(2), .int(3)] {
                let expected = Set(model.filter { $0.value == value }.keys)
                #expect(Set(try view.indexLookup(ColumnKey(0), value).map(\.value)) == expected, "\(value) \(when)")
            }
        }
        try check(try tx.table(table), "in the transaction")
        try tx.commit()
        try check(try store.beginRead().table(table), "after the commit")
        try store.verify()
    }
}
