import Foundation
import Testing
import TestSupport
import OpenRealm

/// Realms for one file in several processes: each sees what the others commit once it
/// refreshes, and nothing replaces or deletes the file under another process. The other
/// process is an exit test; the two meet in the realm and in marker files.
@Suite(.childProcesses) struct MultiProcessRealmTests {
    static func configuration(_ path: String) -> Realm.Configuration {
        Realm.Configuration(fileURL: URL(fileURLWithPath: path), objectTypes: [Dog.self])
    }

    static func dog(_ name: String) -> Dog {
        let dog = Dog()
        dog.name = name
        return dog
    }

    /// Suspends (without blocking a thread) until the file at `path` exists.
    static func waitFor(_ path: String) async throws {
        while !FileManager.default.fileExists(atPath: path) {
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    static func touch(_ path: String) {
        _ = FileManager.default.createFile(atPath: path, contents: Data())
    }

    @Test @TestActor func realmsInTwoProcessesSeeEachOthersWrites() async throws {
        let folder = TestFolder()
        let path = folder.url.appendingPathComponent("dogs.realm").path
        let realm = try Realm(configuration: Self.configuration(path))
        try realm.write { realm.add(Self.dog("Rex")) }
        await #expect(processExitsWith: .success) { [path = path as String] in
            let realm = try Realm(configuration: MultiProcessRealmTests.configuration(path))
            guard realm.objects(Dog.self).map(\.name) == ["Rex"] else { exit(3) }
            try realm.write { realm.add(MultiProcessRealmTests.dog("Fido")) }
        }
        // (Autorefresh may have moved it already, after its own commit's notification.)
        _ = realm.refresh()
        #expect(Array(realm.objects(Dog.self).map(\.name)) == ["Rex", "Fido"])
        // The next write builds on the other process's commit.
        try realm.write { realm.add(Self.dog("Bella")) }
        #expect(Array(realm.objects(Dog.self).map(\.name)) == ["Rex", "Fido", "Bella"])
    }

    @Test @TestActor func filesOpenInAnotherProcessAreNeitherDeletedNorCompacted() async throws {
        let folder = TestFolder()
        let path = folder.url.appendingPathComponent("dogs.realm").path
        do {
            let realm = try Realm(configuration: Self.configuration(path))
            try realm.write { realm.add(Self.dog("Rex")) }
        }
        let opened = path + ".opened", release = path + ".release"
        async let child = #expect(processExitsWith: .success) { [path = path as String, opened = opened as String, release = release as String] in
            let realm = try Realm(configuration: MultiProcessRealmTests.configuration(path))
            MultiProcessRealmTests.touch(opened)
            // Blocking: the realm is confined to this thread.
            while !FileManager.default.fileExists(atPath: release) { usleep(1_000) }
            try realm.write { realm.add(MultiProcessRealmTests.dog("Late")) }
        }
        try await Self.waitFor(opened)
        #expect { try Realm.deleteFiles(for: Self.configuration(path)) } throws: { ($0 as? Realm.Error)?.code == .alreadyOpen }
        // Compaction would replace the file the other process writes to: it is skipped.
        var configuration = Self.configuration(path)
        configuration.shouldCompactOnLaunch = { _, _ in true }
        let realm = try Realm(configuration: configuration)
        Self.touch(release)
        _ = await child
        _ = realm.refresh()
        #expect(Array(realm.objects(Dog.self).map(\.name)) == ["Rex", "Late"])
    }

    /// The lock file deleted while a realm is open (issue 23): its writes throw
    /// `incompatibleLockFile` instead of trapping or writing, it reads on, another process
    /// cannot open the realm meanwhile, and after it has closed the realm opens with every
    /// acknowledged write and takes new ones.
    @Test @TestActor func aRealmWhoseLockFileWasDeletedRefusesToWriteAndKeepsItsData() async throws {
        let folder = TestFolder()
        let path = try #require(folder.configuration().fileURL).path
        let refused: @Sendable (any Swift.Error) -> Bool = { ($0 as? Realm.Error)?.code == .incompatibleLockFile }
        do {
            let realm = try Realm(configuration: Self.configuration(path))
            try realm.write { realm.add(Self.dog("Rex")) }
            try FileManager.default.removeItem(atPath: path + ".lock")
            #expect { try realm.write { realm.add(Self.dog("Fido")) } } throws: { refused($0) }
            await #expect { try await realm.asyncWrite { realm.add(Self.dog("Fido")) } } throws: { refused($0) }
            #expect(!realm.isInWriteTransaction)
            #expect(Array(realm.objects(Dog.self).map(\.name)) == ["Rex"])
            await #expect(processExitsWith: .success) { [path = path as String] in
                do {
                    _ = try Realm(configuration: MultiProcessRealmTests.configuration(path))
                    exit(3)
                } catch let error as Realm.Error where error.code == .incompatibleLockFile {
                    exit(0)
                }
            }
            #expect { try Realm.deleteFiles(for: Self.configuration(path)) } throws: { ($0 as? Realm.Error)?.code == .alreadyOpen }
        }
        let realm = try Realm(configuration: Self.configuration(path))
        #expect(Array(realm.objects(Dog.self).map(\.name)) == ["Rex"])
        try realm.write { realm.add(Self.dog("Bella")) }
        #expect(Array(realm.objects(Dog.self).map(\.name)) == ["Rex", "Bella"])
        try RoundTripTests.verify(folder)
    }
}
