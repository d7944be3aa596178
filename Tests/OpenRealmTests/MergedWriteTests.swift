import Foundation
@testable import OpenRealm
import Synchronization
import Testing

/// RealmActor merges the writes queued on it into one transaction and one commit
/// (WriteBatch.swift). Each test holds the write lane with another realm until every write is
/// queued, so that the batch is certain to form.
@Suite struct MergedWriteTests {
    struct Refused: Error {}

    /// Waits until `count` writers wait on `store` for the lane (the opener and its joiners).
    static func waitUntilQueued(_ store: RealmActor, _ count: Int) async throws {
        while await store.writersWaitingForTheLane < count {
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    @Test @TestActor func writesQueuedTogetherShareOneCommit() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let writes = Task { @Sendable in
            try await withThrowingTaskGroup(of: Int.self) { group in
                for id in 0..<20 {
                    group.addTask {
                        try await store.write { realm in
                            realm.create(Person.self, value: ["id": id, "name": "p\(id)"])
                            // Each block sees the writes queued before it.
                            return realm.objects(Person.self).count
                        }
                    }
                }
                var counts: [Int] = []
                for try await count in group { counts.append(count) }
                return counts
            }
        }
        try await Self.waitUntilQueued(store, 20)
        // Read while the lane is held: once it is free the batch may commit at once.
        let before = try fileVersion(folder)
        holder.cancelWrite()
        let counts = try await writes.value
        #expect(counts.sorted() == Array(1...20))
        #expect(try fileVersion(folder) == before + 1)
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Person.self).count == 20)
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 19)?.name == "p19")
    }

    @Test @TestActor func aWriteThatThrowsIsUndoneAloneAndTheOthersCommit() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        try holder.write {
            holder.create(Person.self, value: ["id": 50, "name": "kept"])
            holder.create(Person.self, value: ["id": 51, "name": "kept too"])
        }
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let writes = Task { @Sendable in
            try await withThrowingTaskGroup(of: (Int, Bool).self) { group in
                for id in 0..<10 {
                    group.addTask {
                        do {
                            try await store.write { realm in
                                realm.create(Person.self, value: ["id": id, "name": "p\(id)"])
                                if id == 5 {
                                    // Changes of every kind, then a failure: all of it goes.
                                    realm.create(Person.self, value: ["id": 105, "name": "gone"])
                                    realm.delete(realm.object(ofType: Person.self, forPrimaryKey: 50)!)
                                    realm.object(ofType: Person.self, forPrimaryKey: 51)!.name = "changed"
                                    throw Refused()
                                }
                            }
                            return (id, true)
                        } catch is Refused {
                            return (id, false)
                        }
                    }
                }
                var outcomes: [Int: Bool] = [:]
                for try await (id, kept) in group { outcomes[id] = kept }
                return outcomes
            }
        }
        try await Self.waitUntilQueued(store, 10)
        holder.cancelWrite()
        let outcomes = try await writes.value
        #expect(outcomes == Dictionary(uniqueKeysWithValues: (0..<10).map { ($0, $0 != 5) }))
        let realm = try Realm(configuration: folder.configuration())
        #expect(Set(realm.objects(Person.self).map(\.id)) == Set((0..<10).filter { $0 != 5 } + [50, 51]))
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 51)?.name == "kept too")
        #expect(realm.object(ofType: Person.self, forPrimaryKey: 50)?.name == "kept")
    }

    @Test @TestActor func aCancelledWriterLeavesTheBatchWithoutWriting() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let kept = (0..<6).map { id in
            Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": id]) } }
        }
        try await Self.waitUntilQueued(store, 6)
        let cancelled = Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": 99]) } }
        try await Self.waitUntilQueued(store, 7)
        cancelled.cancel()
        holder.cancelWrite()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        for task in kept { try await task.value }
        let realm = try Realm(configuration: folder.configuration())
        #expect(Set(realm.objects(Person.self).map(\.id)) == Set(0..<6))
    }

    @Test @TestActor func theOpenerGivesWayWhenItIsCancelledWhileWaiting() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let opener = Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": 1]) } }
        try await Self.waitUntilQueued(store, 1)
        let joiners = (2..<5).map { id in
            Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": id]) } }
        }
        try await Self.waitUntilQueued(store, 4)
        opener.cancel()
        await #expect(throws: CancellationError.self) { try await opener.value }
        holder.cancelWrite()
        for task in joiners { try await task.value }
        let realm = try Realm(configuration: folder.configuration())
        #expect(Set(realm.objects(Person.self).map(\.id)) == [2, 3, 4])
    }

    @Test @TestActor func readsNeverSeeAMergedWriteBeforeItIsDurable() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let writes = (0..<10).map { id in
            Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": id]) } }
        }
        try await Self.waitUntilQueued(store, 10)
        let reads = (0..<10).map { _ in Task { try await store.read { $0.objects(Person.self).count } } }
        holder.cancelWrite()
        for task in writes { try await task.value }
        for task in reads { #expect([0, 10].contains(try await task.value)) }
        #expect(try await store.read { $0.objects(Person.self).count } == 10)
    }

    /// Writers hear that their commit is durable from the store's sync thread: a job that
    /// holds the actor while the commit syncs does not keep them waiting.
    @Test @TestActor func writersAreAnsweredWhileTheActorIsBusy() async throws {
        let folder = TestFolder()
        let gate = SyncGate()
        var configuration = folder.configuration()
        configuration.holdSyncs(at: gate)
        let store = RealmActor(configuration: configuration)
        try await store.write { realm in _ = realm.create(Person.self, value: ["id": 0]) }
        gate.close()
        let answered = Atomic<Bool>(false), actorHeld = Atomic<Bool>(false)
        let release = DispatchSemaphore(value: 0)
        let writer = Task {
            try await store.write { realm in _ = realm.create(Person.self, value: ["id": 1]) }
            answered.store(true, ordering: .sequentiallyConsistent)
        }
        // The commit is written and its sync waits at the gate (on the store's sync thread).
        while gate.heldSyncs == 0 { try await Task.sleep(for: .milliseconds(1)) }
        let holder = Task {
            try await store.read { _ in
                actorHeld.store(true, ordering: .sequentiallyConsistent)
                release.wait()
            }
        }
        while !actorHeld.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(1)) }
        gate.open()
        let deadline = ContinuousClock.now + .seconds(120)    // a hang guard only
        while !answered.load(ordering: .sequentiallyConsistent) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(1))
        }
        let answeredFirst = answered.load(ordering: .sequentiallyConsistent)
        #expect(answeredFirst, "the writer waited for the actor")
        release.signal()
        try await writer.value
        try await holder.value
        #expect(try await store.read { $0.objects(Person.self).count } == 2)
    }

    /// A writer that closes the store after its answer finds the file closed: nothing of the
    /// commit it waited for still holds the realm. (Checked in this process only: a child
    /// another test spawns holds the lock file's locks until it execs, so `deleteFiles`'s
    /// check for other processes can see the file open for that moment.)
    @Test @TestActor func closingAfterAWriteClosesTheFile() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        for round in 0..<100 {
            let store = RealmActor(configuration: configuration)
            try await store.write { realm in _ = realm.create(Person.self, value: ["id": round]) }
            await store.close()
            #expect(!isOpenInThisProcess(configuration), "round \(round)")
        }
    }

    @Test @TestActor func aFailedCommitFailsEveryMergedWriteAndShowsNone() async throws {
        let folder = TestFolder()
        let failing = FaultSwitch()
        var configuration = folder.configuration()
        configuration.failSyncs(when: failing)
        let holder = try Realm(configuration: configuration)
        holder.beginWrite()
        let store = RealmActor(configuration: configuration)
        let writes = (0..<8).map { id in
            Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": id]) } }
        }
        try await Self.waitUntilQueued(store, 8)
        failing.set(true)
        holder.cancelWrite()
        for task in writes {
            let error = await #expect(throws: Realm.Error.self) { try await task.value }
            #expect(error?.code == .fileAccess)
        }
        failing.set(false)
        #expect(try await store.read { $0.objects(Person.self).count } == 0)
        // The actor writes normally again, and only that write is in the file.
        try await store.write { realm in _ = realm.create(Person.self, value: ["id": 100]) }
        #expect(try await store.read { $0.objects(Person.self).map(\.id) } == [100])
        holder.invalidate()
        await store.close()
    }

    @Test @TestActor func aClassFirstUsedByAWriteThatThrowsLeavesNoTable() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let first = Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": 1]) } }
        try await Self.waitUntilQueued(store, 1)
        let throwing = Task {
            try await store.write { realm in
                // Dog's table is created here, inside the shared transaction, and must go.
                realm.create(Dog.self, value: ["name": "Rex"])
                throw Refused()
            }
        }
        try await Self.waitUntilQueued(store, 2)
        let last = Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": 2]) } }
        try await Self.waitUntilQueued(store, 3)
        holder.cancelWrite()
        try await first.value
        await #expect(throws: Refused.self) { try await throwing.value }
        try await last.value
        let realm = try Realm(configuration: folder.configuration())
        #expect(realm.objects(Person.self).count == 2)
        #expect(realm.objects(Dog.self).isEmpty)
        // The class works again in the next write.
        try await store.write { realm in _ = realm.create(Dog.self, value: ["name": "Fido"]) }
        #expect(try await store.read { Array($0.objects(Dog.self).map(\.name)) } == ["Fido"])
    }

    @Test @TestActor func deleteAllInAWriteThatThrowsIsUndoneAlone() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        try holder.write { for id in 0..<50 { holder.create(Person.self, value: ["id": id]) } }
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let first = Task { try await store.write { realm in _ = realm.create(Person.self, value: ["id": 100]) } }
        try await Self.waitUntilQueued(store, 1)
        let throwing = Task {
            try await store.write { realm in
                realm.deleteAll()
                throw Refused()
            }
        }
        try await Self.waitUntilQueued(store, 2)
        holder.cancelWrite()
        try await first.value
        await #expect(throws: Refused.self) { try await throwing.value }
        #expect(try await store.read { $0.objects(Person.self).count } == 51)
    }

    /// A stream of failing writes from many tasks, merged with good ones: every good write
    /// commits, and the batches keep closing (undone writes count towards a batch's size).
    /// The time limit catches a batch that never closes; it is generous because the whole suite
    /// shares two cores with its child processes (one minute was once not enough).
    ///
    /// Nothing here runs on `TestActor`: the failing writers loop without pause, and on the
    /// global actor that every `@TestActor` test of the suite shares they held it for all of
    /// them (CI once ran past this limit with them there).
    @Test(.timeLimit(.minutes(5))) func failingWritesInterleavedWithGoodOnesLoseNothing() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        let stop = FaultSwitch()
        let failing = (0..<16).map { _ in
            Task.detached { while !stop.isOn { _ = try? await store.write { _ in throw Refused() } } }
        }
        for id in 0..<20 {
            try await store.write { realm in _ = realm.create(Person.self, value: ["id": id]) }
        }
        stop.set(true)
        for task in failing { await task.value }
        #expect(try await store.read { $0.objects(Person.self).count } == 20)
    }

    @Test @TestActor func aBlockMayLeaveNothingToCommit() async throws {
        let folder = TestFolder()
        let store = RealmActor(configuration: folder.configuration())
        let value = try await store.write { realm in realm.objects(Person.self).count }
        #expect(value == 0)
        await #expect(throws: Refused.self) { try await store.write { _ in throw Refused() } }
        try await store.write { realm in _ = realm.create(Person.self, value: ["id": 1]) }
        #expect(try await store.read { $0.objects(Person.self).count } == 1)
    }

    /// A writer cancelled while its block runs: the block sees it (`Task.isCancelled`, in the
    /// actor's task that runs it), is undone, and its writer hears `CancellationError`; the
    /// writes handed in after it commit all the same (a fresh task of the actor runs them).
    @Test @TestActor func aWriterCancelledWhileItsBlockRunsIsUndoneAndTheOthersCommit() async throws {
        let folder = TestFolder()
        let holder = try Realm(configuration: folder.configuration())
        holder.beginWrite()
        let store = RealmActor(configuration: folder.configuration())
        let running = FaultSwitch()
        let cancelled = Task.detached {
            try await store.write { realm in
                realm.create(Person.self, value: ["id": 1])
                running.set(true)
                // Until the writer's cancellation reaches the block (bounded: a block that
                // never saw it would fail the expectation below, not hang the suite).
                for _ in 0..<60_000 where !Task.isCancelled { usleep(1_000) }
            }
        }
        try await Self.waitUntilQueued(store, 1)
        let others = (2..<5).map { id in
            Task.detached { try await store.write { realm in _ = realm.create(Person.self, value: ["id": id]) } }
        }
        try await Self.waitUntilQueued(store, 4)
        holder.cancelWrite()
        while !running.isOn { try await Task.sleep(for: .milliseconds(1)) }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        for task in others { try await task.value }
        #expect(try await store.read { Set($0.objects(Person.self).map(\.id)) } == [2, 3, 4])
    }
}
