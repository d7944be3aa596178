import Foundation
import OpenRealm
import Testing

/// Changes as `AsyncSequence`s (`changes`), on a realm of an actor.
@Suite struct NotificationStreamTests {
    @Test @TestActor func resultsChangesYieldTheInitialContentsThenUpdates() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        var changes = realm.objects(Chore.self).sorted(byKeyPath: "rank").changes.makeAsyncIterator()
        guard case .initial(let chores) = await changes.next(isolation: #isolation) else {
            Issue.record("expected the initial contents")
            return
        }
        #expect(chores.map(\.id) == [1])
        try await realm.asyncWrite { realm.create(Chore.self, value: ["id": 2, "rank": 0]) }
        let update = await changes.next(isolation: #isolation)
        #expect(update.map(CollectionEvent.init) == .update(insertions: [0]))
        if case .update(let chores, _, _, _) = update { #expect(chores.map(\.id) == [2, 1]) }
        try RoundTripTests.verify(folder)
    }

    @Test @TestActor func changesArrivingBeforeTheConsumerAsksAreMergedIntoOne() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1, 2, 3])
        var changes = realm.objects(Chore.self).changes.makeAsyncIterator()
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        // Each commit delivered before the consumer asks.
        try realm.write { realm.delete(realm.chore(1)) }
        realm.refresh()
        await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": 4]) }
        realm.refresh()
        try realm.write { realm.chore(3).title = "changed" }
        realm.refresh()
        // [1, 2, 3] → [2, 3, 4]: one element for three commits.
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init)
                == .update(deletions: [0], insertions: [2], modifications: [1]))
    }

    @Test @TestActor func anObjectDeletedAndAddedAgainAcrossDeliveriesIsADeletionAndAnInsertion() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores([1])
        var changes = realm.objects(Chore.self).changes.makeAsyncIterator()
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        try realm.write { realm.delete(realm.chore(1)) }
        realm.refresh()
        try realm.write { realm.create(Chore.self, value: ["id": 1, "title": "another"]) }
        realm.refresh()
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init) == .update(deletions: [0], insertions: [0]))
    }

    @Test @TestActor func changesThatCancelOutGiveNoUpdate() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        var changes = realm.objects(Chore.self).changes.makeAsyncIterator()
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        try realm.write { realm.create(Chore.self, value: ["id": 2]) }
        realm.refresh()
        try realm.write { realm.delete(realm.chore(2)) }
        realm.refresh()
        // A later commit, so that the stream has something to give.
        await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": 3]) }
        #expect(await changes.next(isolation: #isolation).map(CollectionEvent.init) == .update(insertions: [1]))
    }

    @Test @TestActor func changesThatCancelOutGiveNoObjectChange() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        let chore = realm.chore(1)
        var changes = chore.changes.makeAsyncIterator()
        // Runs once `next` registered the observation and waits.
        let writing = Task { @TestActor in
            try realm.write { chore.title = "x" }
            realm.refresh()
            try realm.write { chore.title = "c1" }
            realm.refresh()
            await writeElsewhere(configuration) { $0.chore(1).rank = 7 }
        }
        #expect(await changes.next(isolation: #isolation).map(ObjectEvent.init) == .changed(("rank", "1", "7")))
        try await writing.value
    }

    @Test @TestActor func aLoopEndsWhenItsTaskIsCancelled() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let mailbox = Mailbox<CollectionEvent>()
        let task = Task { @TestActor in
            let realm = try Realm(configuration: configuration)
            for await change in realm.objects(Chore.self).changes { mailbox.put(CollectionEvent(change)) }
            return activeObservations(realm)
        }
        #expect(await mailbox.next() == .initial)
        await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": 1]) }
        #expect(await mailbox.next() == .update(insertions: [0]))
        task.cancel()
        // The loop ended, and with it the observation.
        #expect(try await task.value == 0)
    }

    @Test @TestActor func droppingTheIteratorEndsTheObservation() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        var iterator: ChangeSequence<RealmCollectionChange<Results<Chore>>>.Iterator? = realm.objects(Chore.self).changes.makeAsyncIterator()
        _ = await iterator?.next(isolation: #isolation)
        #expect(activeObservations(realm) == 1)
        iterator = nil
        #expect(activeObservations(realm) == 0)
        // Tokens likewise.
        var token: NotificationToken? = realm.objects(Chore.self).observe { _ in }
        #expect(activeObservations(realm) == 1)
        token = nil
        #expect(activeObservations(realm) == 0)
        withExtendedLifetime(token) {}
    }

    @Test @TestActor func anObjectsChangesEndAfterItIsDeleted() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        let mailbox = Mailbox<ObjectEvent?>()
        let task = Task { @TestActor in
            let realm = try Realm(configuration: configuration)
            let chore = realm.chore(1)
            mailbox.put(nil)
            // The first `next` registers before the task suspends: nothing is missed.
            for await change in chore.changes { mailbox.put(ObjectEvent(change)) }
            mailbox.put(.changed(("loop ended", "", "")))
        }
        #expect(await mailbox.next() == .some(nil))
        try realm.write { realm.chore(1).title = "sweep" }
        #expect(await mailbox.next() == .changed(("title", "c1", "sweep")))
        try realm.write { realm.delete(realm.chore(1)) }
        #expect(await mailbox.next() == .deleted)
        #expect(await mailbox.next() == .changed(("loop ended", "", "")))
        try await task.value
    }

    @Test @TestActor func listsSetsMapsAndLinkingObjectsStreamTheirChanges() async throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let chore = try realm.addChores([1])[0]
        let roster = try realm.write { realm.create(Roster.self) }
        var list = roster.chores.changes.makeAsyncIterator()
        var set = roster.tags.changes.makeAsyncIterator()
        var map = roster.scores.changes(keyPaths: nil).makeAsyncIterator()
        var linking = chore.rosters.changes.makeAsyncIterator()
        #expect(await list.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        #expect(await set.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        guard case .initial = await map.next(isolation: #isolation) else { Issue.record("no initial map"); return }
        #expect(await linking.next(isolation: #isolation).map(CollectionEvent.init) == .initial)
        try realm.write {
            roster.chores.append(chore)
            roster.tags.insert("x")
            roster.scores["a"] = 1
        }
        #expect(await list.next(isolation: #isolation).map(CollectionEvent.init) == .update(insertions: [0]))
        #expect(await set.next(isolation: #isolation).map(CollectionEvent.init) == .update(insertions: [0]))
        if case .update(_, let deletions, let insertions, let modifications) = await map.next(isolation: #isolation) {
            #expect(deletions.isEmpty && insertions == ["a"] && modifications.isEmpty)
        } else {
            Issue.record("no map update")
        }
        #expect(await linking.next(isolation: #isolation).map(CollectionEvent.init) == .update(insertions: [0]))
    }

    @Test @TestActor func aConsumerKeepsUpWithManyConcurrentWriters() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let results = realm.objects(Chore.self).sorted(byKeyPath: "rank")
        var snapshot: [Int] = []
        // Each writer adds 15 chores and deletes every third but the last: 10 remain. Once
        // they are done, a last commit adds chore -1: the loop ends when it arrives, even if a
        // write failed.
        let expected = Set((0..<8).flatMap { writer in (0..<15).filter { $0 % 3 != 0 }.map { writer * 100 + $0 } } + [-1])
        let writers = Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        let store = RealmActor(configuration: configuration)
                        for n in 0..<15 {
                            let id = writer * 100 + n
                            do {
                                try await store.write { realm in
                                    realm.create(Chore.self, value: ["id": id, "rank": (id * 7919) % 1000])
                                    if n % 3 == 2, let earlier = realm.object(ofType: Chore.self, forPrimaryKey: id - 2) { realm.delete(earlier) }
                                }
                            } catch {
                                Issue.record("writer \(writer) failed: \(error)")
                            }
                        }
                    }
                }
            }
            await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": -1, "rank": -1]) }
        }
        // Each element, applied to the contents before it, gives the contents it was read with.
        for await change in results.changes {
            switch change {
            case .initial(let chores):
                snapshot = chores.map(\.id)
            case .update(let chores, let deletions, let insertions, _):
                for index in deletions.reversed() { snapshot.remove(at: index) }
                for index in insertions { snapshot.insert(chores[index].id, at: index) }
                #expect(snapshot == chores.map(\.id))
            case .error(let error):
                Issue.record("\(error)")
            }
            if snapshot.contains(-1) { break }
        }
        #expect(Set(snapshot) == expected)
        await writers.value
        realm.refresh()
        #expect(snapshot == results.map(\.id))
        try RoundTripTests.verify(folder)
    }
}
