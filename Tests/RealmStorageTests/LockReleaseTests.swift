import CStorageSupport
import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Closing a realm releases its lock-file locks at once, even while another descriptor of the
/// same open file description exists: a child the process forks holds one until it execs.
/// Without `ProcessCoordination.unlockAll` the realm looked open to `deleteFiles` meanwhile.
@Suite struct LockReleaseTests {
    @Test func unlockingThroughAnyDescriptorReleasesWhatClosingOneDoesNot() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("x.lock")
        let fd = systemOpen(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        try #require(fd >= 0)
        #expect(openrealm_range_lock(fd, 1, 1, 1, 0) == 0)
        #expect(openrealm_range_lock(fd, 64, 1, 2, 0) == 0)
        let child = dup(fd)  // what a forked child shares until it execs
        let observer = systemOpen(path, O_RDONLY | O_CLOEXEC)
        defer { close(observer) }
        close(fd)
        // The description lives on in `child`, and its locks with it.
        #expect(openrealm_range_is_locked(observer, 1, 1) == 1)
        ProcessCoordination.unlockAll(child)
        #expect(openrealm_range_is_locked(observer, 1, 1) == 0)
        #expect(openrealm_range_is_locked(observer, 64, 1) == 0)
        close(child)
    }

    #if os(Linux)
    /// The store's own lock file descriptor, found through /proc (tests only).
    static func lockDescriptor(of path: String) -> Int32? {
        let target = URL(fileURLWithPath: path + ".lock").standardizedFileURL.path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        for entry in entries {
            guard let fd = Int32(entry),
                  let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)") else { continue }
            if URL(fileURLWithPath: link).standardizedFileURL.path == target { return fd }
        }
        return nil
    }

    @Test func aClosedStoreLooksClosedWhileAChildStillSharesItsLockFile() throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        var child: Int32 = -1
        do {
            let store = try Store.open(path: path)
            let transaction = try store.beginWrite()
            _ = try transaction.createTable("Row", columns: [ColumnSpec(name: "n", type: .int)])
            try transaction.commit()
            #expect(ProcessCoordination.isOpenByAnyProcess(path: path))
            let fd = try #require(Self.lockDescriptor(of: path))
            child = dup(fd)
        }
        defer { close(child) }
        #expect(child >= 0)
        #expect(!ProcessCoordination.isOpenByAnyProcess(path: path))
    }
    #endif
}
