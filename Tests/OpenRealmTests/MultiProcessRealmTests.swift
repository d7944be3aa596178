import Foundation
import Testing
import OpenRealm

/// Realms for one file in several processes: each sees what the others commit once it
/// refreshes, and nothing replaces or deletes the file under another process. The other
/// process is an exit test; the two meet in the realm and in marker files.
@Suite struct MultiProcessRealmTests {
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
}
