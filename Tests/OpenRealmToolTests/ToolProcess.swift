import Foundation
import OpenRealm
import RealmStorage
import Testing

/// What one run of the `openrealm` tool printed and how it ended.
struct ToolRun: CustomStringConvertible {
    var status: Int32
    /// Whether it exited (rather than died of a signal: a trap is a crash, never an answer).
    var exited: Bool
    var stdout: String
    var stderr: String

    var description: String { "status \(status)\(exited ? "" : " (signal)"), stdout: \(stdout.debugDescription), stderr: \(stderr.debugDescription)" }

    /// The lines of standard error.
    var errorLines: [Substring] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast() }
}

/// The built `openrealm` binary, run as a child process (the test target depends on the
/// executable target, so `swift build --build-tests` and `swift test` build it first).
enum Tool {
    /// Where the tool is: beside the test bundle, in the build products folder.
    static let executable: URL? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
            URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent(),
        ].map { $0.appendingPathComponent("openrealm") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs the tool with `arguments`, its standard output and error piped (not a terminal),
    /// and waits for it.
    static func run(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolRun {
        let executable = try #require(executable, "build the openrealm tool first (swift build)", sourceLocation: sourceLocation)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Both pipes drained at once: a child blocked on a full pipe would never exit.
        let errorData = Locked(Data())
        let errorHandle = error.fileHandleForReading
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            let data = errorHandle.readDataToEndOfFile()
            errorData.withLock { $0 = data }
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        return ToolRun(status: process.terminationStatus, exited: process.terminationReason == .exit,
                       stdout: String(decoding: outputData, as: UTF8.self),
                       stderr: String(decoding: errorData.withLock { $0 }, as: UTF8.self))
    }
}

/// A fresh folder per test (tests run in parallel), removed when the test is done.
final class ToolFolder: @unchecked Sendable {
    // @unchecked: `url` is immutable; the folder is removed in deinit.
    let url: URL
    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("openrealm-tool-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }

    func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// The names in the folder with each file's size and contents' hash: what a command that
    /// only reads must leave as it was.
    func listing() throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: url.path).sorted().map { name in
            let data = try Data(contentsOf: url.appendingPathComponent(name))
            var hash: UInt64 = 0xcbf29ce484222325
            for byte in data { hash = (hash ^ UInt64(byte)) &* 0x100000001b3 }
            return "\(name) \(data.count) \(hash)"
        }
    }

    /// Writes `bytes` to the file `name` and returns its path.
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        try Data(bytes).write(to: url.appendingPathComponent(name))
        return path(name)
    }

    /// A realm of `ToolModel.types` at `name`: `owners` owners, each with a best pet and a list
    /// of two, closed, and without its lock file (as a file copied from elsewhere would be),
    /// encrypted with `key` when there is one.
    func realm(_ name: String = "model.realm", owners: Int = 20, key: [UInt8]? = nil) throws -> String {
        let url = url.appendingPathComponent(name)
        var configuration = Realm.Configuration(fileURL: url, objectTypes: ToolModel.types)
        configuration.encryptionKey = key.map { Data($0) }
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for id in 0..<owners { realm.add(ToolModel.owner(id)) }
            }
        }
        try FileManager.default.removeItem(atPath: url.path + ".lock")
        return url.path
    }
}
