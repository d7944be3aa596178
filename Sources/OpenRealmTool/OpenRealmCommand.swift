import ArgumentParser
import Foundation
import OpenRealm

// openrealm: a command-line tool over OpenRealm's files.
//
// One file per command in Commands/ (InfoCommand.swift and the like), each a `ParsableCommand` listed in
// `subcommands` below; what they share is beside this file: opening a file read-only
// (Reading.swift), `--key-file` and the copy options (Options.swift), the exit statuses
// (ToolFailure.swift), the progress bar (ProgressBar.swift). `serve` runs the web view
// (OpenRealmWebView). query, export and import read and write objects without their model
// classes, on the dynamic object API (DynamicFile.swift, Records/).

/// The `openrealm` command: parses the arguments, runs the subcommand, and exits with the status
/// `ToolFailure` documents.
///
/// ```sh
/// openrealm info todos.realm --key-file todos.key
/// ```
public struct OpenRealmCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "openrealm",
        abstract: "Look inside, query, check, compact, copy, export and import OpenRealm files.",
        discussion: """
            Commands that only read a file (info, schema, query, verify, export, watch, and the \
            source of compact and copy) open it read-only and leave nothing beside it, not even a lock file.

            Exit status: \(ToolFailure.statusSummary)
            """,
        version: OpenRealmCommand.version,
        subcommands: [
            DemoCommand.self, BenchCommand.self, InfoCommand.self, InspectCommand.self, SchemaCommand.self,
            VerifyCommand.self, CompactCommand.self, CopyCommand.self, QueryCommand.self, ExportCommand.self, ImportCommand.self,
            WatchCommand.self, ServeCommand.self,
        ]
    )

    /// `openrealm --version`: the tool's version and the newest file format it reads.
    static let version = "0.1.0-dev (file format \(RealmFileFormat.version))"

    public init() {}

    /// `openrealm` without a command: a usage error, where argument-parser would print the help
    /// with status 0 (a script that lost its command should fail, not succeed quietly).
    public func run() throws {
        let commands = Self.configuration.subcommands.filter { $0.configuration.shouldDisplay }.compactMap { $0.configuration.commandName }
        throw ValidationError("a command is missing: one of \(commands.joined(separator: ", "))")
    }

    /// Runs the command line `arguments` (the process's own when nil) and exits.
    ///
    /// In place of `ParsableCommand.main()`, which prints every failure as argument-parser
    /// formats it: here every failure is one line on standard error, `openrealm: <message>`,
    /// and a failure of the file or of its contents exits with its own status (`ToolFailure`).
    /// Help and `--version` print as argument-parser prints them, on standard output.
    public static func main(_ arguments: [String]? = nil) -> Never {
        do {
            var command = try parseAsRoot(arguments)
            try command.run()
            Self.exit()
        } catch {
            if let failure = ToolFailure(error) {
                printError(failure.message)
                Foundation.exit(failure.status)
            }
            let code = exitCode(for: error)
            // --help, --version, and errors that are argument-parser's own (usage).
            guard code != .success else { Self.exit(withError: error) }
            printError(usageMessage(for: error))
            Foundation.exit(code.rawValue)
        }
    }

    /// argument-parser's message for a usage error, on one line, with where to find the usage.
    static func usageMessage(for error: any Error) -> String {
        var line = ToolFailure.oneLine(message(for: error))
        // The full message ends with "See 'openrealm <command> --help' for more information."
        if let see = fullMessage(for: error).split(separator: "\n").last(where: { $0.contains("--help") }) {
            line += " (" + see.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "See '", with: "see '")
                .replacingOccurrences(of: " for more information.", with: "") + ")"
        }
        return line
    }

    /// Writes `openrealm: <message>` and a newline to standard error.
    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("openrealm: \(message)\n".utf8))
    }
}
