import Foundation
import OpenRealm
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// A realm shipped on a read-only file system opens read-only (issue 24, point 10: it reported
/// "the folder of the realm file does not exist"). The file system is real: a child process
/// mounts a tmpfs in a mount namespace of its own, writes the realm, and remounts it read-only.
/// That needs the right to mount (root, as in this project's CI); without it the same paths
/// are tested with the failure injected (ReadOnlyLockFileTests).
@Suite(.childProcesses) struct ReadOnlyFileSystemTests {
    #if os(Linux)
    /// Whether this process may make mount namespaces and mount in them.
    static let canMount: Bool = {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-m", "sh", "-c", "mount -t tmpfs none /mnt || mount -t tmpfs none /tmp"]
        do {
            try probe.run()
            probe.waitUntilExit()
        } catch {
            return false
        }
        return probe.terminationStatus == 0
    }()

    /// unshare(CLONE_NEWNS), which Glibc's module does not show (it needs _GNU_SOURCE).
    static func unshareMountNamespace() -> Bool {
        typealias Unshare = @convention(c) (Int32) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "unshare") else { return false }
        let cloneNewNS: Int32 = 0x0002_0000
        return unsafeBitCast(symbol, to: Unshare.self)(cloneNewNS) == 0
    }

    @Test(.enabled(if: canMount)) func aRealmOnAReadOnlyFileSystemOpensReadOnly() async {
        await #expect(processExitsWith: .success) {
            let folder = TestFolder()
            // Synchronous from here: the mount namespace is this thread's.
            guard Self.unshareMountNamespace(),
                  mount("none", "/", nil, UInt(MS_REC | MS_PRIVATE), nil) == 0,
                  mount("tmpfs", folder.url.path, "tmpfs", 0, nil) == 0 else { exit(2) }
            do {
                let realm = try Realm(configuration: folder.configuration())
                try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            }
            try FileManager.default.removeItem(atPath: folder.configuration().fileURL!.path + ".lock")
            guard mount("none", folder.url.path, nil, UInt(MS_REMOUNT | MS_RDONLY), nil) == 0 else { exit(3) }

            var configuration = folder.configuration()
            configuration.readOnly = true
            do {
                let realm = try Realm(configuration: configuration)
                guard realm.objects(Dog.self).first?.name == "Rex",
                      !FileManager.default.fileExists(atPath: configuration.fileURL!.path + ".lock") else { exit(4) }
            }
            // A writable open says why it cannot open.
            do {
                _ = try Realm(configuration: folder.configuration())
                exit(5)
            } catch let error as Realm.Error {
                guard error.code == .filePermissionDenied, error.message.contains("read-only file system") else { exit(6) }
            }
        }
    }
    #endif
}
