import Foundation
import Testing
@testable import RealmStorage

/// What a crashed copy leaves (its temporary file) is removed by the next copy to the same
/// path, unless a copy is still writing it (CopyFile.swift, invariant 4). Plain and encrypted
/// copies alike.
@Suite struct CopyTemporaryFileTests {
    @Test(arguments: [false, true])
    func aCopyRemovesTheTemporaryFilesOfCopiesThatDidNotFinish(encrypted: Bool) throws {
        let dir = TemporaryDirectory()
        let source = try CompressedCopyTests.makeSource(dir.path("source.realm"), count: 50)
        let destination = dir.path("copy.realm")
        func place(_ name: String, minutesAgo: Int) throws -> String {
            let path = dir.path(name)
            #expect(FileManager.default.createFile(atPath: path, contents: Data([1, 2, 3])))
            let when = Date(timeIntervalSinceNow: -Double(minutesAgo * 60))
            try FileManager.default.setAttributes([.modificationDate: when], ofItemAtPath: path)
            return path
        }
        let stale = try place("copy.realm.9f3a0c.copying", minutesAgo: 10)
        let fresh = try place("copy.realm.77b1.copying", minutesAgo: 0)
        let held = try place("copy.realm.abc123.copying", minutesAgo: 10)
        let otherCopy = try place("other.realm.9f3a0c.copying", minutesAgo: 10)
        let notOurs = try place("copy.realm.notes.copying", minutesAgo: 10)
        // A copy in another process holds its temporary file locked while it writes.
        let fd = open(held, O_RDONLY)
        #expect(flock(fd, LOCK_EX) == 0)
        defer { close(fd) }

        try source.writeCompactedCopy(to: destination, encryptionKey: encrypted ? EncryptedCopyTests.key : nil)

        let exists = { (path: String) in FileManager.default.fileExists(atPath: path) }
        #expect(!exists(stale), "a stale temporary file stayed")
        #expect(exists(fresh), "a temporary file changed a moment ago was removed")
        #expect(exists(held), "a temporary file a copy holds was removed")
        #expect(exists(otherCopy), "another destination's temporary file was removed")
        #expect(exists(notOurs), "a file not named as a temporary file was removed")
        #expect(exists(destination))
    }
}
