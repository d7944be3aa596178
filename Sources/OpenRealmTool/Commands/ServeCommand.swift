import ArgumentParser
import Dispatch
import Foundation
import OpenRealmWebView

/// `openrealm serve <file>`: the read-only web view of a realm file (OpenRealmWebView,
/// docs/WebView.md) on 127.0.0.1 until SIGINT or SIGTERM.
struct ServeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a read-only web view of a realm file on 127.0.0.1.",
        discussion: """
            Classes with their counts, a paged table of each class's objects, links and \
            collections to follow, a query box taking predicate strings, an object's changes \
            while its page is open, and the file's info. Only on the loopback address; the \
            file is opened read-only (with a lock file beside it, so that writers in other \
            processes keep writing while it is served). Stops on SIGINT or SIGTERM.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @OptionGroup var file: FileArguments

    @Option(help: "The port on 127.0.0.1 (0: one the system chooses, printed).")
    var port = 8080

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be between 0 and 65535") }
    }

    func run() throws {
        let key = try file.key.key().map { Data($0) }
        let view = RealmWebView(fileURL: URL(fileURLWithPath: file.path), encryptionKey: key)
        // ParsableCommand is synchronous: the server runs in a task, and this thread waits for
        // it (the main thread is no executor a task needs).
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await view.run(port: port) { port in
                    // Written at once (print buffers when piped): a script waits for this line.
                    FileHandle.standardOutput.write(Data("serving \(view.fileURL.path) on http://127.0.0.1:\(port)/ (Ctrl-C stops)\n".utf8))
                }
            } catch {
                outcome.error = error
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw error }
    }

    /// What the server's task ended with, read after it signalled.
    private final class Outcome: @unchecked Sendable {
        // @unchecked: written by the task before it signals, read by the waiting thread after.
        var error: (any Error)?
    }
}
