import Foundation
import Testing
@testable import OpenRealm

/// `Realm.create(_:value:update:)` with collections and nested objects in the value, as Realm
/// takes them: arrays for lists and sets, dictionaries for maps, dictionaries or arrays for
/// linked and embedded objects.
@Suite struct CreateValueTests {
    @Test func listsAreCreatedFromArraysOfValuesAndObjects() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            let bo = Pet()
            bo.name = "Bo"
            try realm.write {
                let kept = realm.create(Pet.self, value: ["name": "Kept"])
                let shelter = realm.create(Shelter.self, value: [
                    "name": "North",
                    "tags": ["dogs", "cats"],
                    "scores": [1, nil, 3] as [Int?],
                    // A dictionary, an array in property order, an unmanaged and a managed object.
                    "pets": [["name": "Rex"], ["Fido", nil], bo, kept] as [Any],
                ])
                #expect(Array(shelter.tags) == ["dogs", "cats"])
                #expect(Array(shelter.scores) == [1, nil, 3])
                #expect(shelter.pets.map(\.name) == ["Rex", "Fido", "Bo", "Kept"])
                #expect(bo.realm === realm)
                // An array of values in property order takes arrays for its lists too.
                realm.create(Shelter.self, value: ["South", [["Ada", nil]], ["birds"], [] as [Int?]])
            }
            #expect(realm.objects(Pet.self).count == 5)
        }
        let realm = try Realm(configuration: folder.configuration())
        let shelters = realm.objects(Shelter.self)
        #expect(shelters.map(\.name) == ["North", "South"])
        #expect(shelters[0].pets.map(\.name) == ["Rex", "Fido", "Bo", "Kept"])
        #expect(Array(shelters[0].scores) == [1, nil, 3])
        #expect(shelters[1].pets.map(\.name) == ["Ada"])
        #expect(Array(shelters[1].tags) == ["birds"])
        // Copying a managed object copies its lists (the pets themselves are shared).
        let copy = try realm.write { realm.create(Shelter.self, value: shelters[0]) }
        #expect(Array(copy.tags) == ["dogs", "cats"])
        #expect(copy.pets.map(\.name) == ["Rex", "Fido", "Bo", "Kept"])
        #expect(realm.objects(Pet.self).count == 5)
    }

    @Test func setsAreCreatedFromArraysAndSetsKeepingDistinctElements() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let club = try realm.write {
            realm.create(Club.self, value: ["name": "Chess", "tags": ["a", "b", "a"], "members": [["name": "Rex"], ["name": "Bo"]]])
        }
        #expect(Array(club.tags) == ["a", "b"])
        #expect(Set(club.members.map(\.name)) == ["Rex", "Bo"])
        let other = try realm.write { realm.create(Club.self, value: ["name": "Go", "tags": Set(["x", "y"])]) }
        #expect(Set(other.tags) == ["x", "y"])
        #expect(realm.objects(Pet.self).count == 2)
    }

    @Test func mapsAreCreatedFromDictionaries() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            let board = try realm.write {
                realm.create(Scoreboard.self, value: [
                    "name": "Finals",
                    "scores": ["b": 2, "a": 1],
                    "champions": ["gold": ["name": "Rex"], "silver": nil] as [String: Any?],
                ])
            }
            #expect(board.scores["a"] == 1 && board.scores["b"] == 2 && board.scores.count == 2)
            #expect(board.champions["gold"]??.name == "Rex")
            #expect(board.champions.count == 2)
        }
        let realm = try Realm(configuration: folder.configuration())
        let board = try #require(realm.objects(Scoreboard.self).first)
        // A dictionary has no order: the entries are stored by key.
        #expect(board.scores.keys == ["a", "b"])
        #expect(board.champions.keys == ["gold", "silver"])
        #expect(board.champions["silver"] == .some(nil))
        #expect(realm.objects(Pet.self).map(\.name) == ["Rex"])
    }

    @Test func linksAndEmbeddedObjectsAreCreatedFromNestedValues() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration())
            try realm.write {
                let ann = realm.create(Owner.self, value: ["name": "Ann", "dog": ["name": "Rex", "owner": ["name": "Bob"]]])
                #expect(ann.dog?.owner?.name == "Bob")
                realm.create(Contact.self, value: [
                    "name": "Cy",
                    "home": ["street": "Main", "city": "Oslo"],
                    "others": [["street": "Dock", "city": "Bergen"], ["Pier", "Tromsø"]],
                ])
            }
            #expect(realm.objects(Owner.self).count == 2)
        }
        let realm = try Realm(configuration: folder.configuration())
        let contact = try #require(realm.object(ofType: Contact.self, forPrimaryKey: "Cy"))
        #expect(contact.home?.street == "Main" && contact.home?.city == "Oslo")
        #expect(contact.others.map { "\($0.street), \($0.city)" } == ["Dock, Bergen", "Pier, Tromsø"])
        #expect(realm.object(ofType: Owner.self, forPrimaryKey: "Ann")?.dog?.owner?.name == "Bob")
    }

    @Test func nestedObjectsWithPrimaryKeysFollowTheUpdatePolicy() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write {
            realm.create(Owner.self, value: ["name": "Ann"])
            // With .modified, the nested Ann is the existing one, updated.
            realm.create(Owner.self, value: ["name": "Cy", "bestFriend": ["name": "Ann", "dog": ["name": "Rex"]]], update: .modified)
        }
        #expect(realm.objects(Owner.self).count == 2)
        #expect(realm.object(ofType: Owner.self, forPrimaryKey: "Ann")?.dog?.name == "Rex")
        #expect(realm.object(ofType: Owner.self, forPrimaryKey: "Cy")?.bestFriend?.name == "Ann")
    }

    @Test func createFillsTheClassOfAMetatypeVariable() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let type: Object.Type = Dog.self
        let object = try realm.write { realm.create(type, value: ["name": "Rex", "age": 3]) }
        #expect((object as? Dog)?.age == 3)
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])
    }
}
