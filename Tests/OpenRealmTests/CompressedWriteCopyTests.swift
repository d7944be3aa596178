import Foundation
import Testing
@testable import OpenRealm
import RealmStorage

/// `writeCopy(toFile:encryptionKey:compression: .lz4)`: copies that open read-only in place,
/// from a live realm, inside a write, from a `RealmActor` and from the command line
/// (RoundTripTests covers every property type through them: CopyReopening).
@Suite struct CompressedWriteCopyTests {
    static func compressedConfiguration(_ base: Realm.Configuration, _ url: URL) -> Realm.Configuration {
        var configuration = base
        configuration.fileURL = url
        configuration.readOnly = true
        return configuration
    }

    static func files(in folder: TestFolder) throws -> Set<String> {
        Set(try FileManager.default.contentsOfDirectory(atPath: folder.url.path))
    }

    @Test(arguments: [CompressedReading.onDemand, .inflate])
    func aCompressedCopyOpensReadOnlyAndReadsAsTheSource(reading: CompressedReading) throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for value in WriteCopyTests.people(0..<3_000) { realm.create(Person.self, value: value) } }
        try realm.write { realm.delete(realm.objects(Person.self).filter("id >= 2500")) }
        let archive = folder.url.appendingPathComponent("archive.realmz")
        try realm.writeCopy(toFile: archive, compression: .lz4)
        let plain = WriteCopyTests.copyURL(folder)
        try realm.writeCopy(toFile: plain)
        let size = { (url: URL) in try FileManager.default.attributesOfItem(atPath: url.path)[.size] as! Int }
        #expect(try size(archive) < size(plain))
        let before = try Self.files(in: folder)
        var compressed = Self.compressedConfiguration(configuration, archive)
        compressed.compressedReading = reading
        compressed.compressedCacheSize = 64 << 10
        let reopened = try Realm(configuration: compressed)
        #expect(WriteCopyTests.snapshot(reopened) == WriteCopyTests.snapshot(realm))
        #expect(reopened.object(ofType: Person.self, forPrimaryKey: 42)?.name == "p42")
        #expect(reopened.object(ofType: Person.self, forPrimaryKey: 2600) == nil)
        #expect(reopened.objects(Person.self).filter("email == %@", "e0@x").count == realm.objects(Person.self).filter("email == %@", "e0@x").count)
        #expect(reopened.objects(Person.self).filter("score > 1000").count == 1_499)
        let frozen = reopened.freeze()
        #expect(WriteCopyTests.snapshot(frozen) == WriteCopyTests.snapshot(realm))
        // Nothing was created beside it.
        #expect(try Self.files(in: folder) == before)
        #expect(reopened.store.compressedCounts?.onDemand == (reading == .onDemand))
    }

    @Test func aCompressedCopyInsideAWriteHoldsItsChanges() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for value in WriteCopyTests.people(0..<1_000) { realm.create(Person.self, value: value) } }
        let archive = folder.url.appendingPathComponent("archive.realmz")
        realm.beginWrite()
        realm.delete(realm.objects(Person.self).filter("id < 100"))
        for value in WriteCopyTests.people(1_000..<1_300) { realm.create(Person.self, value: value) }
        let expected = WriteCopyTests.snapshot(realm)
        try realm.writeCopy(toFile: archive, compression: .lz4)
        realm.cancelWrite()
        let reopened = try Realm(configuration: Self.compressedConfiguration(configuration, archive))
        #expect(WriteCopyTests.snapshot(reopened) == expected)
        #expect(realm.objects(Person.self).count == 1_000)
    }

    @Test func aRealmActorWritesACompressedCopy() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let store = RealmActor(configuration: configuration)
        for i in 0..<50 {
            try await store.write { realm in _ = realm.create(Person.self, value: ["id": i, "name": "p\(i)"]) }
        }
        let archive = folder.url.appendingPathComponent("archive.realmz")
        try await store.writeCopy(toFile: archive, compression: .lz4)
        await store.close()
        let reopened = try Realm(configuration: Self.compressedConfiguration(configuration, archive))
        #expect(Array(reopened.objects(Person.self).sorted(byKeyPath: "id").map(\.id)) == Array(0..<50))
    }

    /// Opened for writing, a compressed copy is refused with a typed error naming the way to a
    /// writable realm, and nothing is created beside it; that way works.
    @Test func aCompressedCopyOpenedForWritingIsRefused() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for value in WriteCopyTests.people(0..<100) { realm.create(Person.self, value: value) } }
        let archive = folder.url.appendingPathComponent("archive.realmz")
        try realm.writeCopy(toFile: archive, compression: .lz4)
        let before = try Self.files(in: folder)
        var writable = configuration
        writable.fileURL = archive
        writable.shouldCompactOnLaunch = { _, _ in true }
        do {
            _ = try Realm(configuration: writable)
            Issue.record("a compressed copy opened for writing")
        } catch let error as Realm.Error {
            #expect(error.code == .readOnly)
            #expect(error.message.contains("writeCopy(toFile:)"))
            #expect(error.path == archive.path)
        }
        #expect(try Self.files(in: folder) == before)
        let restored = WriteCopyTests.copyURL(folder, "restored.realm")
        try Realm(configuration: Self.compressedConfiguration(configuration, archive)).writeCopy(toFile: restored)
        var restoredConfiguration = configuration
        restoredConfiguration.fileURL = restored
        let again = try Realm(configuration: restoredConfiguration)
        try again.write { again.create(Person.self, value: ["id": 100, "name": "p100"]) }
        #expect(again.objects(Person.self).count == 101)
        try RoundTripTests.verify(restoredConfiguration)
    }

    /// A damaged block is found: with `verifyIntegrityOnOpen` the open throws `fileCorrupted`.
    @Test func aDamagedCompressedCopyThrowsFileCorrupted() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { for value in WriteCopyTests.people(0..<2_000) { realm.create(Person.self, value: value) } }
        let archive = folder.url.appendingPathComponent("archive.realmz")
        try realm.writeCopy(toFile: archive, compression: .lz4)
        var bytes = try Data(contentsOf: archive)
        bytes[bytes.count - 100] ^= 0x04
        try bytes.write(to: archive)
        var compressed = Self.compressedConfiguration(configuration, archive)
        compressed.verifyIntegrityOnOpen = true
        #expect { try Realm(configuration: compressed) } throws: { ($0 as? Realm.Error)?.code == .fileCorrupted }
    }

    /// Runs the `openrealm` tool built beside the tests with the arguments it is given, and
    /// returns its exit status (its output discarded).
    static func commandLineTool() throws -> ([String]) throws -> Int32 {
        let tool = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("openrealm")
        let executable = FileManager.default.isExecutableFile(atPath: tool.path)
            ? tool
            : URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("openrealm")
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the openrealm tool first (swift build)")
        return { arguments in
            let process = Process()
            process.executableURL = executable
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
    }

    /// `openrealm copy <file> <copy> --lz4` writes a compressed copy; `openrealm copy` of that
    /// without `--lz4` writes a writable realm again.
    @Test func theCommandLineToolWritesAndUndoesCompressedCopies() throws {
        let run = try Self.commandLineTool()
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { for value in WriteCopyTests.people(0..<500) { realm.create(Person.self, value: value) } }
        }
        let archive = folder.url.appendingPathComponent("archive.realmz")
        let restored = folder.url.appendingPathComponent("restored.realm")
        #expect(try run(["copy", configuration.fileURL!.path, archive.path, "--lz4"]) == 0)
        #expect(CompressedFormat.isCompressedFile(at: archive.path))
        #expect(try run(["copy", archive.path, restored.path]) == 0)
        #expect(!CompressedFormat.isCompressedFile(at: restored.path))
        let source = try Realm(configuration: configuration)
        let fromArchive = try Realm(configuration: Self.compressedConfiguration(configuration, archive))
        #expect(WriteCopyTests.snapshot(fromArchive) == WriteCopyTests.snapshot(source))
        var restoredConfiguration = configuration
        restoredConfiguration.fileURL = restored
        #expect(WriteCopyTests.snapshot(try Realm(configuration: restoredConfiguration)) == WriteCopyTests.snapshot(source))
        try RoundTripTests.verify(restoredConfiguration)
    }
}
