import Foundation
import OpenRealm
import Testing
import TestSupport

/// Observing where Realm refuses it traps with a message naming the rule (exit tests).
@Suite(.childProcesses) struct NotificationMisuseTests {
    @Test func observingAFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let frozen = try Realm(configuration: folder.configuration()).freeze()
            _ = frozen.observe { _, _ in }
        }
        MisuseTests.expectRule(result, "Frozen Realms do not change and do not have change notifications.")
    }

    @Test func observingFrozenResultsTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            _ = realm.objects(Dog.self).freeze().observe { _ in }
        }
        MisuseTests.expectRule(result, "Frozen Realms do not change and do not have change notifications.")
    }

    @Test func observingAFrozenObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let dog = try realm.write { realm.create(Dog.self) }
            _ = dog.freeze().observe { _ in }
        }
        MisuseTests.expectRule(result, "Frozen Realms do not change and do not have change notifications.")
    }

    @Test func observingInsideAWriteTransactionTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            try realm.write { _ = realm.objects(Dog.self).observe { _ in } }
        }
        MisuseTests.expectRule(result, "Cannot register notification blocks from within write transactions.")
    }

    @Test func observingAnUnmanagedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Dog().observe { _ in }
        }
        MisuseTests.expectRule(result, "Only objects which are managed by a Realm support change notifications")
    }

    @Test func observingAnUnmanagedListTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            _ = Roster().chores.observe { _ in }
        }
        MisuseTests.expectRule(result, "Change notifications are only supported on managed collections.")
    }

    @Test func observingADeletedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let dog = try realm.write { realm.create(Dog.self) }
            try realm.write { realm.delete(dog) }
            _ = dog.observe { _ in }
        }
        MisuseTests.expectRule(result, "Object has been deleted or invalidated")
    }

    @Test func observingAnInvalidatedObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let dog = try realm.write { realm.create(Dog.self) }
            realm.invalidate()
            _ = dog.observe { _ in }
        }
        MisuseTests.expectRule(result, "Object has been deleted or invalidated")
    }

    @Test func observingAReadOnlyRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            try Realm(configuration: folder.configuration()).write {}
            var configuration = folder.configuration()
            configuration.readOnly = true
            _ = try Realm(configuration: configuration).observe { _, _ in }
        }
        MisuseTests.expectRule(result, "Read-only Realms do not change and do not have change notifications.")
    }

    @Test func aKeyPathNamingNoPropertyTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            _ = realm.objects(Dog.self).observe(keyPaths: ["nmae"]) { _ in }
        }
        MisuseTests.expectRule(result, "Property 'nmae' in KeyPath 'nmae' is not a valid property in Dog.")
    }

    @Test func aKeyPathGoingOnPastAValueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            _ = realm.objects(Dog.self).observe(keyPaths: ["name.count"]) { _ in }
        }
        MisuseTests.expectRule(result, "cannot be used as an intermediate keypath")
    }

    @Test func skippingATokenOfAnotherRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let other = try Realm(configuration: folder.configuration())
            let token = other.objects(Dog.self).observe { _ in }
            try realm.write(withoutNotifying: [token]) { realm.add(Dog()) }
        }
        MisuseTests.expectRule(result, "Incorrect Realm: only notifications for the Realm being modified can be skipped.")
    }

    @Test func observingOnAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = ConfinementTests.Smuggled()
            box.realm = try Realm(configuration: folder.configuration())
            let thread = Thread { _ = box.realm!.objects(Dog.self).observe { _ in } }
            thread.start()
            usleep(10_000_000)
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
    }

    @Test func iteratingChangesOfARealmOfATaskTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            // Opened in a task outside any actor: it belongs to the task, and nothing can
            // deliver changes to a task.
            let realm = try Realm(configuration: folder.configuration())
            for await _ in realm.objects(Dog.self).changes {}
        }
        MisuseTests.expectRule(result, "needs a realm opened on an actor")
    }
}
