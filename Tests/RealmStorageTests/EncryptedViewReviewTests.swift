import Foundation
import Synchronization
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A count threads add to.
final class Tally: Sendable {
    private let count = Atomic<Int>(0)
    func add() { count.add(1, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

/// An adversarial review of the bounded decrypted view (File/FaultRegion.swift,
/// File/EncryptedFile.swift): the smallest budget (four 16 KiB units) under loads that meet
/// the handler's installs and drops, the writer's write-through and forgets, remaps and cuts
/// of the file, other processes, and many opens and closes.
@Suite(.childProcesses) struct FaultRegionReviewTests {
    static let unit = 16 << 10

    /// The byte a pattern region holds at `offset`.
    static func byte(_ offset: Int) -> UInt8 { UInt8(truncatingIfNeeded: offset ^ (offset >> 8) &* 31 ^ (offset >> 14) &* 7) }

    /// A read-only source whose every byte is `byte(offset)`.
    final class PatternSource: FaultSource, @unchecked Sendable {
        var unitSize: Int { FaultRegionReviewTests.unit }
        func fill(_ index: Int, into buffer: UnsafeMutableRawPointer) -> Bool {
            let start = index * unitSize
            let bytes = buffer.assumingMemoryBound(to: UInt8.self)
            for i in 0..<unitSize { bytes[i] = FaultRegionReviewTests.byte(start + i) }
            return true
        }
    }

    /// A "disk" in memory for a writable region: written under its own lock, which `fill`
    /// takes too (no thread touching the region holds it).
    final class DiskSource: FaultSource, @unchecked Sendable {
        var unitSize: Int { FaultRegionReviewTests.unit }
        let disk: UnsafeMutableRawPointer
        let length: Int
        let lock = Mutex(())
        init(length: Int) {
            self.length = length
            disk = .allocate(byteCount: length, alignment: 16)
            for i in 0..<length { disk.storeBytes(of: FaultRegionReviewTests.byte(i), toByteOffset: i, as: UInt8.self) }
        }
        deinit { disk.deallocate() }
        func fill(_ index: Int, into buffer: UnsafeMutableRawPointer) -> Bool {
            lock.withLock { _ in buffer.copyMemory(from: disk + index * unitSize, byteCount: unitSize) }
            return true
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) {
            lock.withLock { _ in (disk + offset).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        }
    }

    static func makeRegion(units: Int, source: FaultSource, writable: Bool) throws -> FaultRegionHandle {
        let made = FaultRegion.make(length: units * unit, source: source, cacheSize: 0, writable: writable)
        return try #require(made.region, "userfaultfd refused here: \(made.reason)")
    }

    /// The value an unaligned 8-byte load at `offset` must read.
    static func expectedWord(_ offset: Int) -> UInt64 {
        var word: UInt64 = 0
        for i in 0..<8 { word |= UInt64(byte(offset + i)) << (8 * i) }
        return word
    }

    /// Loads that straddle a unit boundary (the case invariant 4 exists for) from several
    /// threads at once with four units resident, while other threads touch units at random:
    /// every load reads the right bytes, none stays stuck, and the budget holds.
    @Test func loadsAcrossUnitBoundariesAtTheSmallestBudgetWhileOthersThrash() async throws {
        let units = 64
        let handle = try Self.makeRegion(units: units, source: PatternSource(), writable: false)
        let region = handle.region
        #expect(region.budget == 4)
        let threads = 6
        let wrong = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<threads {
                group.addTask {
                    try await onThread {
                        let base = UnsafeRawPointer(region.base)
                        var random = SeededRandom(seed: UInt64(100 + t))
                        // 1,500 each: at this budget nearly every load faults, and six
                        // threads evict each other's units, so a load costs about 10 ms in a
                        // debug build (4,000 each made this the slowest test of CI: 250-400 s).
                        for _ in 0..<1_500 {
                            let boundary = Int.random(in: 1..<units, using: &random) * Self.unit
                            // Straddling threads: a load across the boundary; thrashing ones: anywhere.
                            let offset = t < 4 ? boundary - Int.random(in: 1...7, using: &random)
                                               : Int.random(in: 0..<(units * Self.unit - 8), using: &random)
                            let word = (base + offset).loadUnaligned(as: UInt64.self)
                            if word != Self.expectedWord(offset) { wrong.add() }
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(wrong.value == 0)
        #expect(region.counts.peakResident <= 4)
        #expect(region.counts.damaged == 0)
    }

    /// A writable region at budget 4: a writer writes the disk then writes through (and
    /// sometimes forgets ranges) while readers read bytes the writer never changes (a pinned
    /// version's) and the writer reads back what it just wrote. Afterwards every byte of the
    /// region reads as the disk: no unit left behind it (invariant 3).
    @Test func writeThroughAndForgetMeetReadersAndTheHandlerAtBudgetFour() async throws {
        let units = 24
        let source = DiskSource(length: units * Self.unit)
        let handle = try Self.makeRegion(units: units, source: source, writable: true)
        let region = handle.region
        let stop = StopFlag()
        let wrongPinned = Tally(), wrongOwn = Tally()
        // The first half of each unit is never written ("pinned"); the second half is.
        let half = Self.unit / 2
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<3 {
                group.addTask {
                    try await onThread {
                        let base = UnsafeRawPointer(region.base)
                        var random = SeededRandom(seed: UInt64(7 + t))
                        var reads = 0
                        while !stop.isSet || reads < 1_000 {
                            let u = Int.random(in: 0..<units, using: &random)
                            let offset = u * Self.unit + Int.random(in: 0..<(half - 8), using: &random)
                            if (base + offset).loadUnaligned(as: UInt64.self) != Self.expectedWord(offset) { wrongPinned.add() }
                            reads += 1
                        }
                    }
                }
            }
            group.addTask {
                try await onThread {
                    defer { stop.set() }
                    let base = UnsafeRawPointer(region.base)
                    var random = SeededRandom(seed: 3)
                    for k in 0..<6_000 {
                        let u = Int.random(in: 0..<units, using: &random)
                        let count = Int.random(in: 1...200, using: &random)
                        let offset = u * Self.unit + half + Int.random(in: 0..<(half - count), using: &random)
                        let bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: count)
                        bytes.withUnsafeBytes { source.write($0, at: offset) }
                        bytes.withUnsafeBytes { region.writeThrough($0, at: offset) }
                        if Array(UnsafeRawBufferPointer(start: base + offset, count: count)) != bytes { wrongOwn.add() }
                        if k % 7 == 0 {
                            let from = Int.random(in: 0..<(units * Self.unit), using: &random)
                            region.forget(from..<(from + Int.random(in: 1...(3 * Self.unit), using: &random)))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(wrongPinned.value == 0)
        #expect(wrongOwn.value == 0)
        let base = UnsafeRawPointer(region.base)
        // The disk copied out first: touching the region under the disk's lock, which `fill`
        // takes, would wait on itself.
        let disk = source.lock.withLock { _ in [UInt8](UnsafeRawBufferPointer(start: source.disk, count: units * Self.unit)) }
        let differing = (0..<units).filter { u in
            disk.withUnsafeBytes { memcmp(base + u * Self.unit, $0.baseAddress! + u * Self.unit, Self.unit) != 0 }
        }
        #expect(differing.isEmpty, "units behind the disk: \(differing)")
        #expect(region.counts.peakResident <= 4)
    }

    /// The userfaultfd descriptors this process has open.
    static func userfaultfds() -> Int {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return names.filter { name in
            var buffer = [CChar](repeating: 0, count: 256)
            let n = readlink("/proc/self/fd/" + name, &buffer, 255)
            guard n > 0 else { return false }
            return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self).contains("userfaultfd")
        }.count
    }

    static func threads() -> Int { ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []).count }

    /// Regions made, touched and released over and over leave no thread, descriptor or
    /// region behind (invariant 5). In a child process, where no other test makes regions or
    /// threads meanwhile.
    @Test func manyRegionsMadeAndReleasedLeaveNothingBehind() async {
        await #expect(processExitsWith: .success) {
            // One first, so that whatever the first make sets up once is counted before.
            do { _ = try FaultRegionReviewTests.makeRegion(units: 8, source: PatternSource(), writable: false) }
            let fds = FaultRegionReviewTests.userfaultfds(), threads = FaultRegionReviewTests.threads()
            for cycle in 0..<300 {
                let handle = try FaultRegionReviewTests.makeRegion(units: 8, source: PatternSource(), writable: cycle % 2 == 0)
                let base = UnsafeRawPointer(handle.region.base)
                for u in 0..<8 where (base + u * FaultRegionReviewTests.unit + 5).load(as: UInt8.self) != FaultRegionReviewTests.byte(u * FaultRegionReviewTests.unit + 5) {
                    exit(3)
                }
                if cycle % 3 == 0 { handle.region.forgetAll() }
            }
            guard FaultRegionReviewTests.userfaultfds() == fds else { exit(4) }
            guard FaultRegionReviewTests.threads() <= threads + 1 else { exit(5) }
        }
    }
}

/// The bounded view through the store, at the smallest budget and in the whole fallback.
@Suite(.childProcesses) struct EncryptedViewReviewTests {
    static let readings: [EncryptedReading] = [.onDemand, .whole]

    static func tiny(_ reading: EncryptedReading, options: StoreOptions = StoreOptions(durability: .unsafe)) -> StoreOptions {
        var options = options
        options.encryptionKey = SealingMode.encryptionKey
        options.encryptedCacheSize = 64 << 10
        options.encryptedReading = reading
        return options
    }

    /// A write whose bytes lie in the image itself (a node copied from the mapping), at four
    /// units resident, with the source bytes spread over more units than the budget and
    /// none resident: the write copies them out first (I5), so it neither deadlocks on the
    /// region's lock nor writes wrong bytes.
    @Test(arguments: readings) func aWriteWhoseBytesComeFromTheMapping(reading: EncryptedReading) throws {
        let directory = TemporaryDirectory()
        let subject = try EncryptedFileTests.Subject(path: directory.path(), reading: reading, cacheSize: 64 << 10)
        let size = 1 << 20
        try subject.setSize(size)
        try subject.write(EncryptedFileTests.pattern(size - 4096, seed: 5), at: 4096)
        let mapping = try subject.file.map(length: size)
        for (from, to, count) in [(4096, 600_000, 200_000), (300_001, 300_011, 70_000), (12_000, 8_000, 40_000)] {
            try subject.file.showOtherProcessesWrites()  // drops every unit: the source faults as it is copied
            let expected = Array(subject.model[from..<(from + count)])
            try subject.file.write(UnsafeRawBufferPointer(start: mapping.base + from, count: count), at: UInt64(to))
            subject.model.replaceSubrange(to..<(to + count), with: expected)
            #expect(Array(UnsafeRawBufferPointer(start: mapping.base, count: size)) == subject.model, "after copying \(from) to \(to)")
            #expect(try subject.read(size, at: 0) == subject.model)
        }
        if reading == .onDemand { #expect(subject.file.counts.peakResident <= 4) }
    }

    /// Readers of older versions on other threads while the file grows past its mapping
    /// again and again (a 64 KiB minimum mapping: every growth maps anew, and the old
    /// mappings go when their last reader does, while writes go through to them).
    @Test(arguments: readings) func readersHoldOldMappingsWhileTheFileGrowsPastThem(reading: EncryptedReading) async throws {
        let directory = TemporaryDirectory()
        var options = Self.tiny(reading, options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 16, innerCapacity: 8)))
        options.minimumMapping = 64 << 10
        let store = try Store.open(path: directory.path(), options: options)
        let table: TableKey = try {
            let tx = try store.beginWrite()
            let table = try tx.createTable("Row", columns: [ColumnSpec(name: "i", type: .int), ColumnSpec(name: "text", type: .string)])
            try tx.commit()
            return table
        }()
        let batches = 60, perBatch = 200
        let stop = StopFlag()
        @Sendable func text(_ i: Int) -> String { "row \(i) " + String(repeating: "x", count: 40 + i % 60) }
        @Sendable func readUntilStopped() throws -> (reads: Int, wrong: Int) {
            var reads = 0, wrong = 0
            var held: [ReadTransaction] = []
            while !stop.isSet || reads < 3 {
                let read = store.beginRead()
                var count = 0
                try read.table(table).forEachRow { (row) throws(StorageError) -> Bool in
                    guard case .int(let i) = try row.value(ColumnKey(0)), try row.value(ColumnKey(1)) == .string(text(Int(i))) else {
                        wrong += 1
                        return false
                    }
                    count += 1
                    return true
                }
                if count % perBatch != 0 { wrong += 1 }
                // Keep a few older versions (and their mappings) alive, let the others go.
                held.append(read)
                if held.count > 3 { held.removeFirst(Int(reads % 3) + 1) }
                for old in held where reads % 5 == 0 { _ = try old.verify() }
                reads += 1
            }
            return (reads, wrong)
        }
        async let first = onThread { try readUntilStopped() }
        async let second = onThread { try readUntilStopped() }
        try await onThread {
            defer { stop.set() }
            for batch in 0..<batches {
                let tx = try store.beginWrite()
                for i in (batch * perBatch)..<((batch + 1) * perBatch) { try tx.insert(table, values: [.int(Int64(i)), .string(text(i))]) }
                try tx.commit()
            }
        }
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.reads > 0 && $0.wrong == 0 }, "\(results)")
        #expect(try store.file.size() > 1 << 20)
        try store.verify()
        if reading == .onDemand { #expect(try #require((store.file as? EncryptedFile)?.counts).peakResident <= 4) }
    }

    /// OnlineShrinkTests.readersOnOtherThreadsReadWhileTheFileShrinks on an encrypted file
    /// with four units resident and in the whole fallback.
    @Test(arguments: readings) func readersOnOtherThreadsReadWhileTheEncryptedFileShrinks(reading: EncryptedReading) async throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: Self.tiny(reading, options: StoreOptions()))
        try ShrinkWorkload.grow(store)
        try ShrinkWorkload.insertBurst(store)
        let stop = StopFlag()
        let started = ReadCount()
        @Sendable func readUntilStopped() throws -> (reads: Int, wrong: Int) {
            var reads = 0, wrong = 0
            while !stop.isSet || reads < 2 {
                started.add()
                let read = store.beginRead()
                let round = try ShrinkWorkload.round(read)
                let contents = try ShrinkWorkload.contents(read)
                // The objects that stay, and the burst's whole batches (it is inserted again
                // at the end, 4,000 objects a commit).
                let extra = contents.count - Int(ShrinkWorkload.rows)
                let whole = extra >= 0 && (extra % 4_000 == 0 || extra == Int(ShrinkWorkload.burst))
                if !whole || Array(contents.prefix(Int(ShrinkWorkload.rows))) != ShrinkWorkload.expected(afterRound: round) { wrong += 1 }
                if reads % 8 == 0 { _ = try read.verify(uncached: true) }
                reads += 1
            }
            return (reads, wrong)
        }
        async let first = onThread { try readUntilStopped() }
        async let second = onThread { try readUntilStopped() }
        try await onThread {
            defer { stop.set() }
            try MultiProcessTests.waitUntil("the readers") { started.value >= 4 }
            try ShrinkWorkload.deleteBurst(store)
            var rounds = 0
            while store.shrinkCounts.truncations == 0 && rounds < OnlineShrinkTests.maximumRounds {
                try ShrinkWorkload.commitRound(store)
                rounds += 1
            }
            // And grow again past the cut, the readers still reading.
            try ShrinkWorkload.insertBurst(store)
            try ShrinkWorkload.deleteBurst(store)
        }
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.reads > 0 && $0.wrong == 0 }, "\(results)")
        #expect(store.shrinkCounts.truncations >= 1, "\(store.shrinkCounts)")
        _ = try store.verify()
    }

    /// Encrypted stores opened, read, written and closed over and over at the smallest
    /// budget leave no userfaultfd or handler thread behind. In a child process (see above).
    @Test func manyOpensAndClosesLeaveNoRegionBehind() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path, options: Self.tiny(.onDemand))
            let tx = try store.beginWrite()
            let table = try tx.createTable("Row", columns: [ColumnSpec(name: "i", type: .int), ColumnSpec(name: "text", type: .string)])
            for i in 0..<2_000 { try tx.insert(table, values: [.int(Int64(i)), .string(String(repeating: "y", count: 100))]) }
            try tx.commit()
        }
        await #expect(processExitsWith: .success) { [path = path as String] in
            func cycle(_ n: Int) throws {
                let store = try Store.open(path: path, options: EncryptedViewReviewTests.tiny(.onDemand))
                guard try store.beginRead().rowValues(ofTable: "Row").count == 2_000 + n else { exit(3) }
                let tx = try store.beginWrite()
                try tx.insert(try tx.table(named: "Row")!.key, values: [.int(-1), .string("z")])
                try tx.commit()
            }
            try cycle(0)
            let fds = FaultRegionReviewTests.userfaultfds(), threads = FaultRegionReviewTests.threads()
            for n in 1..<40 { try cycle(n) }
            guard FaultRegionReviewTests.userfaultfds() == fds else { exit(4) }
            guard FaultRegionReviewTests.threads() <= threads + 1 else { exit(5) }
        }
    }
}

/// KillTests.committedBatchesSurviveSIGKILL on an encrypted file read through four decrypted
/// units, in the killed children and in the checking process.
@Suite(.childProcesses) struct EncryptedTinyBudgetKillTests {
    @Test func committedBatchesSurviveSIGKILLAtTheSmallestBudget() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        var objects = 0
        for round in 0..<(KillTests.rounds / 2) {
            let roundSeed = ReplayableRandom.derive(KillTests.seed ^ 0x64, round)
            let isUnsafe = round % 3 == 2
            let killAfterFirstCommit = round % 2 == 1
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round), seed \(roundSeed)") {
                [path = path as String, roundSeed = roundSeed as UInt64, isUnsafe = isUnsafe as Bool, killAfterFirstCommit = killAfterFirstCommit as Bool] in
                try KillTests.commitUntilKilled(path: path, seed: roundSeed, durability: isUnsafe ? .unsafe : .full,
                                                killAfterFirstCommit: killAfterFirstCommit, key: KillTests.key, encryptedCacheSize: 64 << 10)
            }
            let context = "round \(round), seed \(roundSeed)"
            let now = try KillTests.checkCommittedPrefix(path: path, context: context, key: KillTests.key, encryptedCacheSize: 64 << 10)
            #expect(now >= objects, "acknowledged batches were lost: \(objects) before, \(now) after; \(context)")
            if killAfterFirstCommit { #expect(now >= objects + KillTests.batch, "the child committed at least one batch; \(context)") }
            objects = now
        }
        #expect(objects >= KillTests.batch * KillTests.rounds / 4)
    }
}

/// A budget of more units than UInt32 counts (`encryptedCacheSize = .max`: "no bound"):
/// a unit dropped by `forget` (another process's writes, a cut) and touched again must
/// install, not trap in the 2Q bookkeeping (Residency.admit). In a child process: a trap
/// would take the test runner with it.
@Suite(.childProcesses) struct FaultRegionHugeBudgetTests {
    @Test func aHugeBudgetSurvivesAForgetAndARefault() async {
        await #expect(processExitsWith: .success) {
            let made = FaultRegion.make(length: 8 * FaultRegionReviewTests.unit, source: FaultRegionReviewTests.PatternSource(),
                                        cacheSize: .max, writable: true)
            guard let handle = made.region else { exit(0) }  // no userfaultfd here: nothing to test
            let base = UnsafeRawPointer(handle.region.base)
            guard base.load(fromByteOffset: 100, as: UInt8.self) == FaultRegionReviewTests.byte(100) else { exit(3) }
            handle.region.forgetAll()
            guard base.load(fromByteOffset: 100, as: UInt8.self) == FaultRegionReviewTests.byte(100) else { exit(4) }
        }
    }

    /// The same through an encrypted file opened with `cacheSize: .max` whose image is told
    /// of other processes' writes (which forgets every unit) and then read again.
    @Test func anEncryptedFileWithAnUnboundedBudgetReadsAfterShowingOtherWrites() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        await #expect(processExitsWith: .success) { [path = path as String] in
            let subject = try EncryptedFileTests.Subject(path: path, cacheSize: .max)
            try subject.setSize(1 << 16)
            try subject.write(EncryptedFileTests.pattern(1 << 15, seed: 9), at: 4096)
            let mapping = try subject.file.map(length: 1 << 16)
            guard Array(UnsafeRawBufferPointer(start: mapping.base, count: 1 << 16)) == subject.model else { exit(3) }
            try subject.file.showOtherProcessesWrites()
            guard Array(UnsafeRawBufferPointer(start: mapping.base, count: 1 << 16)) == subject.model else { exit(4) }
        }
    }
}

/// I4: an encrypted file grown from nothing reads as zeros everywhere, through `read` and
/// through an image, the header's first 128 bytes (kept in the clear) included: growth once
/// encrypted page 0 whole, so those bytes read back as ciphertext.
@Suite struct EncryptedGrowthReadsAsZerosTests {
    @Test(arguments: EncryptedViewReviewTests.readings) func aFileGrownFromNothingReadsAsZeros(reading: EncryptedReading) throws {
        let directory = TemporaryDirectory()
        let subject = try EncryptedFileTests.Subject(path: directory.path(), reading: reading, cacheSize: 64 << 10)
        try subject.setSize(1 << 16)
        #expect(try subject.read(1 << 16, at: 0) == [UInt8](repeating: 0, count: 1 << 16))
        try subject.write(EncryptedFileTests.pattern(1 << 15, seed: 9), at: 4096)
        let mapping = try subject.file.map(length: 1 << 16)
        #expect(Array(UnsafeRawBufferPointer(start: mapping.base, count: 1 << 16)) == subject.model)
        #expect(try subject.read(1 << 16, at: 0) == subject.model)
    }
}

/// Images made and let go while writes go through them: a thread maps ever longer images
/// (each a new region; the one before goes when its last holder does, inside the file's lock
/// when it is the file's own), reader threads take the newest image, read the bytes no write
/// changes and let it go, and a writer writes the rest of the file, at four units per image.
/// Nothing deadlocks or crashes, the readers read right, and every image still held at the
/// end reads as the disk.
@Suite struct EncryptedImagesComeAndGoTests {
    @Test(arguments: EncryptedViewReviewTests.readings) func imagesMadeAndReleasedWhileWritesGoThrough(reading: EncryptedReading) async throws {
        let directory = TemporaryDirectory()
        let subject = try EncryptedFileTests.Subject(path: directory.path(), reading: reading, cacheSize: 64 << 10)
        let size = 512 << 10
        try subject.setSize(size)
        // The first half is written once ("pinned"); the writer writes only the second half.
        let pinned = EncryptedFileTests.pattern(size / 2, seed: 1)
        try subject.write(pinned, at: 0)
        let file = subject.file
        let stop = StopFlag()
        let wrong = Tally()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await onThread {
                    var k = 1
                    while !stop.isSet {
                        _ = try file.map(length: size + k * (64 << 10))
                        k += 1
                        if k > 60 { k = 1; usleep(1_000) }  // and shorter ones again: the current image is kept
                    }
                }
            }
            for t in 0..<2 {
                group.addTask {
                    try await onThread {
                        var random = SeededRandom(seed: UInt64(40 + t))
                        var held: [Mapping] = []
                        var reads = 0
                        while !stop.isSet || reads < 200 {
                            let mapping = try file.map(length: size)
                            let at = Int.random(in: 128..<(size / 2 - 64), using: &random)
                            if Array(UnsafeRawBufferPointer(start: mapping.base + at, count: 64)) != Array(pinned[at..<(at + 64)]) { wrong.add() }
                            held.append(mapping)
                            if held.count > Int.random(in: 1...4, using: &random) { held.removeFirst() }
                            reads += 1
                        }
                    }
                }
            }
            group.addTask {
                try await onThread {
                    defer { stop.set() }
                    var random = SeededRandom(seed: 77)
                    for k in 0..<1_500 {
                        let count = Int.random(in: 1...3_000, using: &random)
                        let at = Int.random(in: (size / 2)..<(size - count), using: &random)
                        try file.write([UInt8](repeating: UInt8(truncatingIfNeeded: k), count: count), at: UInt64(at))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(wrong.value == 0)
        let disk = try subject.read(size, at: 0)
        let mapping = try file.map(length: size)
        #expect(Array(UnsafeRawBufferPointer(start: mapping.base, count: size)) == disk)
        #expect(Array(disk[0..<(size / 2)]) == pinned)
    }
}
