import Foundation
import OpenRealm
import Testing

/// Misuse that breaks the threading rules traps with a message naming the rule (exit tests).
@Suite struct ConfinementTests {
    /// Smuggles a live realm past the compiler, as Swift 5 code or an `@unchecked` box could.
    final class Smuggled: @unchecked Sendable {
        var realm: Realm?
        var dog: Dog?
    }

    actor Owner {
        func open(into box: Smuggled, _ configuration: Realm.Configuration) throws {
            box.realm = try Realm(configuration: configuration)
        }
    }

    @Test func aRealmUsedOnAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            box.realm = try Realm(configuration: folder.configuration())
            let thread = Thread { _ = box.realm!.objects(Dog.self).count }
            thread.start()
            usleep(10_000_000)
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
    }

    @Test func anObjectReadOnAnotherThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            let realm = try Realm(configuration: folder.configuration())
            box.dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
            let thread = Thread { _ = box.dog!.name }
            thread.start()
            usleep(10_000_000)
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
    }

    @Test func aRealmOfAnActorUsedOutsideItTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            try await Owner().open(into: box, folder.configuration())
            _ = box.realm!.objects(Dog.self).count
        }
        // The runtime's executor check names the actor the realm belongs to.
        MisuseTests.expectRule(result, "Owner")
    }

    @Test func asyncWriteOnARealmOfAThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            // Opened outside any actor: after a suspension this task may run on another thread.
            let realm = try Realm(configuration: folder.configuration())
            try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "Rex"]) }
        }
        MisuseTests.expectRule(result, "needs a realm opened on the calling actor")
    }

    @Test func changingAFrozenObjectTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            let dog = try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }.freeze()
            try realm.write { dog.name = "Max" }
        }
        MisuseTests.expectRule(result, "Cannot modify a frozen object")
    }

    @Test func addingToAFrozenRealmTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let frozen = try Realm(configuration: folder.configuration()).freeze()
            frozen.add(Dog())
        }
        MisuseTests.expectRule(result, "Cannot add objects in a frozen realm")
    }

    @Test func freezingInsideAWriteTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            try realm.write { _ = realm.freeze() }
        }
        MisuseTests.expectRule(result, "Cannot freeze a Realm inside a write transaction")
    }

    @Test func frozenDataNeedsNoConfinement() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let snapshot = Frozen(realm.objects(Dog.self).first!)
        let name = await Task.detached { snapshot.value.name }.value
        #expect(name == "Rex")
    }
}
