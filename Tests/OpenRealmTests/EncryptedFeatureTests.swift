import Foundation
import OpenRealm
import Testing
import TestSupport

/// Encryption with every other feature (issue 29, point 4): group commit, frozen snapshots,
/// notifications, migrations, async opening, actors and in-memory realms, each on a realm with
/// a 64-byte `encryptionKey`; and a key of the wrong length through every entry point.
@Suite struct EncryptedFeatureTests {
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })
    static let otherKey = Data(repeating: 0x3C, count: 64)

    static func configuration(_ folder: TestFolder, _ types: [Object.Type]? = nil, key: Data? = key) -> Realm.Configuration {
        var configuration = folder.configuration(types)
        configuration.encryptionKey = key
        return configuration
    }

    /// `EncryptionKeyTests.code` (the synchronous one) for async calls.
    static func code(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> Void) async -> Realm.Error.Code? {
        do {
            try await body()
            return nil
        } catch {
            return (error as? Realm.Error)?.code
        }
    }

    /// Reopens the file from scratch (no store of this process has it open), checks every node
    /// under the key, and checks that none of `plaintext` is in the file's bytes.
    static func reopenAndVerify(_ configuration: Realm.Configuration, plaintext: [String] = [],
                                sourceLocation: SourceLocation = #_sourceLocation) throws -> Realm {
        #expect(!isOpenInThisProcess(configuration), "the file is still open: this would not reopen it", sourceLocation: sourceLocation)
        let raw = [UInt8](try Data(contentsOf: configuration.fileURL!))
        for text in plaintext {
            #expect(!containsRun(raw, Array(text.utf8)), "found \(text) in the file", sourceLocation: sourceLocation)
        }
        var verifying = configuration
        verifying.verifyIntegrityOnOpen = true
        return try Realm(configuration: verifying)
    }

    // MARK: (a) Group commit

    /// An actor with a realm of its own, opened with `Realm.open` (off the task's thread).
    actor Kennel {
        let configuration: Realm.Configuration
        init(_ configuration: Realm.Configuration) { self.configuration = configuration }

        func admit(_ name: String) async throws {
            let realm = try await Realm.open(configuration: configuration)
            try await realm.asyncWrite { realm.create(Dog.self, value: ["name": name, "breed": "Encrypted Hound"]) }
        }
    }

    @Test func manyTasksCommitTogetherAndTheirWritesSurviveReopeningWithTheKey() async throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder)
        let store = RealmActor(configuration: configuration)
        let kennels = (0..<8).map { _ in Kennel(configuration) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for id in 0..<64 {
                group.addTask {
                    try await store.write { realm in _ = realm.create(Person.self, value: ["id": id, "name": "Secret Person \(id)"]) }
                }
            }
            for (i, kennel) in kennels.enumerated() {
                group.addTask { for j in 0..<4 { try await kennel.admit("Secret Dog \(i)-\(j)") } }
            }
            try await group.waitForAll()
        }
        #expect(try await store.read { $0.objects(Person.self).count } == 64)
        await store.close()
        let realm = try Self.reopenAndVerify(configuration, plaintext: ["Secret Person", "Secret Dog", "Encrypted Hound"])
        #expect(Set(realm.objects(Person.self).map(\.id)) == Set(0..<64))
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 63)?.name == "Secret Person 63")
        #expect(realm.objects(Dog.self).count == 32)
        var wrong = configuration
        wrong.encryptionKey = Self.otherKey
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: wrong) } == .decryptionFailed)
    }

    // MARK: (b) Frozen snapshots

    @Test @TestActor func frozenSnapshotsReadFromOtherTasksWhileWritesGoOn() async throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder)
        let realm = try Realm(configuration: configuration)
        try realm.write { for id in 0..<100 { realm.create(Person.self, value: ["id": id, "name": "p\(id)", "score": Double(id)]) } }
        let snapshot = Frozen(realm)
        let writer = RealmActor(configuration: configuration)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for batch in 1...10 {
                    try await writer.write { realm in
                        for id in (batch * 100)..<(batch * 100 + 10) { realm.create(Person.self, value: ["id": id, "score": 1.0]) }
                        realm.object(ofType: Person.self, forPrimaryKey: batch)?.name = "renamed"
                    }
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<20 {
                        let frozen = snapshot.value
                        let people = frozen.objects(Person.self)
                        #expect(frozen.isFrozen)
                        #expect(people.count == 100)
                        #expect(people.sum(ofProperty: "score") as Double == 4950)
                        #expect(!people.contains { $0.name == "renamed" })
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(snapshot.value.objects(Person.self).count == 100)
        realm.refresh()
        #expect(realm.objects(Person.self).count == 200)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 5)?.name == "renamed")
        await writer.close()
    }

    // MARK: (c) Notifications

    @Test func collectionAndObjectObserversGetFineGrainedChanges() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: Self.configuration(folder))
        try realm.addChores([1, 2, 3])
        let collection = Recorder<CollectionEvent>()
        let collectionToken = realm.objects(Chore.self).observe { collection.record(CollectionEvent($0)) }
        let object = Recorder<ObjectEvent>()
        let objectToken = realm.chore(3).observe { object.record(ObjectEvent($0)) }
        realm.refresh()
        #expect(collection.take() == [.initial])
        #expect(object.take().isEmpty)
        try realm.commitAndDeliver {
            realm.delete(realm.chore(2))
            realm.create(Chore.self, value: ["id": 4])
            realm.chore(3).title = "changed"
        }
        #expect(collection.take() == [.update(deletions: [1], insertions: [2], modifications: [1])])
        #expect(object.take() == [.changed(("title", "c3", "changed"))])
        try realm.commitAndDeliver { realm.delete(realm.chore(3)) }
        #expect(collection.take() == [.update(deletions: [1])])
        #expect(object.take() == [.deleted])
        withExtendedLifetime((collectionToken, objectToken)) {}
    }

    @Test @TestActor func changeSequencesDeliverCommitsOfOtherThreads() async throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder)
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        var changes = realm.objects(Chore.self).sorted(byKeyPath: "rank").changes.makeAsyncIterator()
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": 2, "rank": 0]) }
        let update = await changes.next(isolation: #isolation)
        #expect(update.map(CollectionEvent.init) == .update(insertions: [0]))
        if case .update(let chores, _, _, _) = update { #expect(chores.map(\.id) == [2, 1]) }
        try await realm.asyncWrite { realm.chore(1).rank = -1 }
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init)
                == .update(deletions: [1], insertions: [0]))
    }

    // MARK: (d) Migrations

    @Test func aMigrationRenamesAndAddsPropertiesOfAnEncryptedFile() throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: Self.configuration(folder, [Dog.self]))
            try realm.write {
                for (i, name) in ["Rexalot", "Fidomatic", "Bonaparte"].enumerated() { realm.create(Dog.self, value: ["name": name, "age": i + 1]) }
            }
        }
        var configuration = Self.configuration(folder, [DogV2.self])
        configuration.schemaVersion = 1
        configuration.migrationBlock = { migration, _ in
            migration.renameProperty(onType: "Dog", from: "name", to: "title")
            migration.enumerateObjects(ofType: "Dog") { old, new in new?["weight"] = Double(old?["age"] as? Int ?? 0) * 2.5 }
        }
        do {
            let realm = try Realm(configuration: configuration)
            #expect(realm.objects(DogV2.self).map(\.title) == ["Rexalot", "Fidomatic", "Bonaparte"])
            #expect(realm.schemaVersionOfFile == 1)
        }
        configuration.migrationBlock = nil
        let realm = try Self.reopenAndVerify(configuration, plaintext: ["Rexalot", "Fidomatic", "weight", "title"])
        #expect(realm.objects(DogV2.self).map(\.weight) == [2.5, 5, 7.5])
        #expect(realm.schemaVersionOfFile == 1)
        var plain = configuration
        plain.encryptionKey = nil
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: plain) } == .decryptionFailed)
    }

    @Test @TestActor func aMigrationRunsWhenAnEncryptedFileIsOpenedAsynchronously() async throws {
        let folder = TestFolder()
        do {
            let realm = try Realm(configuration: Self.configuration(folder, [Dog.self]))
            try realm.write { realm.create(Dog.self, value: ["name": "Rex", "age": 4]) }
        }
        var configuration = Self.configuration(folder, [DogV2.self])
        configuration.schemaVersion = 2
        configuration.migrationBlock = { migration, _ in migration.renameProperty(onType: "Dog", from: "name", to: "title") }
        let realm = try await Realm.open(configuration: configuration)
        #expect(realm.objects(DogV2.self).first?.title == "Rex")
        #expect(realm.schemaVersionOfFile == 2)
    }

    // MARK: (e) Opening asynchronously

    @Test @TestActor func anEncryptedRealmOpensAsynchronouslyWithItsKeyOnly() async throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder, [Dog.self])
        do {
            let realm = try await Realm.open(configuration: configuration)
            try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "Rex"]) }
        }
        var wrong = configuration
        wrong.encryptionKey = Self.otherKey
        #expect(await Self.code { _ = try await Realm.open(configuration: wrong) } == .decryptionFailed)
        #expect(await Self.code { _ = try await Realm(configuration: wrong, actor: TestActor.shared) } == .decryptionFailed)
        var none = configuration
        none.encryptionKey = nil
        #expect(await Self.code { _ = try await Realm.open(configuration: none) } == .decryptionFailed)
        #expect(await Self.code { _ = try await RealmActor(configuration: wrong).read { $0.objects(Dog.self).count } } == .decryptionFailed)
        let realm = try await Realm(configuration: configuration, actor: TestActor.shared)
        #expect(realm.objects(Dog.self).first?.name == "Rex")
    }

    /// `Realm.open` opens the file (checking the key against the header, decrypting the
    /// header page and recovering) on a dispatch queue, not on the task's thread, with a key
    /// as without one, and with a migration block too.
    @Test @TestActor func anEncryptedFileIsOpenedOffTheTasksThread() async throws {
        for migrating in [false, true] {
            let folder = TestFolder()
            var configuration = Self.configuration(folder, [Dog.self])
            let inTask = FaultSwitch()
            inTask.set(true)
            configuration.recordOpening(inTask: inTask)
            if migrating {
                _ = try Realm(configuration: configuration)
                #expect(inTask.isOn, "the synchronous open ran in the test's task")
                configuration.schemaVersion = 1
                configuration.migrationBlock = { _, _ in }
            }
            let realm = try await Realm.open(configuration: configuration)
            #expect(!inTask.isOn, "the file was opened in the task, migrating: \(migrating)")
            try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "Rex"]) }
            #expect(realm.objects(Dog.self).count == 1)
        }
    }

    /// Another realm of this process having the file open must not let a wrong key, or none,
    /// share its store (it was checked against the header only once, with the right key).
    @Test @TestActor func aWrongKeyIsRefusedWhileTheFileIsOpenWithTheRightOne() async throws {
        let folder = TestFolder()
        let configuration = Self.configuration(folder, [Dog.self])
        let open = try Realm(configuration: configuration)
        try open.write { open.create(Dog.self, value: ["name": "Rex"]) }
        var wrong = configuration
        wrong.encryptionKey = Self.otherKey
        var none = configuration
        none.encryptionKey = nil
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: wrong) } == .decryptionFailed)
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: none) } == .decryptionFailed)
        #expect(await Self.code { _ = try await Realm.open(configuration: wrong) } == .decryptionFailed)
        #expect(await Self.code { _ = try await Realm.open(configuration: none) } == .decryptionFailed)
        // And the other way round: a key for a plain file another realm has open.
        let plainFolder = TestFolder()
        let plain = try Realm(configuration: plainFolder.configuration([Dog.self]))
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: Self.configuration(plainFolder, [Dog.self])) } == .decryptionFailed)
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 1)
        withExtendedLifetime((open, plain)) {}
    }

    // MARK: (f) In memory

    /// A realm in memory never reaches a disk, so its key encrypts nothing; it is still checked
    /// for its length, and every opener of one identifier must give the key it was first
    /// opened with (as Realm refuses a configuration that does not match the open one).
    @Test @TestActor func aRealmInMemoryTakesAKeyAndItsOpenersMustAgreeOnIt() async throws {
        var configuration = Realm.Configuration(inMemoryIdentifier: "memory-\(UUID().uuidString)", encryptionKey: Self.key)
        configuration.objectTypes = [Dog.self]
        let realm = try await Realm.open(configuration: configuration)
        try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 1)
        var wrong = configuration
        wrong.encryptionKey = Self.otherKey
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: wrong) } == .decryptionFailed)
        #expect(await Self.code { _ = try await Realm.open(configuration: wrong) } == .decryptionFailed)
        var none = configuration
        none.encryptionKey = nil
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: none) } == .decryptionFailed)
        withExtendedLifetime(realm) {}
        // An identifier opened without a key refuses one.
        var plain = Realm.Configuration(inMemoryIdentifier: "memory-\(UUID().uuidString)")
        plain.objectTypes = [Dog.self]
        let plainRealm = try Realm(configuration: plain)
        plain.encryptionKey = Self.key
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: plain) } == .decryptionFailed)
        withExtendedLifetime(plainRealm) {}
    }

    // MARK: (g) A key of the wrong length

    @Test(arguments: [0, 32, 63, 65])
    @TestActor func aKeyOfAnotherLengthIsAnInvalidArgumentEverywhere(length: Int) async throws {
        let folder = TestFolder()
        let bad = Data(repeating: 7, count: length)
        let badConfiguration = Self.configuration(folder, [Dog.self], key: bad)
        #expect(EncryptionKeyTests.code { _ = try Realm(configuration: badConfiguration) } == .invalidArgument)
        #expect(await Self.code { _ = try await Realm.open(configuration: badConfiguration) } == .invalidArgument)
        #expect(await Self.code { _ = try await Realm(configuration: badConfiguration, actor: TestActor.shared) } == .invalidArgument)
        #expect(await Self.code { _ = try await RealmActor(configuration: badConfiguration).read { $0.objects(Dog.self).count } } == .invalidArgument)
        #expect(EncryptionKeyTests.code { _ = try Realm.compact(configuration: badConfiguration) } == .invalidArgument)
        #expect(!FileManager.default.fileExists(atPath: badConfiguration.fileURL!.path))
        var memory = badConfiguration
        memory.inMemoryIdentifier = "memory-\(UUID().uuidString)"
        #expect(await Self.code { _ = try await Realm.open(configuration: memory) } == .invalidArgument)
        #expect(EncryptionKeyTests.code { _ = try Realm.compact(configuration: memory) } == .invalidArgument)
        // Copies: from a plain and from an encrypted realm, on the realm and on a RealmActor,
        // inside a write transaction too.
        for key in [nil, Self.key] {
            let source = TestFolder()
            let realm = try Realm(configuration: Self.configuration(source, [Dog.self], key: key))
            try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            let copy = source.url.appendingPathComponent("copy.realm")
            #expect(EncryptionKeyTests.code { try realm.writeCopy(toFile: copy, encryptionKey: bad) } == .invalidArgument)
            #expect(EncryptionKeyTests.code { try realm.write { try realm.writeCopy(toFile: copy, encryptionKey: bad) } } == .invalidArgument)
            #expect(EncryptionKeyTests.code { try realm.writeCopy(toFile: copy, encryptionKey: bad, compression: .none) } == .invalidArgument)
            let actor = RealmActor(configuration: realm.configuration)
            #expect(await Self.code { try await actor.writeCopy(toFile: copy, encryptionKey: bad) } == .invalidArgument)
            #expect(!FileManager.default.fileExists(atPath: copy.path))
            await actor.close()
            // Compacting the file that now exists.
            var compacting = realm.configuration
            compacting.encryptionKey = bad
            #expect(EncryptionKeyTests.code { _ = try Realm.compact(configuration: compacting) } == .invalidArgument)
        }
    }
}
