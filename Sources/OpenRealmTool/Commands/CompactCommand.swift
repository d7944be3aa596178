import ArgumentParser
import RealmStorage

/// `openrealm compact <file> [<copy>]`: a compacted copy, or the file compacted where it is.
struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Write a compacted copy of a realm file, or compact it in place.",
        discussion: """
            With <copy>, writes the newest version of <file> compacted to <copy> (which must not \
            exist); <file> is opened read-only and nothing is written beside it. Without it, \
            replaces <file> with a compacted copy (crash-safe), which is refused while any \
            process has the file open; an encrypted file keeps its key, under a new salt. A \
            progress bar is drawn on a terminal.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @Argument(help: ArgumentHelp("The realm file.", valueName: "file"))
    var path: String

    @Argument(help: ArgumentHelp("Where to write the compacted copy.", valueName: "copy"))
    var copy: String?

    @OptionGroup var key: KeyFileOption

    @OptionGroup var copyKey: CopyKeyOptions

    func validate() throws {
        try copyKey.validate(source: key)
        if copy == nil, copyKey.decrypt || copyKey.newKeyFile != nil {
            throw ValidationError("compacting in place keeps the file's key: --decrypt and --new-key-file need a <copy>")
        }
    }

    func run() throws {
        let sourceKey = try key.key()
        guard let copy else { return try compactInPlace(key: sourceKey) }
        let targetKey = try copyKey.copyKey(source: sourceKey)
        let reading = try Reading(path: path, key: sourceKey)
        let before = try reading.store.spaceUsage().fileSize
        try reading.store.writeCompactedCopy(to: copy, encryptionKey: targetKey, progress: ProgressBar.forTerminal(label: "compacting"))
        print("wrote \(copy): \(try CopyCommand.size(of: copy)) bytes (from \(before))")
    }

    /// Compacts the file where it is (Store.compact): refused while any process has it open.
    private func compactInPlace(key: [UInt8]?) throws {
        var options = StoreOptions(create: false)
        options.encryptionKey = key
        switch try Store.compact(path: path, options: options, progress: ProgressBar.forTerminal(label: "compacting")) {
        case .compacted(let before, let after): print("compacted \(path): \(after) bytes (from \(before))")
        case .inUse(let reason): throw ToolFailure("\(path) was not compacted: \(reason); close it there first")
        case .noFile: throw ToolFailure("no realm file at \(path)")
        case .notNeeded: print("\(path) needs no compaction")
        }
    }
}
