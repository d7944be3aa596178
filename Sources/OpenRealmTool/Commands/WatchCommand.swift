import ArgumentParser
import Dispatch
import Foundation
import RealmStorage

/// `openrealm watch <file>` (also `stats`): a line of a realm file's activity every interval,
/// until SIGINT or SIGTERM (or `--count` lines): the newest version, commits per second, the
/// versions readers pin, the file's size and growth, live and free bytes.
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print a realm file's activity every second: commits, pinned versions, growth.",
        discussion: """
            A line every --interval seconds (1 by default): the time, the newest version, the \
            commits per second since the line before (versions made), the versions readers in \
            other processes pin, the file size and its growth per second, and the live and free \
            bytes of the newest version. Ends on SIGINT or SIGTERM with status 0, or after \
            --count lines. The file is opened read-only: with the writers' lock file when they \
            have it open, and without creating one otherwise (nothing is written beside it; \
            a writer in another process cannot then open the file while this runs).

            Exit status: \(ToolFailure.statusSummary)
            """,
        aliases: ["stats"]
    )

    @OptionGroup var file: FileArguments

    @Option(help: ArgumentHelp("Seconds between lines.", valueName: "seconds"))
    var interval = 1.0

    @Option(help: ArgumentHelp("Stop after this many lines (none: until SIGINT or SIGTERM).", valueName: "n"))
    var count: Int?

    func validate() throws {
        guard interval > 0, interval <= 3_600 else { throw ValidationError("--interval must be more than 0 and at most 3600 seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    /// One observation of the file.
    struct Sample {
        var time: Date
        var version: UInt64
        var fileSize: UInt64
        var liveBytes: UInt64
        var freeBytes: UInt64
        var pinned: Int?
    }

    static func sample(_ store: Store) throws(StorageError) -> Sample {
        let read = store.beginRead()
        let (fileSize, freeBytes) = try store.spaceUsage()
        let used = read.slot.logicalSize
        let pinned = store.versionsPinnedElsewhere().map { pinned in
            pinned.versions.count + pinned.ranges.reduce(0) { $0 + Int($1.upperBound - $1.lowerBound + 1) }
        }
        return Sample(time: Date(), version: read.version.value, fileSize: fileSize, liveBytes: used - min(used, freeBytes),
                      freeBytes: freeBytes, pinned: pinned)
    }

    static let header = "time          version  commits/s  pinned  file size  growth/s   live bytes  free bytes"

    /// The line of `sample`, with rates against `previous` (none for the first line).
    static func line(_ sample: Sample, previous: Sample?) -> String {
        let time = sample.time.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).time(includingFractionalSeconds: false))
        var rate = "-", growth = "-"
        if let previous {
            let seconds = max(sample.time.timeIntervalSince(previous.time), 0.001)
            rate = String(format: "%.1f", Double(sample.version &- previous.version) / seconds)
            growth = String(Int((Double(sample.fileSize) - Double(previous.fileSize)) / seconds))
        }
        let columns: [(String, Int)] = [
            (time, 12), (String(sample.version), 8), (rate, 10), (sample.pinned.map(String.init) ?? "-", 7),
            (String(sample.fileSize), 10), (growth, 9), (String(sample.liveBytes), 12), (String(sample.freeBytes), 11),
        ]
        return columns.map { text, width in String(repeating: " ", count: max(0, width - text.count)) + text }
            .joined(separator: " ").trimmingCharacters(in: .whitespaces)
    }

    func run() throws {
        let reading = try file.open()
        let stop = Stop()
        let signals = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { stop.signal() }
            source.resume()
            return source
        }
        defer { signals.forEach { $0.cancel() } }
        Self.write(Self.header)
        var previous: Sample?
        var lines = 0
        while true {
            let sample = try Self.sample(reading.store)
            Self.write(Self.line(sample, previous: previous))
            previous = sample
            lines += 1
            if let count, lines >= count { return }
            if stop.wait(seconds: interval) { return }
        }
    }

    /// A line on standard output at once (print buffers when piped, and this never ends by itself).
    static func write(_ line: String) {
        FileHandle.standardOutput.write(Data((line + "\n").utf8))
    }

    /// Set by SIGINT or SIGTERM; waited on between lines.
    private final class Stop: Sendable {
        private let semaphore = DispatchSemaphore(value: 0)

        func signal() { semaphore.signal() }

        /// Waits `seconds`; true when a signal came meanwhile.
        func wait(seconds: Double) -> Bool {
            semaphore.wait(timeout: .now() + seconds) == .success
        }
    }
}
