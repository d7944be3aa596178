import Testing
import TestSupport
@testable import RealmStorage

@Suite struct FreeSpaceTests {
    /// Chained roots keep what the versions after the last slot wrote until the next slot
    /// (FileHeader.swift, invariant 5): up to 1 MiB (or a sixteenth of the file) more.
    static let chainAllowance: UInt64 = 2 << 20
    /// Rounds of `steadyUpdatesStopTheFileGrowing`: 10,000 in the optimised run CI makes
    /// (`.ci/run`), a quarter of that in debug builds, which run about ten times slower.
    #if DEBUG
    static let steadyRounds = 2_500
    #else
    static let steadyRounds = 10_000
    #endif

    @Test(arguments: [1, StoreOptions().chainLength])
    func steadyUpdatesStopTheFileGrowing(chainLength: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, chainLength: chainLength))
        var tx = try store.beginWrite()
        let table = try tx.createTable("Item", columns: [
            ColumnSpec(name: "n", type: .int), ColumnSpec(name: "label", type: .string),
        ])
        for i in 0..<1_000 { try tx.insert(table, values: [.int(Int64(i)), .string("item \(i)")]) }
        try tx.commit()
        let sizeAfterFirst = try store.spaceUsage().fileSize
        var random = SeededRandom(seed: 7)
        for round in 0..<Self.steadyRounds {
            tx = try store.beginWrite()
            for _ in 0..<100 {
                let key = ObjectKey(Int64.random(in: 0..<1_000, using: &random))
                try tx.set(table, key, ColumnKey(0), .int(Int64(round)))
            }
            try tx.commit()
        }
        let sizeAtEnd = try store.spaceUsage().fileSize
        let allowance = chainLength > 1 ? Self.chainAllowance : 0
        #expect(sizeAtEnd < sizeAfterFirst * 4 + allowance, "file grew from \(sizeAfterFirst) to \(sizeAtEnd) bytes")
        try store.verify()
    }

    @Test(arguments: [1, StoreOptions().chainLength])
    func aLongLivedReaderDoesNotStopReuseOfLaterVersions(chainLength: Int) throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, chainLength: chainLength))
        var tx = try store.beginWrite()
        let table = try tx.createTable("Item", columns: [ColumnSpec(name: "n", type: .int)])
        for i in 0..<2_000 { try tx.insert(table, values: [.int(Int64(i))]) }
        try tx.commit()
        let old = store.beginRead()
        // The reader's version keeps its own nodes, but versions written after it are
        // reused as soon as nothing pins them: growth stops after the first rewrite.
        var sizes: [UInt64] = []
        for round in 0..<300 {
            tx = try store.beginWrite()
            for k in stride(from: 0, to: 2_000, by: 50) { try tx.set(table, ObjectKey(Int64(k)), ColumnKey(0), .int(Int64(round))) }
            try tx.commit()
            sizes.append(try store.spaceUsage().fileSize)
        }
        if chainLength == 1 {
            #expect(sizes.last! == sizes[20], "file kept growing while a reader was pinned: \(sizes[20]) → \(sizes.last!)")
        } else {
            // Each chain's space comes back at the next slot: the file grows by at most what
            // one chain keeps.
            let largest = sizes.max()!
            #expect(largest <= sizes[20] + Self.chainAllowance, "file kept growing while a reader was pinned: \(sizes[20]) → \(largest)")
        }
        #expect(try old.table(table).value(ObjectKey(0), ColumnKey(0)) == .int(0))
        #expect(try old.verify().objects == 2_000)
        try store.verify()
    }

    /// Bulk loads: each commit rewrites most of an index whose leaves are spread over the file,
    /// and no free extent holds a whole commit. Its nodes must fill the fragments the commit
    /// before freed (runs at the end of the file every time left a third of it free).
    @Test func largeCommitsFillTheSpaceEarlierOnesFreed() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        for round in 0..<20 {
            let transaction = try store.beginWrite()
            let table = try transaction.table(named: "Person")?.key ?? transaction.createTable("Person", columns: [
                .objectKey(name: "id"), ColumnSpec(name: "name", type: .string),
                ColumnSpec(name: "age", type: .int, indexed: true), ColumnSpec(name: "score", type: .double),
            ])
            for i in 0..<5_000 {
                let id = round * 5_000 + i
                try transaction.insert(table, values: [.int(Int64(id)), .string("person \(id)"), .int(Int64(id * 7_919 % 90)), .double(Double(id))])
            }
            try transaction.commit()
        }
        let usage = try store.spaceUsage()
        #expect(Double(usage.freeBytes) < Double(usage.fileSize) * 0.15, "\(usage.freeBytes) of \(usage.fileSize) bytes free after the load")
        try store.verify()
    }

    @Test func anAllocationContinuesRightAfterThePreviousOneWhenItFits() {
        var space = FreeSpace(extents: [], logicalSize: 10_000)
        space.release(offset: 1_000, length: 200, firstVersion: 0, endVersion: 0)
        space.release(offset: 3_000, length: 40, firstVersion: 0, endVersion: 0)
        #expect(space.allocate(64) == 1_000)      // the only extent that fits
        #expect(space.allocate(32) == 1_064)      // goes on there, though 3,000 fits better
        #expect(space.allocate(128) == 10_000)    // 104 bytes left there: too small; none fits
        #expect(space.allocate(40) == 3_000)      // nothing free after the end: best fit again
        #expect(space.extents.map(\.offset) == [1_096])
        // A run `beginRun` starts at the end of the file goes on there instead.
        space.releaseUnreachable(pinned: [])
        space.beginRun()
        #expect(space.allocate(40) == 10_128)
        #expect(space.allocate(40) == 10_168)
    }

    /// Best fit through the size-ordered list `take` keeps gives what a scan of the whole
    /// list gives: the shortest extent free for good that holds the bytes, the first in the
    /// file among equals, through releases, tag clearing and runs in between.
    @Test func bestFitMatchesAScanOfTheList() {
        var random = SeededRandom(seed: 2026)
        var space = FreeSpace(extents: [], logicalSize: 1 << 20)
        var version: UInt64 = 1
        var live: [(offset: UInt64, length: UInt64, version: UInt64)] = [(4096, (1 << 20) - 4096, 0)]
        var bestFits = 0
        // Where the previous allocation ended (the next continues there if it fits), and
        // whether the next is the first of a run `beginRun` placed.
        var previousEnd: UInt64?
        var runStarts = false
        for round in 0..<400 {
            for _ in 0..<Int.random(in: 0...8, using: &random) where !live.isEmpty {
                let gone = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                // Some free for good at once (as space past a reservation is).
                let forGood = Int.random(in: 0..<4, using: &random) == 0
                space.release(offset: gone.offset, length: gone.length, firstVersion: forGood ? 0 : gone.version, endVersion: forGood ? 0 : version)
            }
            if round % 2 == 0 {
                space.releaseUnreachable(pinned: [version - 1])
                previousEnd = nil
            }
            if round % 7 == 0 {
                space.beginRun()
                runStarts = true
            } else if round % 2 == 1 {
                // A run where the previous commit reserved its header, inside a free extent.
                let candidates = space.extents.filter { $0.isFreeForGood && $0.length >= 128 }
                if let extent = candidates.randomElement(using: &random) {
                    let at = extent.offset + 8 * UInt64.random(in: 0...(extent.length - 64) / 8, using: &random)
                    let began = space.beginRun(at: at, length: 64)
                    #expect(began)
                    previousEnd = at + 64
                    runStarts = false
                }
            }
            version += 1
            for _ in 0..<Int.random(in: 1...12, using: &random) {
                let length = UInt64.random(in: 1...96, using: &random) * 8
                let before = space
                let offset = space.allocate(length)
                // At the end of the file, not continuing there: no extent held it.
                if !runStarts && offset != previousEnd && offset == before.logicalSize {
                    #expect(!before.extents.contains { $0.isFreeForGood && $0.length >= length }, "round \(round)")
                }
                // Not the start of a run, a continuation of the previous allocation, nor the
                // end of the file: a best fit, which a scan must agree with.
                if !runStarts && offset != previousEnd && offset != before.logicalSize {
                    let scan = before.extents.indices.filter { before.extents[$0].isFreeForGood && before.extents[$0].length >= length }
                        .min { (before.extents[$0].length, before.extents[$0].offset) < (before.extents[$1].length, before.extents[$1].offset) }
                    #expect(scan.map { before.extents[$0].offset } == offset, "allocation of \(length) in round \(round)")
                    bestFits += 1
                }
                previousEnd = offset + length
                runStarts = false
                live.append((offset, length, version))
            }
        }
        #expect(bestFits > 100, "the workload makes best fits")
    }

    @Test func aCommitsAllocationsFormOneRunWhereThePreviousCommitsWouldFit() {
        var space = FreeSpace(extents: [], logicalSize: 100_000)
        space.release(offset: 8_000, length: 1_000, firstVersion: 0, endVersion: 0)
        space.release(offset: 20_000, length: 9_000, firstVersion: 0, endVersion: 0)
        space.release(offset: 40_000, length: 6_000, firstVersion: 0, endVersion: 0)
        space.releaseUnreachable(pinned: [])
        // The first commit knows nothing of the next: the smallest extent of 4 KiB or more.
        space.beginRun()
        let first = [512, 256, 2_048, 64].map { space.allocate(UInt64($0)) }
        #expect(first == [40_000, 40_512, 40_768, 42_816])
        // 2,880 bytes last time: the next run wants 4,320 and fits neither 1,000 nor what is
        // left at 42,880 (3,120), so it goes to 20,000 and stays there, although later
        // pieces would fit the smaller extents.
        space.releaseUnreachable(pinned: [])
        space.beginRun()
        let second = [1_000, 64, 2_000].map { space.allocate(UInt64($0)) }
        #expect(second == [20_000, 21_000, 21_064])
        // 3,064 bytes last time: 4,596 wanted, which only the rest at 23,064 (5,936) holds.
        space.releaseUnreachable(pinned: [])
        space.beginRun()
        #expect(space.allocate(4_000) == 23_064)
        // 4,000 bytes last time: nothing free holds 6,000, so the run starts at the end of the
        // file and goes on there.
        space.releaseUnreachable(pinned: [])
        space.beginRun()
        #expect(space.allocate(100) == 100_000)
        #expect(space.allocate(100) == 100_100)
    }

    @Test func extentsAreReusedOnlyWhenNoPinnedVersionSeesThem() {
        var space = FreeSpace(extents: [], logicalSize: 10_000)
        space.release(offset: 4096, length: 64, firstVersion: 3, endVersion: 6)
        space.release(offset: 4160, length: 64, firstVersion: 5, endVersion: 8)
        space.release(offset: 8000, length: 64, firstVersion: 1, endVersion: 2)
        space.releaseUnreachable(pinned: [4, 9])
        // [3,6) holds pinned 4; [5,8) holds none; [1,2) holds none.
        #expect(space.extents.map(\.isFreeForGood) == [false, true, true])
        #expect(space.allocate(64) == 4160)
        #expect(space.allocate(64) == 8000)
        #expect(space.allocate(64) == 10_000)
        space.releaseUnreachable(pinned: [9])
        #expect(space.allocate(64) == 4096)
    }

    /// Another process's summarised pins (ProcessCoordination.swift) hold every version in
    /// their range, and only those.
    @Test func aPinnedRangeHoldsEveryExtentItReaches() {
        var space = FreeSpace(extents: [], logicalSize: 10_000)
        space.release(offset: 4096, length: 64, firstVersion: 3, endVersion: 6)
        space.release(offset: 5000, length: 64, firstVersion: 7, endVersion: 9)
        space.release(offset: 6000, length: 64, firstVersion: 10, endVersion: 12)
        space.releaseUnreachable(pinned: [], ranges: [5...8])
        // [3,6) holds 5; [7,9) holds 7 and 8; [10,12) holds none of 5...8.
        #expect(space.extents.map(\.isFreeForGood) == [false, false, true])
        space.releaseUnreachable(pinned: [], ranges: [1...2, 9...9])
        #expect(space.extents.map(\.isFreeForGood) == [true, true, true])
    }

    /// Tagged neighbours the same pinned versions reach become one extent (invariant 4), so that
    /// a reader holding one version for long keeps a few extents, not one per node freed since;
    /// neighbours other versions reach stay apart, and the merged extent is reused once its
    /// versions go.
    @Test func taggedNeighboursHeldByTheSameVersionsMerge() {
        var space = FreeSpace(extents: [], logicalSize: 4416)
        // Side by side: two nodes only version 4 reaches (freed by 6 and 8), one that 4 and 8
        // reach, one that 4, 8 and 10 reach, and one only the newest (10) reaches.
        space.release(offset: 4096, length: 64, firstVersion: 2, endVersion: 6)
        space.release(offset: 4160, length: 64, firstVersion: 4, endVersion: 8)
        space.release(offset: 4224, length: 64, firstVersion: 3, endVersion: 9)
        space.release(offset: 4288, length: 64, firstVersion: 4, endVersion: 11)
        space.release(offset: 4352, length: 64, firstVersion: 10, endVersion: 12)
        space.releaseUnreachable(pinned: [4, 8, 10])
        #expect(space.extents == [
            FreeExtent(offset: 4096, length: 128, firstVersion: 2, endVersion: 8),
            FreeExtent(offset: 4224, length: 64, firstVersion: 3, endVersion: 9),
            FreeExtent(offset: 4288, length: 64, firstVersion: 4, endVersion: 11),
            FreeExtent(offset: 4352, length: 64, firstVersion: 10, endVersion: 12),
        ])
        // Versions 8 and 10 go: the reader's 4 alone reaches the first four, which become one.
        space.releaseUnreachable(pinned: [4])
        #expect(space.extents == [FreeExtent(offset: 4096, length: 256, firstVersion: 2, endVersion: 11)])
        #expect(space.logicalSize == 4352, "free space at the end gives the file back its tail")
        space.releaseUnreachable(pinned: [12])
        #expect(space.extents.isEmpty)
        #expect(space.logicalSize == 4096)
    }

    /// The pass that clears unreachable tags looks only around the tagged extents (and at
    /// every extent after a release free for good); whatever it skips, its result must keep
    /// what a pass over the whole list guarantees: the same bytes free, no unreachable tag, no
    /// two neighbours free for good, no two tagged neighbours the same pins reach. Random
    /// commits with several readers, ranges summarising other processes' pins, releases free
    /// for good and runs taken from the list.
    @Test(arguments: [7, 23, 2026])
    func releaseUnreachableKeepsTheListsInvariants(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        var space = FreeSpace(extents: [], logicalSize: 4096)
        var live: [(offset: UInt64, length: UInt64, version: UInt64)] = []
        var pinned: Set<UInt64> = []
        for version in UInt64(1)...600 {
            // A commit: frees some live nodes, takes a run, writes new ones.
            for _ in 0..<Int.random(in: 0...6, using: &random) where !live.isEmpty {
                let gone = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                let forGood = Int.random(in: 0..<10, using: &random) == 0
                space.release(offset: gone.offset, length: gone.length, firstVersion: forGood ? 0 : gone.version, endVersion: forGood ? 0 : version)
            }
            if Int.random(in: 0..<3, using: &random) == 0 { pinned.insert(version - 1) }
            if Int.random(in: 0..<4, using: &random) == 0, let old = pinned.randomElement(using: &random) { pinned.remove(old) }
            let pins = (pinned.union([version - 1])).sorted()
            let ranges: [ClosedRange<UInt64>] = version > 40 && Int.random(in: 0..<5, using: &random) == 0
                ? [(version - 40)...(version - 30)] : []
            let before = Self.spans(of: space)
            space.releaseUnreachable(pinned: pins, ranges: ranges)
            let end = space.logicalSize
            #expect(Self.spans(of: space) == before.compactMap { $0.lowerBound < end ? $0.lowerBound..<min($0.upperBound, end) : nil },
                    "version \(version): the pass lost or invented free bytes below the end of the file")
            for (i, extent) in space.extents.enumerated() {
                let reach = FreeSpace.pinnedRange(pins, from: extent.firstVersion, to: extent.endVersion)
                let inRange = ranges.contains { $0.lowerBound < extent.endVersion && $0.upperBound >= extent.firstVersion }
                if !extent.isFreeForGood { #expect(inRange || !reach.isEmpty, "version \(version): an unreachable extent kept its tag") }
                guard i > 0 else { continue }
                let previous = space.extents[i - 1]
                #expect(previous.end <= extent.offset)
                guard previous.end == extent.offset else { continue }
                #expect(!(previous.isFreeForGood && extent.isFreeForGood), "version \(version): neighbours free for good left apart")
            }
            space.beginRun()
            for _ in 0..<Int.random(in: 1...5, using: &random) {
                let length = UInt64.random(in: 1...64, using: &random) * 8
                live.append((space.allocate(length), length, version))
            }
        }
    }

    /// The bytes an allocator holds free, as the fewest ranges.
    static func spans(of space: FreeSpace) -> [Range<UInt64>] {
        var spans: [Range<UInt64>] = []
        for extent in space.extents {
            if let last = spans.last, last.upperBound == extent.offset {
                spans[spans.count - 1] = last.lowerBound..<extent.end
            } else {
                spans.append(extent.offset..<extent.end)
            }
        }
        return spans
    }
}

@Suite struct HistoryTests {
    @Test func changesAreKeptForPinnedVersionsOnly() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        var tx = try store.beginWrite()
        let table = try tx.createTable("Item", columns: [ColumnSpec(name: "n", type: .int)])
        for i in 0..<10 { try tx.insert(table, values: [.int(Int64(i))]) }
        try tx.commit()
        let pinned = store.beginRead()
        let unpinnedVersion: VersionID
        do {
            let reader = store.beginRead()
            unpinnedVersion = reader.version
        }
        tx = try store.beginWrite()
        try tx.set(table, ObjectKey(1), ColumnKey(0), .int(100))
        try tx.insert(table, values: [.int(11)])
        try tx.commit()
        tx = try store.beginWrite()
        try tx.delete(table, ObjectKey(2))
        try tx.delete(table, ObjectKey(10))
        try tx.commit()
        let latest = store.beginRead()
        let changes = try latest.changes(since: pinned.version).tables[table]
        #expect(changes?.inserted == KeyRanges())
        #expect(changes?.deleted == KeyRanges([2]))
        #expect(changes?.modified == KeyRanges([1]))
        #expect(changes?.modifiedColumns == [0])
        #expect(unpinnedVersion == pinned.version)
        #expect(try latest.changes(since: latest.version).isEmpty)
        // A version nobody pinned has no history once newer commits pruned it.
        let pinnedVersion = pinned.version
        _ = consume pinned
        tx = try store.beginWrite()
        try tx.insert(table, values: [.int(12)])
        try tx.commit()
        #expect(throws: StorageError.self) { try store.beginRead().changes(since: pinnedVersion) }
        #expect(store.activeVersionCount == 1)
        try store.verify()
    }
}
