import Foundation
import Testing
import TestSupport
@testable import OpenRealmTool
import RealmStorage

/// Every kind of bad input gives one line on standard error, nothing on standard output, and a
/// non-zero status: usage errors argument-parser's (64), files that cannot be opened 1, damaged
/// files 2. Never a trap.
@Suite(.childProcesses) struct ToolBadInputTests {
    static let key: [UInt8] = (0..<64).map { UInt8(($0 * 37 + 11) & 0xFF) }
    static let otherKey: [UInt8] = (0..<64).map { UInt8(($0 * 53 + 7) & 0xFF) }

    /// A realm whose live bytes are damaged in the middle: compacted (so nearly every byte past
    /// the header is a node), then one byte flipped halfway through the version's space.
    static func damagedRealm(in folder: ToolFolder) throws -> String {
        let source = try folder.realm("source.realm", owners: 200)
        let path = folder.path("damaged.realm")
        do {
            var options = StoreOptions(create: false, readOnly: true)
            options.createsLockFile = false
            let store = try Store.open(path: source, options: options)
            try store.writeCompactedCopy(to: path)
        }
        var options = StoreOptions(create: false, readOnly: true)
        options.createsLockFile = false
        let logicalSize = try Store.open(path: path, options: options).beginRead().slot.logicalSize
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        let offset = logicalSize / 2
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: [byte ^ 0x5A])
        return path
    }

    /// `run` failed as it should: `status`, nothing on standard output, one line on standard
    /// error beginning with the tool's name (and containing `mentioning`).
    static func expectFailure(_ run: ToolRun, _ status: Int32, mentioning: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.exited && run.status == status, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, "\(run)", sourceLocation: sourceLocation)
        #expect(run.errorLines.count == 1 && run.stderr.hasPrefix("openrealm: "), "\(run)", sourceLocation: sourceLocation)
        if let mentioning { #expect(run.stderr.contains(mentioning), "\(run)", sourceLocation: sourceLocation) }
    }

    @Test func usageErrorsExitWithArgumentParsersStatus() throws {
        let folder = ToolFolder()
        let path = try folder.realm()
        let keyFile = try folder.file("key", Self.key)
        let usage = ToolFailure.usage
        #expect(usage == 64)
        for arguments in [
            [], ["bench", "-5"], ["bench", "--rows", "0"], ["bench", "--rows=-5"], ["bench", "--rows", "many"], ["bench", "--rows"],
            ["bench", "1000000"], ["info"], ["info", path, "extra"], ["info", path, "--frobnicate"], ["schema", path, "--swiftly"],
            ["verify"], ["verify", path, "--key-file"], ["nonsense"], ["copy", path], ["copy", path, folder.path("c"), "--decrypt"],
            ["copy", path, folder.path("c"), "--key-file", keyFile, "--decrypt", "--new-key-file", keyFile],
            ["compact", path, "--decrypt", "--key-file", keyFile], ["compact", path, "--new-key-file", keyFile],
        ] {
            Self.expectFailure(try Tool.run(arguments), usage)
        }
        Self.expectFailure(try Tool.run(["bench", "-5"]), usage, mentioning: "'-5'")
        Self.expectFailure(try Tool.run(["bench", "1000000"]), usage, mentioning: "--rows 1000000")
        Self.expectFailure(try Tool.run([]), usage, mentioning: "a command is missing: one of demo, bench, info, schema, verify, compact, copy")
        #expect(!FileManager.default.fileExists(atPath: folder.path("c")))
    }

    @Test func aMissingFileCannotBeOpened() throws {
        let folder = ToolFolder()
        let missing = folder.path("missing.realm")
        for command in [["info"], ["schema"], ["schema", "--swift"], ["verify"], ["inspect"], ["compact"]] {
            Self.expectFailure(try Tool.run(command + [missing]), ToolFailure.failed, mentioning: "missing.realm")
        }
        Self.expectFailure(try Tool.run(["copy", missing, folder.path("copy.realm")]), ToolFailure.failed)
        Self.expectFailure(try Tool.run(["compact", missing, folder.path("copy.realm")]), ToolFailure.failed)
        Self.expectFailure(try Tool.run(["verify", folder.path("no-folder/x.realm")]), ToolFailure.failed, mentioning: "folder")
        #expect(try folder.listing().isEmpty)
    }

    @Test func keysThatDoNotFitAreRefused() throws {
        let folder = ToolFolder()
        let path = try folder.realm("secret.realm", owners: 3, key: Self.key)
        let plain = try folder.realm("plain.realm", owners: 3)
        let otherKey = try folder.file("other.key", Self.otherKey)
        let notKeys = try [folder.file("short.key", [1, 2, 3]), folder.file("long.key", [UInt8](repeating: 0x61, count: 65)),
                           folder.file("hex32.key", Array(String(repeating: "a5", count: 32).utf8)), folder.file("empty.key", [])]
        for command in ["info", "schema", "verify"] {
            Self.expectFailure(try Tool.run([command, path]), ToolFailure.failed)
            Self.expectFailure(try Tool.run([command, path, "--key-file", otherKey]), ToolFailure.failed)
            Self.expectFailure(try Tool.run([command, plain, "--key-file", otherKey]), ToolFailure.failed)
            for notKey in notKeys {
                Self.expectFailure(try Tool.run([command, path, "--key-file", notKey]), ToolFailure.failed, mentioning: notKey)
            }
            Self.expectFailure(try Tool.run([command, path, "--key-file", folder.path("missing.key")]), ToolFailure.failed, mentioning: "missing.key")
        }
        Self.expectFailure(try Tool.run(["copy", path, folder.path("copy.realm"), "--key-file", otherKey]), ToolFailure.failed)
        #expect(!FileManager.default.fileExists(atPath: folder.path("copy.realm")))
    }

    @Test func filesThatAreNotRealmsOrAreDamagedAreRefused() throws {
        let folder = ToolFolder()
        let text = try folder.file("notes.txt", Array("not a realm file at all\n".utf8))
        let empty = try folder.file("empty.realm", [])
        for command in ["info", "schema", "verify"] {
            Self.expectFailure(try Tool.run([command, text]), ToolFailure.failed)
            Self.expectFailure(try Tool.run([command, empty]), ToolFailure.failed)
            Self.expectFailure(try Tool.run([command, folder.url.path]), ToolFailure.failed)
        }
        let damaged = try Self.damagedRealm(in: folder)
        Self.expectFailure(try Tool.run(["verify", damaged]), ToolFailure.damaged)
        Self.expectFailure(try Tool.run(["copy", damaged, folder.path("copy.realm")]), ToolFailure.damaged)
    }

    /// The commands that read objects through the dynamic API (whose reads cannot throw)
    /// check the file at open: damage anywhere is status 2 and one line, never a trap after
    /// part of the objects was printed (export, query) or a server that dies at the page
    /// reading the damaged node (serve).
    @Test(.timeLimit(.minutes(1))) func commandsReadingObjectsRefuseADamagedFileAtOpen() throws {
        let folder = ToolFolder()
        let damaged = try Self.damagedRealm(in: folder)
        let input = try folder.file("input.json", Array("{\"ToolPet\": []}".utf8))
        for arguments in [
            ["export", damaged], ["export", damaged, "--format", "ndjson"], ["query", damaged, "ToolOwner"],
            ["query", damaged, "ToolPet", "age > 1", "--format", "json"], ["import", damaged, input], ["serve", damaged, "--port", "0"],
        ] {
            Self.expectFailure(try Tool.run(arguments), ToolFailure.damaged, mentioning: "damaged")
        }
    }
}
