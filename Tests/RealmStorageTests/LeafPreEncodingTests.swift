import Testing
import TestSupport
@testable import RealmStorage

/// A large commit's cluster leaves are encoded on a second thread while the committing thread
/// merges index entries (LeafPreEncoding.swift). The nodes must be the ones one thread writes,
/// byte for byte, at the same places; lists written at commit keep their leaf on one thread.
@Suite struct LeafPreEncodingTests {
    /// Runs the same random workload (LeafReuseTests' columns: every codec, a list and an
    /// index; inserts, sets, list sets and deletes, many per commit) on a store that encodes on
    /// one thread and on one that hands over every commit; returns both stores.
    static func sameWorkload(seed: UInt64, _ a: TemporaryDirectory, _ b: TemporaryDirectory) throws -> (Store, Store, TableKey) {
        let limits = TreeLimits(leafCapacity: 6, innerCapacity: 4)
        var oneThread = StoreOptions(durability: .unsafe, limits: limits)
        oneThread.parallelEncodingLeaves = .max
        var twoThreads = StoreOptions(durability: .unsafe, limits: limits)
        twoThreads.parallelEncodingLeaves = 1
        let stores = [try Store.open(path: a.path(), options: oneThread), try Store.open(path: b.path(), options: twoThreads)]
        var tables: [TableKey] = []
        for store in stores {
            let setup = try store.beginWrite()
            tables.append(try setup.createTable("Row", columns: LeafReuseTests.columns))
            try setup.commit()
        }
        #expect(tables[0] == tables[1])
        for (n, store) in stores.enumerated() {
            var random = ReplayableRandom(seed: seed)
            var keys: [Int64] = []
            var nextKey: Int64 = 0
            for round in 0..<12 {
                let transaction = try store.beginWrite()
                for _ in 0..<(20 + random.below(200)) {
                    let pick = random.below(100)
                    if keys.isEmpty || pick < (round < 6 ? 70 : 30) {
                        let key = random.chance(10) && nextKey > 0 ? Int64(random.below(Int(nextKey))) : nextKey
                        let row = LeafReuseTests.row(&random)
                        guard !keys.contains(key) else { continue }
                        _ = try transaction.insert(tables[n], key: ObjectKey(key), values: row.values, lists: row.lists)
                        keys.append(key)
                        nextKey = max(nextKey, key + 1)
                    } else if pick < 80 {
                        var c = random.below(LeafReuseTests.columns.count)
                        if c == LeafReuseTests.listColumn { c = 0 }
                        try transaction.set(tables[n], ObjectKey(keys[random.below(keys.count)]), ColumnKey(c), LeafReuseTests.value(c, &random))
                    } else if pick < 90 {
                        let list = (0..<random.below(4)).map { _ in Value.int(Int64(random.below(50))) }
                        try transaction.setList(tables[n], ObjectKey(keys[random.below(keys.count)]), ColumnKey(LeafReuseTests.listColumn), list)
                    } else {
                        let key = keys.remove(at: random.below(keys.count))
                        _ = try transaction.delete(tables[n], ObjectKey(key))
                    }
                }
                try transaction.commit()
            }
        }
        return (stores[0], stores[1], tables[0])
    }

    /// The nodes of every table tree one version reaches, as (offset, bytes).
    static func treeNodes(_ store: Store) throws -> [(offset: UInt64, bytes: [UInt8])] {
        let read = store.beginRead()
        var walker = Verifier(context: read.context, limit: read.slot.logicalSize)
        for info in read.top.tables { _ = try walker.checkTable(info, top: read.top) }
        return walker.extents.sorted { $0.offset < $1.offset }.map { extent in
            (extent.offset, Array(UnsafeRawBufferPointer(start: read.context.base + Int(extent.offset), count: Int(extent.length))))
        }
    }

    /// The leaf buffers of a tree, in key order.
    static func leaves(_ node: TreeNode<ClusterFormat>) -> [ClusterLeaf] {
        switch node {
        case .clean: []
        case .leaf(let leaf): [leaf]
        case .inner(let inner): inner.children.flatMap(leaves)
        }
    }

    @Test func twoThreadsWriteTheNodesOneThreadWrites() throws {
        let seed = ReplayableRandom.seed("OPENREALM_PRE_ENCODING_SEED")
        let (a, b) = (TemporaryDirectory(), TemporaryDirectory())
        let (one, two, table) = try Self.sameWorkload(seed: seed, a, b)
        let nodes = (try Self.treeNodes(one), try Self.treeNodes(two))
        #expect(nodes.0.count > 100, "the workload should make many leaves (seed \(seed))")
        #expect(nodes.0.map(\.offset) == nodes.1.map(\.offset), "seed \(seed)")
        #expect(zip(nodes.0, nodes.1).allSatisfy { $0.bytes == $1.bytes }, "seed \(seed)")
        let dumps = (try DatabaseDump(one.beginRead()), try DatabaseDump(two.beginRead()))
        #expect(dumps.0.tables[table.value]?.rows == dumps.1.tables[table.value]?.rows, "seed \(seed)")
        try DatabaseDump.checkIndexes(two.beginRead())
        try two.verify()
    }

    /// A leaf with a list changed in the transaction is left to the commit (the list's ref goes
    /// into it); the others are encoded ahead, for the version being written.
    @Test func leavesWithChangedListsAreLeftToTheCommit() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 4)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int), ColumnSpec(name: "list", type: .int, isList: true)])
        for i in 0..<40 { try setup.insert(table, values: [.int(Int64(i)), .null], lists: i == 5 ? [1: [.int(1)]] : [:]) }
        try setup.commit()

        let transaction = try store.beginWrite()
        for i in 0..<40 { try transaction.set(table, ObjectKey(Int64(i)), ColumnKey(0), .int(Int64(100 + i))) }
        try transaction.setList(table, ObjectKey(20), ColumnKey(1), [.int(7)])
        let state = transaction.state(at: try transaction.tableIndex(table))
        let encoding = try #require(LeafPreEncoding.start([state.cluster], version: transaction.version, minimumLeaves: 1))
        encoding.finish(keeping: true)
        let leaves = Self.leaves(state.cluster.root)
        #expect(leaves.count == 10)
        for leaf in leaves {
            let hasChangedList = leaf.keys.contains(20)
            #expect((leaf.preEncoded == nil) == hasChangedList, "leaf from key \(leaf.keys[0])")
            #expect(leaf.preEncoded.map { $0.version == transaction.version } ?? true)
        }

        // Called off (a failed merge): nothing encoded ahead stays.
        let again = try #require(LeafPreEncoding.start([state.cluster], version: transaction.version, minimumLeaves: 1))
        again.finish(keeping: false)
        #expect(leaves.allSatisfy { $0.preEncoded == nil })
        // The commit encodes them all itself then.
        try transaction.commit()
        let rows = try #require(try DatabaseDump(store.beginRead()).tables[table.value]).rows
        #expect(rows[20]?.lists[1] == [.int(7)])
        #expect(rows[5]?.lists[1] == [.int(1)])
        #expect(rows.count == 40 && rows.values.allSatisfy { if case .int(let n) = $0.values[0] { n >= 100 } else { false } })
        try store.verify()
    }

    /// The leaves a commit encoded and does not keep for the next transaction are held until
    /// the commit's nodes are written (RetiredBuffers), then let go: none outlives the commit.
    @Test func aCommitLetsGoOfTheLeavesItDoesNotKeep() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 4)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int), ColumnSpec(name: "s", type: .string)])
        try setup.commit()

        let transaction = try store.beginWrite()
        for i in 0..<200 { try transaction.insert(table, values: [.int(Int64(i)), .string("row \(i)")]) }
        final class Weak { weak var leaf: ClusterLeaf?; init(_ leaf: ClusterLeaf) { self.leaf = leaf } }
        let leaves = Self.leaves(transaction.state(at: try transaction.tableIndex(table)).cluster.root).map(Weak.init)
        #expect(leaves.count == 50)
        try transaction.commit()
        // Appends left all but the last behind: not kept (DecodedLeaves.keep), so nothing
        // holds them now.
        #expect(leaves.dropLast().allSatisfy { $0.leaf == nil })
        #expect(try store.beginRead().table(table).count() == 200)
    }
}
