import Foundation
import Testing
import TestSupport
@testable import OpenRealmTool
import RealmStorage

/// Every command of the built `openrealm`, run as a child process: what it prints on standard
/// output and error, and its exit status.
@Suite(.childProcesses) struct ToolCommandTests {
    static let commands = ["demo", "bench", "info", "schema", "verify", "compact", "copy", "query", "export", "import"]

    /// A command that worked: status 0, nothing on standard error (piped: no progress bar).
    @discardableResult
    static func succeed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolRun {
        let run = try Tool.run(arguments, sourceLocation: sourceLocation)
        #expect(run.status == 0 && run.exited, "\(run)", sourceLocation: sourceLocation)
        #expect(run.stderr.isEmpty, "\(run)", sourceLocation: sourceLocation)
        return run
    }

    @Test func helpListsEveryCommandAndTheExitStatuses() throws {
        let help = try Self.succeed(["--help"])
        for command in Self.commands { #expect(help.stdout.contains("\n  \(command) "), "\(command) in \(help.stdout)") }
        #expect(!help.stdout.contains("inspect"), "the old name stays hidden")
        #expect(help.stdout.contains("2 the file is damaged"))
        for command in Self.commands + ["inspect"] {
            let run = try Self.succeed([command, "--help"])
            #expect(run.stdout.contains("USAGE: openrealm \(command)"), "\(run)")
        }
        let verify = try Tool.run(["verify", "--help"])
        #expect(verify.stdout.contains("0 the file is whole"))
        #expect(verify.stdout.contains("2 it is damaged"))
        #expect(verify.stdout.contains("64 a usage error"))
        for command in ["info", "schema", "verify", "compact", "copy"] {
            #expect(try Tool.run([command, "--help"]).stdout.contains("--key-file <path>"), "\(command)")
        }
        for command in ["compact", "copy"] {
            let run = try Tool.run([command, "--help"])
            #expect(run.stdout.contains("--decrypt") && run.stdout.contains("--new-key-file <path>"), "\(command)")
        }
        #expect(try Tool.run(["copy", "--help"]).stdout.contains("--lz4"))
    }

    @Test func versionNamesTheFileFormat() throws {
        let run = try Self.succeed(["--version"])
        #expect(run.stdout == OpenRealmCommand.version + "\n")
        #expect(run.stdout.contains("file format"))
    }

    @Test func infoShowsFormatSpaceStateAndCounts() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 20)
        let run = try Self.succeed(["info", path])
        let lines = run.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == path)
        for field in ["format version", "file size", "space", "version", "other processes", "encryption", "compression"] {
            #expect(lines.contains { $0.hasPrefix("  \(field) ") }, "\(field) in \(run.stdout)")
        }
        #expect(run.stdout.contains("bytes used: "))
        #expect(run.stdout.contains(" live, "))
        #expect(lines.contains { $0.hasPrefix("  encryption ") && $0.hasSuffix(" none") })
        #expect(lines.contains { $0.hasPrefix("  compression ") && $0.hasSuffix(" none") })
        #expect(lines.contains { $0.contains("no lock file") })
        #expect(lines.contains("  ToolOwner  20 objects"), "\(run.stdout)")
        #expect(lines.contains("  ToolPet    60 objects"), "\(run.stdout)")
        // The old name prints the same.
        #expect(try Tool.run(["inspect", path]).stdout == run.stdout)
    }

    @Test func infoTellsEncryptedAndCompressedFiles() throws {
        let folder = ToolFolder()
        let key = ToolBadInputTests.key
        let keyFile = try folder.file("key", key)
        let path = try folder.realm("secret.realm", owners: 5, key: key)
        let encrypted = try Self.succeed(["info", path, "--key-file", keyFile])
        #expect(encrypted.stdout.contains("encryption       encrypted"), "\(encrypted)")
        let archive = folder.path("archive.realmz")
        try Self.succeed(["copy", path, archive, "--lz4", "--decrypt", "--key-file", keyFile])
        let compressed = try Self.succeed(["info", archive])
        #expect(compressed.stdout.contains("compression      LZ4-compressed copy"), "\(compressed)")
        #expect(compressed.stdout.contains("  ToolPet    15 objects"), "\(compressed)")
    }

    /// A writer in this process has the file open: info joins its lock file and says so.
    @Test func infoShowsOtherProcessesThatHaveTheFileOpen() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 3)
        let store = try Store.open(path: path)
        let read = store.beginRead()
        let run = try Self.succeed(["info", path])
        #expect(run.stdout.contains("other processes  have the file open"), "\(run)")
        _ = read
    }

    @Test func verifySaysOKWithStatusZero() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 30)
        let run = try Self.succeed(["verify", path])
        #expect(run.stdout.hasPrefix("\(path): OK — version "), "\(run)")
        #expect(run.stdout.contains("2 tables, 120 objects"), "\(run)")
    }

    @Test func verifyOfADamagedFileExitsWithTheDamagedStatus() throws {
        let folder = ToolFolder()
        let path = try ToolBadInputTests.damagedRealm(in: folder)
        let run = try Tool.run(["verify", path])
        #expect(run.status == ToolFailure.damaged && run.exited, "\(run)")
        #expect(run.stdout.isEmpty)
        #expect(run.errorLines.count == 1 && run.stderr.hasPrefix("openrealm: "), "\(run)")
    }

    @Test func copyAndCompactWriteCopiesThatVerify() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 40)
        let compacted = folder.path("compacted.realm"), archive = folder.path("archive.realmz"), restored = folder.path("restored.realm")
        let compact = try Self.succeed(["compact", path, compacted])
        #expect(compact.stdout.hasPrefix("wrote \(compacted): "), "\(compact)")
        let copy = try Self.succeed(["copy", path, archive, "--lz4"])
        #expect(copy.stdout.contains("LZ4-compressed"), "\(copy)")
        #expect(CompressedFormat.isCompressedFile(at: archive))
        try Self.succeed(["copy", archive, restored])
        #expect(!CompressedFormat.isCompressedFile(at: restored))
        for file in [compacted, archive, restored] {
            let run = try Self.succeed(["verify", file])
            #expect(run.stdout.contains("160 objects"), "\(run)")
        }
        // A copy is never written over an existing file.
        let again = try Tool.run(["copy", path, compacted])
        #expect(again.status == ToolFailure.failed, "\(again)")
        #expect(again.errorLines.count == 1, "\(again)")
        // In place: refused while a process has the file open, done once it has closed.
        do {
            let store = try Store.open(path: path)
            let refused = try Tool.run(["compact", path])
            #expect(refused.status == ToolFailure.failed, "\(refused)")
            #expect(refused.stderr.contains("was not compacted"), "\(refused)")
            _ = store
        }
        let inPlace = try Self.succeed(["compact", path])
        #expect(inPlace.stdout.hasPrefix("compacted \(path)") || inPlace.stdout.contains("needs no compaction"), "\(inPlace)")
        try Self.succeed(["verify", path])
    }

    /// The README's first command: the demo runs and checks its realms.
    @Test func demoRunsInAFolder() throws {
        let folder = ToolFolder()
        let run = try Self.succeed(["demo", folder.url.path])
        #expect(run.stdout.contains("OpenRealm object API demo"), "\(run)")
        #expect(run.stdout.contains("compacted copy: "), "\(run)")
        #expect(FileManager.default.fileExists(atPath: folder.path("demo.realm")))
    }

    @Test func benchRunsTheRowsItIsGiven() throws {
        let folder = ToolFolder()
        let run = try Self.succeed(["bench", "--rows", "500", folder.url.path])
        #expect(run.stdout.hasPrefix("insert: 500 rows in "), "\(run)")
        #expect(run.stdout.contains("lookup by unique id"), "\(run)")
    }
}
