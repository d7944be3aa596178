import Foundation
import OpenRealm
import Testing

/// Frozen realms, objects, results and collections: snapshots of one version that never
/// change, cannot be written, and travel between tasks in a `Frozen`.
@Suite struct FrozenTests {
    static func people(_ realm: Realm, _ names: [String]) throws {
        try realm.write {
            for (id, name) in names.enumerated() { realm.create(Person.self, value: ["id": id, "name": name]) }
        }
    }

    /// The seed's freeze example (threading guide), with `try!`/`assert` as there.
    @Test func seedFreezeExample() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.people(realm, ["John"])
        // Get an immutable copy of the realm that can be passed across threads
        let frozenRealm = realm.freeze()
        #expect(frozenRealm.isFrozen)
        let people = realm.objects(Person.self)
        let frozenPeople = people.freeze()
        #expect(frozenPeople.isFrozen)
        let frozenPeople2 = frozenRealm.objects(Person.self)
        #expect(frozenPeople2.isFrozen)
        let person = people.first!
        #expect(!person.realm!.isFrozen)
        let frozenPerson = person.freeze()
        #expect(frozenPerson.isFrozen)
        // Frozen objects have a reference to a frozen realm
        #expect(frozenPerson.realm!.isFrozen)
        #expect(!realm.isFrozen && !people.isFrozen && !person.isFrozen)
    }

    /// The seed's thaw example: thaw an object from a frozen realm, then write through it.
    @Test func seedThawExample() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.people(realm, ["John"])
        let frozenRealm = realm.freeze()
        let frozenPeople = frozenRealm.objects(Person.self)
        #expect(frozenPeople.isFrozen)
        let frozenPerson = frozenPeople.first!
        let thawedPerson = frozenPerson.thaw()
        #expect(thawedPerson?.isInvalidated == false)
        #expect(thawedPerson!.realm!.isFrozen == false)
        let thawedRealm = thawedPerson!.realm!
        try thawedRealm.write { thawedPerson!.name = "John Michael Kane" }
        #expect(frozenPerson.name == "John")                   // the snapshot did not move
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 0)?.name == "John Michael Kane")
        #expect(frozenRealm.thaw() === thawedRealm)             // thawing gives the realm that was frozen
    }

    /// Thaw both the object and the collection it is appended to (the seed's Timmy and Lassie).
    @Test func thawBothToAppendAFrozenObjectToAFrozenList() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write {
            realm.create(Shelter.self, value: ["name": "Timmy"])
            realm.create(Pet.self, value: ["name": "Lassie"])
        }
        let frozenRealm = realm.freeze()
        let frozenTimmy = frozenRealm.objects(Shelter.self).where { $0.name == "Timmy" }.first!
        let frozenLassie = frozenRealm.objects(Pet.self).where { $0.name == "Lassie" }.first!
        #expect(frozenTimmy.isFrozen && frozenLassie.isFrozen)
        let thawedTimmy = frozenTimmy.thaw()
        let thawedLassie = frozenLassie.thaw()
        try thawedTimmy!.realm!.write { thawedTimmy?.pets.append(thawedLassie!) }
        #expect(thawedTimmy?.pets.first?.name == "Lassie")
        #expect(frozenTimmy.pets.isEmpty)
    }

    @Test func frozenDataKeepsItsVersionWhileTheRealmMovesOn() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.people(realm, ["Ann", "Bob"])
        let frozen = realm.freeze()
        let frozenAnn = realm.object(ofType: Person.self, forPrimaryKey: 0)!.freeze()
        let frozenAll = realm.objects(Person.self).sorted(byKeyPath: "name", ascending: false).freeze()
        try realm.write {
            realm.object(ofType: Person.self, forPrimaryKey: 0)!.name = "Ann B."
            realm.create(Person.self, value: ["id": 2, "name": "Cy"])
        }
        #expect(frozenAnn.name == "Ann")
        #expect(frozenAll.map(\.name) == ["Bob", "Ann"])
        #expect(frozen.objects(Person.self).count == 2)
        #expect(!frozen.refresh())
        #expect(realm.objects(Person.self).count == 3)
        // A frozen realm made at a newer version sees the change.
        #expect(realm.freeze().objects(Person.self).count == 3)
        #expect(realm.freeze() === realm.freeze())                // one frozen realm per version
    }

    @Test func frozenDataPinsItsVersionUntilReleased() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.people(realm, ["Ann"])
        var frozen: Person? = realm.objects(Person.self).first!.freeze()
        try realm.write { realm.create(Person.self, value: ["id": 1, "name": "Bob"]) }
        #expect(realm.numberOfActiveVersions == 2)
        #expect(frozen?.name == "Ann")
        frozen = nil
        #expect(realm.numberOfActiveVersions == 1)
    }

    @Test func writingAFrozenRealmThrows() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let frozen = realm.freeze()
        #expect { try frozen.write {} } throws: { error in
            (error as? Realm.Error)?.code == .frozen && (error as? Realm.Error)?.message.contains("frozen") == true
        }
        await #expect(throws: Realm.Error.self) { try await Frozen(realm).value.asyncWrite {} }
        #expect(!frozen.isInWriteTransaction)
    }

    @Test func aThawedObjectDeletedMeanwhileIsNil() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.people(realm, ["Ann"])
        let frozenAnn = realm.objects(Person.self).first!.freeze()
        try realm.write { realm.deleteAll() }
        #expect(frozenAnn.thaw() == nil)
        #expect(frozenAnn.name == "Ann")
        #expect(realm.thaw(frozenAnn) == nil)
        let live = Person()
        #expect(live.thaw() === live)                         // unmanaged: itself
    }

    @Test func listsSetsAndMapsFreezeAndThaw() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let (shelter, club, board) = try realm.write {
            let pet = realm.create(Pet.self, value: ["name": "Rex"])
            let shelter = realm.create(Shelter.self, value: ["name": "S", "tags": ["a", "b"]])
            shelter.pets.append(pet)
            let club = realm.create(Club.self, value: ["name": "C", "tags": ["x"]])
            let board = realm.create(Scoreboard.self, value: ["name": "B"])
            board.scores["one"] = 1
            return (shelter, club, board)
        }
        let tags = shelter.tags.freeze(), pets = shelter.pets.freeze()
        let clubTags = club.tags.freeze(), scores = board.scores.freeze()
        #expect(tags.isFrozen && pets.isFrozen && clubTags.isFrozen && scores.isFrozen)
        try realm.write {
            shelter.tags.append("c")
            shelter.pets.removeAll()
            club.tags.insert("y")
            board.scores["two"] = 2
        }
        #expect(Array(tags) == ["a", "b"])
        #expect(pets.map(\.name) == ["Rex"] && pets[0].isFrozen)
        #expect(Set(clubTags) == ["x"])
        #expect(scores.count == 1 && scores["one"] == 1)
        #expect(pets.filter("name == 'Rex'").count == 1)       // queries on a frozen list read the snapshot
        let liveTags = try #require(tags.thaw())
        #expect(!liveTags.isFrozen && Array(liveTags) == ["a", "b", "c"])
        #expect(try #require(scores.thaw()).count == 2)
        #expect(realm.freeze(shelter.tags).isFrozen)
    }

    @Test func frozenResultsOfAListQueryKeepTheirObjects() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let shelter = try realm.write {
            let shelter = realm.create(Shelter.self, value: ["name": "S"])
            for name in ["b", "a", "c"] { shelter.pets.append(realm.create(Pet.self, value: ["name": name])) }
            return shelter
        }
        let frozen = shelter.pets.filter("name != 'c'").sorted(byKeyPath: "name").freeze()
        try realm.write { shelter.pets.removeAll() }
        #expect(frozen.map(\.name) == ["a", "b"])
        #expect(try #require(frozen.thaw()).map(\.name) == ["a", "b"])   // the pets still exist
    }

    @Test @TestActor func frozenSnapshotsAreSharedBetweenTasks() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try Self.people(realm, (0..<100).map { "p\($0)" })
        let snapshot = Frozen(realm)
        let people = Frozen(realm.objects(Person.self).filter("id < 10"))
        let ann = Frozen(realm.object(ofType: Person.self, forPrimaryKey: 0)!)
        try realm.write { realm.deleteAll() }
        let counts = await withTaskGroup(of: [Int].self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let realm = snapshot.value
                    return [realm.objects(Person.self).count, people.value.count, ann.value.name == "p0" ? 1 : 0,
                            realm.isFrozen ? 1 : 0]
                }
            }
            var all: [[Int]] = []
            for await counts in group { all.append(counts) }
            return all
        }
        #expect(counts == Array(repeating: [100, 10, 1, 1], count: 8))
        #expect(realm.objects(Person.self).isEmpty)
    }
}
