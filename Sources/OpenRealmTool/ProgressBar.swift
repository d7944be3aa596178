#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import RealmStorage

/// A progress bar on standard error for long work (verify, compact, copy, export, import), drawn only when
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
        return { progress in draw(line(label: label, progress)) }
    }

    private static func draw(_ text: String) {
        text.withCString { _ = write(STDERR_FILENO, $0, strlen($0)) }
    }

    /// For work that counts its own steps (export, import): a function taking the steps done
    /// (of `total`) and whether the work is finished, which redraws the bar when its percentage
    /// changes; nil when standard error is not a terminal.
    static func counter(label: String, total: Int) -> ((Int, Bool) -> Void)? {
        guard isatty(STDERR_FILENO) == 1 else { return nil }
        var shown = -1
        return { done, finished in
            let percent = total == 0 ? 100 : done * 100 / total
            guard percent != shown || finished else { return }
            shown = percent
            draw(line(label: label, done: done, total: total, finished: finished))
        }
    }

    /// One redraw: back to the start of the line, the bar, and a newline once finished.
    static func line(label: String, _ progress: CopyProgress) -> String {
        line(label: label, done: progress.objectsDone, total: progress.objectsTotal, finished: progress.finished)
    }

    static func line(label: String, done: Int, total: Int, finished: Bool) -> String {
        let fraction = total == 0 ? 1 : Double(done) / Double(total)
        let width = 30, filled = min(width, Int(fraction * Double(width)))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let text = "\r\(label) [\(bar)] \(Int(fraction * 100))% \(done)/\(total) objects"
        return text + (finished ? "\n" : "")
    }
}
