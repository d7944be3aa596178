import ArgumentParser
import Foundation

/// `openrealm bench [--rows n] [folder]`: the storage benchmark's engine workload, for a quick
/// reading on this machine (the side-by-side comparison lives in Benchmarks/).
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time the engine's insert and lookup workload.",
        discussion: """
            Inserts <rows> rows in 10,000-row durable transactions, then reads as many random \
            objects by key, every column; then the same with a unique id column (a primary key).
            """
    )

    @Option(help: "The number of rows, at least 1.")
    var rows = 1_000_000

    @Argument(help: ArgumentHelp("The folder to write bench.realm and bench-pk.realm in (a new temporary folder without it).",
                                 valueName: "folder"))
    var folder: String?

    func validate() throws {
        guard rows >= 1 else { throw ValidationError("--rows must be at least 1, not \(rows)") }
        if let folder {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                // `bench 1000000` was the row count before --rows.
                let hint = Int(folder) != nil ? " (the number of rows is given as --rows \(folder))" : ""
                throw ValidationError("\(folder) is not a folder\(hint)")
            }
        }
    }

    func run() throws {
        try Bench.run(rows: rows, folder: folder)
    }
}
