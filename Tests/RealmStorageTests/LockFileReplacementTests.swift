import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The lock file deleted or replaced while processes have the realm open (issue 23: a new
/// process found itself alone in a fresh lock file, and two processes wrote as if each were
/// the only one). A process that opens the realm then is refused, the processes still on the
/// old lock file refuse to write but read on, and every acknowledged commit is in the file
/// once they have closed (ProcessCoordination.swift, the realm file's lock). The other
/// processes are exit tests; they meet the parent in the realm file and in marker files.
@Suite(.childProcesses) struct LockFileReplacementTests {
    /// What happens to the lock file under the live processes.
    enum Change: String, CaseIterable, Sendable {
        case deleted
        /// An empty file renamed over it.
        case replacedByAnEmptyFile
        /// A copy of it renamed over it: a lock file in every byte, that no process holds.
        case replacedByACopy
    }

    static func apply(_ change: Change, at path: String) throws {
        let lock = path + ".lock", fresh = path + ".lock.fresh"
        switch change {
        case .deleted:
            try FileManager.default.removeItem(atPath: lock)
        case .replacedByAnEmptyFile:
            MultiProcessTests.touch(fresh)
            guard rename(fresh, lock) == 0 else { throw StorageError.system("renaming", path: fresh, errno: errno) }
        case .replacedByACopy:
            try FileManager.default.copyItem(atPath: lock, toPath: fresh)
            guard rename(fresh, lock) == 0 else { throw StorageError.system("renaming", path: fresh, errno: errno) }
        }
    }

    static func isRefusal(_ error: any Error) -> Bool {
        guard let error = error as? StorageError else { return false }
        return error.code == .incompatibleLockFile && error.message.contains("deleted or replaced")
    }

    /// The child's part where the realm must not open: exits 0 when it is refused as it must
    /// be, 3 when it opened (after appending, as the process of the issue did), 4 for any
    /// other failure.
    static func openAndAppendExpectingRefusal(path: String) -> Never {
        do {
            let store = try Store.open(path: path)
            _ = try? MultiProcessTests.append(store, writer: 3)
            exit(3)
        } catch {
            guard isRefusal(error) else {
                FileHandle.standardError.write(Data("unexpected: \(error)\n".utf8))
                exit(4)
            }
            exit(0)
        }
    }

    // MARK: One process on the old lock file

    /// The parent has the realm open and has committed; the lock file goes. A child that opens
    /// the realm is refused; the parent's next writes (blocking and async) are refused with the
    /// same error and change nothing; it reads on. Once it has closed, the realm opens and
    /// holds every commit it acknowledged.
    @Test(arguments: Change.allCases)
    func anOpenerIsRefusedAndTheOpenProcessStopsWriting(change: Change) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path)
            for _ in 0..<5 { try MultiProcessTests.append(store, writer: 1) }
            try Self.apply(change, at: path)
            // The realm file's lock shows the realm open, whatever became of the lock file.
            #expect(Store.isOpenByAnyProcess(path: path))
            let result = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = path as String] in
                LockFileReplacementTests.openAndAppendExpectingRefusal(path: path)
            }
            if let result, result.exitStatus != .exitCode(0) {
                Issue.record("the child opened the realm or failed otherwise: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
            }
            #expect { try MultiProcessTests.append(store, writer: 1) } throws: { Self.isRefusal($0) }
            await #expect { try await MultiProcessTests.appendAsync(store, writer: 1) } throws: { Self.isRefusal($0) }
            // Refused again: the refusal let go of the write lock and lane.
            #expect { try MultiProcessTests.append(store, writer: 1) } throws: { Self.isRefusal($0) }
            #expect(try MultiProcessTests.count(store) == 5)
            try store.verify()
        }
        #expect(!Store.isOpenByAnyProcess(path: path))
        let reopened = try Store.open(path: path)
        #expect(try MultiProcessTests.rows(reopened.beginRead()).map { $0[0] } == (0..<5).map { .int($0) })
        #expect(try MultiProcessTests.append(reopened, writer: 1) == 5)
        try reopened.verify()
    }

    // MARK: Joining, step by step

    /// The header's argument with two coordinations in this process standing in for two
    /// processes (each has its own descriptors, and so its own locks): the older opens a lock
    /// file that is then deleted, the newer the one created after it; both find themselves
    /// alone. If the older takes the realm file's byte before its lock file goes, the newer is
    /// refused; if after, the older is (and the newer opens).
    @Test(arguments: [true, false])
    func ofTwoOpenersOnDifferentLockFilesOnlyOneOpens(olderJoinsFirst: Bool) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        _ = try Store.open(path: path)  // creates the realm file, and closes it
        do {
            let older = try ProcessCoordination(path: path, readOnly: false)
            if olderJoinsFirst { try older.joinRealmFile() }
            try FileManager.default.removeItem(atPath: path + ".lock")
            let newer = try ProcessCoordination(path: path, readOnly: false)
            #expect(older.openedAlone && newer.openedAlone)
            if olderJoinsFirst {
                #expect { try newer.joinRealmFile() } throws: { Self.isRefusal($0) }
            } else {
                try newer.joinRealmFile()
                #expect { try older.joinRealmFile() } throws: { Self.isRefusal($0) }
            }
        }
        try Store.open(path: path).verify()
    }

    /// Check (3) of the header alone: nobody else has the realm open, but the lock file this
    /// opener joined was replaced before it took the realm file's byte.
    @Test func anOpenerWhoseLockFileIsReplacedWhileItJoinsIsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        _ = try Store.open(path: path)
        do {
            let coordination = try ProcessCoordination(path: path, readOnly: false)
            try Self.apply(.replacedByACopy, at: path)
            #expect {
                try coordination.joinRealmFile()
            } throws: {
                Self.isRefusal($0) && ($0 as? StorageError)?.message.contains("while this process opened the realm") == true
            }
        }
        try Store.open(path: path).verify()
    }

    // MARK: Two writing processes

    /// The issue's setting: the parent and a child both append in a loop (the append with the
    /// count read inside the transaction, whose unique index refuses two writers on one
    /// version); the lock file goes while they do, and a newcomer that was waiting for that
    /// opens the realm and appends: it is refused. The two writers go on until they are
    /// refused, counting what was acknowledged. After everyone has closed, the file holds
    /// exactly the acknowledged appends of both, numbered without a gap.
    ///
    /// The children wait only on each other and on the parent's thread, started before them:
    /// while an exit test runs, Swift Testing blocks a pool thread reading its pipes, and the
    /// pool has as many threads as cores.
    @Test(arguments: Change.allCases)
    func everyAcknowledgedCommitOfTwoWritersSurvivesTheirLockFileGoing(change: Change) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let writing = MultiProcessTests.marker(path, "writing"), changed = MultiProcessTests.marker(path, "changed")
        let done = MultiProcessTests.marker(path, "done"), acknowledged = MultiProcessTests.marker(path, "acknowledged")
        var parentAcknowledged = 1
        do {
            let store = try Store.open(path: path)
            try MultiProcessTests.append(store, writer: 1)
            let parent = ThreadWork { () throws -> (appended: Int, refused: Bool) in
                var appended = 0, afterChange = 0
                while true {
                    if !FileManager.default.fileExists(atPath: changed) && FileManager.default.fileExists(atPath: writing) {
                        try Self.apply(change, at: path)
                        MultiProcessTests.touch(changed)
                    }
                    do {
                        try MultiProcessTests.append(store, writer: 1)
                        appended += 1
                    } catch where FileManager.default.fileExists(atPath: changed) && Self.isRefusal(error) {
                        return (appended, true)
                    }
                    // Not refused: a broken build. Ends the test instead of writing on.
                    if FileManager.default.fileExists(atPath: changed) {
                        afterChange += 1
                        if afterChange == 200 {
                            MultiProcessTests.touch(done)
                            return (appended, false)
                        }
                    }
                }
            }
            async let child = #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                [path = path as String, writing = writing as String, done = done as String, acknowledged = acknowledged as String] in
                LockFileReplacementTests.appendUntilRefused(path: path, writing: writing, done: done, acknowledged: acknowledged)
            }
            async let newcomer = #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                [path = path as String, changed = changed as String] in
                try MultiProcessTests.waitUntil("the lock file's change") { FileManager.default.fileExists(atPath: changed) }
                LockFileReplacementTests.openAndAppendExpectingRefusal(path: path)
            }
            let (appended, refused) = try await parent.value()
            parentAcknowledged += appended
            #expect(refused, "the parent went on writing after its lock file went")
            if let result = await child, result.exitStatus != .exitCode(0) {
                Issue.record("the writing child said: \(String(decoding: result.standardErrorContent, as: UTF8.self).suffix(3000))")
            }
            if let result = await newcomer, result.exitStatus != .exitCode(0) {
                Issue.record("the newcomer opened the realm or failed otherwise: \(String(decoding: result.standardErrorContent, as: UTF8.self))")
            }
        }
        let childAcknowledged = try #require(Int(String(contentsOfFile: acknowledged, encoding: .utf8)))
        let reopened = try Store.open(path: path)
        let rows = try MultiProcessTests.rows(reopened.beginRead())
        #expect(rows.map { $0[0] } == (0..<(parentAcknowledged + childAcknowledged)).map { .int(Int64($0)) },
                "\(parentAcknowledged) + \(childAcknowledged) appends were acknowledged")
        #expect(rows.filter { $0[1] == .int(1) }.count == parentAcknowledged)
        #expect(rows.filter { $0[1] == .int(2) }.count == childAcknowledged)
        try reopened.verify()
    }

    /// The writing child of the two-writer test: appends until refused (or until one append
    /// after `done`), says once it has made a few appends (`writing`), and writes how many were
    /// acknowledged (`acknowledged`). Exits 0 when refused as it must be.
    static func appendUntilRefused(path: String, writing: String, done: String, acknowledged: String) -> Never {
        var appended = 0
        func report(_ status: Int32) -> Never {
            guard (try? String(appended).write(toFile: acknowledged, atomically: true, encoding: .utf8)) != nil else { exit(5) }
            exit(status)
        }
        do {
            let store = try Store.open(path: path)
            while true {
                let last = FileManager.default.fileExists(atPath: done)
                try MultiProcessTests.append(store, writer: 2)
                appended += 1
                if appended == 10 { MultiProcessTests.touch(writing) }
                if last {
                    FileHandle.standardError.write(Data("never refused: \(appended) appends\n".utf8))
                    report(7)
                }
            }
        } catch {
            guard isRefusal(error) else {
                FileHandle.standardError.write(Data("unexpected after \(appended) appends: \(error)\n".utf8))
                report(4)
            }
            report(appended >= 10 ? 0 : 6)
        }
    }

    // MARK: A process killed

    /// A child with the realm open keeps openers out after the lock file went (deleted under
    /// it); killed, it keeps nobody out: the next opener finds itself alone, and every commit
    /// the child made is there.
    @Test func aProcessKilledAfterItsLockFileWentKeepsNobodyOut() async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let opened = MultiProcessTests.marker(path, "opened"), go = MultiProcessTests.marker(path, "go")
        // The child waits for this thread, not for the test's task (see the two-writer test).
        let parent = ThreadWork { () throws -> (openLooked: Bool, refusal: String) in
            try MultiProcessTests.waitUntil("the child's commits") { FileManager.default.fileExists(atPath: opened) }
            defer { MultiProcessTests.touch(go) }
            try FileManager.default.removeItem(atPath: path + ".lock")
            let openLooked = Store.isOpenByAnyProcess(path: path)
            do {
                _ = try Store.open(path: path)
                return (openLooked, "none")
            } catch {
                return (openLooked, Self.isRefusal(error) ? "" : "\(error)")
            }
        }
        await #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, opened = opened as String, go = go as String] in
            let store = try Store.open(path: path)
            for _ in 0..<3 { try MultiProcessTests.append(store, writer: 2) }
            MultiProcessTests.touch(opened)
            try MultiProcessTests.waitUntil("the parent") { FileManager.default.fileExists(atPath: go) }
            withExtendedLifetime(store) { _ = kill(getpid(), SIGKILL) }
        }
        let (openLooked, refusal) = try await parent.value()
        #expect(openLooked, "the realm did not look open while the child had it open")
        #expect(refusal.isEmpty, "opening beside the child was not refused: \(refusal)")
        #expect(!Store.isOpenByAnyProcess(path: path))
        let store = try Store.open(path: path)
        #expect(try MultiProcessTests.count(store) == 3)
        #expect(try MultiProcessTests.append(store, writer: 1) == 3)
        try store.verify()
    }
}

/// Blocking work started on a thread of its own at once (`onThread` starts it only when its
/// task runs, which needs a free pool thread).
final class ThreadWork<T: Sendable>: @unchecked Sendable {
    // @unchecked: `result` is written once, by the thread, before `finished` is signalled, and
    // read only after it.
    private var result: Result<T, any Error>?
    private let finished = DispatchSemaphore(value: 0)

    init(_ body: @escaping @Sendable () throws -> T) {
        Thread.detachNewThread {
            self.result = Result { try body() }
            self.finished.signal()
        }
    }

    /// The work's result, once it has ended.
    func value() async throws -> T {
        try await onThread {
            self.finished.wait()
            return try self.result!.get()
        }
    }
}
