import Foundation
import Testing
import TestSupport
@testable import OpenRealmTool
import RealmStorage

/// `schema` prints the classes a file stores; with `--swift`, as the model source that wrote it.
@Suite(.childProcesses) struct ToolSchemaTests {
    @Test func schemaListsClassesPropertiesTypesAndTraits() throws {
        let folder = ToolFolder()
        let run = try ToolCommandTests.succeed(["schema", try folder.realm()])
        let lines = run.stdout.split(separator: "\n").map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.first == "ToolOwner")
        for expected in ["id Int primary key", "name String indexed", "nickname String?", "best ToolPet?", "pets List<ToolPet>",
                         "scores List<Int>", "settings Map<String, String>", "extra AnyRealmValue", "ToolPet",
                         "_id ObjectId primary key", "age Int?"] {
            #expect(lines.contains(expected), "\(expected) in \(run.stdout)")
        }
        #expect(!run.stdout.contains("__keys"))
    }

    /// The classes `--swift` prints are those of ToolModel.swift, character for character: code
    /// this target compiles.
    @Test func swiftSourceIsTheModelThatWroteTheFile() throws {
        let folder = ToolFolder()
        let run = try ToolCommandTests.succeed(["schema", "--swift", try folder.realm()])
        #expect(run.stdout.contains("import OpenRealm\n"))
        let model = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("ToolModel.swift"),
                               encoding: .utf8)
        #expect(Self.classes(in: run.stdout) == Self.classes(in: model))
        #expect(Self.classes(in: model).count == 2)
    }

    /// The `final class … }` blocks of `source`.
    static func classes(in source: String) -> [String] {
        var blocks: [String] = [], current: [Substring]?
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("final class ") { current = [] }
            current?.append(line)
            if line == "}", let block = current {
                blocks.append(block.joined(separator: "\n"))
                current = nil
            }
        }
        return blocks
    }

    /// Sets print as sets (the catalogue marks their columns) and maps of links with optional
    /// values, as ExportModel.swift declares them.
    @Test func setsAndMapsOfLinksPrintAsTheModelDeclaresThem() throws {
        let folder = ToolFolder()
        let run = try ToolCommandTests.succeed(["schema", "--swift", try ExportModel.realm(in: folder, "every.realm", count: 1)])
        for expected in ["var tags: MutableSet<String>", "var uuids: MutableSet<UUID>", "var noteByName: Map<String, ExportNote?>",
                         "var notes: List<ExportNote>", "var dataByName: Map<String, Data?>", "var optionalStrings: List<String?>"] {
            #expect(run.stdout.contains(expected), "\(expected) in \(run.stdout)")
        }
    }

    @Test func keywordsBecomeEscapedIdentifiers() {
        #expect(StoredSchema.identifier("default") == "`default`")
        #expect(StoredSchema.identifier("name") == "name")
    }
}
