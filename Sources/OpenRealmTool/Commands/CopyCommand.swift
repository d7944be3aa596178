import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `openrealm copy <file> <copy> [--lz4]`: a compacted copy, LZ4-compressed or not.
struct CopyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Write a compacted copy of a realm file, LZ4-compressed with --lz4.",
        discussion: """
            An LZ4-compressed copy opens read-only, in place. Without --lz4, a copy of a \
            compressed file is an ordinary writable realm again. A copy of an encrypted file is \
            encrypted with its key unless --decrypt or --new-key-file says otherwise; with --lz4 \
            and a key, each block is compressed, then encrypted. <file> is opened read-only and \
            nothing is written beside it. A progress bar is drawn on a terminal.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @Argument(help: ArgumentHelp("The realm file.", valueName: "file"))
    var path: String

    @Argument(help: ArgumentHelp("Where to write the copy (must not exist).", valueName: "copy"))
    var copy: String

    @Flag(help: "Write the copy LZ4-compressed (it opens read-only).")
    var lz4 = false

    @OptionGroup var key: KeyFileOption

    @OptionGroup var copyKey: CopyKeyOptions

    func validate() throws {
        try copyKey.validate(source: key)
    }

    func run() throws {
        let sourceKey = try key.key()
        let targetKey = try copyKey.copyKey(source: sourceKey)
        let reading = try Reading(path: path, key: sourceKey)
        try reading.store.writeCompactedCopy(to: copy, compression: lz4 ? .lz4 : .none, encryptionKey: targetKey,
                                             progress: ProgressBar.forTerminal(label: "copying"))
        print("wrote \(copy): \(try Self.size(of: copy)) bytes\(lz4 ? ", LZ4-compressed" : "")\(targetKey != nil ? ", encrypted" : "") "
              + "(from \(try Self.size(of: path)) bytes)")
    }

    /// The size of the file at `path`.
    static func size(of path: String) throws -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else { throw ToolFailure("cannot read the size of \(path): \(String(cString: strerror(errno)))") }
        return Int64(info.st_size)
    }
}
