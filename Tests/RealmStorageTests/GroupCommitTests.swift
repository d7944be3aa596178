import Dispatch
import Foundation
import Testing
@testable import RealmStorage

/// Group commit (Store+GroupCommit.swift): commits written while a sync is under way share the
/// next sync; nobody is answered, and no reader sees anything, before it is durable; a failed
/// sync fails its whole group and everything built on it; a crash at any sync of a grouped
/// workload recovers the acknowledged state or the group in flight, whole.
@Suite struct GroupCommitTests {
    static let columns = [ColumnSpec(name: "id", type: .int, unique: true), ColumnSpec(name: "name", type: .string, indexed: true)]

    /// The answers committers got, by commit number.
    final class Answers: Sendable {
        private let results = Locked<[Int: Result<VersionID, StorageError>]>([:])
        private let arrivals = DispatchSemaphore(value: 0)

        func record(_ n: Int) -> @Sendable (Result<VersionID, StorageError>) -> Void {
            { result in
                self.results.withLock { $0[n] = result }
                self.arrivals.signal()
            }
        }

        var count: Int { results.withLock { $0.count } }
        subscript(n: Int) -> Result<VersionID, StorageError>? { results.withLock { $0[n] } }

        /// Waits until `n` more answers arrived.
        func waitFor(_ n: Int) { for _ in 0..<n { arrivals.wait() } }
    }

    static func insert(_ store: Store, _ table: TableKey, _ id: Int, _ answers: Answers) throws {
        let transaction = try store.beginWrite()
        try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
        try transaction.commit(then: answers.record(id))
    }

    /// Waits until every commit so far is written: the lane comes back only after that.
    static func barrier(_ store: Store) throws { try store.beginWrite().rollback() }

    /// A store whose syncs wait at a gate the test opens (GatedSyncFile).
    static func gatedStore(path: String) throws -> (Store, GatedSyncFile) {
        let box = WrappedFileBox<GatedSyncFile>()
        let store = try Store.open(path: path, options: StoreOptions(fileWrapper: box.wrapper { GatedSyncFile(wrapping: $0) }))
        return (store, try #require(box.file))
    }

    /// Commits row `id` on a thread of its own, which waits there until the commit is durable
    /// (`commitWaiting`, as `realm.write {}` does), and records the answer. `threads` is left
    /// when the thread is done.
    static func insertOnThread(_ store: Store, _ table: TableKey, _ id: Int, _ answers: Answers, _ threads: DispatchGroup) {
        threads.enter()
        Thread.detachNewThread {
            defer { threads.leave() }
            let result: Result<VersionID, StorageError>
            do throws(StorageError) {
                let transaction = try store.beginWrite()
                try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
                result = .success(try transaction.commit())
            } catch {
                result = .failure(error)
            }
            answers.record(id)(result)
        }
    }

    /// Waits until `count` threads wait for their written commits to be durable.
    static func waitUntilThreadsWait(_ store: Store, _ count: Int) {
        while store.groupCommitCounts.waitingThreads < count { usleep(100) }
    }

    static func ids(_ read: ReadTransaction) throws -> [Int]? {
        guard let view = try read.table(named: "Row") else { return nil }
        var ids: [Int] = []
        try view.forEachRow { (row) throws(StorageError) -> Bool in
            if case .int(let id) = try row.value(ColumnKey(0)) { ids.append(Int(id)) }
            return true
        }
        return ids.sorted()
    }

    static func createTable(_ store: Store) throws -> TableKey {
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("Row", columns: columns)
        try transaction.commit(then: { _ in })
        return table
    }

    @Test func commitsWrittenDuringASyncShareTheNextOneAndWaitForIt() throws {
        let directory = TemporaryDirectory()
        let (store, gate) = try Self.gatedStore(path: directory.path())
        let answers = Answers()

        let table = try Self.createTable(store)
        gate.waitForSyncAtGate()                       // sync 1: the table
        for id in 1...10 { try Self.insert(store, table, id, answers) }
        try Self.barrier(store)
        #expect(answers.count == 0, "nobody may be answered before the sync")
        #expect(try Self.ids(store.beginRead()) == nil, "readers must not see what is not durable")
        gate.open()
        gate.waitForSyncAtGate()                       // sync 2: all ten inserts
        #expect(answers.count == 0, "the ten inserts must wait for their own sync")
        #expect(try Self.ids(store.beginRead()) == [], "the table is durable now, the rows are not")
        gate.open()
        answers.waitFor(10)
        #expect(gate.syncCount == 2, "ten commits written during one sync must share the next")
        for id in 1...10 { #expect((try? answers[id]?.get()) != nil, "commit \(id): \(String(describing: answers[id]))") }
        #expect(try Self.ids(store.beginRead()) == Array(1...10))
        try store.verify()
    }

    @Test func aFailedSyncFailsItsGroupAndEverythingBuiltOnIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let (store, gate) = try Self.gatedStore(path: path)
        let answers = Answers()

        let table = try Self.createTable(store)
        gate.waitForSyncAtGate()
        gate.open()                                    // sync 1 (the table) succeeds
        try Self.insert(store, table, 1, answers)
        gate.waitForSyncAtGate()                       // sync 2 (insert 1) will fail
        gate.fail(sync: 2)
        for id in 2...5 { try Self.insert(store, table, id, answers) }
        // A transaction begun on the versions about to fail.
        let late = try store.beginWrite()
        try late.insert(table, values: [.int(99), .string("late")])
        gate.open()
        gate.waitForSyncAtGate()                       // sync 3: the failed slot is zeroed
        gate.open()
        answers.waitFor(5)
        for id in 1...5 {
            #expect(throws: StorageError.self, "commit \(id) must fail with its group") { try answers[id]?.get() }
        }
        #expect(throws: StorageError.self, "a transaction begun on failed versions cannot commit") { try late.commit() }
        #expect(try Self.ids(store.beginRead()) == [], "nothing of the failed group may be visible")

        // The store goes on from the durable version.
        let after = Answers()
        try Self.insert(store, table, 6, after)
        gate.waitForSyncAtGate()
        gate.open()
        after.waitFor(1)
        #expect((try? after[6]?.get()) != nil)
        #expect(try Self.ids(store.beginRead()) == [6])
        try store.verify()
    }

    @Test func aFailedGroupIsGoneAfterReopening() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let (store, gate) = try Self.gatedStore(path: path)
            let answers = Answers()
            let table = try Self.createTable(store)
            gate.waitForSyncAtGate()
            gate.open()
            try Self.insert(store, table, 1, answers)
            gate.waitForSyncAtGate()
            gate.open()
            answers.waitFor(1)
            try Self.insert(store, table, 2, answers)
            gate.waitForSyncAtGate()
            gate.fail(sync: 3)
            for id in 3...6 { try Self.insert(store, table, id, answers) }
            try Self.barrier(store)
            gate.open()
            gate.waitForSyncAtGate()                   // sync 4: the failed slot is zeroed
            gate.open()
            answers.waitFor(5)
            #expect(answers.count == 6)
        }
        let reopened = try Store.open(path: path)
        try reopened.verify()
        #expect(try Self.ids(reopened.beginRead()) == [1])
    }

    /// Threads (Store+GroupCommitThreads.swift): a lone thread syncs at once; the threads that
    /// commit while it syncs wait, and share the next sync, which one of them leads.
    @Test func threadsThatCommitDuringASyncShareTheNextOneAndWaitForIt() throws {
        let directory = TemporaryDirectory()
        let (store, gate) = try Self.gatedStore(path: directory.path())
        let answers = Answers()
        let threads = DispatchGroup()

        let table = try Self.createTable(store)
        gate.waitForSyncAtGate()                       // sync 1: the table
        gate.open()
        Self.insertOnThread(store, table, 0, answers, threads)
        gate.waitForSyncAtGate()                       // sync 2: the lone thread's, at once
        for id in 1...10 {
            Self.insertOnThread(store, table, id, answers, threads)
            Self.waitUntilThreadsWait(store, id + 1)
        }
        #expect(answers.count == 0, "nobody may be answered before the sync")
        #expect(try Self.ids(store.beginRead()) == [], "readers must not see what is not durable")
        gate.open()
        answers.waitFor(1)
        #expect((try? answers[0]?.get()) != nil, "the lone thread's commit is durable: \(String(describing: answers[0]))")
        gate.waitForSyncAtGate()                       // sync 3: the ten threads', led by one of them
        #expect(answers.count == 1, "the ten must wait for their own sync")
        gate.open()
        answers.waitFor(10)
        threads.wait()
        #expect(gate.syncCount == 3, "ten threads that committed during one sync must share the next")
        for id in 0...10 { #expect((try? answers[id]?.get()) != nil, "commit \(id): \(String(describing: answers[id]))") }
        let counts = store.groupCommitCounts
        #expect(counts.syncs == 3 && counts.versions == 12 && counts.waitingThreads == 0, "\(counts)")
        #expect(try Self.ids(store.beginRead()) == Array(0...10))
        try store.verify()
    }

    /// A failed sync led by a thread fails its followers too, and everything built on them;
    /// the next thread to commit leads anew.
    @Test func aFailedSyncFailsEveryThreadThatWaitedForIt() throws {
        let directory = TemporaryDirectory()
        let (store, gate) = try Self.gatedStore(path: directory.path())
        let answers = Answers()
        let threads = DispatchGroup()

        let table = try Self.createTable(store)
        gate.waitForSyncAtGate()
        gate.open()                                    // sync 1 (the table) succeeds
        Self.insertOnThread(store, table, 1, answers, threads)
        gate.waitForSyncAtGate()                       // sync 2 (thread 1's) will fail
        gate.fail(sync: 2)
        for id in 2...5 {
            Self.insertOnThread(store, table, id, answers, threads)
            Self.waitUntilThreadsWait(store, id)
        }
        gate.open()
        gate.waitForSyncAtGate()                       // sync 3: the failed roots are zeroed
        gate.open()
        answers.waitFor(5)
        threads.wait()
        for id in 1...5 {
            #expect(throws: StorageError.self, "commit \(id) must fail with its group") { try answers[id]?.get() }
        }
        #expect(store.groupCommitCounts.waitingThreads == 0)
        #expect(try Self.ids(store.beginRead()) == [], "nothing of the failed group may be visible")

        Self.insertOnThread(store, table, 6, answers, threads)
        gate.waitForSyncAtGate()                       // sync 4: led at once
        gate.open()
        answers.waitFor(1)
        threads.wait()
        #expect((try? answers[6]?.get()) != nil)
        #expect(try Self.ids(store.beginRead()) == [6])
        try store.verify()
    }

    /// Threads and tasks committing at once on one store: the sync queue and the leading
    /// threads take turns, and every commit lands.
    @Test func threadsAndTasksCommittingTogetherAllLand() async throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path())
        let table = try Self.createTable(store)
        try Self.barrier(store)
        let answers = Answers()
        let threads = DispatchGroup()
        let perKind = 48
        for id in 0..<perKind { Self.insertOnThread(store, table, id, answers, threads) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in perKind..<(2 * perKind) {
                group.addTask {
                    let transaction = try await store.beginWriteAsync()
                    try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
                    try await transaction.commitAsync()
                }
            }
            try await group.waitForAll()
        }
        await withCheckedContinuation { continuation in threads.notify(queue: .global()) { continuation.resume() } }
        for id in 0..<perKind { #expect((try? answers[id]?.get()) != nil, "thread commit \(id): \(String(describing: answers[id]))") }
        #expect(try Self.ids(store.beginRead()) == Array(0..<(2 * perKind)))
        #expect(store.groupCommitCounts.waitingThreads == 0)
        try store.verify()
    }

    @Test func tasksCommittingTogetherAllLand() async throws {
        let directory = TemporaryDirectory()
        let box = WrappedFileBox<FaultInjectingFile>()
        let store = try Store.open(path: directory.path(), options: StoreOptions(fileWrapper: box.wrapper {
            FaultInjectingFile(wrapping: $0, failing: .write, at: Int.max, errno: EIO)
        }))
        let transaction = try await store.beginWriteAsync()
        let table = try transaction.createTable("Row", columns: Self.columns)
        try await transaction.commitAsync()
        let tasks = 64
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<tasks {
                group.addTask {
                    let transaction = try await store.beginWriteAsync()
                    try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
                    let version = try await transaction.commitAsync()
                    // Answered only once durable: a reader begun now sees it.
                    #expect(store.beginRead().version >= version)
                }
            }
            try await group.waitForAll()
        }
        #expect(try Self.ids(store.beginRead()) == Array(0..<tasks))
        #expect(try #require(box.file).count(of: .sync) <= tasks + 1)
        try store.verify()
    }

    @Test func aCancelledWaiterLeavesTheLineWithoutWriting() async throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path())
        let holder = try store.beginWrite()
        let waiter = Task { () async -> StorageError.Code? in
            do throws(StorageError) {
                try await store.beginWriteAsync().rollback()
                return nil
            } catch {
                return error.code
            }
        }
        while store.lane.waitingCount == 0 { await Task.yield() }
        waiter.cancel()
        #expect(await waiter.value == .cancelled)
        #expect(store.lane.waitingCount == 0)
        holder.rollback()
        // The lane is free for the next writer.
        let next = try await store.beginWriteAsync()
        _ = try next.createTable("Row", columns: Self.columns)
        try await next.commitAsync()
        #expect(store.beginRead().tables.count == 1)
    }

    @Test func threadsAndTasksAreServedInArrivalOrder() async throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: Self.columns)
        try setup.commit()
        let holder = try store.beginWrite()
        // Blocking writers get threads of their own: blocked in the cooperative pool, they
        // would keep the tasks in line from running.
        let threads = DispatchGroup()
        var tasks: [Task<Void, Error>] = []
        for id in 0..<8 {
            while store.lane.waitingCount < id { await Task.yield() }
            if id % 2 == 0 {
                tasks.append(Task.detached {
                    let transaction = try await store.beginWriteAsync()
                    try transaction.insert(table, values: [.int(Int64(id)), .string("\(id)")])
                    try await transaction.commitAsync()
                })
            } else {
                threads.enter()
                Thread.detachNewThread {
                    defer { threads.leave() }
                    do {
                        let transaction = try store.beginWrite()
                        try transaction.insert(table, values: [.int(Int64(id)), .string("\(id)")])
                        try transaction.commit()
                    } catch {
                        Issue.record("thread writer \(id): \(error)")
                    }
                }
            }
        }
        while store.lane.waitingCount < 8 { await Task.yield() }
        holder.rollback()
        for task in tasks { try await task.value }
        await withCheckedContinuation { continuation in threads.notify(queue: .global()) { continuation.resume() } }
        // Object keys follow insertion order, so the keys show who wrote first.
        var order: [Int] = []
        try store.beginRead().table(table).forEachRow { (row) throws(StorageError) -> Bool in
            if case .int(let id) = try row.value(ColumnKey(0)) { order.append(Int(id)) }
            return true
        }
        #expect(order == Array(0..<8))
    }
}
