import ArgumentParser
import RealmStorage

/// `openrealm info <file>`: what a realm file is made of, without changing it.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show a realm file's format, space, versions, classes and object counts.",
        discussion: """
            Shows the file format version, the file's size, the bytes the newest version uses \
            (live) and the free bytes among them, the newest version, what readers in other \
            processes pin (when another process has the file open), whether the file is \
            encrypted or an LZ4-compressed copy, and the object count of every class. The file \
            is opened read-only and nothing is written beside it.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @OptionGroup var file: FileArguments

    func run() throws {
        print(try Self.describe(file.open()), terminator: "")
    }

    /// The lines `info` prints for `reading`.
    static func describe(_ reading: Reading) throws(StorageError) -> String {
        let store = reading.store
        let read = store.beginRead()
        let (fileSize, freeBytes) = try store.spaceUsage()
        let used = read.slot.logicalSize
        var lines = ["\(reading.path)"]
        func field(_ name: String, _ value: String) { lines.append("  " + name.padding(17) + value) }
        field("format version", "\(store.formatVersion)")
        field("file size", "\(fileSize) bytes")
        if reading.isCompressed {
            field("image size", "\(used) bytes, of which \(used - min(used, freeBytes)) live and \(freeBytes) free")
        } else {
            field("space", "\(used) bytes used: \(used - min(used, freeBytes)) live, \(freeBytes) free")
        }
        field("version", "\(read.version.value)")
        if let pinned = store.versionsPinnedElsewhere() {
            let versions = pinned.versions.map(String.init) + pinned.ranges.map { "\($0.lowerBound)…\($0.upperBound)" }
            let present = store.otherProcessesHaveTheFile
            field("other processes", !present ? "none has the file open"
                  : versions.isEmpty ? "have the file open, pinning no version" : "have the file open, pinning versions " + versions.joined(separator: ", "))
        } else if reading.isCompressed {
            field("other processes", "not tracked (a compressed copy is never written)")
        } else {
            field("other processes", "none (no lock file; writers in other processes cannot open the file while this runs)")
        }
        field("encryption", reading.key == nil ? "none" : "encrypted (AES-256, authenticated pages)")
        field("compression", reading.isCompressed ? "LZ4-compressed copy (read-only)" : "none")
        lines.append("classes")
        let tables = read.tables.sorted { $0.name < $1.name }
        let width = tables.map(\.name.count).max() ?? 0
        for info in tables {
            let count = try read.table(info.key).count()
            lines.append("  " + info.name.padding(width + 2) + "\(count) object\(count == 1 ? "" : "s")")
        }
        if tables.isEmpty { lines.append("  (none)") }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// `openrealm inspect <file>`: the name `info` had before, kept for scripts (hidden).
struct InspectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "The same as info (its former name).",
        shouldDisplay: false
    )

    @OptionGroup var file: FileArguments

    func run() throws {
        print(try InfoCommand.describe(file.open()), terminator: "")
    }
}

extension String {
    /// This string padded with spaces to `width` characters (never cut).
    func padding(_ width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
