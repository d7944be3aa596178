import Foundation
import Testing
import TestSupport
@testable import OpenRealmTool

/// `openrealm query`: objects of a class matching a predicate, sorted and limited, as a table,
/// JSON or CSV; a bad predicate, class or sort key a usage error on one line, never a trap;
/// and the folder left as it was.
@Suite(.childProcesses) struct ToolQueryTests {
    @Test func aQueryPrintsTheMatchingObjectsAsATable() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 10)
        let run = try ToolCommandTests.succeed(["query", path, "ToolOwner", "id >= 3 AND id < 6", "--sort", "name", "--descending"])
        let lines = run.stdout.split(separator: "\n")
        #expect(lines.count == 6, "\(run)")
        #expect(lines.first?.hasPrefix("id  name") == true, "\(run)")
        #expect(lines[1].allSatisfy { $0 == "-" || $0 == " " })
        #expect(lines[2].hasPrefix("5   owner-5"), "\(run)")
        #expect(lines[4].hasPrefix("3   owner-3"), "\(run)")
        #expect(lines.last == "(3 objects)")
        // Every object without a predicate; --limit cuts.
        let all = try ToolCommandTests.succeed(["query", path, "ToolPet", "--limit", "4"])
        #expect(all.stdout.hasSuffix("(4 objects)\n"), "\(all)")
        let none = try ToolCommandTests.succeed(["query", path, "ToolOwner", "name == 'nobody'"])
        #expect(none.stdout.hasSuffix("(0 objects)\n"), "\(none)")
    }

    @Test func jsonAndCSVHoldEveryValue() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 4)
        let json = try ToolCommandTests.succeed(["query", path, "ToolOwner", "id == 1", "--format", "json"])
        let value = try JSONValue.parse(json.stdout)
        guard case .array(let owners)? = value["ToolOwner"], let owner = owners.first, owners.count == 1 else {
            Issue.record("one owner in \(json.stdout)")
            return
        }
        #expect(owner["id"]?.text == "1")
        #expect(owner["nickname"]?.text == "\"o1\"")
        #expect(owner["born"]?.text == "\"1970-01-02T00:00:00.000000Z\"")
        #expect(owner["photo"]?.text == "\"" + Data([1, 1, 2]).base64EncodedString() + "\"")
        #expect(owner["extra"]?["type"]?.text == "\"int\"" && owner["extra"]?["value"]?.text == "1")
        #expect(owner["scores"]?.text == "[1,2]")
        #expect(owner["settings"]?["colour"]?.text == "\"blue\"")
        guard case .string(let best)? = owner["best"], case .array(let pets)? = owner["pets"] else {
            Issue.record("links as primary keys (ObjectIds) in \(json.stdout)")
            return
        }
        #expect(best.count == 24 && pets.count == 2)
        let csv = try ToolCommandTests.succeed(["query", path, "ToolOwner", "id < 2", "--format", "csv"])
        let lines = csv.stdout.split(separator: "\n")
        #expect(lines.count == 3, "\(csv)")
        #expect(lines.first == "id,name,nickname,score,ratio,active,born,photo,balance,token,extra,scores,settings,best,pets")
        #expect(lines[1].hasPrefix("0,owner-0,,0.0,0.0,true,1970-01-01T00:00:00.000000Z,"), "\(csv)")
        #expect(lines[1].contains(",\"{\"\"type\"\":\"\"string\"\",\"\"value\"\":\"\"even\"\"}\",\"[0,1]\","), "\(csv)")
    }

    @Test func badPredicatesClassesAndSortKeysAreUsageErrors() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 3)
        let usage = ToolFailure.usage
        ToolBadInputTests.expectFailure(try Tool.run(["query", path, "ToolOwner", "name == 'Rex' AND colour == 3"]), usage, mentioning: "at offset 18")
        ToolBadInputTests.expectFailure(try Tool.run(["query", path, "ToolOwner", "name =="]), usage, mentioning: "offset")
        ToolBadInputTests.expectFailure(try Tool.run(["query", path, "ToolOwner", "name == 3"]), usage)
        ToolBadInputTests.expectFailure(try Tool.run(["query", path, "Cat"]), usage, mentioning: "ToolOwner, ToolPet")
        for sort in ["colour", "pets", "best", "settings", "best.nope", "name.length", ""] {
            ToolBadInputTests.expectFailure(try Tool.run(["query", path, "ToolOwner", "--sort", sort]), usage, mentioning: "sort")
        }
        for arguments in [["query", path], ["query", path, "ToolOwner", "--limit", "0"], ["query", path, "ToolOwner", "--format", "xml"],
                          ["query", path, "ToolOwner", "--descending"], ["query", path, "ToolOwner", "--ascending", "--descending"]] {
            ToolBadInputTests.expectFailure(try Tool.run(arguments), usage)
        }
        // A sort through a to-one link is fine.
        try ToolCommandTests.succeed(["query", path, "ToolOwner", "--sort", "best.name", "--descending"])
        ToolBadInputTests.expectFailure(try Tool.run(["query", folder.path("missing.realm"), "ToolOwner"]), ToolFailure.failed)
    }

    @Test func queryAndExportLeaveTheFolderAsItWas() throws {
        let folder = ToolFolder()
        let path = try folder.realm(owners: 5)
        let keyFile = try folder.file("key", ToolBadInputTests.key)
        let secret = try folder.realm("secret.realm", owners: 5, key: ToolBadInputTests.key)
        let before = try folder.listing()
        for arguments in [["query", path, "ToolOwner", "id > 1"], ["query", path, "ToolPet", "--format", "json"],
                          ["query", secret, "ToolOwner", "--key-file", keyFile, "--format", "csv"],
                          ["export", path], ["export", path, "--format", "ndjson"], ["export", path, "--format", "csv", "--class", "ToolPet"],
                          ["export", secret, "--key-file", keyFile]] {
            try ToolCommandTests.succeed(arguments)
            #expect(try folder.listing() == before, "\(arguments)")
        }
        for arguments in [["query", path, "ToolOwner", "id >"], ["query", path, "Cat"], ["query", folder.path("missing.realm"), "ToolOwner"],
                          ["query", secret, "ToolOwner"], ["export", folder.path("missing.realm")], ["export", path, "--format", "csv"]] {
            #expect(try Tool.run(arguments).status != 0)
            #expect(try folder.listing() == before, "\(arguments)")
        }
    }
}
