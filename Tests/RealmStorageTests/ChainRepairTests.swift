import Dispatch
import Foundation
import Testing
@testable import RealmStorage

/// What failed or half-written commits leave in the chain of run headers (FileHeader.swift,
/// invariant 4), and that nothing ever links to it again: a retried version after a failed
/// group sync, a write that failed half-way, another process taking over, a file that grew
/// past another process's mapping, and recovery after a crash in the middle of a commit.
@Suite struct ChainRepairTests {
    typealias G = GroupCommitTests
    typealias P = MultiProcessTests

    /// A store whose commit 1 (v3) is durable and whose group [2, 3...last] (v4...) is written
    /// and fails at sync 3, with the syncs in `failing` failing too; sync 4 is the zeroing of
    /// the failed roots. Returns once every member of the group has its answer.
    static func failAGroup(at path: String, through last: Int, failing: [Int] = [])
        throws -> (store: Store, gate: GatedSyncFile, table: TableKey, answers: G.Answers) {
        let box = WrappedFileBox<GatedSyncFile>()
        let store = try Store.open(path: path, options: StoreOptions(fileWrapper: box.wrapper { GatedSyncFile(wrapping: $0) }))
        let gate = try #require(box.file)
        let answers = G.Answers()
        let table = try G.createTable(store)
        gate.waitForSyncAtGate(); gate.open()          // sync 1: the table (v2)
        try G.insert(store, table, 1, answers)         // v3
        gate.waitForSyncAtGate(); gate.open()          // sync 2
        answers.waitFor(1)
        try G.insert(store, table, 2, answers)         // v4
        gate.waitForSyncAtGate()                       // sync 3, to fail
        for n in [3] + failing { gate.fail(sync: n) }
        for id in 3...last { try G.insert(store, table, id, answers) }   // chained after v4
        try G.barrier(store)
        gate.open()
        gate.waitForSyncAtGate(); gate.open()          // sync 4: the failed roots zeroed
        answers.waitFor(last - 1)
        for id in 2...last { #expect(throws: StorageError.self) { try answers[id]?.get() } }
        return (store, gate, table, answers)
    }

    /// A failed group [v4, v5...v8] all reached the file (only the sync failed). The same
    /// transaction, retried, would be v4 again, byte for byte but for the history nonce: with
    /// the same record checksum, v5's run header would link to it and the failed versions would
    /// come back at the next open.
    @Test func retryingAVersionOfAFailedGroupDoesNotReviveTheRest() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let (store, gate, table, _) = try Self.failAGroup(at: path, through: 6)
            let retry = G.Answers()
            try G.insert(store, table, 2, retry)
            gate.waitForSyncAtGate(); gate.open()
            retry.waitFor(1)
            #expect((try? retry[2]?.get()) != nil)
            #expect(try G.ids(store.beginRead()) == [1, 2])
        }
        let reopened = try Store.open(path: path)
        #expect(try G.ids(reopened.beginRead()) == [1, 2], "only 1 and 2 were acknowledged (version \(reopened.latestVersion))")
        try reopened.verify()
    }

    /// When zeroing the failed group's roots fails too, the next write does it first, with a
    /// sync of its own, and fails if that fails: no version is acknowledged while a failed one
    /// is still reachable.
    @Test func zeroingThatFailsIsRedoneBeforeTheNextWrite() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let (store, gate, table, answers) = try Self.failAGroup(at: path, through: 4, failing: [4, 5])
            let pending = store.stateLock.withLock { $0.group.pendingInvalidation.map(\.offset) }
            #expect(pending.count == 3, "the run headers of v4, v5 and v6")

            try G.insert(store, table, 5, answers)
            gate.waitForSyncAtGate(); gate.open()          // sync 5: the next write's zeroing fails
            answers.waitFor(1)
            #expect(throws: StorageError.self) { try answers[5]?.get() }
            #expect(store.stateLock.withLock { $0.group.pendingInvalidation.count } == 3)

            try G.insert(store, table, 6, answers)
            gate.waitForSyncAtGate(); gate.open()          // sync 6: zeroed at last
            gate.waitForSyncAtGate(); gate.open()          // sync 7: 6's commit
            answers.waitFor(1)
            #expect((try? answers[6]?.get()) != nil)
            #expect(store.stateLock.withLock { $0.group.pendingInvalidation.isEmpty })
            let read = store.beginRead()
            for offset in pending {
                // Zero, or a root of this history's new versions written there since.
                let header = RunHeader.decode(at: offset, base: read.mapping.base, limit: read.slot.logicalSize)
                #expect(header.map { $0.root.version <= read.slot.version } ?? true)
            }
            #expect(try G.ids(read) == [1, 6])
        }
        let reopened = try Store.open(path: path)
        #expect(try G.ids(reopened.beginRead()) == [1, 6])
        try reopened.verify()
    }

    /// Zeroing still owed when the store closes (nothing was written after the failure) is
    /// done, with a sync, as it closes: this process had the last turn at the write lock.
    @Test func zeroingStillOwedIsDoneWhenTheStoreCloses() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let gate: GatedSyncFile
        weak var closing: Store?
        do {
            let failed = try Self.failAGroup(at: path, through: 4, failing: [4])
            gate = failed.gate
            closing = failed.store
            #expect(failed.store.stateLock.withLock { $0.group.pendingInvalidation.count } == 3)
            #expect(gate.syncCount == 4)
            gate.open()                                    // for the sync as the store closes
        }
        // The sync thread may hold the store a moment after its last answer: then the store
        // closes there, when it lets go.
        let deadline = ContinuousClock.now + .seconds(60)
        while closing != nil && ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.001) }
        #expect(closing == nil)
        #expect(gate.syncCount == 5)
        let reopened = try Store.open(path: path)
        #expect(try G.ids(reopened.beginRead()) == [1])
        try reopened.verify()
    }

    /// A commit that fails half-way through writing its run (a short write; a SIGKILL between
    /// its writes leaves the same) leaves its run header whole and its nodes not. Another
    /// process taking the write lock then must build on the durable version, not on that one,
    /// and the first process, taking it back, on the other's.
    @Test func anotherProcessBuildsOnTheDurableVersionNotOnAHalfWrittenOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let box = WrappedFileBox<HalfWritingFile>()
        let w = try Store(path: path, options: StoreOptions(fileWrapper: box.wrapper { HalfWritingFile(wrapping: $0) }))
        let o = try Store(path: path, options: StoreOptions())
        let file = try #require(box.file)
        try P.append(w, writer: 1)                      // v2: the table and row 0
        try P.append(w, writer: 1)                      // v3
        file.arm()
        #expect(throws: StorageError.self) { try P.append(w, writer: 1) }
        #expect(try P.append(o, writer: 2) == 2)
        #expect(try P.append(w, writer: 1) == 3)
        try o.verify()
        try w.verify()
        _ = consume w
        _ = consume o
        let reopened = try Store.open(path: path)
        #expect(try P.rows(reopened.beginRead()).map { $0[1] } == [.int(1), .int(1), .int(2), .int(1)])
        try reopened.verify()
    }

    /// Another process's file grows past this one's mapping (1 MiB here, standing in for the
    /// 1 GiB a store reserves) and chains small commits out there. Catching up must map the
    /// whole file to follow the chain, or it builds on an old version and loses them.
    @Test func catchingUpFollowsTheChainPastTheMappingsEnd() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        var options = StoreOptions()
        options.minimumMapping = 1 << 20
        let w = try Store(path: path, options: options)
        try P.append(w, writer: 1)                      // v2
        let o = try Store(path: path, options: options)
        #expect(try P.count(o) == 1)
        // A bulk commit takes the file past 1 MiB, then small commits chain at its end.
        let big = try w.beginWrite()
        let table = try #require(try big.table(named: P.tableName)).key
        for id in Int64(1)..<20_000 {
            try big.insert(table, key: ObjectKey(id), values: [.int(id), .int(1), .string(P.payload(id))])
        }
        try big.commit()
        for _ in 0..<5 { try P.append(w, writer: 1) }
        #expect(try w.file.size() > 1 << 20)
        #expect(w.beginRead().slot.runHeader != .none, "the newest version is in a run header")
        let durable = w.latestVersion
        let t = try o.beginWrite()
        #expect(t.baseVersion == durable)
        try P.appendNext(t, writer: 2)
        try t.commit()
        _ = consume o
        _ = consume w
        let reopened = try Store.open(path: path)
        #expect(try P.count(reopened) == 20_006)
        try reopened.verify()
    }

    /// A crash in the middle of a commit leaves its run header whole where the recovered
    /// version's successor's goes. Recovery zeroes it: the commit written there next may be
    /// rooted in a slot instead, leave it, and rewrite the nodes it names byte for byte.
    @Test func recoveryZeroesTheRunHeaderOfACommitThatDidNotArrive() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let reserved: UInt64
        do {
            let box = WrappedFileBox<HalfWritingFile>()
            let store = try Store.open(path: path, options: StoreOptions(fileWrapper: box.wrapper { HalfWritingFile(wrapping: $0) }))
            try P.append(store, writer: 1)
            try P.append(store, writer: 1)
            reserved = store.beginRead().slot.nextRun
            try #require(box.file).arm(thenBreak: true)
            #expect(throws: StorageError.self) { try P.append(store, writer: 1) }
            let read = store.beginRead()
            let header = RunHeader.decode(at: reserved, base: read.mapping.base, limit: try store.file.size())
            #expect(header?.root.version == VersionID(4), "the failed commit's run header is in the file")
        }
        let reopened = try Store.open(path: path)
        #expect(try P.count(reopened) == 2)
        let bytes = try reopened.file.read(count: RunHeader.size, at: reserved)
        #expect(bytes.allSatisfy { $0 == 0 })
        try P.append(reopened, writer: 1)
        try reopened.verify()
    }
}

extension ChainRepairTests {
    /// A reader's last resort (`catchUpToNewestSlot`, after many tries) may read a version
    /// another process has written but not yet made durable. That version must not become the
    /// one this process's writers build on: here its sync fails, and the writer of the second
    /// store must build on the durable version, with the failed row nowhere.
    @Test func aWriterNeverBuildsOnAVersionAReaderReadBeforeItWasDurable() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let (writer, gate) = try P.gatedWriter(path: path)
        func commitRow(_ id: Int64) throws -> DurabilityWaiter { try P.commitRow(writer, id) }
        let first = try commitRow(0)
        gate.waitForSyncAtGate(); gate.open()
        _ = try first.wait()                                   // v2, durable
        let other = try Store(path: path, options: StoreOptions())
        let second = try commitRow(1)                          // v3, its sync waits
        gate.waitForSyncAtGate()
        gate.fail(sync: 2)
        #expect(other.catchUpToNewestSlot()?.slot.version == VersionID(3))
        #expect(other.latestVersion == VersionID(2))
        gate.open()                                            // sync 2 fails
        gate.waitForSyncAtGate(); gate.open()                  // sync 3: the failed roots zeroed
        #expect(throws: StorageError.self) { try second.wait() }
        let transaction = try other.beginWrite()
        #expect(transaction.baseVersion == VersionID(2))
        try P.appendNext(transaction, writer: 2)
        try transaction.commit()
        #expect(try P.rows(other.beginRead()).map { $0[1] } == [.int(1), .int(2)])
        _ = consume other
        _ = consume writer
        let reopened = try Store.open(path: path)
        #expect(try P.rows(reopened.beginRead()).map { $0[1] } == [.int(1), .int(2)])
        try reopened.verify()
    }

    /// A store without syncs publishes its versions for readers, not as synced: the next store
    /// that syncs, opening the file alone, syncs it before building on it.
    @Test func aVersionNoStoreSyncedIsSyncedWhenASyncingStoreOpensIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let unsafe = try Store.open(path: path, options: StoreOptions(durability: .unsafe))
            try P.append(unsafe, writer: 1)
            try P.append(unsafe, writer: 1)
        }
        let box = WrappedFileBox<FaultInjectingFile>()
        let wrap = box.wrapper { FaultInjectingFile(wrapping: $0, failing: .setSize, at: .max, errno: 0) }
        do {
            let full = try Store.open(path: path, options: StoreOptions(fileWrapper: wrap))
            #expect(try P.count(full) == 2)
            #expect(try #require(box.file).count(of: .sync) == 1, "the versions the unsafe store wrote were never synced")
            try P.append(full, writer: 1)
        }
        // Closed after a synced commit: the next opener has nothing to sync.
        let again = try Store.open(path: path, options: StoreOptions(fileWrapper: wrap))
        #expect(try P.count(again) == 3)
        #expect(try #require(box.file).count(of: .sync) == 0)
    }
}

/// Fails the next write after `arm()` the way a short write or a kill between writes would:
/// the first half of its bytes reaches the file, then EIO. With `thenBreak`, every later
/// write fails too (as for a process killed there: nothing after it reaches the file).
final class HalfWritingFile: StorageFile, Sendable {
    let inner: StorageFile
    private struct State {
        var armed = false
        var breaks = false
        var broken = false
    }
    private let state = Locked(State())
    init(wrapping inner: StorageFile) { self.inner = inner }
    func arm(thenBreak: Bool = false) { state.withLock { $0.armed = true; $0.breaks = thenBreak } }
    var path: String { inner.path }
    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        let (fire, dead) = state.withLock { state in
            defer { state.broken = state.broken || (state.armed && state.breaks); state.armed = false }
            return (state.armed, state.broken)
        }
        if dead { throw StorageError.system("write", path: inner.path, errno: 5) }
        guard fire else { return try inner.write(bytes, at: offset) }
        try inner.write(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)]), at: offset)
        throw StorageError.system("write", path: inner.path, errno: 5)
    }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func sync() throws(StorageError) { try inner.sync() }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}
