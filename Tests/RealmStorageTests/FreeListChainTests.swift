import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// The free list as a chain of a full list and deltas (FreeList+Chain.swift): a small commit
/// writes what it changed, whatever the size of the list, and every chain reads back as the
/// list the writer had.
@Suite struct FreeListChainTests {
    /// A node area outside the extents' offsets, where the test lays its chain nodes.
    final class NodeArea {
        static let extentsEnd: UInt64 = 1 << 20
        let size = 64 << 20
        let base: UnsafeMutableRawPointer
        var next = Int(extentsEnd)

        init() {
            base = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 8)
            base.initializeMemory(as: UInt8.self, repeating: 0, count: size)
        }
        deinit { base.deallocate() }

        /// Writes the node `bytes` at the next free place, stamped for it as a commit does
        /// (NodeChecksum); returns its ref.
        func put(_ bytes: [UInt8]) -> Ref {
            let at = next
            bytes.withUnsafeBytes { (base + at).copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            next += bytes.count
            precondition(next <= size)
            stamp(Ref(UInt64(at)))
            return Ref(UInt64(at))
        }

        /// Stamps the node at `ref` again after a test changed it on purpose.
        func stamp(_ ref: Ref) {
            NodeChecksum.stamp(in: UnsafeMutableRawBufferPointer(start: base, count: size), at: Int(ref.offset), offset: ref.offset)
        }
    }

    /// One commit's worth of random allocator work, as `prepareCommit` and `finish` do it.
    static func randomCommit(_ space: inout FreeSpace, version: UInt64, random: inout SeededRandom) {
        for _ in 0..<Int.random(in: 0...6, using: &random) {
            let length = UInt64.random(in: 1...64, using: &random) * 8
            let offset = UInt64.random(in: 512..<(NodeArea.extentsEnd / 8 - 64), using: &random) * 8
            // Only space no extent holds may be released, as a commit releases nodes it replaced.
            let overlaps = space.extents.contains { $0.offset < offset + length && offset < $0.end }
            guard !overlaps, offset + length <= space.logicalSize else { continue }
            let tagged = Bool.random(using: &random)
            let first = version > 3 ? UInt64.random(in: 1..<version, using: &random) : 1
            space.release(offset: offset, length: length, firstVersion: tagged ? first : 0, endVersion: tagged ? version : 0)
        }
        let pinned = (0..<Int.random(in: 0...3, using: &random)).map { _ in UInt64.random(in: 1...version, using: &random) }.sorted()
        space.releaseUnreachable(pinned: pinned)
        if Bool.random(using: &random) { space.beginRun() } else { _ = space.beginRun(at: space.reserveNextRun(), length: 64) }
        for _ in 0..<Int.random(in: 0...8, using: &random) {
            let length = UInt64.random(in: 1...128, using: &random) * 8
            guard space.logicalSize + length < NodeArea.extentsEnd else { break }
            _ = space.allocate(length)
        }
    }

    /// Writes the commit's list node as `finish` does: a delta when there is a chain, else a
    /// full list. (`prepareCommit` releases the old chain into the list first; the chain's nodes
    /// lie in the node area here, outside the extents the test plays with, so they are dropped.)
    static func writeList(_ space: inout FreeSpace, version: UInt64, area: NodeArea, forceFull: Bool) -> Ref {
        if forceFull || space.wantsFullList { space.chain = [] }
        let bytes: [UInt8]
        let previous = space.chain.last?.ref
        if let previous {
            bytes = space.encodedDelta(version: VersionID(version), previous: previous, size: space.deltaNodeSize(spare: 0))
        } else {
            bytes = space.encoded(version: VersionID(version), size: NodeLayout.aligned(FreeSpace.nodeSize(entries: space.extents.count)))
        }
        let ref = area.put(bytes)
        space.wrote(FreeListNode(ref: ref, length: UInt64(bytes.count), version: version, isFull: previous == nil))
        return ref
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8])
    func everyChainReadsBackAsTheWritersList(seed: UInt64) throws {
        var random = SeededRandom(seed: seed)
        let area = NodeArea()
        var space = FreeSpace(extents: [], logicalSize: 64 << 10)
        var fullLists = 0
        for version in UInt64(2)..<600 {
            space.beginDelta()
            Self.randomCommit(&space, version: version, random: &random)
            let head = Self.writeList(&space, version: version, area: area, forceFull: false)
            if space.chain.count == 1 { fullLists += 1 }
            let read = try FreeSpace.decode(head: head, mapping: area.base, logicalSize: UInt64(area.size))
            #expect(read.extents == space.extents, "seed \(seed), version \(version)")
            #expect(read.chain == space.chain, "seed \(seed), version \(version)")
        }
        // Both kinds of node were written: deltas, and full lists once the deltas grew.
        #expect(fullLists > 1 && fullLists < 300, "\(fullLists) full lists")
    }

    @Test func aDeltaHoldsWhatTheCommitChangedNotTheWholeList() throws {
        let area = NodeArea()
        // A fragmented list: 5,000 extents, as a bulk-loaded file leaves it.
        let extents = (0..<5_000).map { FreeExtent(offset: 4096 + UInt64($0) * 128, length: 64, firstVersion: 0, endVersion: 0) }
        var space = FreeSpace(extents: extents, logicalSize: 4096 + 5_000 * 128 + 4096)
        space.beginDelta()
        _ = Self.writeList(&space, version: 2, area: area, forceFull: true)
        space.beginDelta()
        space.release(offset: 4096 + 64, length: 64, firstVersion: 1, endVersion: 3)
        space.releaseUnreachable(pinned: [2])
        _ = space.allocate(64)
        let size = space.deltaNodeSize(spare: 0)
        #expect(size < 256, "a one-change delta takes \(size) bytes")
        let head = Self.writeList(&space, version: 3, area: area, forceFull: false)
        #expect(space.chain.count == 2)
        #expect(try FreeSpace.decode(head: head, mapping: area.base, logicalSize: UInt64(area.size)).extents == space.extents)
    }

    @Test func aDamagedChainIsRefused() throws {
        let area = NodeArea()
        var space = FreeSpace(extents: [FreeExtent(offset: 8192, length: 64, firstVersion: 0, endVersion: 0)], logicalSize: 16384)
        space.beginDelta()
        let full = Self.writeList(&space, version: 2, area: area, forceFull: true)
        space.beginDelta()
        space.release(offset: 9000, length: 64, firstVersion: 1, endVersion: 3)
        let delta = Self.writeList(&space, version: 3, area: area, forceFull: false)
        // A delta naming itself as the node before it would loop.
        (area.base + Int(delta.offset) + 24).storeBytes(of: delta.offset.littleEndian, as: UInt64.self)
        area.stamp(delta)
        #expect(throws: StorageError.self) { try FreeSpace.decode(head: delta, mapping: area.base, logicalSize: UInt64(area.size)) }
        // A range that splits an extent of the list before it.
        (area.base + Int(delta.offset) + 24).storeBytes(of: full.offset.littleEndian, as: UInt64.self)
        (area.base + Int(delta.offset) + 32).storeBytes(of: UInt64(8200).littleEndian, as: UInt64.self)
        area.stamp(delta)
        #expect(throws: StorageError.self) { try FreeSpace.decode(head: delta, mapping: area.base, logicalSize: UInt64(area.size)) }
        // A node of another kind.
        #expect(throws: StorageError.self) { try FreeSpace.decode(head: Ref(16384), mapping: area.base, logicalSize: UInt64(area.size)) }
    }

    /// A store's small commits write deltas; the chain comes back as a full list in time, the
    /// file verifies throughout, and a reopened store reads the same list.
    @Test func smallCommitsWriteDeltasAndReopenToTheSameList() throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        do {
            let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe))
            var tx = try store.beginWrite()
            let table = try tx.createTable("Item", columns: [ColumnSpec(name: "n", type: .int, indexed: true), ColumnSpec(name: "s", type: .string)])
            for i in 0..<20_000 { try tx.insert(table, values: [.int(Int64(i * 7 % 1_000)), .string("item \(i)")]) }
            try tx.commit()
            var random = SeededRandom(seed: 3)
            var sawDelta = false, sawFullAfterDeltas = false
            for round in 0..<400 {
                tx = try store.beginWrite()
                let key = ObjectKey(Int64.random(in: 0..<20_000, using: &random))
                try tx.set(table, key, ColumnKey(1), .string("round \(round)"))
                try tx.commit()
                let chain = store.free.chain
                if chain.count > 1 { sawDelta = true } else if sawDelta { sawFullAfterDeltas = true }
                if round % 50 == 0 { try store.verify() }
            }
            #expect(sawDelta)
            #expect(sawFullAfterDeltas)
            try store.verify()
            let written = store.free
            _ = consume store
            let reopened = try Store.open(path: path, options: StoreOptions(durability: .unsafe))
            #expect(reopened.free.extents == written.extents)
            #expect(reopened.free.chain == written.chain)
            try reopened.verify()
        }
    }
}

/// Power cuts at every sync of small commits on a fragmented file: its commits write free list
/// deltas, and full lists again as the deltas grow; whatever reaches the disk must recover to
/// the last acknowledged commit or the one in flight, and take new commits.
@Suite struct FreeListChainCrashTests {
    static let commits = 60
    static let columns = [ColumnSpec(name: "n", type: .int, indexed: true), ColumnSpec(name: "s", type: .string)]

    /// Commit `step` of the workload: 0 fills the table, 1 deletes every third row (the file's
    /// free space in many fragments), then one update each.
    static func commit(_ step: Int, on store: Store) throws {
        let tx = try store.beginWrite()
        switch step {
        case 0:
            let table = try tx.createTable("Item", columns: columns)
            for i in 0..<3_000 { try tx.insert(table, values: [.int(Int64(i % 97)), .string("item \(i) " + String(repeating: "x", count: i % 40))]) }
        case 1:
            let table = try #require(try tx.table(named: "Item")).key
            for i in stride(from: 0, to: 3_000, by: 3) { try tx.delete(table, ObjectKey(Int64(i))) }
        default:
            let table = try #require(try tx.table(named: "Item")).key
            let key = ObjectKey(Int64((step * 7919) % 3_000 / 3 * 3 + 1))
            try tx.set(table, key, ColumnKey(1), .string("step \(step)"))
            try tx.set(table, key, ColumnKey(0), .int(Int64(step)))
        }
        try tx.commit()
    }

    static let expected: [DatabaseDump] = {
        let directory = TemporaryDirectory()
        let store = try! Store.open(path: directory.path("model.realm"), options: StoreOptions(durability: .unsafe))
        var dumps = [try! DatabaseDump(store.beginRead())]
        for step in 0..<commits {
            try! commit(step, on: store)
            dumps.append(try! DatabaseDump(store.beginRead()))
        }
        return dumps
    }()

    @Test func everySyncOfSmallCommitsOnAFragmentedFileSurvivesAPowerCut() throws {
        var sawDelta = false
        for n in 1... {
            let directory = TemporaryDirectory()
            let box = WrappedFileBox<CrashSimulatingFile>()
            let options = StoreOptions(fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: n) })
            let path = directory.path("work.realm")
            var crashedStep: Int?
            do {
                let store = try Store.open(path: path, options: options)
                for step in 0..<Self.commits {
                    do {
                        try Self.commit(step, on: store)
                        if store.free.chain.count > 1 { sawDelta = true }
                    } catch {
                        crashedStep = step
                        break
                    }
                }
            } catch {
                continue  // a crash in open's own sync: nothing of the workload began
            }
            guard let step = crashedStep, let state = try #require(box.file).crashState else { break }
            let policies = CrashInjectionTests.policies(for: state, seed: ReplayableRandom.derive(0xF4EE, n), randomCount: 3)
            for (index, policy) in policies.enumerated() {
                let image = state.image(policy)
                let imagePath = directory.path("image-\(index).realm")
                let context = "crash at sync \(n) in step \(step), policy \(policy)"
                do {
                    try image.write(to: imagePath)
                    let store = try Store.open(path: imagePath, options: StoreOptions(create: false))
                    try store.verify()
                    let recovered = try DatabaseDump(store.beginRead())
                    #expect(recovered == Self.expected[step] || recovered == Self.expected[step + 1], "\(context)")
                    // The recovered list carries the rest of the workload.
                    let next = recovered == Self.expected[step + 1] ? step + 1 : step
                    for remaining in next..<min(next + 5, Self.commits) { try Self.commit(remaining, on: store) }
                    try store.verify()
                } catch {
                    Issue.record("the recovered file failed: \(error); \(context)")
                }
            }
            if n > 4 * Self.commits {
                Issue.record("the workload still crashes at sync \(n)")
                break
            }
        }
        #expect(sawDelta)
    }
}

extension FreeListChainTests {
    /// A format 2 reader knows no deltas: a format 2 file's commits write full lists until a
    /// root slot is written, which makes the file format 3 first (durably), then deltas.
    @Test func aFormatTwoFileWritesFullListsUntilItBecomesFormatThree() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("old.realm")
        try FileManager.default.copyItem(atPath: GoldenFileTests.path(format: 2), toPath: path)
        func format() throws -> UInt32 { try GoldenFileTests.formatVersion(ofFileAt: path) }
        let store = try Store.open(path: path)
        var chains: [(format: UInt32, length: Int)] = []
        for n in 0..<(2 * StoreOptions().chainLength + 2) {
            let transaction = try store.beginWrite()
            let things = try #require(try transaction.table(named: "Thing")).key
            try transaction.set(things, ObjectKey(Int64(7 * n + 1)), ColumnKey(1), .string("changed \(n)"))
            try transaction.commit()
            chains.append((try format(), store.free.chain.count))
        }
        // Every commit while the file was format 2 wrote a full list; deltas came after.
        #expect(chains.allSatisfy { $0.format == 3 || $0.length == 1 })
        #expect(chains.first?.format == 2)
        #expect(chains.last?.format == 3)
        #expect(chains.contains { $0.length > 1 })
        try store.verify()
        _ = consume store
        try Store.open(path: path).verify()
    }
}
