import Foundation
import Testing
import TestSupport
import RealmStorage

/// Commands that only read a file leave its folder exactly as they found it: no lock file, no
/// other file, every byte the same; compact and copy add only the copy.
@Suite(.childProcesses) struct ToolReadOnlyTests {
    static let readingCommands = [["info"], ["inspect"], ["schema"], ["schema", "--swift"], ["verify"]]

    @Test func readingCommandsLeaveTheFolderAsItWas() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 10)
        let before = try folder.listing()
        #expect(before.count == 1)
        for command in Self.readingCommands {
            try ToolCommandTests.succeed(command + [path])
            #expect(try folder.listing() == before, "\(command)")
        }
    }

    @Test func readingAnEncryptedOrCompressedFileLeavesTheFolderAsItWas() throws {
        let folder = ToolFolder()
        let keyFile = try folder.file("key", ToolBadInputTests.key)
        let path = try folder.realm("secret.realm", owners: 10, key: ToolBadInputTests.key)
        try ToolCommandTests.succeed(["copy", path, folder.path("archive.realmz"), "--lz4", "--key-file", keyFile])
        let before = try folder.listing()
        for command in Self.readingCommands {
            for file in [path, folder.path("archive.realmz")] {
                try ToolCommandTests.succeed(command + [file, "--key-file", keyFile])
                #expect(try folder.listing() == before, "\(command) \(file)")
            }
        }
    }

    @Test func failedReadsLeaveNothingBehind() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 3)
        let otherKey = try folder.file("other.key", ToolBadInputTests.otherKey)
        let before = try folder.listing()
        for command in Self.readingCommands {
            #expect(try Tool.run(command + [folder.path("missing.realm")]).status == 1)
            #expect(try Tool.run(command + [path, "--key-file", otherKey]).status == 1)
            #expect(try folder.listing() == before, "\(command)")
        }
    }

    @Test func copiesAddOnlyTheCopy() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 10)
        let before = try folder.listing()
        for (index, command) in [["copy"], ["copy", "--lz4"], ["compact"]].enumerated() {
            let copy = folder.path("copy-\(index).realm")
            try ToolCommandTests.succeed(command + [path, copy])
            let after = try folder.listing()
            #expect(after.filter { !$0.hasPrefix("copy-") } == before, "\(command)")
            #expect(after.filter { $0.hasPrefix("copy-\(index).realm ") }.count == 1, "\(command): \(after)")
            #expect(after.count == before.count + index + 1, "\(command): \(after)")
        }
    }
}
