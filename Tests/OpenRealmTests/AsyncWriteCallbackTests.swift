import Foundation
import OpenRealm
import Testing
import TestSupport

/// The seeds' callback family of async writes, on realms confined to a dispatch queue or an
/// actor; autorefresh and asyncRefresh.
@Suite(.childProcesses) struct AsyncWriteCallbackTests {
    /// Runs `body` on `queue`; it answers (from the queue) through `done`.
    static func onQueue<T: Sendable>(_ queue: DispatchQueue, _ body: @escaping @Sendable (_ done: @escaping @Sendable (T) -> Void) -> Void) async -> T {
        await withCheckedContinuation { continuation in
            queue.async { body { continuation.resume(returning: $0) } }
        }
    }

    /// A realm kept between blocks on its queue (only touched there).
    final class QueueRealm: @unchecked Sendable {
        var realm: Realm?
    }

    /// The seed's example: append dogs to a person's list in `writeAsync`; the completion runs on
    /// the realm's queue and sees them.
    @Test func seedWriteAsyncExample() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { realm.create(Shelter.self, value: ["name": "Dachary"]) }
        }
        let queue = DispatchQueue(label: "seed")
        let (names, failed): ([String], Bool) = await Self.onQueue(queue) { done in
            let realm = try! Realm(configuration: configuration, queue: queue)
            let shelters = realm.objects(Shelter.self)
            let thisPerson = shelters.where { $0.name == "Dachary" }.first
            realm.writeAsync {
                thisPerson?.pets.append(objectsIn: [
                    Pet(value: ["name": "Ben"]),
                    Pet(value: ["name": "Lita"]),
                    Pet(value: ["name": "Maui"]),
                ])
            } onComplete: { error in
                dispatchPrecondition(condition: .onQueue(queue))
                let benDogs = realm.objects(Pet.self).where { $0.name == "Ben" }
                #expect(benDogs.count == 1)
                done((thisPerson!.pets.map(\.name), error != nil))
            }
        }
        #expect(names == ["Ben", "Lita", "Maui"])
        #expect(!failed)
    }

    @Test func asyncWritesRunInOrderAndGroupedCommitsAllComplete() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let queue = DispatchQueue(label: "order")
        let (completed, busyAfterQueueing, busyAtEnd, count): ([Int], Bool, Bool, Int) = await Self.onQueue(queue) { done in
            let realm = try! Realm(configuration: configuration, queue: queue)
            var completed: [Int] = []
            var ids: [AsyncTransactionId] = []
            for i in 0..<20 {
                ids.append(realm.beginAsyncWrite {
                    realm.create(Person.self, value: ["id": i, "name": "p\(i)"])
                    realm.commitAsyncWrite(allowGrouping: true) { error in
                        #expect(error == nil)
                        completed.append(i)
                        if completed.count == 20 {
                            done((completed, true, realm.isPerformingAsynchronousWriteOperations, realm.objects(Person.self).count))
                        }
                    }
                })
            }
            #expect(ids == ids.sorted() && Set(ids).count == 20)
            #expect(realm.isPerformingAsynchronousWriteOperations)
        }
        #expect(completed == Array(0..<20))
        #expect(busyAfterQueueing && !busyAtEnd)
        #expect(count == 20)
        #expect(try Realm(configuration: configuration).objects(Person.self).count == 20)
    }

    @Test func beginAsyncWriteWithoutACommitIsCancelled() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let queue = DispatchQueue(label: "cancel")
        let (count, ran): (Int, [String]) = await Self.onQueue(queue) { done in
            let realm = try! Realm(configuration: configuration, queue: queue)
            var ran: [String] = []
            realm.beginAsyncWrite {
                ran.append("left open")
                realm.create(Person.self, value: ["id": 1])
            }
            let queued = realm.beginAsyncWrite { ran.append("cancelled while queued") }
            try! realm.cancelAsyncWrite(queued)
            realm.writeAsync {
                ran.append("cancels itself")
                realm.create(Person.self, value: ["id": 2])
                realm.cancelWrite()
            } onComplete: { error in
                #expect(error == nil)
                ran.append("completed")
            }
            // A commit whose callback is cancelled still commits.
            realm.beginAsyncWrite {
                realm.create(Person.self, value: ["id": 3])
                let commit = realm.commitAsyncWrite { _ in ran.append("cancelled callback") }
                try! realm.cancelAsyncWrite(commit)
            }
            realm.writeAsync {
                realm.create(Person.self, value: ["id": 4])
            } onComplete: { _ in
                done((realm.objects(Person.self).count, ran))
            }
        }
        #expect(ran == ["left open", "cancels itself", "completed"])
        #expect(count == 2)
        let realm = try Realm(configuration: configuration)
        #expect(realm.objects(Person.self).map(\.id).sorted() == [3, 4])
        #expect(throws: Realm.Error.self) { try realm.cancelAsyncWrite(99) }
    }

    actor Clerk {
        func record(_ names: [String], _ configuration: Realm.Configuration) async throws -> Int {
            let realm = try await Realm.open(configuration: configuration)
            return await withCheckedContinuation { continuation in
                var left = names.count
                for name in names {
                    realm.writeAsync {
                        realm.create(Dog.self, value: ["name": name])
                    } onComplete: { error in
                        // The callback runs on this actor: the realm is usable.
                        #expect(error == nil)
                        left -= 1
                        if left == 0 { continuation.resume(returning: realm.objects(Dog.self).count) }
                    }
                }
            }
        }
    }

    @Test func callbacksOfAnActorsRealmRunOnTheActor() async throws {
        let folder = TestFolder()
        let count = try await Clerk().record(["a", "b", "c"], folder.configuration())
        #expect(count == 3)
    }

    @Test func aQueueRealmRefreshesItselfUnlessAutorefreshIsOff() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let queue = DispatchQueue(label: "auto")
        let auto = QueueRealm(), manual = QueueRealm()
        let before: [Int] = await Self.onQueue(queue) { done in
            auto.realm = try! Realm(configuration: configuration, queue: queue)
            manual.realm = try! Realm(configuration: configuration, queue: queue)
            manual.realm!.autorefresh = false
            done([auto.realm!.objects(Dog.self).count, manual.realm!.objects(Dog.self).count])
        }
        #expect(before == [0, 0])
        let writer = try Realm(configuration: configuration)
        try writer.write { writer.create(Dog.self, value: ["name": "Rex"]) }
        // The refresh is posted to the queue after the commit's sync; wait for it to arrive.
        var seen = 0
        for _ in 0..<1_000 where seen == 0 {
            seen = await Self.onQueue(queue) { done in done(auto.realm!.objects(Dog.self).count) }
            if seen == 0 { try await Task.sleep(for: .milliseconds(10)) }
        }
        #expect(seen == 1)
        let stayed: [Int] = await Self.onQueue(queue) { done in
            let stale = manual.realm!.objects(Dog.self).count
            manual.realm!.refresh()
            done([stale, manual.realm!.objects(Dog.self).count])
            auto.realm = nil
            manual.realm = nil
        }
        #expect(stayed == [0, 1])
    }

    /// A delivery posted to a realm's queue runs after the realm went away: it finds no realm
    /// (the context holds the realm without retaining it, and the realm says when it goes).
    @Test func aDeliveryPostedToARealmThatWentAwayFindsNoRealm() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let queue = DispatchQueue(label: "gone")
        let (released, delivered): (Bool, Bool) = await Self.onQueue(queue) { done in
            var realm: Realm? = try! Realm(configuration: configuration, queue: queue)
            weak let weakRealm = realm
            let delivered = QueueFlag()
            do {
                // The initial change is posted to the queue, behind this block.
                let token = realm!.objects(Dog.self).observe { _ in delivered.value = true }
                token.invalidate()
            }
            realm = nil
            let released = weakRealm == nil
            queue.async { done((released, delivered.value)) }
        }
        #expect(released)
        #expect(!delivered)
    }

    /// A flag set and read on one queue.
    final class QueueFlag: @unchecked Sendable {
        var value = false
    }

    @Test func aRealmOnAThreadStaysOnItsVersionUntilRefreshed() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Dog.self).isEmpty)
        let writer = try Realm(configuration: folder.configuration())
        try writer.write { writer.create(Dog.self, value: ["name": "Rex"]) }
        #expect(realm.objects(Dog.self).isEmpty)
        #expect(realm.refresh())
        #expect(realm.objects(Dog.self).count == 1)
    }

    @Test @TestActor func asyncRefreshSeesCommitsMadeElsewhere() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        realm.autorefresh = false
        #expect(realm.objects(Dog.self).isEmpty)
        let store = RealmActor(configuration: configuration)
        try await store.write { realm in _ = realm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(await realm.asyncRefresh())
        #expect(realm.objects(Dog.self).count == 1)
        #expect(await realm.asyncRefresh() == false)
    }

    @Test func writeAsyncOnARealmOfAThreadTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let realm = try Realm(configuration: folder.configuration())
            realm.writeAsync {}
        }
        MisuseTests.expectRule(result, "writeAsync needs a realm whose callbacks have somewhere to run")
    }

    @Test func aQueueRealmUsedOffItsQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            let queue = DispatchQueue(label: "confined")
            let box = QueueRealm()
            queue.sync { box.realm = try! Realm(configuration: folder.configuration(), queue: queue) }
            _ = box.realm!.objects(Dog.self).count
        }
        MisuseTests.expectRule(result, "Realm accessed from incorrect dispatch queue")
    }

    @Test func openingAQueueRealmOffTheQueueTraps() async {
        let result = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
            let folder = TestFolder()
            _ = try Realm(configuration: folder.configuration(), queue: DispatchQueue(label: "elsewhere"))
        }
        MisuseTests.expectRule(result, "Realm(configuration:queue:) must be called from a block running on that queue")
    }
}
