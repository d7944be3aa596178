import Testing
import TestSupport
@testable import RealmStorage

/// Where overfull leaves split (BTree.splitPoint). Writers that each append to a key range of
/// their own (ids handed out per writer, per tenant, per shard) insert in the middle of the
/// tree; halving a leaf each time it fills would leave the range's last leaf one half to fully
/// packed with keys no writer touches again, rewritten at each of its writer's commits.
@Suite struct SplitPointTests {
    static let streams = 6, perStream = 120, capacity = 8

    static func key(stream: Int, _ n: Int) -> Int64 { Int64(stream * 1_000 + n) }

    /// The leaves that hold `streams × perStream` objects at best: full ones, and for each
    /// stream a partial leaf at its end and one holding the first keys of the next stream
    /// (written before the run reached them).
    static var leafBound: Int { (streams * perStream + capacity - 1) / capacity + 2 * streams }

    static func open(_ directory: TemporaryDirectory) throws -> (Store, TableKey) {
        let store = try Store.open(path: directory.path(),
                                   options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: capacity, innerCapacity: 8)))
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("Row", columns: [ColumnSpec(name: "v", type: .int)])
        try transaction.commit()
        return (store, table)
    }

    /// The keys of each leaf of the table, in order.
    static func leaves(_ store: Store, _ table: TableKey) throws -> [[Int64]] {
        var leaves: [[Int64]] = []
        _ = try store.beginRead().table(table).tree.forEachLeaf { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node):
                let leaf = try ClusterLeafView(node)
                leaves.append((0..<leaf.count).map { leaf.keys[$0] })
            case .dirty(let leaf):
                leaves.append(leaf.keys)
            }
            return true
        }
        return leaves
    }

    /// Checks the objects and the leaves: few, and the leaf each writer's next insert goes to
    /// holds that writer's keys only (a neighbour's keys there would be written again at each
    /// of its commits).
    static func checkContentsAndLeaves(_ store: Store, _ table: TableKey) throws {
        try store.verify()
        let expected = (0..<streams).flatMap { s in (0..<perStream).map { key(stream: s, $0) } }
        #expect(try store.beginRead().table(table).keys().map(\.value) == expected)
        let leaves = try leaves(store, table)
        #expect(leaves.count <= leafBound, "halving leaves gives about twice as many")
        for s in 0..<streams {
            let last = key(stream: s, perStream - 1)
            let leaf = try #require(leaves.first { $0.contains(last) })
            #expect(leaf.allSatisfy { $0 / 1_000 == s }, "stream \(s)'s last leaf holds \(leaf)")
        }
    }

    /// The writers take turns, one object each, one commit per object or all in one
    /// transaction (the run is then known to the buffer, not carried between commits).
    @Test(arguments: [true, false])
    func writersAppendingToRangesOfTheirOwnFillTheirLeaves(oneCommitEach: Bool) throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.open(directory)
        var transaction = try store.beginWrite()
        for n in 0..<Self.perStream {
            for s in 0..<Self.streams {
                try transaction.insert(table, key: ObjectKey(Self.key(stream: s, n)), values: [.int(Int64(n))])
                if oneCommitEach {
                    try transaction.commit()
                    transaction = try store.beginWrite()
                }
            }
        }
        try transaction.commit()
        try Self.checkContentsAndLeaves(store, table)
    }

    /// A delete between two inserts of a run forgets it: the next split halves, and nothing
    /// is lost either way.
    @Test func aDeleteInsideARunKeepsEveryObject() throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.open(directory)
        var expected: [Int64] = []
        for n in 0..<60 {
            for s in 0..<3 {
                let transaction = try store.beginWrite()
                let key = Self.key(stream: s, n)
                try transaction.insert(table, key: ObjectKey(key), values: [.int(Int64(n))])
                expected.append(key)
                if n % 7 == 3 {
                    #expect(try transaction.delete(table, ObjectKey(key - 2)))
                    expected.removeAll { $0 == key - 2 }
                }
                try transaction.commit()
            }
        }
        try store.verify()
        #expect(try store.beginRead().table(table).keys().map(\.value) == expected.sorted())
    }

    /// Many short ascending sequences (tenants' first few objects) are not runs: no leaf is
    /// split at their ends, so none is left far below a third full.
    @Test func shortSequencesLeaveNoSmallLeaves() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(),
                                   options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 16, innerCapacity: 16)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "v", type: .int)])
        try setup.commit()
        var random = SeededRandom(seed: 7)
        let tenants = (0..<400).map { (id: $0, count: 2 + $0 % 3) }
        for n in 0..<4 {
            for tenant in tenants.shuffled(using: &random) where n < tenant.count {
                let transaction = try store.beginWrite()
                try transaction.insert(table, key: ObjectKey(Int64(tenant.id * 1_000 + n)), values: [.int(Int64(n))])
                try transaction.commit()
            }
        }
        try store.verify()
        let leaves = try Self.leaves(store, table)
        #expect(leaves.map(\.count).reduce(0, +) == tenants.map(\.count).reduce(0, +))
        #expect(leaves.filter { $0.count * 3 < 16 }.count <= 1, "leaf sizes \(leaves.map(\.count))")
    }

    /// Random inserts seldom form runs: the leaves stay at least about half full.
    @Test func randomInsertsStillSplitInHalves() throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.open(directory)
        var random = SeededRandom(seed: 42)
        let keys = (0..<Int64(600)).shuffled(using: &random)
        for chunk in stride(from: 0, to: keys.count, by: 10) {
            let transaction = try store.beginWrite()
            for key in keys[chunk..<chunk + 10] { try transaction.insert(table, key: ObjectKey(key), values: [.int(key)]) }
            try transaction.commit()
        }
        try store.verify()
        #expect(try store.beginRead().table(table).keys().map(\.value) == Array(0..<600))
        #expect(try Self.leaves(store, table).count <= 600 / (Self.capacity / 2))
    }

    /// A split sums the bytes of the smaller piece only; the other keeps the rest. Both come
    /// out as a full sum would have them.
    @Test(arguments: [1, 3, 7])
    func bothPiecesOfASplitKeepTheirByteEstimates(at index: Int) {
        let values: [Value] = (0..<8).map { .string(String(repeating: "x", count: $0 * 5)) }
        let leaf = ClusterLeaf(keys: (0..<8).map(Int64.init), columns: [values, (0..<8).map { .int(Int64($0)) }],
                               lists: [[], []], byteEstimate: 0)
        leaf.recomputeEstimate()
        let right = leaf.splitOff(at: index)
        let (left, rest) = (leaf.byteEstimate, right.byteEstimate)
        leaf.recomputeEstimate()
        right.recomputeEstimate()
        #expect(left == leaf.byteEstimate)
        #expect(rest == right.byteEstimate)
    }
}
