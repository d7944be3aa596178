import Foundation
import OpenRealm
import Testing
import TestSupport
@testable import OpenRealmTool

/// `openrealm watch` (and `stats`): a line of activity per interval, `--count` of them, the
/// versions other processes commit seen as they come; the folder left as it was.
@Suite(.childProcesses) struct ToolWatchTests {
    @Test func watchPrintsCountLinesAndLeavesTheFolderAsItWas() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 5)
        let before = try folder.listing()
        for command in ["watch", "stats"] {
            let run = try ToolCommandTests.succeed([command, path, "--count", "3", "--interval", "0.05"])
            let lines = run.stdout.split(separator: "\n")
            #expect(lines.count == 4, "\(run)")
            #expect(lines.first.map(String.init) == WatchCommand.header)
            // No commits while it watched: the same version, no growth.
            let fields = lines.dropFirst().map { $0.split(separator: " ") }
            #expect(Set(fields.map { $0[1] }).count == 1, "\(run)")
            #expect(fields.dropFirst().allSatisfy { $0[2] == "0.0" && $0[5] == "0" }, "\(run)")
            #expect(try folder.listing() == before)
        }
        for arguments in [["watch", path, "--count", "0"], ["watch", path, "--interval", "0"], ["watch", path, "--interval", "-1"]] {
            ToolBadInputTests.expectFailure(try Tool.run(arguments), ToolFailure.usage)
        }
        ToolBadInputTests.expectFailure(try Tool.run(["watch", folder.path("missing.realm"), "--count", "1"]), ToolFailure.failed)
    }

    /// A writer in this process commits while the tool watches: later lines show newer versions.
    @Test func watchSeesCommitsOfAnotherProcess() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 5)
        let configuration = Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: ToolModel.types)
        let realm = try Realm(configuration: configuration)
        let done = DispatchSemaphore(value: 0)
        let writer = Thread {
            defer { done.signal() }
            guard let realm = try? Realm(configuration: configuration) else { return }
            for id in 100..<250 {
                try? realm.write { realm.add(ToolModel.owner(id)) }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        writer.start()
        let run = try ToolCommandTests.succeed(["watch", path, "--count", "4", "--interval", "0.3"])
        let versions = run.stdout.split(separator: "\n").dropFirst().compactMap { UInt64($0.split(separator: " ")[1]) }
        #expect(versions.count == 4, "\(run)")
        #expect(versions.last.map { $0 > versions[0] } == true, "\(run)")
        done.wait()
        withExtendedLifetime(realm) {}
    }

    /// Without --count it runs until SIGINT (or SIGTERM), and then ends with status 0.
    @Test(arguments: [SIGINT, SIGTERM])
    func watchEndsCleanlyOnASignal(_ signal: Int32) throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 5)
        let executable: URL = try #require(Tool.executable)
        let process = Process()
        process.executableURL = executable
        process.arguments = ["watch", path, "--interval", "0.05"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // The header and two lines: the handlers are in place before the first line.
        var seen = Data()
        while seen.split(separator: UInt8(ascii: "\n")).count < 3 {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
        #expect(String(decoding: seen, as: UTF8.self).hasPrefix(WatchCommand.header))
    }
}
