import Foundation
import Testing
@testable import OpenRealm

@Suite struct MigrationTests {
    static func seed(_ folder: TestFolder, names: [String] = ["Rex", "Fido", "Bo"]) throws {
        let realm = try Realm(configuration: folder.configuration([Dog.self]))
        try realm.write {
            for (i, name) in names.enumerated() { realm.create(Dog.self, value: ["name": name, "age": i + 1, "breed": "mutt"]) }
        }
    }

    @Test func addedRemovedAndRenamedPropertiesMigrate() throws {
        let folder = TestFolder()
        try Self.seed(folder)
        var configuration = folder.configuration([DogV2.self])
        configuration.schemaVersion = 1
        var oldVersionSeen: UInt64?
        configuration.migrationBlock = { migration, oldVersion in
            oldVersionSeen = oldVersion
            migration.renameProperty(onType: "Dog", from: "name", to: "title")
            migration.enumerateObjects(ofType: "Dog") { old, new in
                let age = old?["age"] as? Int ?? 0
                new?["weight"] = Double(age) * 2.5
                #expect(old?["breed"] as? String == "mutt")
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(oldVersionSeen == 0)
        let dogs = realm.objects(DogV2.self)
        #expect(dogs.map(\.title) == ["Rex", "Fido", "Bo"])
        #expect(dogs.map(\.weight) == [2.5, 5, 7.5])
        #expect(realm.schemaVersionOfFile == 1)
        // The migrated file opens again without a migration.
        configuration.migrationBlock = nil
        #expect(try Realm(configuration: configuration).objects(DogV2.self).count == 3)
    }

    @Test func aChangedTypeIsConvertedByTheBlock() throws {
        let folder = TestFolder()
        try Self.seed(folder)
        var configuration = folder.configuration([ChangedDog.self])
        configuration.schemaVersion = 2
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Dog") { old, new in
                new?["age"] = "\(old?["age"] as? Int ?? 0) years"
            }
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(ChangedDog.self).map(\.age) == ["1 years", "2 years", "3 years"])
    }

    @Test func aNewPrimaryKeyIsIndexedAndChecked() throws {
        let folder = TestFolder()
        try Self.seed(folder)
        var configuration = folder.configuration([DogWithKey.self])
        configuration.schemaVersion = 1
        let realm = try Realm(configuration: configuration)
        #expect(realm.object(ofType: DogWithKey.self, forPrimaryKey: "Fido")?.age == 2)

        // Duplicate values cannot become a primary key: the migration fails, the file stays.
        let other = TestFolder()
        try Self.seed(other, names: ["Rex", "Rex"])
        var failing = other.configuration([DogWithKey.self])
        failing.schemaVersion = 1
        #expect { try Realm(configuration: failing) } throws: { ($0 as? Realm.Error)?.code == .duplicatePrimaryKey }
        #expect(try Realm(configuration: other.configuration([Dog.self])).objects(Dog.self).count == 2)
    }

    @Test func dataCanBeCreatedAndDeleted() throws {
        let folder = TestFolder()
        try Self.seed(folder)
        var configuration = folder.configuration([Dog.self, Person.self])
        configuration.schemaVersion = 1
        configuration.migrationBlock = { migration, _ in
            #expect(migration.deleteData(forType: "Dog"))
            migration.create("Person", value: ["id": 1, "name": "Created in a migration"])
        }
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Dog.self).isEmpty)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 1)?.name == "Created in a migration")
    }

    @Test func withoutAHigherVersionEveryDifferenceIsNamed() throws {
        let folder = TestFolder()
        try Self.seed(folder)
        #expect { try Realm(configuration: folder.configuration([DogV2.self])) } throws: { error in
            guard let error = error as? Realm.Error, error.code == .schemaMismatch else { return false }
            return ["title was added", "weight was added", "breed was removed", "name was removed"].allSatisfy(error.message.contains)
        }
    }
}
