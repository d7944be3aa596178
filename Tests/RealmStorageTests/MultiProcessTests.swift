import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several processes on one realm file (ProcessCoordination.swift, Store+Process.swift). The
/// other processes are exit tests running beside the parent; they meet in the realm file, and
/// in marker files for the few handshakes a test needs. The parent's blocking work runs on a
/// thread of its own (`onThread`), so that the exit tests' waits always find a pool thread.
@Suite(.childProcesses) struct MultiProcessTests {
    static let tableName = "Turn"
    static let columns = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "writer", type: .int),
        ColumnSpec(name: "payload", type: .string),
    ]

    static func payload(_ id: Int64, round: Int = 0) -> String {
        "object \(id) round \(round) " + String(repeating: "p", count: Int(id % 150))
    }

    /// Appends object n, n being the count read inside the write transaction: two writers on
    /// the same version would both append n, and the unique index would refuse the second.
    @discardableResult
    static func append(_ store: Store, writer: Int64) throws -> Int64 {
        let transaction = try store.beginWrite()
        let id = try appendNext(transaction, writer: writer)
        try transaction.commit()
        return id
    }

    static func appendAsync(_ store: Store, writer: Int64) async throws {
        let transaction = try await store.beginWriteAsync()
        try appendNext(transaction, writer: writer)
        try await transaction.commitAsync()
    }

    @discardableResult
    static func appendNext(_ transaction: WriteTransaction, writer: Int64) throws -> Int64 {
        let table = try transaction.table(named: tableName)?.key ?? transaction.createTable(tableName, columns: columns)
        let id = Int64(try transaction.table(table).count())
        try transaction.insert(table, key: ObjectKey(id), values: [.int(id), .int(writer), .string(payload(id))])
        return id
    }

    static func count(_ store: Store) throws -> Int {
        try store.beginRead().table(named: tableName)?.count() ?? 0
    }

    /// The rows of the table, in key order.
    static func rows(_ read: ReadTransaction) throws -> [[Value]] { try read.rowValues(ofTable: tableName) }

    /// Waits (polling gently: the whole suite shares two cores) until `condition` holds;
    /// throws after `seconds` (a bound for a stuck handshake, not a time the test expects), or
    /// at once when `partner` is set (the other party has exited and will never answer). The
    /// error says what this process sees of `store`, so that a stuck handshake can be told
    /// from a dead partner.
    static func waitUntil(_ what: String, seconds: Double = 300, store: Store? = nil, partner: StopFlag? = nil,
                          _ condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while try !condition() {
            let gone = partner?.isSet == true
            guard Date() < deadline, !gone else {
                let seen = store.map { " (\(describe($0)))" } ?? ""
                throw StorageError(.ioFailure, "gave up waiting for \(what)\(gone ? ": it has exited" : " after \(Int(seconds)) s")\(seen)")
            }
            usleep(1_000)
        }
    }

    /// What this process sees of the file: the objects it reads, its newest version, and the
    /// version the lock file names durable.
    static func describe(_ store: Store) -> String {
        let count = (try? count(store)).map(String.init) ?? "unreadable"
        return "pid \(getpid()) reads \(count) objects at version \(store.latestVersion); the lock file names \(store.coordination?.durableVersion.map(String.init) ?? "none") durable"
    }

    static func marker(_ path: String, _ name: String) -> String { path + "." + name }

    static func touch(_ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data())
    }

    // MARK: Taking turns

    /// Writer 1 appends the even ids, writer 2 the odd ones, each waiting for the other's
    /// commit before its own: every commit builds on a version the other process wrote.
    static func takeTurns(_ store: Store, writer: Int64, turns: Int, partner: StopFlag? = nil) throws {
        let parity = writer == 1 ? 0 : 1
        for _ in 0..<turns {
            try waitUntil("writer \(3 - writer)'s commit", store: store, partner: partner) { try count(store) % 2 == parity }
            let id = try append(store, writer: writer)
            guard Int(id) % 2 == parity else { throw StorageError(.invalidArgument, "writer \(writer) appended id \(id)") }
        }
    }

    @Test func writersInTwoProcessesTakeTurns() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let turns = 40
        let store = try Store.open(path: path)
        let childExited = StopFlag()
        async let child: Void = Self.inChild(path: path, turns: turns, exited: childExited)
        try await onThread { try Self.takeTurns(store, writer: 1, turns: turns, partner: childExited) }
        await child
        let rows = try Self.rows(store.beginRead())
        #expect(rows.count == 2 * turns)
        for (i, row) in rows.enumerated() {
            #expect(row == [.int(Int64(i)), .int(i % 2 == 0 ? 1 : 2), .string(Self.payload(Int64(i)))], "object \(i)")
        }
        try store.verify()
    }

    private static func inChild(path: String, turns: Int, exited: StopFlag) async {
        defer { exited.set() }
        let said = marker(path, "child-error")
        await #expect(processExitsWith: .success) { [path = path as String, turns = turns as Int, said = said as String] in
            let store = try Store.open(path: path)
            do {
                try MultiProcessTests.takeTurns(store, writer: 2, turns: turns)
                try store.verify()
            } catch {
                // Left where the parent reads it: a body that throws only traps, saying nothing.
                _ = FileManager.default.createFile(atPath: said, contents: Data("\(error)".utf8))
                exit(2)
            }
        }
        if let error = FileManager.default.contents(atPath: said) {
            Issue.record("the child said: \(String(decoding: error, as: UTF8.self))")
        }
    }

    // MARK: Waiting for the write lock

    /// The child begins a write, says so, and commits a little later; the parent's writes, begun
    /// meanwhile, must wait for that commit and build on it.
    @Test func aWriterWaitsForAnotherProcessesTransactionAndBuildsOnIt() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Store.open(path: path)
        for round in 0..<2 {
            let began = Self.marker(path, "began-\(round)")
            let childExited = StopFlag()
            async let child: Void = Self.holdAWrite(path: path, began: began, exited: childExited)
            try await onThread {
                try Self.waitUntil("the child's write", store: store, partner: childExited) { FileManager.default.fileExists(atPath: began) }
            }
            // Round 0 waits on a thread, round 1 suspends the task.
            if round == 0 {
                try await onThread { try Self.appendAfterTheChild(try store.beginWrite(), round: round) }
            } else {
                try Self.appendAfterTheChild(try await store.beginWriteAsync(), round: round)
            }
            await child
        }
        #expect(try Self.rows(store.beginRead()).map { $0[1] } == [.int(2), .int(1), .int(2), .int(1)])
        try store.verify()
    }

    /// Throws rather than records: on a thread of its own, an issue would not find its test.
    static func appendAfterTheChild(_ transaction: WriteTransaction, round: Int) throws {
        let id = Int64(2 * round + 1)
        guard let table = try transaction.table(named: tableName)?.key, try transaction.table(table).count() == Int(id) else {
            throw StorageError(.invalidArgument, "round \(round): the write did not start on the child's commit")
        }
        try transaction.insert(table, key: ObjectKey(id), values: [.int(id), .int(1), .string(payload(id))])
        try transaction.commit()
    }

    private static func holdAWrite(path: String, began: String, exited: StopFlag) async {
        defer { exited.set() }
        await #expect(processExitsWith: .success) { [path = path as String, began = began as String] in
            let store = try Store.open(path: path)
            let transaction = try store.beginWrite()
            try MultiProcessTests.appendNext(transaction, writer: 2)
            MultiProcessTests.touch(began)
            usleep(300_000)
            try transaction.commit()
        }
    }

    // MARK: Readers of other processes

    /// The parent reads a version while the child rewrites every object again and again, which
    /// frees all the space that version reaches: none of it may be reused under the reader.
    @Test func aReaderKeepsItsVersionWhileAnotherProcessRewritesEverything() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        // The child chains its roots; this process writes a slot at every commit, so that the
        // space its commits free is reused at once and the file's size settles exactly.
        let store = try Store.open(path: path, options: StoreOptions(chainLength: 1))
        let setup = try store.beginWrite()
        let table = try setup.createTable(Self.tableName, columns: Self.columns)
        for id in Int64(0)..<400 {
            try setup.insert(table, key: ObjectKey(id), values: [.int(id), .int(1), .string(Self.payload(id))])
        }
        try setup.commit()
        let reader = store.beginRead()
        let before = try Self.rows(reader)
        await #expect(processExitsWith: .success) { [path = path as String] in
            let store = try Store.open(path: path)
            for round in 1...25 { try MultiProcessTests.rewrite(store, round: round) }
        }
        #expect(try Self.rows(reader) == before, "the parent's version changed under it")
        let after = try Self.rows(store.beginRead())
        #expect(after.map { $0[2] } == (Int64(0)..<400).map { .string(Self.payload($0, round: 25)) })
        try store.verify()
        // Once the reader is gone, the space it held is reused: the file stops growing.
        _ = consume reader
        for _ in 0..<3 { try Self.rewrite(store, round: 26) }
        let size = try store.spaceUsage().fileSize
        for round in 27..<40 { try Self.rewrite(store, round: round) }
        #expect(try store.spaceUsage().fileSize == size)
    }

    static func rewrite(_ store: Store, round: Int, rows: Int64 = 400) throws {
        let transaction = try store.beginWrite()
        let table = try #require(try transaction.table(named: tableName)).key
        for id in Int64(0)..<rows { try transaction.set(table, ObjectKey(id), ColumnKey(2), .string(payload(id, round: round))) }
        try transaction.commit()
    }

    // MARK: Processes that die

    /// A process killed while it holds the write lock and pins an old version keeps nobody
    /// out: its locks go with it, and its pins no longer count.
    @Test func aProcessKilledInAWriteKeepsNobodyOut() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Store.open(path: path)
        try Self.append(store, writer: 1)
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String] in
            let store = try Store.open(path: path)
            let reader = store.beginRead()
            let transaction = try store.beginWrite()
            let table = try #require(try transaction.table(named: MultiProcessTests.tableName)).key
            try transaction.insert(table, key: ObjectKey(1), values: [.int(1), .int(2), .string("never committed")])
            _ = withExtendedLifetime(reader) { kill(getpid(), SIGKILL) }
        }
        #expect(store.coordination?.othersPins().isEmpty == true, "a dead process's readers still count")
        #expect(!store.otherProcessesHaveTheFile)
        #expect(try Self.append(store, writer: 1) == 1)
        try store.verify()
    }

    /// Real SIGKILLs in the middle of another process's commits, while this process commits
    /// too: after each kill the child's table holds whole batches, at least as many as before,
    /// and every one of the parent's commits is there; the parent's store goes on throughout,
    /// and the file verifies when reopened.
    @Test func writersInTwoProcessesSurviveSIGKILL() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Store.open(path: path)
        var childObjects = 0
        var parentObjects = 0
        for round in 0..<6 {
            let seed = ReplayableRandom.derive(0x3D0_C0DE, round)
            let done = StopFlag()
            // Four tasks commit asynchronously, so that this process's commits share syncs and
            // it holds the write lock across groups.
            async let appended: Int = withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        var n = 0
                        while !done.isSet {
                            try await Self.appendAsync(store, writer: 1)
                            n += 1
                        }
                        return n
                    }
                }
                return try await group.reduce(0, +)
            }
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round), seed \(seed)") { [path = path as String, seed = seed as UInt64] in
                try KillTests.commitUntilKilled(path: path, seed: seed, durability: .full, killAfterFirstCommit: true)
            }
            done.set()
            parentObjects += try await appended
            let read = store.beginRead()
            #expect(try read.table(named: Self.tableName)?.count() == parentObjects, "round \(round)")
            let children = try #require(try read.table(named: KillTests.tableName)).count()
            #expect(children % KillTests.batch == 0 && children >= childObjects + KillTests.batch, "round \(round): \(children) after \(childObjects)")
            childObjects = children
        }
        try store.verify()
        _ = consume store
        #expect(try KillTests.checkCommittedPrefix(path: path, context: "after the rounds") == childObjects)
        let reopened = try Store.open(path: path)
        #expect(try Self.rows(reopened.beginRead()).count == parentObjects)
    }

    /// A version this process pins while another process commits and is SIGKILLed mid-commit,
    /// round after round: the other process's allocator keeps that version's space only
    /// because of the pin published in the lock file, so the version must read the same after
    /// every round, and after this process's own commits reused what the dead one freed; every
    /// batch the killed writer committed is whole after reopening.
    @Test func aWriterKilledMidCommitNeverOverwritesAVersionAnotherProcessPins() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Store.open(path: path, options: StoreOptions(limits: TreeLimits(leafCapacity: 8, innerCapacity: 4)))
        let setup = try store.beginWrite()
        let table = try setup.createTable(Self.tableName, columns: Self.columns)
        for id in Int64(0)..<200 {
            try setup.insert(table, key: ObjectKey(id), values: [.int(id), .int(1), .string(Self.payload(id))])
        }
        try setup.commit()
        var pinned: (read: ReadTransaction, rows: [[Value]], children: Int)?
        var childObjects = 0
        for round in 0..<4 {
            let seed = ReplayableRandom.derive(0x919_C0DE, round)
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round), seed \(seed)") { [path = path as String, seed = seed as UInt64] in
                try KillTests.commitUntilKilled(path: path, seed: seed, durability: .full, killAfterFirstCommit: true)
            }
            if let pinned {
                #expect(try Self.rows(pinned.read) == pinned.rows, "round \(round): the pinned version changed under its reader")
                #expect(try pinned.read.table(named: KillTests.tableName)?.count() == pinned.children, "round \(round)")
            }
            // This process's own commits, which take what the killed writer freed first.
            for r in 1...3 { try Self.rewrite(store, round: 10 * round + r, rows: 200) }
            if let pinned {
                #expect(try Self.rows(pinned.read) == pinned.rows, "round \(round): the pinned version changed under this process's commits")
            } else {
                // Pinned from the first round on: the killed writers' tree is in it too.
                let read = store.beginRead()
                pinned = (read, try Self.rows(read), try #require(try read.table(named: KillTests.tableName)).count())
            }
            let children = try #require(try store.beginRead().table(named: KillTests.tableName)).count()
            #expect(children >= childObjects + KillTests.batch, "round \(round): \(children) after \(childObjects)")
            childObjects = children
        }
        try store.verify()
        pinned = nil
        _ = consume store
        #expect(try KillTests.checkCommittedPrefix(path: path, context: "after the rounds") == childObjects)
        let reopened = try Store.open(path: path)
        #expect(try Self.rows(reopened.beginRead()).map { $0[2] } == (Int64(0)..<200).map { .string(Self.payload($0, round: 33)) })
        try reopened.verify()
    }

    // MARK: Opening

    /// A store whose syncs wait at a gate (GatedSyncFile), standing in for another process.
    static func gatedWriter(path: String) throws -> (Store, GatedSyncFile) {
        let box = WrappedFileBox<GatedSyncFile>()
        let writer = try Store(path: path, options: StoreOptions(fileWrapper: box.wrapper { GatedSyncFile(wrapping: $0) }))
        return (writer, try #require(box.file))
    }

    /// Appends object `id` as writer 1 and commits without waiting; the waiter has the answer.
    static func commitRow(_ writer: Store, _ id: Int64) throws -> DurabilityWaiter {
        let transaction = try writer.beginWrite()
        #expect(try appendNext(transaction, writer: 1) == id)
        let waiter = DurabilityWaiter()
        try transaction.commit(then: waiter.deliver)
        return waiter
    }

    /// A process that opens the file while another has written a commit but not yet synced
    /// it (its root slot is in the file) starts from the durable version: that commit may
    /// still fail, and then it never existed. Two stores in one process stand in for the two
    /// processes (each has its own lock file descriptor).
    @Test func anOpenerBesideAnUnsyncedCommitStartsFromTheDurableVersion() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let (writer, gate) = try Self.gatedWriter(path: path)
        func commitRow(_ id: Int64) throws -> DurabilityWaiter { try Self.commitRow(writer, id) }
        let first = try commitRow(0)
        gate.waitForSyncAtGate()
        gate.open()
        _ = try first.wait()
        let second = try commitRow(1)
        gate.waitForSyncAtGate()  // its root slot is written; the sync waits
        gate.fail(sync: 2)
        let other = try Store(path: path, options: StoreOptions())
        #expect(try Self.count(other) == 1, "the commit not yet durable was taken for the newest version")
        gate.open()
        gate.open()  // for the sync after the failed one, which clears the slot it wrote
        #expect(throws: StorageError.self) { try second.wait() }
        #expect(try Self.count(other) == 1)
        try Self.append(other, writer: 2)
        #expect(try Self.rows(other.beginRead()).map { $0[1] } == [.int(1), .int(2)])
        try other.verify()
    }

    /// A process that finds the file open elsewhere reads what is there and adds to it.
    @Test func aSecondProcessOpensTheFileAndSeesItsData() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Store.open(path: path)
        try Self.append(store, writer: 1)
        #expect(Store.isOpenByAnyProcess(path: path))
        await #expect(processExitsWith: .success) { [path = path as String] in
            let store = try Store.open(path: path)
            #expect(store.otherProcessesHaveTheFile)
            guard try MultiProcessTests.count(store) == 1 else { exit(3) }
            try MultiProcessTests.append(store, writer: 2)
        }
        #expect(try Self.count(store) == 2)
        #expect(!store.otherProcessesHaveTheFile)
    }

    /// A lock file that is not ours, found while a process has the realm open, is refused with
    /// its own error; found by the first process, it is replaced.
    @Test func aForeignLockFileIsRefusedWhileTheRealmIsOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            // Another process in all but name: its own lock file descriptor and locks.
            let other = try ProcessCoordination(path: path, readOnly: false)
            other.finishedOpening()
            let fd = open(path + ".lock", O_WRONLY)
            #expect(fd >= 0)
            #expect(pwrite(fd, "not a lock file", 15, 0) == 15)
            close(fd)
            #expect { try Store.open(path: path) } throws: { ($0 as? StorageError)?.code == .incompatibleLockFile }
            withExtendedLifetime(other) {}
        }
        let store = try Store.open(path: path)
        try store.verify()
    }
}

/// A flag one thread sets and another polls.
final class StopFlag: Sendable {
    private let value = Locked(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Runs blocking work on a thread of its own, off the cooperative pool.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
