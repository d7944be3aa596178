import Foundation
import Testing
import TestSupport
@testable import OpenRealm
@testable import _OpenRealmEngine

@Suite(.childProcesses) struct MigrationTests {
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

// MARK: - One test per kind of schema change
//
// Each writes a file with version 1 of its models, checks that the later models without a
// higher schema version are refused with every change named, then migrates and reads back.

extension MigrationTests {
    /// Opens the test file with `types` at schema version `version`, migrating with `block`.
    static func open(_ folder: TestFolder, _ types: [Object.Type], version: UInt64 = 1,
                     migration block: MigrationBlock? = nil) throws -> Realm {
        var configuration = folder.configuration(types)
        configuration.schemaVersion = version
        configuration.migrationBlock = block
        return try Realm(configuration: configuration)
    }

    /// Writes to the test file opened with `types` at `version`, then closes it.
    static func write(_ folder: TestFolder, _ types: [Object.Type], version: UInt64 = 1, _ body: (Realm) throws -> Void) throws {
        let realm = try open(folder, types, version: version)
        try realm.write { try body(realm) }
    }

    /// Checks the integrity of the test file (the engine's verify) and returns its tables' names.
    @discardableResult
    static func verifiedTables(_ folder: TestFolder) throws -> [String] {
        let store = try EngineStore(path: folder.configuration().fileURL!.path)
        try store.verify()
        return store.read().tableNames
    }

    /// Expects that `types` at the file's own schema version are refused, naming each change.
    static func expectMigrationRequired(_ folder: TestFolder, _ types: [Object.Type], version: UInt64 = 1, naming changes: [String],
                                        sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(sourceLocation: sourceLocation) { try open(folder, types, version: version) } throws: { error in
            guard let error = error as? Realm.Error, error.code == .schemaMismatch else { return false }
            return changes.allSatisfy(error.message.contains)
        }
    }

    // MARK: Properties

    @Test func anAddedPropertyReadsItsTypesDefaultOnExistingObjects() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self]) { realm in
            realm.create(Hen.self, value: ["name": "Ada", "age": 2, "secret": "corn"])
        }
        Self.expectMigrationRequired(folder, [HenWithEggs.self],
                                     naming: ["eggsPerWeek was added", "nickname was added", "lastLaid was added"])

        let realm = try Self.open(folder, [HenWithEggs.self], version: 2)
        let hen = try #require(realm.objects(HenWithEggs.self).first)
        #expect(hen.name == "Ada" && hen.age == 2 && hen.secret == "corn")
        // As in Realm, a declared default (5) is for new objects: existing ones read the type's.
        #expect(hen.eggsPerWeek == 0)
        #expect(hen.nickname == nil)
        #expect(hen.lastLaid == Date(timeIntervalSince1970: 0))
        #expect(try realm.write { realm.create(HenWithEggs.self, value: ["name": "Bea"]) }.eggsPerWeek == 5)
        try Self.verifiedTables(folder)
    }

    @Test func aRemovedPropertysValuesAreGoneAndTheOthersStay() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self]) { realm in
            realm.create(Hen.self, value: ["name": "Ada", "age": 2, "secret": "corn"])
            realm.create(Hen.self, value: ["name": "Bea", "age": 3, "secret": "seeds"])
        }
        Self.expectMigrationRequired(folder, [HenWithoutSecret.self], naming: ["secret was removed"])

        do {
            let realm = try Self.open(folder, [HenWithoutSecret.self], version: 2)
            #expect(realm.objects(HenWithoutSecret.self).map { "\($0.name) \($0.age)" } == ["Ada 2", "Bea 3"])
        }
        // Back to the first class at a later version: the property returns, empty.
        let realm = try Self.open(folder, [Hen.self], version: 3)
        #expect(realm.objects(Hen.self).map(\.secret) == ["", ""])
        #expect(realm.objects(Hen.self).map(\.name) == ["Ada", "Bea"])
        try Self.verifiedTables(folder)
    }

    @Test func aRenamedPropertyKeepsItsValues() throws {
        let folder = TestFolder()
        try Self.write(folder, [Bird.self]) { realm in
            realm.create(Bird.self, value: ["name": "Robin", "song": "chirp"]).tags.append(objectsIn: ["red", "small"])
            realm.create(Bird.self, value: ["name": "Crow"])
        }
        Self.expectMigrationRequired(folder, [RenamedBird.self],
                                     naming: ["title was added", "name was removed", "tune was added", "song was removed",
                                              "labels was added", "tags was removed"])

        let realm = try Self.open(folder, [RenamedBird.self], version: 2) { migration, _ in
            migration.renameProperty(onType: "Bird", from: "name", to: "title")
            migration.renameProperty(onType: "Bird", from: "song", to: "tune")
            migration.renameProperty(onType: "Bird", from: "tags", to: "labels")
            migration.enumerateObjects(ofType: "Bird") { old, new in
                #expect(new?["title"] as? String == old?["name"] as? String)
            }
        }
        // The renamed primary key still finds its objects.
        let robin = try #require(realm.object(ofType: RenamedBird.self, forPrimaryKey: "Robin"))
        #expect(robin.tune == "chirp")
        #expect(Array(robin.labels) == ["red", "small"])
        let crow = try #require(realm.object(ofType: RenamedBird.self, forPrimaryKey: "Crow"))
        #expect(crow.tune == nil)
        #expect(crow.labels.isEmpty)
        try Self.verifiedTables(folder)
    }

    @Test func changedTypesAreConvertedByTheBlock() throws {
        let folder = TestFolder()
        try Self.write(folder, [Meter.self]) { realm in
            realm.create(Meter.self, value: ["reading": "42", "count": 3, "level": 7]).samples.append(objectsIn: [1, 2])
            realm.create(Meter.self, value: ["reading": "n/a", "count": 0, "level": 1])
        }
        Self.expectMigrationRequired(folder, [ConvertedMeter.self],
                                     naming: ["reading changed type", "count changed type", "level changed type", "samples changed type"])

        let realm = try Self.open(folder, [ConvertedMeter.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Meter") { old, new in
                guard let old, let new else { return }
                new["reading"] = Int(old["reading"] as? String ?? "") ?? -1
                new["count"] = old["count"]   // an Int stored in a Double property converts
                new["level"] = "level \(old["level"] as? Int ?? 0)"
                new["samples"] = (old["samples"] as? [Int] ?? []).map(String.init)
                #expect(new["count"] as? Double == Double(old["count"] as? Int ?? -1))
            }
        }
        let meters = realm.objects(ConvertedMeter.self)
        #expect(meters.map(\.reading) == [42, -1])
        #expect(meters.map(\.count) == [3.0, 0.0])
        #expect(meters.map(\.level) == ["level 7", "level 1"])
        #expect(meters.map { Array($0.samples) } == [["1", "2"], []])
        try Self.verifiedTables(folder)
    }

    @Test func optionalAndRequiredPropertiesKeepTheirValues() throws {
        let folder = TestFolder()
        try Self.write(folder, [Note.self]) { realm in
            realm.create(Note.self, value: ["title": "Groceries", "body": "milk", "pages": 2])
            realm.create(Note.self, value: ["body": "blank"])
        }
        Self.expectMigrationRequired(folder, [RequiredTitleNote.self],
                                     naming: ["title changed type", "body changed type", "pages changed type"])

        var oldTitles: [String?] = []
        let realm = try Self.open(folder, [RequiredTitleNote.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Note") { old, new in
                oldTitles.append(old?["title"] as? String)
                if old?["title"] == nil { new?["title"] = "Untitled" }
            }
        }
        #expect(oldTitles == ["Groceries", nil])
        let notes = realm.objects(RequiredTitleNote.self)
        #expect(notes.map(\.title) == ["Groceries", "Untitled"])
        // Values the block left alone carry over, as in Realm; nil became the type's default.
        #expect(notes.map(\.pages) == [2, 0])
        #expect(notes.map(\.body) == ["milk", "blank"])
        try realm.write { notes[1].body = nil }
        #expect(notes[1].body == nil)
        try Self.verifiedTables(folder)
    }

    // MARK: Indexes and primary keys

    /// The names of the indexed columns of `table` in the test file (primary keys included).
    static func indexedColumns(_ folder: TestFolder, _ table: String) throws -> [String] {
        let snapshot = try EngineStore(path: folder.configuration().fileURL!.path).read()
        let info = try #require(snapshot.transaction.tables.first { $0.name == table })
        return info.columns.filter { $0.indexed && !$0.removed }.map(\.name)
    }

    static func writeLabels(_ folder: TestFolder) throws {
        try Self.write(folder, [Label.self]) { realm in
            for (name, code) in [("a", 1), ("b", 2), ("c", 2)] { realm.create(Label.self, value: ["name": name, "code": code]) }
        }
        #expect(try indexedColumns(folder, "Label") == ["name"])
    }

    @Test func anIndexIsAddedAndAnotherRemovedWithoutAMigration() throws {
        let folder = TestFolder()
        try Self.writeLabels(folder)
        // As in Realm: same schema version, no migration block.
        do {
            let realm = try Self.open(folder, [ReindexedLabel.self])
            #expect(try Self.indexedColumns(folder, "Label") == ["code"])
            #expect(realm.objects(ReindexedLabel.self).map { "\($0.name)\($0.code)" } == ["a1", "b2", "c2"])
            try realm.write { realm.create(ReindexedLabel.self, value: ["name": "d", "code": 2]) }
            #expect(realm.schemaVersionOfFile == 1)
        }
        try Self.verifiedTables(folder)
        // And back, with a higher version and no block: the version is recorded too.
        do {
            let realm = try Self.open(folder, [Label.self], version: 2)
            #expect(realm.objects(Label.self).count == 4)
            #expect(realm.schemaVersionOfFile == 2)
        }
        #expect(try Self.indexedColumns(folder, "Label") == ["name"])
        try Self.verifiedTables(folder)
    }

    @Test func aReadOnlyRealmReadsWithoutItsIndexChanges() throws {
        let folder = TestFolder()
        try Self.writeLabels(folder)
        var configuration = folder.configuration([ReindexedLabel.self])
        configuration.schemaVersion = 1
        configuration.readOnly = true
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(ReindexedLabel.self).filter { $0.code == 2 }.map(\.name) == ["b", "c"])
        // The file is as it was.
        #expect(try Self.indexedColumns(folder, "Label") == ["name"])
        try Self.verifiedTables(folder)
    }

    @Test func aClassBoundOnFirstUseGetsItsIndexChangesWithTheNextWrite() throws {
        let folder = TestFolder()
        try Self.writeLabels(folder)
        var configuration = folder.configuration()
        configuration.schemaVersion = 1
        let realm = try Realm(configuration: configuration)
        // Binding for a read changes nothing yet: no write transaction is opened behind the
        // reader's back.
        #expect(realm.objects(ReindexedLabel.self).count == 3)
        #expect(try Self.indexedColumns(folder, "Label") == ["name"])
        // A cancelled write does not lose the change.
        try realm.write { realm.cancelWrite() }
        #expect(try Self.indexedColumns(folder, "Label") == ["name"])
        try realm.write { realm.create(ReindexedLabel.self, value: ["name": "d", "code": 4]) }
        #expect(try Self.indexedColumns(folder, "Label") == ["code"])
        try Self.verifiedTables(folder)
    }

    @Test func aClassFirstUsedInsideAWriteGetsItsIndexChangesInThatWrite() throws {
        let folder = TestFolder()
        try Self.writeLabels(folder)
        var configuration = folder.configuration()
        configuration.schemaVersion = 1
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(ReindexedLabel.self, value: ["name": "d", "code": 4]) }
        #expect(try Self.indexedColumns(folder, "Label") == ["code"])
        #expect(realm.objects(ReindexedLabel.self).count == 4)
        try Self.verifiedTables(folder)
    }

    @Test func indexChangesAreNotNamedAmongChangesThatNeedAMigration() throws {
        let folder = TestFolder()
        try Self.writeLabels(folder)
        #expect { try Self.open(folder, [ColoredLabel.self]) } throws: { error in
            guard let error = error as? Realm.Error, error.code == .schemaMismatch else { return false }
            return error.message.contains("color was added") && !error.message.contains("index")
        }
        // The refused open changed nothing; the migration makes both changes.
        #expect(try Self.indexedColumns(folder, "Label") == ["name"])
        let realm = try Self.open(folder, [ColoredLabel.self], version: 2)
        #expect(realm.objects(ColoredLabel.self).map(\.color) == ["", "", ""])
        #expect(try Self.indexedColumns(folder, "Label") == ["code"])
        try Self.verifiedTables(folder)
    }

    @Test func aRemovedPrimaryKeyAllowsRepeatedValues() throws {
        let folder = TestFolder()
        try Self.write(folder, [Gadget.self]) { realm in
            realm.create(Gadget.self, value: ["serial": "A-1", "number": 1])
            realm.create(Gadget.self, value: ["serial": "B-2", "number": 2])
        }
        Self.expectMigrationRequired(folder, [GadgetWithoutKey.self], naming: ["primary key changed on serial"])

        // The block may already repeat the values: the key is gone before it runs.
        let realm = try Self.open(folder, [GadgetWithoutKey.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Gadget") { _, new in new?["serial"] = "X" }
        }
        try realm.write { realm.create(GadgetWithoutKey.self, value: ["serial": "X", "number": 3]) }
        #expect(realm.objects(GadgetWithoutKey.self).map(\.serial) == ["X", "X", "X"])
        try Self.verifiedTables(folder)
    }

    @Test func anIntegerPrimaryKeyCanRepeatOnceItIsNoLongerTheKey() throws {
        let folder = TestFolder()
        try Self.write(folder, [Ticket.self]) { realm in
            realm.create(Ticket.self, value: ["id": 10, "seat": "1A"])
            realm.create(Ticket.self, value: ["id": 20, "seat": "1B"])
        }
        Self.expectMigrationRequired(folder, [TicketWithoutKey.self], naming: ["primary key changed on id"])

        let realm = try Self.open(folder, [TicketWithoutKey.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Ticket") { old, new in
                #expect([10, 20].contains(old?["id"] as? Int ?? 0))
                new?["id"] = 7
            }
        }
        #expect(realm.objects(TicketWithoutKey.self).map { "\($0.id) \($0.seat)" } == ["7 1A", "7 1B"])
        try Self.verifiedTables(folder)
    }

    @Test func thePrimaryKeyMovesToAnotherProperty() throws {
        let folder = TestFolder()
        try Self.write(folder, [Gadget.self]) { realm in
            realm.create(Gadget.self, value: ["serial": "A-1", "number": 1])
            realm.create(Gadget.self, value: ["serial": "B-2", "number": 2])
        }
        Self.expectMigrationRequired(folder, [GadgetKeyedByNumber.self],
                                     naming: ["primary key changed on serial", "primary key changed on number"])

        let realm = try Self.open(folder, [GadgetKeyedByNumber.self], version: 2)
        #expect(realm.object(ofType: GadgetKeyedByNumber.self, forPrimaryKey: 2)?.serial == "B-2")
        try realm.write { realm.create(GadgetKeyedByNumber.self, value: ["serial": "A-1", "number": 3]) }
        #expect(realm.objects(GadgetKeyedByNumber.self).count == 3)
        try Self.verifiedTables(folder)
    }

    @Test func aNewPropertyBecomesThePrimaryKeyOnceTheBlockFillsIt() throws {
        let folder = TestFolder()
        try Self.write(folder, [Gadget.self]) { realm in
            realm.create(Gadget.self, value: ["serial": "A-1", "number": 1])
            realm.create(Gadget.self, value: ["serial": "B-2", "number": 2])
        }
        Self.expectMigrationRequired(folder, [GadgetKeyedById.self], naming: ["id was added", "primary key changed on serial"])

        // Every object starts with id 0: the key is only checked after the block.
        let realm = try Self.open(folder, [GadgetKeyedById.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Gadget") { old, new in new?["id"] = (old?["number"] as? Int ?? 0) * 100 }
        }
        #expect(realm.object(ofType: GadgetKeyedById.self, forPrimaryKey: 200)?.serial == "B-2")
        try Self.verifiedTables(folder)
    }

    @Test func repeatedValuesCannotBecomeAPrimaryKeyAndLeaveTheFileAsItWas() throws {
        let folder = TestFolder()
        try Self.write(folder, [GadgetWithoutKey.self]) { realm in
            realm.create(GadgetWithoutKey.self, value: ["serial": "A-1", "number": 1])
            realm.create(GadgetWithoutKey.self, value: ["serial": "A-2", "number": 1])
        }
        #expect { try Self.open(folder, [GadgetKeyedByNumber.self], version: 2) } throws: { error in
            guard let error = error as? Realm.Error, error.code == .duplicatePrimaryKey else { return false }
            return error.message.contains("Gadget.number cannot become the primary key") && error.path != nil
        }
        do {
            let realm = try Self.open(folder, [GadgetWithoutKey.self], version: 1)
            #expect(realm.schemaVersionOfFile == 1)
            #expect(realm.objects(GadgetWithoutKey.self).map(\.number) == [1, 1])
        }
        // Made distinct by the block, the values become the key.
        let realm = try Self.open(folder, [GadgetKeyedByNumber.self], version: 2) { migration, _ in
            var next = 1
            migration.enumerateObjects(ofType: "Gadget") { _, new in
                new?["number"] = next
                next += 1
            }
        }
        #expect(realm.object(ofType: GadgetKeyedByNumber.self, forPrimaryKey: 2)?.serial == "A-2")
        try Self.verifiedTables(folder)
    }

    // MARK: Classes

    @Test func aNewClassNeedsNoMigrationAndTheBlockCanFillIt() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self]) { realm in realm.create(Hen.self, value: ["name": "Ada"]) }
        // As in Realm, a class the file lacks is simply added: no higher version needed.
        #expect(try Self.open(folder, [Hen.self, Coop.self]).objects(Coop.self).isEmpty)

        var enumerated: [String] = []
        let realm = try Self.open(folder, [Hen.self, Coop.self], version: 2) { migration, _ in
            migration.create("Coop", value: ["name": "Main", "capacity": 6])
            // A class new in this version enumerates the objects the block created.
            migration.enumerateObjects(ofType: "Coop") { old, new in
                #expect(old == nil)
                enumerated.append(new?["name"] as? String ?? "")
            }
        }
        #expect(enumerated == ["Main"])
        #expect(realm.objects(Coop.self).map(\.capacity) == [6])
        #expect(realm.objects(Hen.self).count == 1)
        #expect(try Self.verifiedTables(folder) == ["Hen", "Coop"])
    }

    @Test func aRemovedClassKeepsItsDataUntilDeleted() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self, Coop.self]) { realm in
            realm.create(Hen.self, value: ["name": "Ada"])
            realm.create(Coop.self, value: ["name": "Main", "capacity": 6])
        }
        // Left out of objectTypes, the class stays in the file, as in Realm.
        _ = try Self.open(folder, [Hen.self], version: 2)
        #expect(try Self.open(folder, [Hen.self, Coop.self], version: 2).objects(Coop.self).count == 1)

        _ = try Self.open(folder, [Hen.self], version: 3) { migration, _ in
            #expect(migration.deleteData(forType: "Coop"))
            #expect(!migration.deleteData(forType: "NoSuchClass"))
            migration.enumerateObjects(ofType: "Coop") { _, _ in Issue.record("deleted objects are not enumerated") }
        }
        // Deleted, the class is gone from the file.
        #expect(try Self.verifiedTables(folder) == ["Hen"])
        let realm = try Self.open(folder, [Hen.self, Coop.self], version: 3)
        #expect(realm.objects(Coop.self).isEmpty)
        #expect(realm.objects(Hen.self).map(\.name) == ["Ada"])
        try Self.verifiedTables(folder)
    }

    @Test func aRenamedClassMovesItsObjects() throws {
        let folder = TestFolder()
        try Self.write(folder, [Coop.self]) { realm in
            realm.create(Coop.self, value: ["name": "Main", "capacity": 6])
            realm.create(Coop.self, value: ["name": "Annex", "capacity": 2])
        }
        let realm = try Self.open(folder, [Henhouse.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Coop") { old, new in
                #expect(new == nil)
                guard let old else { return }
                migration.create("Henhouse", value: ["title": old["name"], "capacity": old["capacity"]])
            }
            migration.deleteData(forType: "Coop")
        }
        #expect(realm.objects(Henhouse.self).map { "\($0.title) \($0.capacity)" } == ["Main 6", "Annex 2"])
        #expect(try Self.verifiedTables(folder) == ["Henhouse"])
    }

    // MARK: Links

    @Test func linksToAnotherClassAreRebuiltByTheBlock() throws {
        let folder = TestFolder()
        try Self.write(folder, [Walker.self, Puppy.self, Kennel.self]) { realm in
            let ann = Walker()
            ann.name = "Ann"
            let rex = Puppy()
            rex.name = "Rex"
            rex.walker = ann
            let bo = Puppy()
            bo.name = "Bo"
            let kennel = Kennel()
            kennel.name = "North"
            kennel.puppies.append(objectsIn: [rex, bo])
            realm.add(kennel)
        }
        let types: [Object.Type] = [Caretaker.self, Kitten.self, CaredPuppy.self, CatteryKennel.self]
        Self.expectMigrationRequired(folder, types, naming: ["walker changed type", "puppies changed type", "favorite was added"])

        let realm = try Self.open(folder, types, version: 2) { migration, _ in
            var puppies: [String: MigrationObject] = [:]
            migration.enumerateObjects(ofType: "Puppy") { old, new in
                guard let old, let new else { return }
                // Old objects link to old objects; the retargeted link starts out empty.
                let walker = old["walker"] as? MigrationObject
                #expect(new["walker"] == nil)
                new["walker"] = walker.map { migration.create("Caretaker", value: ["name": $0["name"]]) }
                #expect((new["walker"] as? MigrationObject)?["name"] as? String == walker?["name"] as? String)
                puppies[new["name"] as? String ?? ""] = new
            }
            migration.enumerateObjects(ofType: "Kennel") { old, new in
                let oldPuppies = old?["puppies"] as? [MigrationObject] ?? []
                #expect(oldPuppies.map { $0["name"] as? String } == ["Rex", "Bo"])
                new?["puppies"] = oldPuppies.map { migration.create("Kitten", value: ["name": $0["name"]]) }
                new?["favorite"] = puppies["Rex"]
                #expect((new?["puppies"] as? [MigrationObject])?.count == 2)
            }
            #expect(migration.deleteData(forType: "Walker"))
        }
        let puppies = realm.objects(CaredPuppy.self)
        #expect(puppies.map { $0.walker?.name } == ["Ann", nil])
        let kennel = try #require(realm.objects(CatteryKennel.self).first)
        #expect(kennel.puppies.map(\.name) == ["Rex", "Bo"])
        #expect(kennel.favorite?.name == "Rex")
        #expect(realm.objects(Caretaker.self).count == 1)
        #expect(realm.objects(Kitten.self).count == 2)
        #expect(try Self.verifiedTables(folder).sorted() == ["Caretaker", "Kennel", "Kitten", "Puppy"])
    }

    // MARK: Value types

    @Test func newValueTypesAreReadAndWrittenAsTheirSwiftTypes() throws {
        let folder = TestFolder()
        let token = UUID()
        try Self.write(folder, [Coin.self, Wallet.self]) { realm in
            let penny = realm.create(Coin.self, value: ["name": "penny"])
            let ann = realm.create(Wallet.self, value: ["owner": "Ann", "balance": 12.5, "memo": AnyRealmValue.int(5), "token": token])
            ann.rates["usd"] = 1
            ann.rates["eur"] = 2
            let bo = realm.create(Wallet.self, value: ["owner": "Bo", "balance": 0.25])
            bo.memo = .object(penny)
            realm.create(Wallet.self, value: ["owner": "Cy"])
        }
        let types: [Object.Type] = [Coin.self, DecimalWallet.self]
        Self.expectMigrationRequired(folder, types,
                                     naming: ["balance changed type", "token changed type", "rates changed type", "code was added",
                                              "receipt was added", "extra was added", "history was added"])

        let code = ObjectId.generate()
        let receipt = UUID()
        let realm = try Self.open(folder, types, version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Wallet") { old, new in
                guard let old, let new else { return }
                // An AnyRealmValue property reads as AnyRealmValue; a link in it as the MigrationObject.
                let memo = old["memo"]
                switch old["owner"] as? String {
                case "Ann": #expect(memo as? AnyRealmValue == .int(5))
                case "Bo": #expect((memo as? MigrationObject)?["name"] as? String == "penny")
                default: #expect(memo as? AnyRealmValue == AnyRealmValue.none)
                }
                new["balance"] = Decimal128(old["balance"] as? Double ?? -1)
                new["token"] = (old["token"] as? UUID)?.uuidString
                new["rates"] = (old["rates"] as? [String: Int] ?? [:]).mapValues(Double.init)
                new["code"] = code
                new["receipt"] = receipt
                new["extra"] = memo is MigrationObject ? memo : AnyRealmValue.string(old["owner"] as? String ?? "")
                new["history"] = [AnyRealmValue.int(1), "two", nil, migration.create("Coin", value: ["name": "dime"])]
                #expect(new["balance"] as? Decimal128 == Decimal128(old["balance"] as? Double ?? -1))
                #expect(new["code"] as? ObjectId == code)
                #expect(new["receipt"] as? UUID == receipt)
                #expect(new["memo"] as? AnyRealmValue == memo as? AnyRealmValue)
            }
        }
        let wallets = realm.objects(DecimalWallet.self)
        #expect(wallets.map(\.balance) == [Decimal128(12.5), Decimal128(0.25), Decimal128(0)])
        #expect(wallets.map(\.token) == [token.uuidString, nil, nil])
        #expect(wallets[0].rates["eur"] == 2.0)
        #expect(wallets.map(\.code) == [code, code, code])
        #expect(wallets.map(\.receipt) == [receipt, receipt, receipt])
        // Unchanged AnyRealmValue properties keep their values through the migration.
        #expect(wallets[0].memo == .int(5))
        #expect(wallets[1].memo.object(Coin.self)?.name == "penny")
        #expect(wallets[2].memo == AnyRealmValue.none)
        #expect(wallets.map { $0.extra.stringValue } == ["Ann", nil, "Cy"])
        #expect(wallets[1].extra.object(Coin.self)?.name == "penny")
        #expect(wallets[0].history.count == 4)
        #expect(wallets[0].history[1] == .string("two"))
        #expect(wallets[0].history[2] == AnyRealmValue.none)
        #expect(wallets[0].history[3].object(Coin.self)?.name == "dime")
        try Self.verifiedTables(folder)
    }

    // MARK: Several versions at once

    @Test func aFileSeveralVersionsBehindTakesEveryStep() throws {
        let block: MigrationBlock = { migration, oldVersion in
            if oldVersion < 2 {
                migration.enumerateObjects(ofType: "Bee") { old, new in
                    new?["fullName"] = "\(old?["first"] as? String ?? "") \(old?["last"] as? String ?? "")"
                }
            }
            if oldVersion < 3 {
                migration.enumerateObjects(ofType: "Bee") { _, new in
                    new?["letters"] = (new?["fullName"] as? String ?? "").count
                }
            }
        }
        let first = TestFolder()
        try Self.write(first, [Bee.self], version: 1) { realm in realm.create(Bee.self, value: ["first": "Maya", "last": "Bee"]) }
        let second = TestFolder()
        try Self.write(second, [NamedBee.self], version: 2) { realm in realm.create(NamedBee.self, value: ["fullName": "Willy"]) }

        let fromFirst = try Self.open(first, [MeasuredBee.self], version: 3, migration: block)
        #expect(fromFirst.objects(MeasuredBee.self).map { "\($0.fullName) \($0.letters)" } == ["Maya Bee 8"])
        let fromSecond = try Self.open(second, [MeasuredBee.self], version: 3, migration: block)
        #expect(fromSecond.objects(MeasuredBee.self).map { "\($0.fullName) \($0.letters)" } == ["Willy 5"])
        try Self.verifiedTables(first)
        try Self.verifiedTables(second)
    }

    // MARK: What the block sees

    @Test func oldObjectsShowTheFileAsTheMigrationFoundIt() throws {
        let folder = TestFolder()
        try Self.write(folder, [Bee.self]) { realm in realm.create(Bee.self, value: ["first": "Maya", "last": "Bee"]) }
        // No schema change: a higher version with a block still runs it.
        let realm = try Self.open(folder, [Bee.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Bee") { old, new in
                new?["first"] = old?["last"]
                new?["last"] = old?["first"]
                #expect(old?["first"] as? String == "Maya")
            }
        }
        #expect(realm.objects(Bee.self).map { "\($0.first) \($0.last)" } == ["Bee Maya"])
        try Self.verifiedTables(folder)
    }

    @Test func enumerationSkipsDeletedObjectsAndObjectsCreatedByTheBlock() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self]) { realm in
            for name in ["Ada", "Bea", "Cat"] { realm.create(Hen.self, value: ["name": name]) }
        }
        var seen: [String] = []
        let realm = try Self.open(folder, [Hen.self], version: 2) { migration, _ in
            migration.enumerateObjects(ofType: "Hen") { old, new in
                guard let new else { return }
                if old?["name"] as? String == "Bea" {
                    migration.delete(new)
                    migration.create("Hen", value: ["name": "Dot"])
                }
            }
            migration.enumerateObjects(ofType: "Hen") { old, _ in seen.append(old?["name"] as? String ?? "") }
        }
        #expect(seen == ["Ada", "Cat"])
        #expect(realm.objects(Hen.self).map(\.name) == ["Ada", "Cat", "Dot"])
        try Self.verifiedTables(folder)
    }

    @Test func performMigrationMigratesWithoutKeepingTheRealmOpen() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self]) { realm in realm.create(Hen.self, value: ["name": "Ada", "age": 4]) }
        var configuration = folder.configuration([HenWithoutSecret.self])
        configuration.schemaVersion = 2
        var ran = 0
        configuration.migrationBlock = { _, _ in ran += 1 }
        try Realm.performMigration(for: configuration)
        try Realm.performMigration(for: configuration)
        #expect(ran == 1)
        #expect(try Realm(configuration: configuration).objects(HenWithoutSecret.self).first?.age == 4)
        try Self.verifiedTables(folder)
    }

    @Test func withoutObjectTypesTheBlockEditsTheFilesClasses() throws {
        let folder = TestFolder()
        try Self.write(folder, [Hen.self]) { realm in realm.create(Hen.self, value: ["name": "Ada", "age": 1]) }
        var configuration = folder.configuration()
        configuration.schemaVersion = 2
        configuration.migrationBlock = { migration, _ in
            migration.enumerateObjects(ofType: "Hen") { old, new in new?["age"] = (old?["age"] as? Int ?? 0) + 1 }
        }
        _ = try Realm(configuration: configuration)
        #expect(try Self.open(folder, [Hen.self], version: 2).objects(Hen.self).first?.age == 2)
        try Self.verifiedTables(folder)
    }

    @Test func linkingToAnObjectOfTheWrongClassTraps() async {
        await #expect(processExitsWith: .failure) {
            let folder = TestFolder()
            try MigrationTests.write(folder, [Walker.self, Puppy.self]) { realm in
                realm.create(Puppy.self, value: ["name": "Rex"])
            }
            _ = try MigrationTests.open(folder, [Walker.self, Puppy.self, Kitten.self], version: 2) { migration, _ in
                migration.enumerateObjects(ofType: "Puppy") { _, new in
                    new?["walker"] = migration.create("Kitten", value: ["name": "Tom"])
                }
            }
        }
    }
}
