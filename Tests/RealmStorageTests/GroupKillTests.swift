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

/// Real processes killed with SIGKILL while many tasks, or many threads, commit at once, so
/// that commits share syncs (group commit: the sync queue's for tasks, the waiting threads'
/// own for threads, Store+GroupCommitThreads.swift). Each committer numbers its objects; its
/// commits build on each other, so after any kill each committer's objects must be a prefix
/// of its numbers, and never shorter than what the child had acknowledged (logged after each
/// commit returned).
@Suite(.childProcesses) struct GroupKillTests {
    static let tasks = 12
    static let rounds = 8
    static let stride: Int64 = 1_000_000

    /// `threads`: the committers are threads that wait for their commits (`commit()`), one
    /// per task number, instead of tasks.
    static func commitUntilKilled(path: String, log: String, delay: UInt32, threads: Bool = false) async throws {
        let store = try Store.open(path: path, options: StoreOptions(limits: TreeLimits(leafCapacity: 8, innerCapacity: 4)))
        let setup = try await store.beginWriteAsync()
        let table = try setup.table(named: KillTests.tableName)?.info.key ?? setup.createTable(KillTests.tableName, columns: KillTests.columns)
        // Where each task's numbers go on: its objects so far (a prefix, as the parent checked).
        let keys = try setup.table(table).keys().map(\.value)
        let starts = (0..<tasks).map { t in Int64(keys.filter { $0 / stride == Int64(t) }.count) }
        try await setup.commitAsync()
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        // The log, written one committer's line at a time.
        let handle = try Locked(FileHandle(forWritingTo: URL(fileURLWithPath: log)))
        // The delay runs from this child's first acknowledged commit, not from its start: on a
        // loaded machine (under TSan, beside other test processes) a child could be killed
        // before any of its commits was answered, and the parent's check that the children
        // committed at all then failed for want of time, not of durability.
        let acknowledged = AcknowledgedCommits()
        Thread.detachNewThread {
            while acknowledged.count.load(ordering: .acquiring) == 0 { usleep(1_000) }
            usleep(delay)
            kill(getpid(), SIGKILL)
        }
        if threads {
            for t in 0..<tasks {
                Thread.detachNewThread {
                    var count = starts[t]
                    while true {
                        do throws(StorageError) {
                            let transaction = try store.beginWrite()
                            let id = Int64(t) * stride + count
                            try transaction.insert(table, key: ObjectKey(id), values: KillTests.values(id))
                            try transaction.commit()
                        } catch {
                            // Not the kill the parent expects: it sees another exit.
                            fatalError("thread \(t) failed to commit: \(error)")
                        }
                        count += 1
                        handle.withLock { $0.write(Data("\(t) \(count)\n".utf8)) }
                        acknowledged.count.add(1, ordering: .releasing)
                    }
                }
            }
            // The threads commit until the kill.
            try await Task.sleep(for: .seconds(600))
            return
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for t in 0..<tasks {
                group.addTask {
                    var count = starts[t]
                    while true {
                        let transaction = try await store.beginWriteAsync()
                        let id = Int64(t) * stride + count
                        try transaction.insert(table, key: ObjectKey(id), values: KillTests.values(id))
                        try await transaction.commitAsync()
                        count += 1
                        handle.withLock { $0.write(Data("\(t) \(count)\n".utf8)) }
                        acknowledged.count.add(1, ordering: .releasing)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test(arguments: [false, true])
    func acknowledgedGroupedCommitsSurviveSIGKILL(threads: Bool) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path(), log = directory.path("acknowledged.log")
        var recovered = 0
        for round in 0..<Self.rounds {
            let delay = UInt32(20_000 + 15_000 * (round % 4))
            await #expect(processExitsWith: .signal(SIGKILL), "round \(round)") { [path = path as String, log = log as String, delay = delay as UInt32,
                                                                                     threads = threads as Bool] in
                try await GroupKillTests.commitUntilKilled(path: path, log: log, delay: delay, threads: threads)
            }
            let store = try Store.open(path: path, options: StoreOptions(create: false))
            try store.verify()
            let view = try #require(try store.beginRead().table(named: KillTests.tableName))
            var counts = [Int](repeating: 0, count: Self.tasks)
            var wrong = 0
            try view.forEachRow { (row) throws(StorageError) -> Bool in
                counts[Int(row.key.value / Self.stride)] += 1
                if try row.values() != KillTests.values(row.key.value) { wrong += 1 }
                return true
            }
            #expect(wrong == 0, "round \(round): \(wrong) objects hold values that do not match their ids")
            for t in 0..<Self.tasks {
                let keys = try view.keys().map(\.value).filter { $0 / Self.stride == Int64(t) }
                #expect(keys == (0..<Int64(counts[t])).map { Int64(t) * Self.stride + $0 }, "round \(round): task \(t) holds no prefix")
            }
            var acknowledged = [Int](repeating: 0, count: Self.tasks)
            for line in (try? String(contentsOfFile: log, encoding: .utf8))?.split(separator: "\n") ?? [] {
                let parts = line.split(separator: " ").compactMap { Int($0) }
                if parts.count == 2 { acknowledged[parts[0]] = max(acknowledged[parts[0]], parts[1]) }
            }
            recovered = counts.reduce(0, +)
            for t in 0..<Self.tasks {
                #expect(counts[t] >= acknowledged[t], "round \(round): task \(t) had \(acknowledged[t]) acknowledged, \(counts[t]) recovered")
            }
        }
        #expect(recovered >= Self.tasks, "the children must have committed (\(recovered) objects recovered)")
    }
}

/// Commits a killed child has had answered (shared by its committers and its killer thread).
final class AcknowledgedCommits: Sendable {
    let count = Atomic<Int>(0)
}
