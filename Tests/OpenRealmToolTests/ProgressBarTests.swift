import Foundation
import Testing
import TestSupport
@testable import OpenRealmTool
@testable import RealmStorage

/// Long work draws a progress bar on a terminal and nothing when standard error is piped.
@Suite(.childProcesses) struct ProgressBarTests {
    @Test func aBarIsDrawnOnlyForATerminal() {
        #expect(ProgressBar.handler(label: "copying", standardErrorIsTerminal: false) == nil)
        #expect(ProgressBar.handler(label: "copying", standardErrorIsTerminal: true) != nil)
    }

    @Test func theBarShowsTheFractionDoneAndEndsItsLineWhenFinished() {
        let half = ProgressBar.line(label: "verifying", CopyProgress(objectsDone: 50, objectsTotal: 100, finished: false))
        #expect(half == "\rverifying [" + String(repeating: "#", count: 15) + String(repeating: "-", count: 15) + "] 50% 50/100 objects")
        let done = ProgressBar.line(label: "copying", CopyProgress(objectsDone: 100, objectsTotal: 100, finished: true))
        #expect(done.hasSuffix("] 100% 100/100 objects\n"))
        // An empty file is done at once.
        #expect(ProgressBar.line(label: "copying", CopyProgress(objectsDone: 0, objectsTotal: 0, finished: true)).contains("100%"))
    }

    /// Piped, as in these tests and in scripts: standard error stays empty.
    @Test func longWorkPrintsNoProgressWhenPiped() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 200)
        for arguments in [["verify", path], ["copy", path, folder.path("a.realm")], ["copy", path, folder.path("b.realmz"), "--lz4"],
                          ["compact", path, folder.path("c.realm")], ["compact", path]] {
            let run = try Tool.run(arguments)
            #expect(run.status == 0, "\(run)")
            #expect(run.stderr.isEmpty, "\(arguments): \(run)")
            #expect(!run.stdout.contains("\r") && !run.stdout.contains("["), "\(arguments): \(run)")
        }
    }

    /// On a terminal (a pseudo-terminal made by util-linux's `script`), verify and copy draw
    /// their bars on standard error, ending with the finished line.
    @Test func longWorkDrawsABarOnATerminal() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 200)
        let tool = try #require(Tool.executable).path
        guard let (status, text) = try Self.onTerminal("'\(tool)' verify '\(path)' && '\(tool)' copy '\(path)' '\(folder.path("copy.realm"))'") else { return }
        #expect(status == 0, "\(text)")
        #expect(text.contains("\rverifying [------------------------------] 0% 0/800 objects"), "\(text)")
        #expect(text.contains("\rverifying [##############################] 100% 800/800 objects"), "\(text)")
        #expect(text.contains("\rcopying [##############################] 100% 800/800 objects"), "\(text)")
    }

    /// Runs the shell command `command` on a pseudo-terminal made by util-linux's `script`:
    /// its status and everything it wrote; nil (and an issue) without `script`.
    static func onTerminal(_ command: String) throws -> (status: Int32, text: String)? {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else {
            Issue.record("no \(script) (util-linux) to run the tool on a pseudo-terminal")
            return nil
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: script)
        // -e: the status of the command; the typescript file is thrown away.
        process.arguments = ["-qec", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, text)
    }

    /// Verify reports its objects as it checks them, as copies do.
    @Test func verifyReportsItsProgress() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 50)
        var options = StoreOptions(create: false, readOnly: true)
        options.createsLockFile = false
        let store = try Store.open(path: path, options: options)
        let reports = Locked([CopyProgress]())
        let report = try store.verify(progress: { progress in reports.withLock { $0.append(progress) } })
        let seen = reports.withLock { $0 }
        #expect(seen.first == CopyProgress(objectsDone: 0, objectsTotal: 200, finished: false))
        #expect(seen.last == CopyProgress(objectsDone: 200, objectsTotal: 200, finished: true))
        #expect(report.objects == 200)
        #expect(zip(seen, seen.dropFirst()).allSatisfy { $0.objectsDone <= $1.objectsDone })
    }
}

/// Export and import draw the same bar on a terminal, and nothing when piped.
@Suite(.childProcesses) struct RecordProgressBarTests {
    @Test func exportAndImportPrintNoProgressWhenPiped() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 200)
        let output = folder.path("all.ndjson")
        try ToolCommandTests.succeed(["export", path, "--format", "ndjson", "--output", output])
        let target = try folder.emptyRealm("target.realm", types: ToolModel.types).path
        let run = try ToolCommandTests.succeed(["import", target, output, "--format", "ndjson"])
        #expect(!run.stdout.contains("\r"), "\(run)")
    }

    @Test func exportAndImportDrawABarOnATerminal() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 200)
        let target = try folder.emptyRealm("target.realm", types: ToolModel.types).path
        let tool = try #require(Tool.executable).path
        let output = folder.path("all.json")
        guard let (status, text) = try ProgressBarTests.onTerminal("'\(tool)' export '\(path)' --output '\(output)' && '\(tool)' import '\(target)' '\(output)'") else {
            return
        }
        #expect(status == 0, "\(text)")
        #expect(text.contains("\rexporting [##############################] 100% 800/800 objects"), "\(text)")
        #expect(text.contains("\rimporting [##############################] 100% 1600/1600 objects"), "\(text)")
    }
}
