import Foundation
import OpenRealm
import Testing
import TestSupport
@testable import OpenRealmTool

/// `openrealm export` and `import`: every property type survives export → import into an
/// empty file of the same model → export, character for character; bad input stops an
/// import with its line or record and writes nothing.
@Suite(.childProcesses) struct ToolExportImportTests {
    /// An empty realm of the export model, closed and without its lock file.
    static func emptyRealm(_ folder: ToolFolder, _ name: String) throws -> String {
        try ExportModel.realm(in: folder, name, count: 0)
    }

    @Test(arguments: [RecordFormat.json, .ndjson])
    func everyTypeRoundTrips(_ format: RecordFormat) throws {
        let folder = ToolFolder()
        let source = try ExportModel.realm(in: folder, "source.realm", count: 24)
        let exported = try ToolCommandTests.succeed(["export", source, "--format", format.rawValue]).stdout
        #expect(exported.contains("\"@key\":"))
        #expect(exported.contains("\"type\":\"object\",\"class\":\"ExportNote\""))
        #expect(exported.contains("\"NaN\"") && exported.contains("\"-Infinity\""))
        let input = try folder.file("input.\(format.rawValue)", Array(exported.utf8))
        let target = try Self.emptyRealm(folder, "target.realm")
        let imported = try ToolCommandTests.succeed(["import", target, input, "--format", format.rawValue])
        #expect(imported.stdout == "imported 72 objects into \(target)\n")
        let again = try ToolCommandTests.succeed(["export", target, "--format", format.rawValue]).stdout
        #expect(again == exported)
        try ToolCommandTests.succeed(["verify", target])
        // The model classes read what the import wrote.
        let realm = try Realm(configuration: Realm.Configuration(fileURL: URL(fileURLWithPath: target), objectTypes: ExportModel.types))
        let seven = try #require(realm.object(ofType: ExportEvery.self, forPrimaryKey: 7))
        #expect(seven.friend?.id == 6)
        #expect(seven.note?.owner?.id == 7)
        #expect(seven.notes.map(\.text) == ["note of 7", "second note of 7"])
        #expect(seven.int == -7 && seven.float == 1e-7 && seven.string == "a \"quote\"\nand a line")
        #expect(abs(seven.date.timeIntervalSince1970 - (1_700_000_000.123456 + 7 * 3_600.5)) < 1e-6)
        #expect(Array(seven.optionalStrings) == ["a", nil, "c,d"])
        #expect(seven.dataByName["none"] == .some(nil))
    }

    @Test func csvRoundTripsAClassAtATimeWithLinksToObjectsInTheFile() throws {
        let folder = ToolFolder()
        let source = try folder.realm("source.realm", owners: 12)
        let target = try folder.emptyRealm("target.realm", types: ToolModel.types)
        for className in ["ToolPet", "ToolOwner"] {
            let exported = try ToolCommandTests.succeed(["export", source, "--format", "csv", "--class", className]).stdout
            let input = try folder.file("\(className).csv", Array(exported.utf8))
            try ToolCommandTests.succeed(["import", target.path, input, "--format", "csv", "--class", className])
            let again = try ToolCommandTests.succeed(["export", target.path, "--format", "csv", "--class", className]).stdout
            #expect(again == exported, "\(className)")
        }
        // Everything, as json, is the same too.
        let all = try ToolCommandTests.succeed(["export", source]).stdout
        #expect(try ToolCommandTests.succeed(["export", target.path]).stdout == all)
        try ToolCommandTests.succeed(["verify", target.path])
    }

    @Test func exportWritesToANewFile() throws {
        let folder = ToolFolder()
        let source = try folder.realm("source.realm", owners: 3)
        let output = folder.path("out.ndjson")
        let run = try ToolCommandTests.succeed(["export", source, "--format", "ndjson", "--output", output])
        #expect(run.stdout == "exported 12 objects of 2 classes to \(output)\n")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == ToolCommandTests.succeed(["export", source, "--format", "ndjson"]).stdout)
        ToolBadInputTests.expectFailure(try Tool.run(["export", source, "--output", output]), ToolFailure.failed, mentioning: "exists")
        ToolBadInputTests.expectFailure(try Tool.run(["export", source, "--format", "csv"]), ToolFailure.usage, mentioning: "--class")
        ToolBadInputTests.expectFailure(try Tool.run(["export", source, "--class", "Cat"]), ToolFailure.usage, mentioning: "Cat")
    }

    /// A date that does not exist is refused, not read as another one (the parser alone takes
    /// February 30th for March 1st); the dates export writes read back as themselves.
    @Test func datesThatDoNotExistAreRefused() throws {
        for text in ["2020-02-30T00:00:00Z", "2021-02-29T12:00:00.5Z", "2020-04-31T00:00:00Z", "2020-01-01T24:00:00Z", "2020-01-01T23:60:00Z"] {
            #expect(DateText.parse(text) == nil, "\(text)")
        }
        #expect(DateText.parse("2020-02-29T00:00:00Z") == Date(timeIntervalSince1970: 1_582_934_400))
        for seconds in [0, -86_400.5, 1_700_000_000.123456, -62_135_596_800, 253_402_300_799] {
            let date = Date(timeIntervalSince1970: seconds)
            #expect(DateText.parse(DateText.string(date)).map(DateText.string) == DateText.string(date), "\(seconds)")
        }
    }

    /// NDJSON with CRLF line ends reads as with LF ones ("\r\n" is one Character in Swift).
    @Test func ndjsonWithCRLFLineEndsImports() throws {
        let folder = ToolFolder()
        let target = try folder.emptyRealm("target.realm", types: ToolModel.types).path
        let text = "{\"@class\":\"ToolPet\",\"_id\":\"6564a8b2c1d2e3f405060708\",\"name\":\"a\"}\r\n"
            + "{\"@class\":\"ToolPet\",\"_id\":\"6564a8b2c1d2e3f405060709\",\"name\":\"b\"}\r\n\r\n"
        let input = try folder.file("input.ndjson", Array(text.utf8))
        let run = try ToolCommandTests.succeed(["import", target, input, "--format", "ndjson"])
        #expect(run.stdout == "imported 2 objects into \(target)\n")
        let fresh = text.replacingOccurrences(of: "0708\"", with: "070a\"").replacingOccurrences(of: "0709\"", with: "070b\"")
        let bad = try folder.file("bad.ndjson", Array((fresh + "{\"@class\":\"ToolPet\",\"_id\":1}\r\n").utf8))
        ToolBadInputTests.expectFailure(try Tool.run(["import", target, bad, "--format", "ndjson"]), ToolFailure.failed, mentioning: "line 4: ToolPet._id")
    }

    /// Each bad input: status 1, one line naming where, and the file as empty as before.
    @Test func badInputIsRefusedWithItsLineAndWritesNothing() throws {
        let folder = ToolFolder()
        let target = try folder.emptyRealm("target.realm", types: ToolModel.types).path
        let pet = "{\"@class\":\"ToolPet\",\"_id\":\"6564a8b2c1d2e3f405060708\",\"name\":\"a\",\"age\":1}"
        let cases: [(format: String, text: String, mentioning: String)] = [
            ("ndjson", pet + "\n{\"@class\":\"ToolPet\",\"_id\":\"6564a8b2c1d2e3f405060709\",\"name\":\"b\",\"age\":\"old\"}\n", "line 2: ToolPet.age: expected an integer"),
            ("ndjson", pet + "\n" + pet + "\n", "line 2: duplicate primary key"),
            ("ndjson", pet + "\n{\"@class\":\"ToolPet\",\"_id\":\"6564a8b2c1d2e3f40506070a\",\"colour\":\"red\"}\n", "line 2: class ToolPet has no property 'colour'"),
            ("ndjson", pet + "\n{\"@class\":\"ToolPet\",\"_id\":\"6564a8b2c1d2e3f40506070a\",\n", "line 2: not valid JSON"),
            ("ndjson", pet + "\n{\"@class\":\"Cat\",\"name\":\"Tom\"}\n", "line 2: the file has no class 'Cat'"),
            ("ndjson", pet + "\n{\"@class\":\"ToolPet\",\"_id\":\"not an id\"}\n", "line 2: ToolPet._id: expected an ObjectId"),
            ("ndjson", pet + "\n{\"@class\":\"ToolOwner\",\"id\":1,\"best\":\"6564a8b2c1d2e3f4050607ff\"}\n", "line 2: ToolOwner.best: a link to ToolPet"),
            ("ndjson", pet + "\n{\"@class\":\"ToolOwner\",\"id\":2,\"name\":null}\n", "line 2: ToolOwner.name: null, but the property is not optional"),
            ("ndjson", pet + "\n{\"@class\":\"ToolOwner\",\"id\":2,\"extra\":{\"type\":\"colour\",\"value\":1}}\n", "unknown mixed type 'colour'"),
            ("ndjson", pet + "\n{\"@class\":\"ToolOwner\",\"id\":2,\"extra\":{\"type\":\"date\",\"value\":\"2020-02-30T00:00:00Z\"}}\n",
             "line 2: ToolOwner.extra: expected an ISO 8601 date"),
            ("json", "{\"ToolPet\": [" + pet + ", {\"_id\": \"6564a8b2c1d2e3f40506070b\", \"age\": true}]}", "record 2 of ToolPet: ToolPet.age: expected an integer"),
            ("json", "{\"ToolPet\": [" + pet + ",", "not valid JSON"),
            ("json", "{\"ToolPet\":\n[" + pet + ",\n x]}", "not valid JSON: Invalid value around character 88. (line 3, column 2)"),
            ("json", "[" + pet + "]", "one object, a member per class"),
            ("csv", "_id,name,age\n6564a8b2c1d2e3f405060708,a,1\n6564a8b2c1d2e3f405060709,\"b,2\n", "line 3: a quoted field is not closed"),
            ("csv", "_id,name,age\n6564a8b2c1d2e3f405060708,a,1\n6564a8b2c1d2e3f405060709,b,1.5\n", "line 3: ToolPet.age: expected an integer"),
            ("csv", "_id,name,age\n6564a8b2c1d2e3f405060708,a,1\n6564a8b2c1d2e3f405060709,b\n", "line 3: 2 fields where the header has 3"),
        ]
        for (index, item) in cases.enumerated() {
            let input = try folder.file("input-\(index)", Array(item.text.utf8))
            var arguments = ["import", target, input, "--format", item.format]
            if item.format == "csv" { arguments += ["--class", "ToolPet"] }
            ToolBadInputTests.expectFailure(try Tool.run(arguments), ToolFailure.failed, mentioning: item.mentioning)
            let counts = try ToolCommandTests.succeed(["query", target, "ToolPet"]).stdout
            #expect(counts.hasSuffix("(0 objects)\n"), "\(item.text): \(counts)")
        }
        ToolBadInputTests.expectFailure(try Tool.run(["import", folder.path("missing.realm"), folder.path("input-0"), "--format", "ndjson"]),
                                        ToolFailure.failed, mentioning: "missing.realm")
        ToolBadInputTests.expectFailure(try Tool.run(["import", target, folder.path("missing.json")]), ToolFailure.failed, mentioning: "missing.json")
        ToolBadInputTests.expectFailure(try Tool.run(["import", target, folder.path("input-0"), "--format", "csv"]), ToolFailure.usage)
        #expect(!FileManager.default.fileExists(atPath: folder.path("missing.realm")))
        try ToolCommandTests.succeed(["verify", target])
    }
}
