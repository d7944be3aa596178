#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RealmStorage

/// A progress bar on standard error for long work (verify, compact, copy), drawn only when
/// standard error is a terminal: piped or logged, the tool prints no progress, so that its
/// output is the same in a script as in a test.
enum ProgressBar {
    /// The handler that draws `label`'s bar on standard error, or nil when it is not a terminal.
    static func forTerminal(label: String) -> CopyProgressHandler? {
        handler(label: label, standardErrorIsTerminal: isatty(STDERR_FILENO) == 1)
    }

    /// The decision, apart from the terminal it is made for: a handler only for a terminal.
    static func handler(label: String, standardErrorIsTerminal: Bool) -> CopyProgressHandler? {
        guard standardErrorIsTerminal else { return nil }
        return { progress in
            let text = line(label: label, progress)
            text.withCString { _ = write(STDERR_FILENO, $0, strlen($0)) }
        }
    }

    /// One redraw: back to the start of the line, the bar, and a newline once finished.
    static func line(label: String, _ progress: CopyProgress) -> String {
        let fraction = progress.objectsTotal == 0 ? 1 : Double(progress.objectsDone) / Double(progress.objectsTotal)
        let width = 30, filled = min(width, Int(fraction * Double(width)))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let text = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(progress.objectsDone)/\(progress.objectsTotal) objects"
        return text + (progress.finished ? "\n" : "")
    }
}
