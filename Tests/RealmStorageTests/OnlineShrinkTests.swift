import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Online shrinking (issue 25, point 4; OnlineShrink.swift): a file grown by a burst that is
/// deleted again gives its space back through ordinary commits, without a reopen, while
/// readers in this process and others keep reading the versions they pin. Sizes and contents,
/// never times.
@Suite(.childProcesses) struct OnlineShrinkTests {
    /// The most ordinary commits the shrink may take (each moves at most 64 KiB; the workload's
    /// live data is under 1 MiB).
    static let maximumRounds = 2_000

    /// Commits rounds until the file is within 1.5 times `compacted`; returns how many it took
    /// (nil: not within `maximumRounds`).
    static func roundsUntilSmall(_ store: Store, compacted: UInt64) throws -> Int? {
        for k in 1...maximumRounds {
            try ShrinkWorkload.commitRound(store)
            if try store.spaceUsage().fileSize * 2 <= compacted * 3 { return k }
        }
        return nil
    }

    /// The bound of the issue: after the burst is deleted, K ordinary one-object commits bring
    /// the file back within 1.5 times its compacted size, with no reopen; the data is intact.
    @Test func aDeletedBurstIsGivenBackByOrdinaryCommits() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path())
        try ShrinkWorkload.grow(store)
        let grown = try store.spaceUsage().fileSize
        let compacted = try ShrinkWorkload.compactedSize(store, in: directory)
        let k = try Self.roundsUntilSmall(store, compacted: compacted)
        let size = try store.spaceUsage().fileSize
        let counts = store.shrinkCounts
        // Printed for the record (README, section on copies and compaction); the bounds are the test.
        print("OnlineShrinkTests: grown to \(grown) bytes, compacted \(compacted), \(size) after K = \(k.map(String.init) ?? "more than \(Self.maximumRounds)") commits; \(counts)")
        #expect(grown > 3 * compacted, "the burst did not grow the file: \(grown) bytes, \(compacted) compacted")
        #expect(k != nil, "the file is still \(size) bytes after \(Self.maximumRounds) commits; compacted \(compacted); \(counts)")
        #expect(counts.started >= 1 && counts.truncations >= 1 && counts.movedBytes > 0, "\(counts)")
        let read = store.beginRead()
        #expect(try ShrinkWorkload.contents(read) == ShrinkWorkload.expected(afterRound: try ShrinkWorkload.round(read)))
        _ = try read.verify(uncached: true)
        _ = try store.verify()
    }

    /// The shrink ends (it does not keep walking the trees) once the file is below its limit,
    /// and commits after it write as before.
    @Test func theShrinkEndsOnceTheFileIsBelowItsLimit() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path())
        try ShrinkWorkload.grow(store)
        var rounds = 0
        while store.shrinkCounts.finished == 0 && rounds < Self.maximumRounds {
            try ShrinkWorkload.commitRound(store)
            rounds += 1
        }
        #expect(store.shrinkCounts.finished == 1, "\(store.shrinkCounts) after \(rounds) rounds")
        for _ in 0..<50 { try ShrinkWorkload.commitRound(store) }
        #expect(store.shrinkCounts.limit == nil && store.shrink == nil)
        #expect(store.shrinkCounts.started == 1, "a finished shrink started again: \(store.shrinkCounts)")
        _ = try store.verify()
    }

    /// A reader in this process holds the version with the burst while the file shrinks: its
    /// reads stay correct, and the file is never cut below what it reaches; once it lets go,
    /// the file shrinks to the bound.
    @Test func aReaderInThisProcessKeepsItsVersionWhileTheFileShrinks() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path())
        try ShrinkWorkload.grow(store)
        try ShrinkWorkload.insertBurst(store)
        // Let go explicitly below: a debug build keeps a local alive to the end of its scope.
        var reader: ReadTransaction? = store.beginRead()
        let before = try ShrinkWorkload.contents(reader!)
        let reach = try ShrinkWorkload.reach(reader!)
        #expect(before.count == Int(ShrinkWorkload.rows + ShrinkWorkload.burst))
        try ShrinkWorkload.deleteBurst(store)
        var deltas = 0
        for round in 0..<300 {
            try ShrinkWorkload.commitRound(store)
            #expect(try store.spaceUsage().fileSize >= reach, "the file was cut below what the pinned version reaches")
            if round >= 100 && store.free.chain.count > 1 { deltas += 1 }
        }
        // Nothing moves while the reader pins the room below the limit (it would land past the
        // limit again), and the shrink waits at no cost to the commits (OnlineShrink.swift,
        // point 7): they write free list deltas, not the whole list each time as they did.
        #expect(store.shrinkCounts.waits >= 1, "\(store.shrinkCounts)")
        #expect(deltas >= 170, "only \(deltas) of 200 commits wrote a free list delta while the shrink could not progress")
        // The reader's version reads as it did.
        #expect(try ShrinkWorkload.contents(reader!) == before)
        _ = try reader!.verify(uncached: true)
        reader = nil
        let compacted = try ShrinkWorkload.compactedSize(store, in: directory)
        let rounds = try Self.roundsUntilSmall(store, compacted: compacted)
        let usage = try store.spaceUsage()
        #expect(rounds != nil, "\(usage) after the reader went; compacted \(compacted); \(store.shrinkCounts)")
        #expect(store.shrinkCounts.movedBytes > 0, "\(store.shrinkCounts)")
        _ = try store.verify()
    }

    /// Readers on other threads begin, read and verify versions while this thread deletes the
    /// burst and shrinks the file under them: every read is whole (a cut page under a pinned
    /// version would be a SIGBUS), and the file shrinks all the same.
    @Test func readersOnOtherThreadsReadWhileTheFileShrinks() async throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path())
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
                let whole = contents.count == Int(ShrinkWorkload.rows) || contents.count == Int(ShrinkWorkload.rows + ShrinkWorkload.burst)
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
            // Both readers are reading before the shrink starts, and go on while it runs.
            try MultiProcessTests.waitUntil("the readers") { started.value >= 4 }
            try ShrinkWorkload.deleteBurst(store)
            var rounds = 0
            while store.shrinkCounts.truncations == 0 && rounds < Self.maximumRounds {
                try ShrinkWorkload.commitRound(store)
                rounds += 1
            }
        }
        let results = try await [first, second]
        #expect(results.allSatisfy { $0.reads > 0 && $0.wrong == 0 }, "\(results)")
        #expect(store.shrinkCounts.truncations >= 1, "\(store.shrinkCounts)")
        _ = try store.verify()
    }

    /// A reader in another process holds the version with the burst while this one deletes it
    /// and shrinks: the child's version reads the same at the end (every node of it verified
    /// through its mapping, which a cut page would kill with SIGBUS), the file is never cut
    /// below what it reaches, and once the child is gone the file shrinks to the bound.
    @Test func aReaderInAnotherProcessKeepsItsVersionWhileTheFileShrinks() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Store.open(path: path)
        try ShrinkWorkload.grow(store)
        try ShrinkWorkload.insertBurst(store)
        let reach = try ShrinkWorkload.reach(store.beginRead())
        let ready = MultiProcessTests.marker(path, "ready"), done = MultiProcessTests.marker(path, "done")
        async let child: Void = Self.pinningReader(path: path, ready: ready, done: done)
        try await onThread {
            try MultiProcessTests.waitUntil("the reader") { FileManager.default.fileExists(atPath: ready) }
            try ShrinkWorkload.deleteBurst(store)
            for _ in 0..<300 {
                try ShrinkWorkload.commitRound(store)
                #expect(try store.spaceUsage().fileSize >= reach, "the file was cut below what the other process's version reaches")
            }
            MultiProcessTests.touch(done)
        }
        await child
        let compacted = try ShrinkWorkload.compactedSize(store, in: directory)
        let rounds = try await onThread { try Self.roundsUntilSmall(store, compacted: compacted) }
        let usage = try store.spaceUsage()
        #expect(rounds != nil, "\(usage) after the reader went; compacted \(compacted); \(store.shrinkCounts)")
        #expect(store.shrinkCounts.movedBytes > 0, "\(store.shrinkCounts)")
        _ = try store.verify()
    }

    private static func pinningReader(path: String, ready: String, done: String) async {
        await #expect(processExitsWith: .success) { [path = path as String, ready = ready as String, done = done as String] in
            let store = try Store.open(path: path)
            let reader = store.beginRead()
            let before = try ShrinkWorkload.contents(reader)
            guard before.count == Int(ShrinkWorkload.rows + ShrinkWorkload.burst) else { exit(2) }
            MultiProcessTests.touch(ready)
            // Reads while the other process shrinks, then once more after it is done.
            var checks = 0
            while !FileManager.default.fileExists(atPath: done) {
                guard try ShrinkWorkload.contents(reader) == before else { exit(3) }
                checks += 1
                usleep(20_000)
            }
            guard try ShrinkWorkload.contents(reader) == before else { exit(4) }
            _ = try reader.verify(uncached: true)
            // A new read in this process catches up with the shrunk file.
            let now = store.beginRead()
            guard try ShrinkWorkload.contents(now) == ShrinkWorkload.expected(afterRound: try ShrinkWorkload.round(now)) else { exit(5) }
            _ = try now.verify(uncached: true)
        }
    }

    /// A child process that commits rounds on the grown file is killed at a random instant of
    /// the shrink, again and again (the burst is written and deleted anew before each child):
    /// each time the file reopens, verifies, and holds exactly the rounds up to some r, never
    /// fewer than acknowledged before.
    @Test func aWriterKilledWhileShrinkingLeavesAWholeFile() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        try await onThread {
            let store = try Store.open(path: path)
            try ShrinkWorkload.grow(store)
        }
        var round = 0
        var random = ReplayableRandom(seed: 0x5A81_4C00_0001)
        for attempt in 0..<12 {
            if attempt > 0 {
                try await onThread {
                    let store = try Store.open(path: path)
                    try ShrinkWorkload.insertBurst(store)
                    try ShrinkWorkload.deleteBurst(store)
                }
            }
            // The shrink takes about ten commits of a few milliseconds each.
            let delay = UInt32(random.below(80_000))
            await #expect(processExitsWith: .signal(SIGKILL), "kill \(attempt) after \(delay) µs") {
                [path = path as String, delay = delay as UInt32] in
                let store = try Store.open(path: path)
                try ShrinkWorkload.commitRound(store)
                Thread.detachNewThread {
                    usleep(delay)
                    kill(getpid(), SIGKILL)
                }
                while true { try ShrinkWorkload.commitRound(store) }
            }
            let reached = try await onThread { () -> Int in
                let store = try Store.open(path: path, options: StoreOptions(create: false))
                _ = try store.verify(uncached: true)
                let read = store.beginRead()
                let r = try ShrinkWorkload.round(read)
                #expect(try ShrinkWorkload.contents(read) == ShrinkWorkload.expected(afterRound: r), "kill \(attempt): round \(r)")
                return r
            }
            #expect(reached > round, "kill \(attempt): the child's first round was acknowledged; round \(reached), before \(round)")
            round = reached
        }
    }
}

/// Reads begun on other threads, counted.
final class ReadCount: Sendable {
    private let count = Locked(0)
    var value: Int { count.withLock { $0 } }
    func add() { count.withLock { $0 += 1 } }
}
