import Dispatch
import Foundation
import Testing
import TestSupport
@testable import OpenRealm

// Issue 24: signatures that now match Realm Swift's, and what each change must keep.

/// A model whose table a test writes through the engine without `age` (Support+Storage.swift):
/// no class of the process matches that table.
final class Moa: Object {
    @Persisted var name = ""
    @Persisted var age = 0
}

@Suite(.childProcesses) struct RealmSwiftSignatureTests {
    // MARK: beginWrite() does not throw

    @Test func beginWriteDoesNotThrowAndCommitWriteCommits() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        #expect(realm.isInWriteTransaction)
        realm.add(Dog(value: ["name": "Rex"]))
        try realm.commitWrite()
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])
    }

    @Test func tooManyPinnedVersionsAreThrownByCommitWrite() throws {
        let folder = TestFolder()
        var configuration = folder.configuration()
        configuration.maximumNumberOfActiveVersions = 1
        let old = try Realm(configuration: configuration)
        let writer = try Realm(configuration: configuration)
        try writer.write { writer.add(Dog()) }
        // `old` reads the first version, `writer` the second: two are pinned.
        writer.beginWrite()
        writer.add(Dog())
        #expect { try writer.commitWrite() } throws: { error in
            (error as? Realm.Error)?.code == .maximumNumberOfActiveVersionsExceeded
        }
        #expect(!writer.isInWriteTransaction)
        #expect(writer.objects(Dog.self).count == 1)
        old.refresh()
        writer.beginWrite()
        writer.add(Dog())
        try writer.commitWrite()
        #expect(writer.objects(Dog.self).count == 2)
        try RoundTripTests.verify(folder)
    }

    @Test func aWriteThatCouldNotBeginIsThrownByCommitWrite() throws {
        let folder = TestFolder()
        let path = try #require(folder.configuration().fileURL).path
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        try FileManager.default.removeItem(atPath: path + ".lock")
        realm.beginWrite()
        #expect(realm.isInWriteTransaction)
        #expect { try realm.commitWrite() } throws: { ($0 as? Realm.Error)?.code == .incompatibleLockFile }
        #expect(!realm.isInWriteTransaction)
        realm.beginWrite()
        realm.cancelWrite()
        #expect(!realm.isInWriteTransaction)
        #expect(realm.objects(Dog.self).map(\.name) == ["Rex"])
    }

    @Test func changingAnObjectInAWriteThatCouldNotBeginTrapsNamingWhy() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let dog = Dog()
            try realm.write { realm.add(dog) }
            try FileManager.default.removeItem(atPath: folder.configuration().fileURL!.path + ".lock")
            realm.beginWrite()
            dog.name = "Rex"
        }
        MisuseTests.expectRule(result, "the write transaction beginWrite() opened could not begin")
    }

    @Test func writeStillThrowsInsideAWrite() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        #expect { try realm.write {} } throws: { ($0 as? Realm.Error)?.code == .alreadyInWriteTransaction }
        realm.cancelWrite()
    }

    @Test func beginWriteInsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            realm.beginWrite()
            realm.beginWrite()
        }
        MisuseTests.expectRule(result, "a write transaction is already open on this realm")
    }

    @Test func beginWriteOnAFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            realm.freeze().beginWrite()
        }
        MisuseTests.expectRule(result, "cannot write to a frozen realm")
    }

    @Test func beginWriteOnAReadOnlyRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            try Realm(configuration: folder.configuration()).write {}
            var configuration = folder.configuration()
            configuration.readOnly = true
            try Realm(configuration: configuration).beginWrite()
        }
        MisuseTests.expectRule(result, "the realm was opened read-only")
    }

    // MARK: objectTypes is [ObjectBase.Type]?

    @Test func objectTypesListsEmbeddedClassesAsObjectBaseTypes() throws {
        let folder = TestFolder()
        let types: [ObjectBase.Type] = [Contact.self, Address.self]
        var configuration = folder.configuration()
        configuration.objectTypes = types
        let realm = try Realm(configuration: configuration)
        try realm.write {
            realm.create(Contact.self, value: ["name": "Ann", "home": ["street": "Elm", "city": "Oslo"]])
        }
        #expect(realm.objects(Contact.self).first?.home?.city == "Oslo")
        try RoundTripTests.verify(folder)
    }

    @Test func listingOnlyTopLevelClassesStillStoresTheirEmbeddedObjects() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration([Contact.self]))
        try realm.write {
            realm.create(Contact.self, value: ["name": "Ann", "others": [["street": "Elm", "city": "Oslo"]]])
        }
        #expect(realm.objects(Contact.self).first?.others.first?.street == "Elm")
        try RoundTripTests.verify(folder)
    }

    // MARK: Realm(configuration:queue:) takes an optional queue

    @Test func aNilQueueOpensTheRealmAsWithoutOne() throws {
        let folder = TestFolder()
        let queue: DispatchQueue? = nil
        let realm = try Realm(configuration: folder.configuration(), queue: queue)
        try realm.write { realm.add(Dog(value: ["name": "Rex"])) }
        #expect(realm.objects(Dog.self).count == 1)
        #expect(realm.autorefresh)
    }

    // MARK: Without objectTypes, a changed model is refused at open

    @Test func aChangedModelWithoutObjectTypesIsRefusedAtOpen() throws {
        let folder = TestFolder()
        try createStringTable(folder, named: "Moa", columns: ["name"])
        func openingError(_ configuration: Realm.Configuration) -> Realm.Error? {
            do {
                _ = try Realm(configuration: configuration)
                return nil
            } catch {
                return error as? Realm.Error
            }
        }
        let listed = openingError(folder.configuration([Moa.self]))
        let discovered = openingError(folder.configuration())
        #expect(listed?.code == .schemaMismatch)
        #expect(discovered?.code == listed?.code)
        #expect(discovered?.message.contains("property age was added") == true, "\(String(describing: discovered))")
    }

    @Test func withoutObjectTypesAChangedModelDeletesTheFileWhenAsked() throws {
        let folder = TestFolder()
        try createStringTable(folder, named: "Moa", columns: ["name"])
        var configuration = folder.configuration()
        configuration.deleteRealmIfMigrationNeeded = true
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(Moa.self, value: ["name": "Kiwi", "age": 3]) }
        #expect(realm.objects(Moa.self).first?.age == 3)
    }

    @Test func aClassSharingItsNameWithTheFilesModelDoesNotRefuseTheFile() throws {
        let folder = TestFolder()
        // DogV2 and DogWithKey are also named "Dog", and differ: Dog matches the file.
        let writer = try Realm(configuration: folder.configuration([Dog.self]))
        try writer.write { writer.add(Dog()) }
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Dog.self).count == 1)
    }

    // MARK: The dynamic API keeps Realm Swift's names

    @Test func theDynamicAPISpellsRealmSwiftsSignatures() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: folder.configuration([Dog.self]))
            try realm.write { realm.add(Dog(value: ["name": "Rex", "age": 3])) }
        }
        var configuration = folder.configuration()
        configuration.isDynamic = true
        let realm = try Realm(configuration: configuration)
        // Realm Swift's forms; `try` where OpenRealm throws for a class the file lacks.
        let objects: (Realm, String) throws -> Results<DynamicObject> = { try $0.dynamicObjects($1) }
        let byKey: (Realm, String, Any) throws -> DynamicObject? = { try $0.dynamicObject(ofType: $1, forPrimaryKey: $2) }
        let create: (Realm, String, Any, Realm.UpdatePolicy) -> DynamicObject = { $0.dynamicCreate($1, value: $2, update: $3) }
        let list: (Object, String) -> List<DynamicObject> = { $0.dynamicList($1) }
        let set: (Object, String) -> MutableSet<DynamicObject> = { $0.dynamicMutableSet($1) }
        let map: (Object, String) -> Map<String, DynamicObject?> = { $0.dynamicMap($1) }
        let subscriptGet: (Object, String) -> Any? = { $0[$1] }
        let schema: (Realm) -> Schema = { $0.schema }
        let classes: (Schema) -> [ObjectSchema] = { $0.objectSchema }
        let byName: (Schema, String) -> ObjectSchema? = { $0[$1] }
        let properties: (ObjectSchema) -> [Property] = { $0.properties }
        let property: (ObjectSchema, String) -> Property? = { $0[$1] }
        let primaryKey: (ObjectSchema) -> Property? = { $0.primaryKeyProperty }
        let facts: (Property) -> (String, String, PropertyType, Bool, Bool, Bool, Bool, Bool, String?) = {
            ($0.name, $0.columnName, $0.type, $0.isArray, $0.isSet, $0.isMap, $0.isIndexed, $0.isOptional, $0.objectClassName)
        }
        _ = (byKey, create, list, set, map, primaryKey)
        let dogs = try objects(realm, "Dog")
        #expect(subscriptGet(dogs[0], "name") as? String == "Rex")
        let dog = try #require(byName(schema(realm), "Dog"))
        #expect(classes(schema(realm)).map(\.className) == ["Dog"])
        #expect(properties(dog).count == dog.properties.count)
        let name = try #require(property(dog, "name"))
        #expect(facts(name).2 == .string)
        #expect(facts(name).2.description == "string")
    }
}
