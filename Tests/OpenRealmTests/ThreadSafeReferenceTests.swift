import Foundation
import OpenRealm
import Testing
import TestSupport

/// Passing objects between threads and actors: `ThreadSafeReference`, `resolve`, `@ThreadSafe`,
/// and the count of pinned versions.
@Suite(.childProcesses) struct ThreadSafeReferenceTests {
    static func makePerson(_ realm: Realm, id: Int, name: String) throws -> Person {
        try realm.write { realm.create(Person.self, value: ["id": id, "name": name]) }
    }

    @Test @TestActor func anotherTaskResolvesAndWrites() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let person = try Self.makePerson(realm, id: 1, name: "John")
        let reference = ThreadSafeReference(to: person)
        try await Task.detached {
            let realm = try Realm(configuration: configuration)
            let resolved = try #require(realm.resolve(reference))
            #expect(resolved.name == "John")
            try realm.write { resolved.name = "Jane Doe" }
        }.value
        realm.refresh()
        #expect(person.name == "Jane Doe")
    }

    @Test func aDeletedObjectResolvesToNil() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let person = try Self.makePerson(realm, id: 1, name: "John")
        let reference = ThreadSafeReference(to: person)
        try realm.write { realm.delete(person) }
        let other = try Realm(configuration: folder.configuration())
        #expect(other.resolve(reference) == nil)
    }

    @Test func anOlderRealmIsRefreshedToTheReferencesVersion() throws {
        let folder = TestFolder()
        let older = try Realm(configuration: folder.configuration())
        #expect(older.objects(Person.self).isEmpty)      // reads the empty version
        let writer = try Realm(configuration: folder.configuration())
        let reference = ThreadSafeReference(to: try Self.makePerson(writer, id: 5, name: "New"))
        #expect(older.resolve(reference)?.name == "New")
    }

    @Test func anUnresolvedReferencePinsItsVersionUntilItGoes() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let person = try Self.makePerson(realm, id: 1, name: "John")
        var reference: ThreadSafeReference<Person>? = ThreadSafeReference(to: person)
        try realm.write { person.name = "Changed" }      // the realm moves on; the reference stays
        #expect(realm.numberOfActiveVersions == 2)
        reference = nil
        #expect(realm.numberOfActiveVersions == 1)
        _ = reference
    }

    @Test @TestActor func threadSafeWrapperCarriesAnObjectAcrossTasks() async throws {
        struct Job: Sendable {
            @ThreadSafe var person: Person?
        }
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let job = Job(person: try Self.makePerson(realm, id: 3, name: "Ann"))
        let name = try await Task.detached { () -> String? in
            guard let person = job.person else { return nil }
            let realm = try #require(person.realm)
            try realm.write { person.name = "Ann B." }
            return job.person?.name                       // resolves again, in a new realm
        }.value
        #expect(name == "Ann B.")
        try realm.write { realm.delete(realm.objects(Person.self)) }
        #expect(job.person == nil)
    }

    @Test func resultsListsAndMapsResolveLiveInAnotherRealm() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let (shelter, board) = try realm.write {
            let shelter = realm.create(Shelter.self, value: ["name": "S", "tags": ["x"]])
            for name in ["c", "b", "a"] { shelter.pets.append(realm.create(Pet.self, value: ["name": name])) }
            let board = realm.create(Scoreboard.self, value: ["name": "B"])
            board.scores["one"] = 1
            return (shelter, board)
        }
        let results = ThreadSafeReference(to: realm.objects(Pet.self).filter("name != 'b'").sorted(byKeyPath: "name"))
        let pets = ThreadSafeReference(to: shelter.pets)
        let tags = ThreadSafeReference(to: shelter.tags)
        let scores = ThreadSafeReference(to: board.scores)
        let ofList = ThreadSafeReference(to: shelter.pets.filter("name != 'c'"))
        let seen = try await Task.detached { () -> [[String]] in
            let realm = try Realm(configuration: configuration)
            let results = try #require(realm.resolve(results)), pets = try #require(realm.resolve(pets))
            let tags = try #require(realm.resolve(tags)), scores = try #require(realm.resolve(scores))
            let ofList = try #require(realm.resolve(ofList))
            try realm.write {
                pets.append(realm.create(Pet.self, value: ["name": "d"]))
                tags.append("y")
                scores["two"] = 2
            }
            // Resolved results and collections are live in the resolving realm.
            return [results.map(\.name), pets.map(\.name), Array(tags), scores.keys, ofList.map(\.name)]
        }.value
        #expect(seen == [["a", "c", "d"], ["c", "b", "a", "d"], ["x", "y"], ["one", "two"], ["b", "a"]])
    }

    @Test func resolvingTwiceTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let person = try ThreadSafeReferenceTests.makePerson(realm, id: 1, name: "x")
            let reference = ThreadSafeReference(to: person)
            _ = realm.resolve(reference)
            _ = realm.resolve(reference)
        }
        MisuseTests.expectRule(result, "Cannot resolve a ThreadSafeReference more than once")
    }

    @Test func aReferenceToAnUnmanagedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = ThreadSafeReference(to: Person())
        }
        MisuseTests.expectRule(result, "Cannot create a ThreadSafeReference to an unmanaged object")
    }
}
