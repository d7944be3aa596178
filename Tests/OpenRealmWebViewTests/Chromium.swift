import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Debian's chromium, headless, as the browser tests drive it: `--dump-dom` and
/// `--screenshot` runs for pages that are whole once loaded, and a session over the DevTools
/// protocol on a pipe (`--remote-debugging-pipe`: commands on the child's fd 3, answers on its
/// fd 4, each a JSON text ended by a NUL byte) for what happens after loading: a form filled in
/// and sent, the history list growing while the test commits.
///
/// Each browser gets a profile folder of its own (two browsers sharing one refuse to start) and
/// its own process group, which a timeout kills whole. Everything blocks: the browser suite
/// runs on threads of its own (`.childProcesses`).
enum Chromium {
    /// Why the browser tests cannot run, said so that a person knows what to do.
    static let missing = "chromium is not installed (the browser tests drive Debian's chromium, headless): "
        + "run scripts/install-prerequisites.sh, which installs it, then run the tests again"

    /// The chromium executable on the PATH.
    ///
    /// - Throws: `missing` when there is none: the browser tests fail, never skip.
    static func executable() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for folder in path.split(separator: ":") {
            for name in ["chromium", "chromium-browser"] {
                let candidate = "\(folder)/\(name)"
                if access(candidate, X_OK) == 0 { return candidate }
            }
        }
        throw WebViewTestError(missing)
    }

    static func baseArguments(profile: URL) -> [String] {
        ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--no-default-browser-check", "--disable-extensions",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio", "--user-data-dir=\(profile.path)"]
    }

    /// The document of `url` after the browser loaded it and ran its scripts (`--dump-dom`).
    static func dumpDOM(_ url: String, in folder: URL) throws -> String {
        let output = folder.appendingPathComponent("dom-\(UUID().uuidString).html")
        let status = try run(baseArguments(profile: profile(in: folder)) + ["--dump-dom", url], stdout: output)
        guard status == 0 else { throw WebViewTestError("chromium --dump-dom \(url) exited with status \(status)") }
        return (try? String(contentsOf: output, encoding: .utf8)) ?? ""
    }

    /// A PNG of `url` at 1280×900 (`--screenshot`).
    static func screenshot(_ url: String, to png: URL, in folder: URL) throws {
        let status = try run(baseArguments(profile: profile(in: folder)) + ["--window-size=1280,900", "--screenshot=\(png.path)", url],
                             stdout: folder.appendingPathComponent("screenshot.log"))
        guard status == 0, FileManager.default.fileExists(atPath: png.path) else {
            throw WebViewTestError("chromium --screenshot \(url) exited with status \(status) and no \(png.lastPathComponent)")
        }
    }

    private static func profile(in folder: URL) -> URL {
        folder.appendingPathComponent("chromium-profile-\(UUID().uuidString)")
    }

    /// Runs chromium with `arguments`, its output into `stdout`; kills it (and its process
    /// group) after `seconds`. Returns its exit status.
    static func run(_ arguments: [String], stdout: URL, seconds: Double = 90) throws -> Int32 {
        let spawned = try Spawned(executable(), arguments, stdout: stdout, pipes: false)
        return try spawned.wait(seconds: seconds)
    }
}

/// A child process in a process group of its own, with stdout to a file, stderr to
/// /dev/null, and, for the DevTools pipe, fd 3 reading what `commands` gets and fd 4 writing
/// into `answers`.
final class Spawned {
    let pid: pid_t
    /// Written by the test, read by the child as its fd 3.
    private(set) var commands: Int32 = -1
    /// Written by the child as its fd 4, read by the test.
    private(set) var answers: Int32 = -1
    private var exited: Int32?

    init(_ executable: String, _ arguments: [String], stdout: URL, pipes: Bool) throws {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        if pipes {
            // Close-on-exec (pipe2 is not in Glibc's module): other children started meanwhile
            // must not hold the pipes open.
            guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw WebViewTestError("pipe: errno \(errno)") }
            for fd in toChild + fromChild { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, stdout.path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        if pipes {
            // dup2 clears close-on-exec on the copies: the child keeps fds 3 and 4 only.
            posix_spawn_file_actions_adddup2(&actions, toChild[0], 3)
            posix_spawn_file_actions_adddup2(&actions, fromChild[1], 4)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        if pipes {
            close(toChild[0])
            close(fromChild[1])
        }
        guard result == 0 else {
            if pipes { close(toChild[1]); close(fromChild[0]) }
            throw WebViewTestError("posix_spawn \(executable): error \(result)")
        }
        self.pid = pid
        if pipes {
            commands = toChild[1]
            answers = fromChild[0]
        }
    }

    deinit {
        if exited == nil { kill(-pid, SIGKILL); _ = try? wait(seconds: 5) }
        if commands >= 0 { close(commands) }
        if answers >= 0 { close(answers) }
    }

    /// The exit status once the child exits; after `seconds` its process group is killed and
    /// this throws.
    func wait(seconds: Double) throws -> Int32 {
        if let exited { return exited }
        let deadline = Date().addingTimeInterval(seconds)
        var status: Int32 = 0
        while true {
            let done = waitpid(pid, &status, WNOHANG)
            if done == pid {
                let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
                exited = code
                return code
            }
            if Date() > deadline {
                kill(-pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                exited = -1
                throw WebViewTestError("chromium did not finish within \(seconds) s and was killed")
            }
            usleep(20_000)
        }
    }
}

/// A headless chromium driven over the DevTools protocol on a pipe: one page, navigated,
/// evaluated in, and photographed.
final class BrowserSession {
    private let process: Spawned
    private var nextID = 0
    private var pending = [UInt8]()
    private var sessionID = ""

    init(in folder: URL) throws {
        // A browser that died makes the next command's write fail with EPIPE instead of
        // SIGPIPE ending the whole test process.
        signal(SIGPIPE, SIG_IGN)
        let profile = folder.appendingPathComponent("chromium-profile-\(UUID().uuidString)")
        process = try Spawned(Chromium.executable(),
                              Chromium.baseArguments(profile: profile) + ["--window-size=1280,900", "--remote-debugging-pipe", "about:blank"],
                              stdout: folder.appendingPathComponent("chromium-session.log"), pipes: true)
        let target = try call("Target.createTarget", ["url": "about:blank"], inPage: false)
        guard let targetID = target["targetId"] as? String else { throw WebViewTestError("no target: \(target)") }
        let attached = try call("Target.attachToTarget", ["targetId": targetID, "flatten": true], inPage: false)
        guard let session = attached["sessionId"] as? String else { throw WebViewTestError("not attached: \(attached)") }
        sessionID = session
        _ = try call("Page.enable", [:])
    }

    deinit {
        _ = try? call("Browser.close", [:], inPage: false, seconds: 5)
        _ = try? process.wait(seconds: 10)
    }

    /// Loads `url` and waits until its document has loaded.
    func navigate(_ url: String) throws {
        _ = try call("Page.navigate", ["url": url])
        try waitUntil("document.readyState === 'complete' && location.href === \(Self.quoted(url))")
    }

    /// The value of `expression` in the page (JSON-representable values).
    func evaluate(_ expression: String) throws -> Any? {
        let result = try call("Runtime.evaluate", ["expression": expression, "returnByValue": true, "awaitPromise": true])
        if let exception = result["exceptionDetails"] { throw WebViewTestError("\(expression) threw: \(exception)") }
        return (result["result"] as? [String: Any])?["value"]
    }

    /// Waits until `condition` is true in the page, polling; throws after `seconds`.
    func waitUntil(_ condition: String, seconds: Double = 60) throws {
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            // A navigation under way destroys the context an evaluation runs in: try again.
            if (try? evaluate("Boolean(\(condition))")) as? Bool == true { return }
            guard Date() < deadline else {
                let location = ((try? evaluate("location.href")) ?? nil) as? String ?? "?"
                throw WebViewTestError("'\(condition)' was not true within \(seconds) s (at \(location))")
            }
            usleep(50_000)
        }
    }

    /// The page's document as markup now.
    func document() throws -> String {
        (try evaluate("document.documentElement.outerHTML") as? String) ?? ""
    }

    /// A PNG of the page's viewport.
    func screenshot(to png: URL) throws {
        let result = try call("Page.captureScreenshot", ["format": "png"])
        guard let base64 = result["data"] as? String, let data = Data(base64Encoded: base64) else {
            throw WebViewTestError("no screenshot: \(result.keys)")
        }
        try data.write(to: png)
    }

    static func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text])
        return data.map { String(decoding: $0, as: UTF8.self).dropFirst().dropLast() }.map(String.init) ?? "''"
    }

    /// Sends a command and returns its result, skipping the events that come before it.
    private func call(_ method: String, _ parameters: [String: Any], inPage: Bool = true, seconds: Double = 60) throws -> [String: Any] {
        nextID += 1
        let id = nextID
        var message: [String: Any] = ["id": id, "method": method, "params": parameters]
        if inPage { message["sessionId"] = sessionID }
        var bytes = [UInt8](try JSONSerialization.data(withJSONObject: message))
        bytes.append(0)
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(process.commands, $0.baseAddress, $0.count) }
            guard count > 0 else { throw WebViewTestError("writing to chromium: errno \(errno)") }
            written += count
        }
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            let answer = try readMessage(until: deadline, method)
            guard answer["id"] as? Int == id else { continue }
            if let error = answer["error"] { throw WebViewTestError("\(method) failed: \(error)") }
            return answer["result"] as? [String: Any] ?? [:]
        }
    }

    private func readMessage(until deadline: Date, _ method: String) throws -> [String: Any] {
        while true {
            if let end = pending.firstIndex(of: 0) {
                let message = Array(pending[..<end])
                pending.removeSubrange(...end)
                return (try JSONSerialization.jsonObject(with: Data(message)) as? [String: Any]) ?? [:]
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { throw WebViewTestError("chromium did not answer \(method) in time") }
            var descriptor = pollfd(fd: process.answers, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, Int32(min(left, 1) * 1000)) >= 0 else { throw WebViewTestError("poll: errno \(errno)") }
            guard descriptor.revents != 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = read(process.answers, &buffer, buffer.count)
            guard count > 0 else { throw WebViewTestError("chromium closed its DevTools pipe during \(method)") }
            pending += buffer[..<count]
        }
    }
}
