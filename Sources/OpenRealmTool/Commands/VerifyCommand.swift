import ArgumentParser

/// `openrealm verify <file>`: the integrity check, with the outcome in the exit status.
struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check a realm file's integrity.",
        discussion: """
            Walks everything the newest version reaches (every node through its checksum, \
            trees, clusters, links, indexes) and checks that the reachable nodes and the free \
            list cover the file exactly. The file is opened read-only and nothing is written \
            beside it. A progress bar is drawn on a terminal.

            Exit status: 0 the file is whole; \(ToolFailure.failed) it could not be opened (missing, \
            wrong or unreadable key, not a realm file, permissions); \(ToolFailure.damaged) it is \
            damaged (the message names the first damage found); \(ToolFailure.usage) a usage error.
            """
    )

    @OptionGroup var file: FileArguments

    func run() throws {
        let reading = try file.open()
        let report = try reading.store.verify(progress: ProgressBar.forTerminal(label: "verifying"))
        print("\(reading.path): OK — version \(report.version.value), \(report.tables) tables, \(report.objects) objects, "
              + "\(report.nodes) nodes, \(report.reachableBytes) bytes reachable, \(report.freeBytes) bytes free in \(report.freeExtents) extents")
    }
}
