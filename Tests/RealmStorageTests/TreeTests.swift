import Testing
import TestSupport
@testable import RealmStorage

/// Exhaustive small-fan-out cases: with capacities of 2 to 4, a few dozen keys force every
/// leaf and inner split, root growth and collapse, and every merge, in each order.
@Suite struct TreeTests {
    enum Order: String, CaseIterable { case ascending, descending, zigzag, shuffled, interleaved }

    static func keys(_ n: Int, _ order: Order) -> [Int64] {
        let keys = (0..<Int64(n)).map { $0 * 2 }
        switch order {
        case .ascending: return keys
        case .descending: return keys.reversed()
        case .zigzag: return keys.indices.map { $0 % 2 == 0 ? keys[$0 / 2] : keys[keys.count - 1 - $0 / 2] }
        case .shuffled:
            var random = SeededRandom(seed: UInt64(n) &* 7919)
            return keys.shuffled(using: &random)
        case .interleaved:
            // Three ascending streams over thirds of the range, taking turns (writers each
            // appending to a range of their own: splits at the end of a run, BTree.splitPoint).
            let third = (keys.count + 2) / 3
            let streams = (0..<3).map { keys.dropFirst($0 * third).prefix(third) }
            return (0..<third).flatMap { i in streams.compactMap { $0.dropFirst(i).first } }
        }
    }

    static let cases: [(Int, Int)] = [(2, 2), (2, 3), (3, 2), (3, 3), (4, 4), (4, 2)]

    /// Checks the invariants of BTree+Edit.swift on the buffers of a tree; returns (count,
    /// first key), or nil for a committed subtree (checked by `verify` instead).
    @discardableResult
    static func checkBuffers(_ node: TreeNode<ClusterFormat>, _ limits: TreeLimits, isRoot: Bool) -> (Int, Int64?)? {
        switch node {
        case .clean: return nil
        case .leaf(let leaf):
            #expect(leaf.count <= limits.leafCapacity)
            #expect(isRoot || leaf.count > 0)
            #expect(leaf.keys == leaf.keys.sorted())
            return (leaf.count, leaf.keys.first)
        case .inner(let inner):
            #expect(inner.children.count <= limits.innerCapacity)
            #expect(!isRoot || inner.children.count >= 2)
            #expect(inner.children.count > 0)
            var total = 0
            for (i, child) in inner.children.enumerated() {
                guard let (count, first) = checkBuffers(child, limits, isRoot: false) else {
                    total += inner.counts[i]
                    continue
                }
                #expect(inner.counts[i] == count)
                #expect(inner.keys[i] == first)
                total += count
            }
            #expect(inner.total == total)
            return (total, inner.keys.first)
        }
    }

    @Test(arguments: cases)
    func everyInsertAndDeleteOrderKeepsTheInvariants(leafCapacity: Int, innerCapacity: Int) throws {
        let limits = TreeLimits(leafCapacity: leafCapacity, innerCapacity: innerCapacity)
        for n in [0, 1, 2, 3, 5, 8, 13, 21, 34] {
            for insertOrder in Order.allCases {
                for deleteOrder in Order.allCases {
                    let dir = TemporaryDirectory()
                    let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: limits))
                    var tx = try store.beginWrite()
                    let table = try tx.createTable("T", columns: [ColumnSpec(name: "v", type: .int, indexed: true)])
                    for key in Self.keys(n, insertOrder) {
                        try tx.insert(table, key: ObjectKey(key), values: [.int(key * 10)])
                        Self.checkBuffers(tx.states[table]!.cluster.root, limits, isRoot: true)
                    }
                    try tx.commit()
                    try store.verify()
                    #expect(try store.beginRead().table(table).keys().map(\.value) == Self.keys(n, .ascending))

                    // Delete half in one transaction (merging buffers), the rest one commit
                    // at a time (merging committed nodes into buffers).
                    var remaining = Set(Self.keys(n, .ascending))
                    let deletions = Self.keys(n, deleteOrder)
                    tx = try store.beginWrite()
                    for key in deletions.prefix(n / 2) {
                        #expect(try tx.delete(table, ObjectKey(key)))
                        remaining.remove(key)
                        Self.checkBuffers(tx.states[table]!.cluster.root, limits, isRoot: true)
                    }
                    try tx.commit()
                    try store.verify()
                    for key in deletions.dropFirst(n / 2) {
                        tx = try store.beginWrite()
                        #expect(try tx.delete(table, ObjectKey(key)))
                        remaining.remove(key)
                        try tx.commit()
                        if remaining.count % 3 == 0 { try store.verify() }
                    }
                    try store.verify()
                    let read = store.beginRead()
                    #expect(try read.table(table).count() == 0)
                    #expect(try read.table(table).indexCount(ColumnKey(0)) == 0)
                }
            }
        }
    }

    @Test(arguments: cases)
    func lookupsFindEveryKeyAtEveryShape(leafCapacity: Int, innerCapacity: Int) throws {
        let limits = TreeLimits(leafCapacity: leafCapacity, innerCapacity: innerCapacity)
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: limits))
        var tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: [ColumnSpec(name: "v", type: .int, indexed: true)])
        try tx.commit()
        for n in 1...40 {
            tx = try store.beginWrite()
            let key = Int64(n) * 2
            try tx.insert(table, key: ObjectKey(key), values: [.int(key % 7)])
            try tx.commit()
            let view = try store.beginRead().table(table)
            for k in 0...(Int64(n) * 2 + 1) {
                let expected = k > 0 && k % 2 == 0
                #expect(try view.contains(ObjectKey(k)) == expected, "key \(k) with \(n) objects")
            }
            for bucket in Int64(0)..<7 {
                let expected = (1...n).map { Int64($0) * 2 }.filter { $0 % 7 == bucket }
                #expect(try view.indexLookup(ColumnKey(0), .int(bucket)).map(\.value) == expected)
            }
        }
        try store.verify()
    }
}

@Suite struct ConsecutiveKeysTests {
    @Test(arguments: [2, 4, 256])
    func lookupsInLeavesOfConsecutiveKeysFindExactlyTheirKeys(leafCapacity: Int) throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: leafCapacity, innerCapacity: 4)))
        var tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: [ColumnSpec(name: "v", type: .int)])
        for k in Int64(0)..<40 { try tx.insert(table, values: [.int(k * 3)]) }
        try tx.commit()
        var view = try store.beginRead().table(table)
        for k in Int64(-3)...43 {
            #expect(try view.row(ObjectKey(k))?.value(ColumnKey(0)) == ((0..<40).contains(k) ? .int(k * 3) : nil), "key \(k)")
        }
        // A gap: the leaves around it lose the flag, lookups stay exact.
        tx = try store.beginWrite()
        try tx.delete(table, ObjectKey(17))
        try tx.commit()
        view = try store.beginRead().table(table)
        for k in Int64(-3)...43 {
            #expect(try view.contains(ObjectKey(k)) == ((0..<40).contains(k) && k != 17), "key \(k)")
        }
        try store.verify()
    }
}

@Suite struct PackedIntsTests {
    @Test(arguments: [0, 1, 2, 3, 15, 16, 255, 256, 65_535, 65_536, Int64(UInt32.max), Int64(UInt32.max) + 1, Int64.max])
    func valuesRoundTripAtEveryWidth(span: Int64) throws {
        var random = SeededRandom(seed: UInt64(bitPattern: span))
        for base in [Int64.min, -1_000, 0, 1_700_000_000, Int64.max - span] {
            let values = (0..<77).map { i -> Int64 in
                if i == 0 { return base }
                if i == 1 { return base &+ span }
                return base &+ Int64.random(in: 0...span, using: &random)
            }
            var writer = NodeWriter()
            PackedInts.write(values, to: &writer)
            var bytes = writer.finish(kind: .list, version: VersionID(1))
            NodeChecksum.stamp(&bytes, offset: UInt64(FileHeader.size))
            try bytes.withUnsafeBytes { raw in
                // A node view over the bytes as if they were a file of header + node.
                var file = [UInt8](repeating: 0, count: FileHeader.size)
                file += Array(raw)
                try file.withUnsafeBytes { mapped in
                    let node = try NodeView(ref: Ref(UInt64(FileHeader.size)), mapping: mapped.baseAddress!,
                                            limit: UInt64(mapped.count), expecting: .list)
                    let packed = try node.packedInts(at: NodeLayout.headerSize)
                    #expect(packed.toArray() == values)
                }
            }
        }
    }
}

@Suite struct IndexKeyTests {
    static func assertOrdered(_ values: [Value]) {
        for (a, b) in zip(values, values.dropFirst()) {
            #expect(compareBytes(IndexKey.encode(a), IndexKey.encode(b)) < 0, "\(a) should sort before \(b)")
        }
    }

    @Test func integersDoublesAndTimestampsSortByValue() {
        Self.assertOrdered([.null, .int(Int64.min), .int(-1), .int(0), .int(1), .int(Int64.max)])
        Self.assertOrdered([.double(-.infinity), .double(-1e300), .double(-1), .double(-1e-300), .double(0),
                            .double(1e-300), .double(1), .double(.infinity), .double(.nan)])
        Self.assertOrdered([.timestamp(Timestamp(seconds: -5, nanoseconds: 999_999_999)), .timestamp(Timestamp(seconds: 0, nanoseconds: 0)),
                            .timestamp(Timestamp(seconds: 0, nanoseconds: 1)), .timestamp(Timestamp(seconds: 1, nanoseconds: 0))])
        #expect(IndexKey.encode(.double(-0.0)) == IndexKey.encode(.double(0.0)))
        #expect(IndexKey.encode(.float(1.5)) == IndexKey.encode(.double(1.5)))
    }

    @Test func stringsSortByUTF8Bytes() {
        Self.assertOrdered([.string(""), .string("a"), .string("a\0"), .string("a\0b"), .string("ab"), .string("b"),
                            .string("é"), .string("日本")])
        Self.assertOrdered([.binary([]), .binary([0]), .binary([0, 0]), .binary([0, 1]), .binary([1]), .binary([255])])
    }

    @Test func longValuesAreCutToThePrefixLimit() {
        let long = String(repeating: "x", count: 500)
        let (bytes, truncated) = IndexKey.prefix(.string(long))
        #expect(truncated)
        #expect(bytes.count == IndexEntry.prefixLimit)
        #expect(!IndexKey.prefix(.string("short")).truncated)
    }
}

@Suite struct KeyRangesTests {
    @Test func insertAndRemoveMatchASet() {
        var random = SeededRandom(seed: 42)
        var ranges = KeyRanges()
        var model = Set<Int64>()
        for _ in 0..<5_000 {
            let key = Int64.random(in: -50...50, using: &random)
            if random.chance(0.6) { ranges.insert(key); model.insert(key) } else { ranges.remove(key); model.remove(key) }
            #expect(Set(ranges) == model)
            #expect(ranges.count == model.count)
        }
        for (a, b) in zip(ranges.ranges, ranges.ranges.dropFirst()) { #expect(a.upperBound + 1 < b.lowerBound) }
    }

    @Test func insertedRangesMatchASet() {
        var random = SeededRandom(seed: 43)
        var ranges = KeyRanges()
        var model = Set<Int64>()
        for _ in 0..<2_000 {
            let low = Int64.random(in: -60...60, using: &random), high = low + Int64.random(in: 0...6, using: &random)
            ranges.insert(low...high)
            model.formUnion(low...high)
            #expect(Set(ranges) == model)
        }
        for (a, b) in zip(ranges.ranges, ranges.ranges.dropFirst()) { #expect(a.upperBound + 1 < b.lowerBound) }
    }

    @Test func consecutiveKeysStayOneRange() {
        var ranges = KeyRanges()
        for k in Int64(0)..<10_000 { ranges.insert(k) }
        #expect(ranges.ranges == [0...9_999])
    }
}
