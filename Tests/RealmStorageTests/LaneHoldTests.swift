import Dispatch
import Foundation
import Testing
@testable import RealmStorage

/// Every way a write transaction ends lets the write lane go exactly once (`LaneHold`,
/// Store+Process.swift; the commit pipeline, WriteTransaction+Commit.swift).
///
/// Each test puts two writers in line behind the holder, then ends the holder's transaction
/// one way. Released once, the lane goes to the first writer and the second stays in line;
/// released twice, both would be handed it at once and the line would be empty; not at all,
/// nobody would get it. Which writer holds the lane is read from the lane's line, never timed.
@Suite struct LaneHoldTests {
    /// How the holder's transaction ends.
    enum Ending: CaseIterable, Sendable {
        case commit, commitAsync, commitThen, commitThenWritingHere, commitAlone
        case failedCommit, failedCommitAsync, failedCommitThen, failedCommitThenWritingHere, failedCommitAlone
        case rollback, rollbackThenCommit, dropped

        var fails: Bool {
            switch self {
            case .failedCommit, .failedCommitAsync, .failedCommitThen, .failedCommitThenWritingHere, .failedCommitAlone: true
            default: false
            }
        }
    }

    /// Two writers waiting for the lane on threads of their own; each holds it until told to
    /// let go.
    final class Line: Sendable {
        private let granted = Locked(0)
        private let letGo = DispatchSemaphore(value: 0)
        private let finished = DispatchGroup()

        init(_ store: Store) {
            for _ in 0..<2 {
                finished.enter()
                Thread.detachNewThread { [self] in
                    defer { finished.leave() }
                    guard let transaction = try? store.beginWrite() else { return }
                    granted.withLock { $0 += 1 }
                    letGo.wait()
                    transaction.rollback()
                }
            }
            while store.lane.waitingCount < 2 { usleep(100) }
        }

        var grantedCount: Int { granted.withLock { $0 } }

        /// Waits until `count` writers got the lane.
        func waitUntilGranted(_ count: Int) {
            while grantedCount < count { usleep(100) }
        }

        /// Lets the writer holding the lane end its transaction.
        func releaseOne() { letGo.signal() }

        func waitUntilFinished() { finished.wait() }
    }

    /// A store with one table; its file fails the next write once armed.
    static func store(_ directory: TemporaryDirectory) throws -> (Store, FaultInjectingFile, TableKey) {
        let box = WrappedFileBox<FaultInjectingFile>()
        let store = try Store.open(path: directory.path(), options: StoreOptions(fileWrapper: box.wrapper {
            FaultInjectingFile(wrapping: $0, failing: .write, at: .max, errno: EIO)
        }))
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("Row", columns: GroupCommitTests.columns)
        try transaction.commit()
        return (store, try #require(box.file), table)
    }

    /// Ends `transaction` the way `ending` says; the outcome of a commit, if it made one.
    static func end(_ transaction: sending WriteTransaction, _ ending: Ending) async -> Result<VersionID, StorageError>? {
        func answered(_ commit: (@escaping @Sendable (Result<VersionID, StorageError>) -> Void) throws(StorageError) -> Void) async
            -> Result<VersionID, StorageError> {
            await withCheckedContinuation { continuation in
                do throws(StorageError) {
                    try commit { continuation.resume(returning: $0) }
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        switch ending {
        case .commit, .failedCommit:
            return Result { () throws(StorageError) in try transaction.commit() }
        case .commitAsync, .failedCommitAsync:
            do throws(StorageError) {
                return .success(try await transaction.commitAsync())
            } catch {
                return .failure(error)
            }
        case .commitThen, .failedCommitThen:
            return await answered { (done) throws(StorageError) in try transaction.commit(then: done) }
        case .commitThenWritingHere, .failedCommitThenWritingHere:
            return await answered { (done) throws(StorageError) in try transaction.commit(writeHere: true, then: done) }
        case .commitAlone, .failedCommitAlone:
            return await answered { (done) throws(StorageError) in try transaction.commit(groupable: false, then: done) }
        case .rollback, .rollbackThenCommit, .dropped:
            return nil
        }
    }

    @Test(arguments: Ending.allCases)
    func theLaneGoesToTheNextWriterExactlyOnce(_ ending: Ending) async throws {
        let directory = TemporaryDirectory()
        let (store, file, table) = try Self.store(directory)
        let before = store.latestVersion
        var holder: WriteTransaction? = try store.beginWrite()
        try holder!.insert(table, values: [.int(1), .string("one")])
        let line = Line(store)
        if ending.fails { file.failNext(.write) }

        switch ending {
        case .rollback:
            holder!.rollback()
            holder!.rollback()  // a second rollback changes nothing
        case .dropped:
            holder = nil
        case .rollbackThenCommit:
            holder!.rollback()
            #expect(throws: StorageError.self) { try holder!.commit() }
        default:
            let result = await Self.end(holder.take()!, ending)
            if ending.fails {
                #expect(throws: StorageError.self) { try result?.get() }
            } else {
                #expect(try result?.get() == before.next)
            }
        }

        line.waitUntilGranted(1)
        #expect(store.lane.waitingCount == 1, "the lane was handed to both writers in line")
        #expect(line.grantedCount == 1)
        line.releaseOne()
        line.waitUntilGranted(2)
        #expect(store.lane.waitingCount == 0)
        line.releaseOne()
        line.waitUntilFinished()
        _ = holder

        // Nothing is left holding it: the next writer commits, and the file is whole.
        let next = try store.beginWrite()
        try next.insert(table, values: [.int(3), .string("three")])
        try next.commit()
        try store.verify()
    }

    /// A commit that must sync alone keeps the lane until it is durable: the next writer waits
    /// for the sync, then gets the lane once.
    @Test func aCommitThatSyncsAloneKeepsTheLaneUntilDurable() async throws {
        let directory = TemporaryDirectory()
        let box = WrappedFileBox<GatedSyncFile>()
        let store = try Store.open(path: directory.path(), options: StoreOptions(fileWrapper: box.wrapper { GatedSyncFile(wrapping: $0) }))
        let gate = try #require(box.file)
        let table: TableKey = try {
            let transaction = try store.beginWrite()
            let table = try transaction.createTable("Row", columns: GroupCommitTests.columns)
            let answered = DispatchSemaphore(value: 0)
            try transaction.commit { _ in answered.signal() }
            gate.waitForSyncAtGate()
            gate.open()
            answered.wait()
            return table
        }()

        let holder = try store.beginWrite()
        try holder.insert(table, values: [.int(1), .string("one")])
        let answered = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<VersionID, StorageError>?>(nil)
        try holder.commit(groupable: false) { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        gate.waitForSyncAtGate()
        let line = Line(store)
        // The sync waits at the gate: the commit is not durable, and the lane is still its.
        #expect(line.grantedCount == 0)
        #expect(store.lane.waitingCount == 2)
        gate.open()
        answered.wait()
        #expect(try outcome.withLock { $0 }?.get() != nil)
        line.waitUntilGranted(1)
        #expect(store.lane.waitingCount == 1)
        line.releaseOne()
        line.waitUntilGranted(2)
        line.releaseOne()
        line.waitUntilFinished()
    }
}
