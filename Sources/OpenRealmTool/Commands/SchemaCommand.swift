import ArgumentParser

/// `openrealm schema <file> [--swift]`: the classes of a realm file.
struct SchemaCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show a realm file's classes, properties, types, primary keys and indexes.",
        discussion: """
            With --swift, prints them as Realm Swift model classes (final class X: Object with \
            @Persisted properties). The file stores integers of every size as Int and an \
            EmbeddedObject as an Object, and no LinkingObjects: check those. The \
            file is opened read-only and nothing is written beside it.

            Exit status: \(ToolFailure.statusSummary)
            """
    )

    @OptionGroup var file: FileArguments

    @Flag(help: "Print the classes as Swift model source.")
    var swift = false

    func run() throws {
        let reading = try file.open()
        let schema = StoredSchema(reading.store.beginRead())
        print(swift ? schema.swiftSource(file: reading.path) : schema.text, terminator: "")
    }
}
