import ArgumentParser

/// `openrealm demo [folder]`: the object API, then the storage engine, doing real work.
struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Write, read, update and check sample realms (the object API, then the engine).",
        discussion: "The realms are written to <folder> (a new temporary folder without it), replacing earlier demo files there."
    )

    @Argument(help: ArgumentHelp("The folder to write the demo realms in.", valueName: "folder"))
    var folder: String?

    func run() throws {
        try Demo.run(folder: folder)
    }
}
