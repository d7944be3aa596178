import Foundation
import Testing
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
@Suite struct LockFileReplacementTests {
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

    // MARK: Two writing processes

    /// The issue's setting: the parent and a child both append in a loop (the append with the
    /// count read inside the transaction, whose unique index refuses two writers on one
    /// version); the lock file goes while they do. Each goes on until it is refused, counting
    /// what was acknowledged; a second child, started then, tries to open and append and is
    /// refused. After everyone has closed, the file holds exactly the acknowledged appends of
    /// both, numbered without a gap.
    @Test(arguments: Change.allCases)
    func everyAcknowledgedCommitOfTwoWritersSurvivesTheirLockFileGoing(change: Change) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let writing = MultiProcessTests.marker(path, "writing"), acknowledged = MultiProcessTests.marker(path, "acknowledged")
        var parentAcknowledged = 0
        do {
            let store = try Store.open(path: path)
            try MultiProcessTests.append(store, writer: 1)
            parentAcknowledged = 1
            async let child = #expect(processExitsWith: .success, observing: [\.standardErrorContent]) {
                [path = path as String, writing = writing as String, acknowledged = acknowledged as String] in
                LockFileReplacementTests.appendUntilRefused(path: path, writing: writing, acknowledged: acknowledged)
            }
            parentAcknowledged += try await onThread {
                var appended = 0, changed = false
                let deadline = Date().addingTimeInterval(900)
                while Date() < deadline {
                    if !changed && FileManager.default.fileExists(atPath: writing) {
                        try Self.apply(change, at: path)
                        changed = true
                    }
                    do {
                        try MultiProcessTests.append(store, writer: 1)
                        appended += 1
                    } catch where changed && Self.isRefusal(error) {
                        return appended
                    }
                }
                throw StorageError(.ioFailure, "gave up waiting for the refusal")
            }
            if let result = await child, result.exitStatus != .exitCode(0) {
                Issue.record("the first child said: \(String(decoding: result.standardErrorContent, as: UTF8.self).suffix(3000))")
            }
            let late = await #expect(processExitsWith: .success, observing: [\.standardErrorContent]) { [path = path as String] in
                LockFileReplacementTests.openAndAppendExpectingRefusal(path: path)
            }
            if let late, late.exitStatus != .exitCode(0) {
                Issue.record("the late child opened the realm or failed otherwise: \(String(decoding: late.standardErrorContent, as: UTF8.self))")
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

    /// The first child of the two-writer test: appends until refused, says once it has made a
    /// few appends (`writing`), and writes how many were acknowledged (`acknowledged`).
    static func appendUntilRefused(path: String, writing: String, acknowledged: String) -> Never {
        var appended = 0
        do {
            let store = try Store.open(path: path)
            while true {
                try MultiProcessTests.append(store, writer: 2)
                appended += 1
                if appended == 10 { MultiProcessTests.touch(writing) }
            }
        } catch {
            guard isRefusal(error) else {
                FileHandle.standardError.write(Data("unexpected after \(appended) appends: \(error)\n".utf8))
                exit(4)
            }
            guard (try? String(appended).write(toFile: acknowledged, atomically: true, encoding: .utf8)) != nil else { exit(5) }
            exit(appended >= 10 ? 0 : 6)
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
        async let child = #expect(processExitsWith: .signal(SIGKILL)) { [path = path as String, opened = opened as String, go = go as String] in
            let store = try Store.open(path: path)
            for _ in 0..<3 { try MultiProcessTests.append(store, writer: 2) }
            MultiProcessTests.touch(opened)
            try MultiProcessTests.waitUntil("the parent") { FileManager.default.fileExists(atPath: go) }
            withExtendedLifetime(store) { _ = kill(getpid(), SIGKILL) }
        }
        try await onThread { try MultiProcessTests.waitUntil("the child's commits") { FileManager.default.fileExists(atPath: opened) } }
        try FileManager.default.removeItem(atPath: path + ".lock")
        #expect(Store.isOpenByAnyProcess(path: path))
        #expect { try Store.open(path: path) } throws: { Self.isRefusal($0) }
        MultiProcessTests.touch(go)
        _ = await child
        #expect(!Store.isOpenByAnyProcess(path: path))
        let store = try Store.open(path: path)
        #expect(try MultiProcessTests.count(store) == 3)
        #expect(try MultiProcessTests.append(store, writer: 1) == 3)
        try store.verify()
    }
}
