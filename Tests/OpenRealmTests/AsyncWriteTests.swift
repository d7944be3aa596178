import Foundation
import OpenRealm
import Testing

/// Async writes through the public API: `asyncWrite` from an actor, `RealmActor`, rollback on
/// errors and cancellation, and many tasks committing at once (group commit).
@Suite struct AsyncWriteTests {
    /// An actor with a realm of its own, as server code would write one.
    actor Kennel {
        let configuration: Realm.Configuration
        init(_ configuration: Realm.Configuration) { self.configuration = configuration }

        func admit(_ name: String) async throws -> Int {
            let realm = try await Realm.open(configuration: configuration)
            try await realm.asyncWrite {
                let dog = Dog()
                dog.name = name
                realm.add(dog)
            }
            return realm.objects(Dog.self).count
        }

        func schemaVersionAfterOpening() async throws -> UInt64 {
            try await Realm.open(configuration: configuration).schemaVersionOfFile
        }

        func admitWithSeedInit(_ name: String) async throws {
            let realm = try await Realm(configuration: configuration, actor: self)
            try await realm.asyncWrite { realm.create(Dog.self, value: ["name": name]) }
        }
    }

    struct Refused: Error {}

    @Test func anActorWritesWithAsyncWrite() async throws {
        let folder = TestFolder()
        let kennel = Kennel(folder.configuration())
        #expect(try await kennel.admit("Rex") == 1)
        #expect(try await kennel.admit("Fido") == 2)
        try await kennel.admitWithSeedInit("Bo")
        let realm = try Realm(configuration: folder.configuration())
        #expect(Set(realm.objects(Dog.self).map(\.name)) == ["Rex", "Fido", "Bo"])
    }

    @Test func openingOnAnActorRecordsANewSchemaVersion() async throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        _ = try await Kennel(configuration).admit("Rex")
        configuration.schemaVersion = 2
        let version = try await Kennel(configuration).schemaVersionAfterOpening()
        #expect(version == 2)
    }

    @Test func manyTasksCommitThroughOneRealmActor() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        try await withThrowingTaskGroup(of: Int.self) { group in
            for id in 0..<64 {
                group.addTask {
                    try await store.write { realm in
                        realm.create(Person.self, value: ["id": id, "name": "person \(id)"])
                        return id
                    }
                }
            }
            var returned: Set<Int> = []
            for try await id in group { returned.insert(id) }
            #expect(returned == Set(0..<64))
        }
        let count = try await store.read { realm in realm.objects(Person.self).count }
        #expect(count == 64)
        // Another realm of the file sees every commit once its write returned.
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Person.self).count == 64)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 63)?.name == "person 63")
    }

    @Test func manyActorsWithRealmsOfTheirOwnCommitTogether() async throws {
        let folder = TestFolder()
        let kennels = (0..<16).map { _ in Kennel(folder.configuration()) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (i, kennel) in kennels.enumerated() {
                group.addTask { for j in 0..<4 { _ = try await kennel.admit("dog \(i)-\(j)") } }
            }
            try await group.waitForAll()
        }
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Dog.self).count == 64)
    }

    @Test func aThrowingBlockRollsBack() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        await #expect(throws: Refused.self) {
            try await store.write { realm in
                realm.create(Person.self, value: ["id": 1])
                throw Refused()
            }
        }
        #expect(try await store.read { $0.objects(Person.self).count } == 0)
        // The lane is free again.
        try await store.write { realm in _ = realm.create(Person.self, value: ["id": 2]) }
        #expect(try await store.read { $0.objects(Person.self).count } == 1)
    }

    @Test func cancellationInsideTheBlockRollsBack() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        let task = Task {
            try await store.write { realm in
                realm.create(Person.self, value: ["id": 1])
                withUnsafeCurrentTask { $0?.cancel() }
            }
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await store.read { $0.objects(Person.self).count } == 0)
    }

    @Test @TestActor func aTaskCancelledBeforeItsTurnWritesNothing() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()                         // holds the write lane
        let store = RealmActor(configuration: folder.configuration())
        let task = Task {
            try await store.write { realm in _ = realm.create(Person.self, value: ["id": 1]) }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        holder.create(Person.self, value: ["id": 2])
        try holder.commitWrite()
        #expect(try await store.read { $0.objects(Person.self).map(\.id) } == [2])
    }

    @Test @TestActor func asyncWriteInsideAWriteIsRefused() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        realm.beginWrite()
        await #expect(throws: Realm.Error.self) { try await realm.asyncWrite {} }
        realm.cancelWrite()
        try await realm.asyncWrite { realm.create(Person.self, value: ["id": 7]) }
        #expect(realm.objects(Person.self).count == 1)
    }

    @Test @TestActor func commitWriteAsyncWithoutGroupingIsDurableOnReturn() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try await realm.beginWriteAsync()
        realm.create(Person.self, value: ["id": 1])
        try await realm.commitWriteAsync(allowGrouping: false)
        #expect(!realm.isInWriteTransaction)
        let other = try Realm(configuration: folder.configuration())
        #expect(other.object(ofType: Person.self, forPrimaryKey: 1) != nil)
    }
}
