import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import TestSupport

/// `openrealm serve`: the built tool serves the web view on 127.0.0.1 (the pages themselves are
/// OpenRealmWebViewTests'), stops cleanly on SIGTERM, and refuses bad input like every command.
@Suite(.childProcesses) struct ServeCommandTests {
    @Test func serveShowsTheFileOnLoopbackUntilSIGTERM() async throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 3)
        let executable = try #require(Tool.executable, "build the openrealm tool first (swift build)")
        let process = Process()
        process.executableURL = executable
        process.arguments = ["serve", path, "--port", "0"]
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        // "serving <path> on http://127.0.0.1:<port>/ (Ctrl-C stops)"
        var printed = Data()
        let reader = output.fileHandleForReading
        while !printed.contains(UInt8(ascii: "\n")) {
            let chunk = reader.availableData
            if chunk.isEmpty {
                let said = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                Issue.record("serve ended before it listened: \(said)")
                return
            }
            printed += chunk
        }
        let line = String(decoding: printed, as: UTF8.self)
        let address = try #require(line.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }, Comment(rawValue: line))
        let url = try #require(URL(string: String(address)))

        let (body, response) = try await URLSession.shared.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        let page = String(decoding: body, as: UTF8.self)
        #expect(page.contains("ToolOwner"))
        #expect(page.contains("ToolPet"))

        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
    }

    @Test func serveRefusesBadInput() throws {
        let folder = ToolFolder()
        let missing = try Tool.run(["serve", folder.path("missing.realm"), "--port", "0"])
        #expect(missing.exited && missing.status == 1, "\(missing)")
        #expect(missing.errorLines.count == 1 && missing.errorLines.first?.hasPrefix("openrealm: ") == true, "\(missing)")
        #expect(try folder.listing().isEmpty, "nothing is created beside a missing file")
        let port = try Tool.run(["serve", try folder.realm(), "--port", "70000"])
        #expect(port.exited && port.status == 64, "\(port)")
    }
}
