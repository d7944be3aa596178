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

    /// What a route handler of Hummingbird or Vapor does: opens a realm in a nonisolated async
    /// function and uses it across awaits, after which the task may run on another thread.
    /// The realm belongs to the task, so this works whichever threads the task runs on (with
    /// the realm confined to the opening thread, some of these tasks trapped).
    @Test func aRealmOpenedInATaskOutsideAnyActorServesItAcrossAwaits() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        // Writes with asyncWrite only: a blocking write { } in some tasks would hold the
        // cooperative threads that the tasks waiting in asyncWrite need to resume on.
        @Sendable func handler(_ n: Int) async throws -> Int {
            let realm = try Realm(configuration: configuration)
            for step in 0..<10 {
                try await realm.asyncWrite { realm.create(Dog.self, value: ["name": "dog \(n)-\(step)"]) }
                await Task.yield()
                #expect(realm.objects(Dog.self).filter("name BEGINSWITH %@", "dog \(n)-").count == step + 1)
            }
            return realm.objects(Dog.self).filter("name BEGINSWITH %@", "dog \(n)-").count
        }
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for n in 0..<24 { group.addTask { try await handler(n) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(counts == Array(repeating: 10, count: 24))
        #expect(try Realm(configuration: configuration).objects(Dog.self).count == 24 * 10)
    }

    @Test func aRealmOfATaskUsedByAnotherTaskTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let box = Smuggled()
            box.realm = try Realm(configuration: folder.configuration())
            await Task.detached { _ = box.realm!.objects(Dog.self).count }.value
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect thread")
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
