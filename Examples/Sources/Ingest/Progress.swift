import ExampleSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Progress through the input: a bar redrawn in place on a terminal; elsewhere (a log, CI) a
/// line at the first commit and at every tenth of the file, which is what a log wants.
struct Progress {
    let fileSize: Int
    let startOffset: Int
    private let isTerminal = isatty(STDERR_FILENO) == 1
    private var lastDraw = ContinuousClock.now
    private var lastTenth = -1

    init(fileSize: Int, startOffset: Int) {
        self.fileSize = fileSize
        self.startOffset = startOffset
    }

    /// A batch ending at `offset` (line `lines`) is durable.
    mutating func committed(offset: Int, lines: Int, rate: Double) {
        let fraction = fileSize == 0 ? 1 : Double(offset) / Double(fileSize)
        if isTerminal {
            // At most ten redraws a second: drawing costs more than it shows past that.
            guard ContinuousClock.now - lastDraw > .milliseconds(100) else { return }
            lastDraw = .now
            let width = 30
            let filled = Int(fraction * Double(width))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            FileHandle.standardError.write(Data(
                "\r\u{1B}[2K[\(bar)] \(Int(fraction * 100))%  \(Format.count(lines)) lines  \(Format.count(Int(rate))) rows/s".utf8))
        } else {
            let tenth = Int(fraction * 10)
            guard tenth > lastTenth else { return }
            lastTenth = tenth
            print("committed \(Format.count(lines)) lines (\(Int(fraction * 100))%)")
            // nil: every stream (naming `stdout` is a shared global Swift 6 refuses).
            fflush(nil)
        }
    }

    func finish(lines: Int) {
        if isTerminal { FileHandle.standardError.write(Data("\r\u{1B}[2K".utf8)) }
    }
}
