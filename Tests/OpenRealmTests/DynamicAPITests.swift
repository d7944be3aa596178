import Foundation
import Testing
import TestSupport
@testable import OpenRealm

// The dynamic API: a file written with model classes, read and written by class and property
// name through a realm opened without them (`isDynamic`), as a tool or an admin page does.
// Every scalar type comes from `EveryScalar` (RoundTripModels.swift); links and collections
// from the classes here.

final class DynamicToy: Object {
    @Persisted(primaryKey: true) var name = ""
    @Persisted var price = 0.0
}

final class DynamicPet: Object {
    @Persisted(primaryKey: true) var id = 0
    @Persisted(indexed: true) var name = ""
    @Persisted var mixed: AnyRealmValue
    @Persisted var nickname: String?
    @Persisted var weight: Double?
    @Persisted var favorite: DynamicToy?
    @Persisted var toys: List<DynamicToy>
    @Persisted var tags: List<String>
    @Persisted var scores: MutableSet<Int>
    @Persisted var notes: Map<String, String?>
    @Persisted var toyByRoom: Map<String, DynamicToy?>
}

@Suite(.childProcesses) struct DynamicAPITests {
    static let objectId = ObjectId.generate()
    static let uuid = UUID()
    static let date = Date(timeIntervalSince1970: 1_700_000_000.5)
    static let key = Data((0..<64).map { UInt8($0) })

    /// Writes three pets and two toys with the model classes; returns the file's configuration.
    static func writeFile(in folder: TestFolder, encryptionKey: Data? = nil, schemaVersion: UInt64 = 3) throws -> Realm.Configuration {
        var configuration = folder.configuration([DynamicPet.self, DynamicToy.self, EveryScalar.self])
        configuration.encryptionKey = encryptionKey
        configuration.schemaVersion = schemaVersion
        let realm = try Realm(configuration: configuration)
        try realm.write {
            let ball = realm.create(DynamicToy.self, value: ["name": "ball", "price": 2.5])
            let bone = realm.create(DynamicToy.self, value: ["name": "bone", "price": 4.0])
            let scalars = EveryScalar()
            scalars.id = 1
            scalars.bool = true
            scalars.int = 42
            scalars.int8 = -7
            scalars.int16 = 300
            scalars.int32 = -70_000
            scalars.int64 = .max
            scalars.float = 1.5
            scalars.double = 2.25
            scalars.string = "text"
            scalars.data = Data([1, 2, 3])
            scalars.date = date
            scalars.decimal = try! Decimal128(string: "12.5")
            scalars.objectId = objectId
            scalars.uuid = uuid
            scalars.mixed = .double(0.5)
            scalars.tide = .highest
            scalars.weather = .blizzard
            realm.add(scalars)
            let rex = DynamicPet()
            rex.id = 1
            rex.name = "Rex"
            rex.mixed = .string("mixed")
            rex.nickname = "rexy"
            rex.favorite = ball
            rex.toys.append(objectsIn: [ball, bone])
            rex.tags.append(objectsIn: ["good", "loud"])
            rex.scores.insert(10)
            rex.notes["a"] = "first"
            rex.notes["b"] = .some(nil)
            rex.toyByRoom["hall"] = bone
            realm.add(rex)
            realm.create(DynamicPet.self, value: ["id": 2, "name": "Ada", "mixed": AnyRealmValue.object(bone), "weight": 3.0])
            realm.create(DynamicPet.self, value: ["id": 3, "name": "Bo", "mixed": AnyRealmValue.int(4)])
        }
        var dynamic = Realm.Configuration(fileURL: configuration.fileURL, encryptionKey: encryptionKey)
        dynamic.isDynamic = true
        return dynamic
    }

    @Test func everyValueReadsAsRealmSwiftsDynamicSubscriptGivesIt() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        let scalars = try #require(try realm.dynamicObject(ofType: "EveryScalar", forPrimaryKey: 1))
        #expect(scalars["id"] as? Int == 1)
        #expect(scalars["bool"] as? Bool == true)
        #expect(scalars["int"] as? Int == 42)
        #expect(scalars["int8"] as? Int == -7)
        #expect(scalars["int16"] as? Int == 300)
        #expect(scalars["int32"] as? Int == -70_000)
        #expect(scalars["int64"] as? Int == .max)
        #expect(scalars["float"] as? Float == 1.5)
        #expect(scalars["double"] as? Double == 2.25)
        #expect(scalars["string"] as? String == "text")
        #expect(scalars["data"] as? Data == Data([1, 2, 3]))
        #expect(scalars["date"] as? Date == Self.date)
        #expect(scalars["decimal"] as? Decimal128 == (try Decimal128(string: "12.5")))
        #expect(scalars["objectId"] as? ObjectId == Self.objectId)
        #expect(scalars["uuid"] as? UUID == Self.uuid)
        #expect(scalars["mixed"] as? AnyRealmValue == .double(0.5))
        // Enums read as their raw values: the file knows no enums.
        #expect(scalars["tide"] as? Int == Tide.highest.rawValue)
        #expect(scalars["weather"] as? String == Weather.blizzard.rawValue)

        let rex = try #require(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 1))
        #expect(rex["name"] as? String == "Rex")
        #expect(rex["mixed"] as? AnyRealmValue == .string("mixed"))
        #expect(rex["nickname"] as? String == "rexy")
        #expect(rex["weight"] == nil)
        #expect(rex.nickname as? String == "rexy")   // dynamic member lookup
        let favorite = try #require(rex["favorite"] as? DynamicObject)
        #expect(favorite["name"] as? String == "ball")
        #expect(favorite.objectSchema.className == "DynamicToy")
        #expect(favorite.description == "DynamicToy { name = ball; price = 2.5 }")
        #expect(try realm.dynamicObjects("DynamicToy").description == "Results<DynamicToy> (2 objects)")
        let toys = try #require(rex["toys"] as? List<DynamicObject>)
        #expect(toys.map { $0["name"] as? String } == ["ball", "bone"])
        #expect(rex.dynamicList("toys").count == 2)
        #expect((rex["tags"] as? List<String>).map(Array.init) == ["good", "loud"])
        #expect((rex["scores"] as? MutableSet<Int>).map(Array.init) == [10])
        let notes = try #require(rex["notes"] as? Map<String, String?>)
        #expect(notes["a"] == .some("first"))
        let rooms: Map<String, DynamicObject?> = rex.dynamicMap("toyByRoom")
        #expect(rooms["hall"]??["name"] as? String == "bone")

        let ada = try #require(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 2))
        #expect(ada["weight"] as? Double == 3.0)
        #expect(ada["favorite"] == nil)
        guard case .object(let linked)? = ada["mixed"] as? AnyRealmValue else {
            Issue.record("a link in a mixed value reads as .object")
            return
        }
        #expect((linked as? DynamicObject)?["name"] as? String == "bone")
        #expect(try realm.dynamicObject(ofType: "DynamicToy", forPrimaryKey: "ball")?["price"] as? Double == 2.5)
        #expect(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 99) == nil)
    }

    @Test func schemaDescribesTheFile() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        #expect(realm.schemaVersionOfFile == 3)
        #expect(Set(realm.schema.objectSchema.map(\.className)) == ["DynamicPet", "DynamicToy", "EveryScalar"])
        let scalars = try #require(realm.schema["EveryScalar"])
        #expect(scalars.properties.map(\.type) == [.int, .bool, .int, .int, .int, .int, .int, .float, .double, .string, .data, .date,
                                                   .decimal128, .objectId, .UUID, .any, .int, .string])
        #expect(scalars.properties.map(\.typeName) == ["Int", "Bool", "Int", "Int", "Int", "Int", "Int", "Float", "Double", "String",
                                                       "Data", "Date", "Decimal128", "ObjectId", "UUID", "AnyRealmValue", "Int", "String"])
        #expect(scalars.properties.allSatisfy { !$0.isOptional && !$0.isArray && !$0.isSet && !$0.isMap && $0.objectClassName == nil })
        let pet = try #require(realm.schema["DynamicPet"])
        #expect(realm.schema["Nothing"] == nil)
        #expect(pet.primaryKeyProperty?.name == "id")
        // The file's column order: a new table gets its links once the classes they reach exist.
        #expect(pet.properties.map(\.name) == ["id", "name", "mixed", "nickname", "weight", "tags", "scores", "notes", "favorite", "toys",
                                               "toyByRoom"])
        #expect(pet.properties.map(\.type) == [.int, .string, .any, .string, .double, .string, .int, .string, .object, .object, .object])
        #expect(pet.properties.map(\.typeName) == ["Int", "String", "AnyRealmValue", "String?", "Double?", "List<String>", "MutableSet<Int>",
                                                   "Map<String, String?>", "DynamicToy?", "List<DynamicToy>", "Map<String, DynamicToy?>"])
        #expect(pet["id"]?.isPrimaryKey == true)
        #expect(pet["name"]?.isIndexed == true)
        #expect(pet["mixed"]?.isIndexed == false)
        #expect(pet["nickname"]?.isOptional == true)
        #expect(pet["name"]?.isOptional == false)
        #expect(pet["favorite"]?.objectClassName == "DynamicToy")
        #expect(pet["favorite"]?.isOptional == true)
        #expect(pet["toys"]?.isArray == true)
        #expect(pet["toys"]?.objectClassName == "DynamicToy")
        #expect(pet["scores"]?.isSet == true)
        #expect(pet["scores"]?.isArray == false)
        #expect(pet["notes"]?.isMap == true)
        #expect(pet["notes"]?.isOptional == true)
        #expect(pet["toyByRoom"]?.isMap == true)
        #expect(pet["__keys:notes"] == nil)
        #expect(realm.schema["DynamicToy"]?.primaryKeyProperty?.type == .string)
    }

    @Test func queriesFilterSortCountAndIndex() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        let pets = try realm.dynamicObjects("DynamicPet")
        #expect(pets.count == 3)
        #expect(pets.sorted(byKeyPath: "name").map { $0["name"] as? String } == ["Ada", "Bo", "Rex"])
        #expect(pets.sorted(byKeyPath: "id", ascending: false)[0]["id"] as? Int == 3)
        #expect(try pets.filter("id >= %@", arguments: [2]).count == 2)
        #expect(pets.filter("name BEGINSWITH %@", "R").first?["id"] as? Int == 1)
        #expect(try pets.filter("favorite.name == 'ball'", arguments: []).count == 1)
        #expect(try pets.filter("ANY toys.price > 3", arguments: []).count == 1)
        #expect(try pets.filter("toys.@count == 0", arguments: []).count == 2)
        let ball = try #require(try realm.dynamicObject(ofType: "DynamicToy", forPrimaryKey: "ball"))
        #expect(try pets.filter("favorite == %@", arguments: [ball]).count == 1)
        #expect(try pets.filter("SUBQUERY(toys, $t, $t.price > 3).@count == 1", arguments: []).count == 1)
        #expect(try pets.filter("toys.@sum.price == 6.5", arguments: []).count == 1)
        #expect(pets.max(ofProperty: "id") as Int? == 3)
        #expect(try realm.dynamicObjects("DynamicToy").sum(ofProperty: "price") as Double == 6.5)
        #expect(pets.distinct(by: ["mixed"]).count == 3)
        var names: [String] = []
        for pet in pets.sorted(byKeyPath: "name") { names.append(pet["name"] as? String ?? "") }
        #expect(names == ["Ada", "Bo", "Rex"])
    }

    @Test func frozenSnapshotsReadDynamicObjects() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        let pets = try realm.dynamicObjects("DynamicPet").sorted(byKeyPath: "name")
        let frozen = pets.freeze()
        #expect(frozen.realm.isFrozen)
        #expect(frozen.map { $0["name"] as? String } == ["Ada", "Bo", "Rex"])
        let rex = try #require(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 1)).freeze()
        #expect((rex["favorite"] as? DynamicObject)?["name"] as? String == "ball")
        let shared = Frozen(pets)
        #expect(shared.value.count == 3)
    }

    @Test func aDynamicRealmFollowsNewClassesAndObjects() throws {
        let folder = TestFolder()
        let dynamic = try Realm(configuration: try Self.writeFile(in: folder))
        let pets = try dynamic.dynamicObjects("DynamicPet")
        let rex = try #require(try dynamic.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 1))
        #expect(pets.count == 3)
        #expect(dynamic.schema["Dog"] == nil)
        #expect(throws: Realm.Error.self) { try dynamic.dynamicObjects("Dog") }
        var typed = folder.configuration([DynamicPet.self, DynamicToy.self, EveryScalar.self, Dog.self])
        typed.schemaVersion = 3
        let writer = try Realm(configuration: typed)
        try writer.write {
            writer.add(Dog(value: ["name": "Fido"]))
            writer.create(DynamicPet.self, value: ["id": 4, "name": "Cy"])
        }
        dynamic.refresh()
        // A new class: the file's classes are read again; what was read before still reads.
        #expect(pets.count == 4)
        #expect(rex["name"] as? String == "Rex")
        #expect(try dynamic.dynamicObjects("Dog").first?["name"] as? String == "Fido")
        #expect(dynamic.schema["Dog"]?["breed"]?.isOptional == true)
        #expect(try pets.filter("name == 'Cy'", arguments: []).count == 1)
    }

    @Test func aDynamicObjectReportsItsChanges() throws {
        final class Seen {
            var changes: [(name: String, old: Any?, new: Any?)] = []
            var deleted = false
        }
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        let rex = try #require(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 1))
        let bone = try #require(try realm.dynamicObject(ofType: "DynamicToy", forPrimaryKey: "bone"))
        let seen = Seen()
        let token = rex.observe { change in
            switch change {
            case .change(let object, let properties):
                #expect(object["id"] as? Int == 1)
                seen.changes += properties.map { ($0.name, $0.oldValue, $0.newValue) }
            case .deleted: seen.deleted = true
            case .error: Issue.record("no error expected")
            }
        }
        realm.refresh()
        try realm.commitAndDeliver {
            rex["name"] = "Rex II"
            rex["favorite"] = bone
        }
        #expect(seen.changes.map(\.name) == ["name", "favorite"])
        #expect(seen.changes.first?.old as? String == "Rex")
        #expect(seen.changes.first?.new as? String == "Rex II")
        #expect((seen.changes.last?.old as? DynamicObject)?["name"] as? String == "ball")
        #expect((seen.changes.last?.new as? DynamicObject)?["name"] as? String == "bone")
        try realm.commitAndDeliver { realm.delete(rex) }
        #expect(seen.deleted)
        withExtendedLifetime(token) {}
    }

    @Test func anUnknownClassIsATypedError() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        #expect(throws: Realm.Error.self) { try realm.dynamicObjects("Cat") }
        do {
            _ = try realm.dynamicObject(ofType: "Cat", forPrimaryKey: 1)
            Issue.record("an unknown class must throw")
        } catch {
            #expect(error.code == .invalidArgument)
            #expect(error.message.contains("Cat"))
        }
        do {
            _ = try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: "one")
            Issue.record("a key of the wrong type must throw")
        } catch {
            #expect(error.code == .invalidArgument)
        }
    }

    @Test func aBadPredicateIsATypedErrorWithItsPosition() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: try Self.writeFile(in: folder))
        let pets = try realm.dynamicObjects("DynamicPet")
        do {
            _ = try pets.filter("name == 'Rex' AND colour == 3", arguments: [])
            Issue.record("an unknown property must throw")
        } catch {
            #expect(error.code == .invalidQuery)
            #expect(error.message.contains("at offset 18"))
            #expect(error.message.contains("colour"))
        }
        do {
            _ = try pets.filter("name == 3", arguments: [])
            Issue.record("a number compared with a string must throw")
        } catch {
            #expect(error.code == .invalidQuery)
        }
        #expect(throws: Realm.Error.self) { try pets.filter("name ==", arguments: []) }
    }

    @Test func writesThroughTheSubscriptAndDynamicCreate() throws {
        let folder = TestFolder()
        let configuration = try Self.writeFile(in: folder)
        do {
            let realm = try Realm(configuration: configuration)
            let rex = try #require(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 1))
            let bone = try #require(try realm.dynamicObject(ofType: "DynamicToy", forPrimaryKey: "bone"))
            try realm.write {
                rex["name"] = "Rex II"
                rex["weight"] = 7          // an Int widens to a Double column
                rex["nickname"] = nil
                rex["favorite"] = bone
                rex["tags"] = ["quiet"]
                rex["scores"] = [1, 2]
                rex["notes"] = ["z": "last"]
                rex["mixed"] = AnyRealmValue.object(bone)
                rex.dynamicList("toys").removeAll()
                let toy = realm.dynamicCreate("DynamicToy", value: ["name": "rope", "price": 1.0])
                #expect(toy["price"] as? Double == 1.0)
                realm.dynamicCreate("DynamicToy", value: ["name": "bone", "price": 9.5], update: .modified)
                // An integer primary key is the object's key in the file.
                let pet = realm.dynamicCreate("DynamicPet", value: ["id": 9, "name": "Dot", "tags": ["new"], "favorite": bone])
                #expect(pet.realm === realm)
            }
            let dot = try #require(try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 9))
            #expect(dot["name"] as? String == "Dot")
            #expect((dot["favorite"] as? DynamicObject)?["name"] as? String == "bone")
            #expect(dot.dynamicList("toys").isEmpty)
            #expect((dot["tags"] as? List<String>).map(Array.init) == ["new"])
            #expect(rex["name"] as? String == "Rex II")
            #expect(rex["weight"] as? Double == 7)
            #expect(rex["nickname"] == nil)
            #expect((rex["favorite"] as? DynamicObject)?["name"] as? String == "bone")
            #expect((rex["tags"] as? List<String>).map(Array.init) == ["quiet"])
            #expect((rex["scores"] as? MutableSet<Int>).map { Set($0) } == [1, 2])
            #expect((rex["notes"] as? Map<String, String?>)?.keys == ["z"])
            #expect(rex.dynamicList("toys").isEmpty)
            #expect(try realm.dynamicObjects("DynamicToy").count == 3)
            #expect(try realm.dynamicObject(ofType: "DynamicToy", forPrimaryKey: "bone")?["price"] as? Double == 9.5)
            let rope = try #require(try realm.dynamicObject(ofType: "DynamicToy", forPrimaryKey: "rope"))
            try realm.write { realm.delete(rope) }
            #expect(rope.isInvalidated)
            #expect(try realm.dynamicObjects("DynamicToy").count == 2)

            // A value that does not fit fails the write, which keeps nothing.
            #expect(throws: Realm.Error.self) {
                try realm.write {
                    rex["name"] = "changed"
                    rex["weight"] = "heavy"
                }
            }
            #expect(rex["name"] as? String == "Rex II")
            #expect(throws: Realm.Error.self) {
                try realm.write { realm.dynamicCreate("Cat", value: ["name": "Tom"]) }
            }
            #expect(throws: Realm.Error.self) {
                try realm.write { realm.dynamicCreate("DynamicToy", value: ["name": "bone"]) }
            }
        }
        // The model classes read what the dynamic API wrote, and the file verifies.
        var typed = folder.configuration([DynamicPet.self, DynamicToy.self, EveryScalar.self])
        typed.schemaVersion = 3
        typed.verifyIntegrityOnOpen = true
        let realm = try Realm(configuration: typed)
        let rex = try #require(realm.object(ofType: DynamicPet.self, forPrimaryKey: 1))
        #expect(rex.name == "Rex II")
        #expect(rex.favorite?.name == "bone")
        #expect(Array(rex.tags) == ["quiet"])
        #expect(rex.notes["z"] == .some("last"))
        #expect(realm.objects(DynamicToy.self).count == 2)
        try RoundTripTests.verify(folder)
    }

    @Test func modelObjectsReadAndWriteByName() throws {
        let folder = TestFolder()
        _ = try Self.writeFile(in: folder, schemaVersion: 0)
        let realm = try Realm(configuration: folder.configuration([DynamicPet.self, DynamicToy.self, EveryScalar.self]))
        let scalars = try #require(realm.object(ofType: EveryScalar.self, forPrimaryKey: 1))
        #expect(scalars["int8"] as? Int8 == -7)
        #expect(scalars["tide"] as? Tide == .highest)
        let rex = try #require(realm.object(ofType: DynamicPet.self, forPrimaryKey: 1))
        #expect(rex["name"] as? String == "Rex")
        #expect(rex["weight"] == nil)
        #expect((rex["favorite"] as? DynamicToy)?.name == "ball")
        #expect((rex["toys"] as? List<DynamicToy>)?.count == 2)
        #expect(rex.dynamicList("toys").map { $0["name"] as? String } == ["ball", "bone"])
        try realm.write { rex["name"] = "Max" }
        #expect(rex.name == "Max")
        #expect(rex.objectSchema.className == "DynamicPet")
        #expect(DynamicToy().objectSchema.primaryKeyProperty?.name == "name")
        let unmanaged = DynamicToy()
        unmanaged["price"] = 3
        #expect(unmanaged.price == 3)
        // Dynamic reads work beside the model classes too.
        #expect(try realm.dynamicObjects("DynamicPet").filter("name == 'Max'", arguments: []).count == 1)
    }

    @Test func readOnlyAndEncryptedFilesOpenDynamically() throws {
        let folder = TestFolder()
        var configuration = try Self.writeFile(in: folder, encryptionKey: Self.key)
        configuration.readOnly = true
        let realm = try Realm(configuration: configuration)
        #expect(try realm.dynamicObjects("DynamicPet").count == 3)
        #expect(try realm.dynamicObject(ofType: "EveryScalar", forPrimaryKey: 1)?["uuid"] as? UUID == Self.uuid)
        var wrongKey = configuration
        wrongKey.encryptionKey = nil
        #expect(throws: Realm.Error.self) { try Realm(configuration: wrongKey) }
    }

    @Test func aDynamicRealmNeitherChecksNorRecordsTheSchemaVersion() throws {
        let folder = TestFolder()
        var configuration = try Self.writeFile(in: folder)
        #expect(configuration.schemaVersion == 0)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.dynamicCreate("DynamicToy", value: ["name": "kite"]) }
            #expect(realm.schemaVersionOfFile == 3)
        }
        configuration.objectTypes = [DynamicToy.self]
        #expect(throws: Realm.Error.self) { try Realm(configuration: configuration) }
        // Without isDynamic, a file newer than the configuration is refused, with the way out.
        var plain = folder.configuration([])
        plain.schemaVersion = 0
        do {
            _ = try Realm(configuration: plain)
            Issue.record("a newer schema version must be refused")
        } catch let error as Realm.Error {
            #expect(error.message.contains("isDynamic"))
        }
    }

    @Test func observingDynamicResultsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: try DynamicAPITests.writeFile(in: folder))
            let token = try realm.dynamicObjects("DynamicPet").observe { _ in }
            withExtendedLifetime(token) {}
        }
        MisuseTests.expectRule(result, "Change notifications of dynamic results (realm.dynamicObjects) are not supported yet")
    }

    @Test func watchingAKeyPathThroughALinkOfADynamicObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: try DynamicAPITests.writeFile(in: folder))
            let rex = try realm.dynamicObject(ofType: "DynamicPet", forPrimaryKey: 1)!
            let token = rex.observe(keyPaths: ["favorite.name"]) { _ in }
            withExtendedLifetime(token) {}
        }
        MisuseTests.expectRule(result, "notifications of dynamic objects watch their own properties only")
    }
}
