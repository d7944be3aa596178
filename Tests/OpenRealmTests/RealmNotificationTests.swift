import Foundation
import OpenRealm
import Testing

/// Realm notifications (`realm.observe`): when they come, and when they do not.
@Suite struct RealmNotificationTests {
    @Test func aRealmBlockIsCalledAtItsOwnCommit() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let events = Recorder<Realm.Notification>()
        let token = realm.observe { notification, observed in
            #expect(observed === realm)
            events.record(notification)
        }
        try realm.write { realm.add(Dog()) }
        // Synchronously, before `write` returns.
        #expect(events.take() == [.didChange])
        try realm.write { realm.add(Dog()) }
        realm.beginWrite()
        realm.add(Dog())
        try realm.commitWrite()
        #expect(events.take() == [.didChange, .didChange])
        token.invalidate()
        try RoundTripTests.verify(folder)
    }

    @Test func anotherThreadsCommitIsHeardWhenTheRealmRefreshes() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let events = Recorder<Realm.Notification>()
        let token = realm.observe { notification, _ in events.record(notification) }
        writeOnAnotherThread(configuration) { $0.add(Dog()) }
        writeOnAnotherThread(configuration) { $0.add(Dog()) }
        // A realm on a plain thread has no event loop: it hears nothing until it moves.
        #expect(events.take().isEmpty)
        #expect(realm.refresh())
        // Both commits, reported once.
        #expect(events.take() == [.didChange])
        #expect(!realm.refresh())
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func anotherThreadsCommitIsHeardWhenAWriteBegins() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let events = Recorder<(Realm.Notification, Int)>()
        let token = realm.observe { notification, realm in
            events.record((notification, realm.objects(Dog.self).count))
        }
        writeOnAnotherThread(configuration) { $0.add(Dog()) }
        realm.beginWrite()
        // Told before the write's own changes, which see the other commit.
        let heard = events.take()
        #expect(heard.map(\.0) == [.didChange])
        #expect(heard.map(\.1) == [1])
        realm.add(Dog())
        try realm.commitWrite()
        #expect(events.take().map(\.1) == [2])
        withExtendedLifetime(token) {}
    }

    @Test @TestActor func aRealmOnAnActorHearsOfOtherCommitsByItself() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let mailbox = Mailbox<Int>()
        let token = realm.observe { notification, realm in
            if notification == .didChange { mailbox.put(realm.objects(Dog.self).count) }
        }
        await writeElsewhere(configuration) { $0.add(Dog()) }
        // Autorefresh on the realm's actor, without any call here.
        #expect(await mailbox.next() == 1)
        withExtendedLifetime(token) {}
    }

    @Test @TestActor func aRealmWithoutAutorefreshIsToldARefreshIsRequired() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        realm.autorefresh = false
        let mailbox = Mailbox<String>()
        let token = realm.observe { notification, realm in
            mailbox.put("\(notification.rawValue) \(realm.objects(Dog.self).count)")
        }
        await writeElsewhere(configuration) { $0.add(Dog()) }
        // The realm stays on its version until asked to move.
        #expect(await mailbox.next() == "RLMRealmRefreshRequiredNotification 0")
        realm.refresh()
        #expect(await mailbox.next() == "RLMRealmDidChangeNotification 1")
        withExtendedLifetime(token) {}
    }

    @Test func anInvalidatedOrReleasedTokenEndsTheObservation() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let kept = Recorder<Realm.Notification>()
        let dropped = Recorder<Realm.Notification>()
        let invalidated = Recorder<Realm.Notification>()
        let token = realm.observe { notification, _ in kept.record(notification) }
        _ = realm.observe { notification, _ in dropped.record(notification) }
        let ended = realm.observe { notification, _ in invalidated.record(notification) }
        ended.invalidate()
        ended.invalidate()
        try realm.write { realm.add(Dog()) }
        #expect(kept.take() == [.didChange])
        // As in Realm Swift, whose realm holds tokens weakly: a released token stops.
        #expect(dropped.take().isEmpty)
        #expect(invalidated.take().isEmpty)
        withExtendedLifetime(token) {}
    }

    @Test func aTokenInvalidatedOnAnotherThreadStopsTheBlock() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let events = Recorder<Realm.Notification>()
        let token = realm.observe { notification, _ in events.record(notification) }
        invalidateOnAnotherThread(token)
        try realm.write { realm.add(Dog()) }
        #expect(events.take().isEmpty)
    }

    @Test func aSkippedRealmBlockMissesOnlyThatWrite() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let skipped = Recorder<Realm.Notification>()
        let other = Recorder<Realm.Notification>()
        let token = realm.observe { notification, _ in skipped.record(notification) }
        let otherToken = realm.observe { notification, _ in other.record(notification) }
        try realm.write(withoutNotifying: [token]) { realm.add(Dog()) }
        #expect(skipped.take().isEmpty)
        #expect(other.take() == [.didChange])
        realm.beginWrite()
        realm.add(Dog())
        try realm.commitWrite(withoutNotifying: [token])
        #expect(skipped.take().isEmpty)
        try realm.write { realm.add(Dog()) }
        #expect(skipped.take() == [.didChange])
        #expect(other.take() == [.didChange, .didChange])
        withExtendedLifetime(otherToken) {}
        try RoundTripTests.verify(folder)
    }

    @Test func aBlockMayBeAddedInsideAWriteAndHearsItsCommit() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let events = Recorder<Realm.Notification>()
        realm.beginWrite()
        let token = realm.observe { notification, _ in events.record(notification) }
        realm.add(Dog())
        try realm.commitWrite()
        #expect(events.take() == [.didChange])
        withExtendedLifetime(token) {}
    }

    @Test func aBlockThatWritesIsNotCalledFromInsideItself() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        var calls = 0
        let token = realm.observe { _, realm in
            calls += 1
            // An audit record for every change: its own commit does not call the block again.
            try! realm.write { realm.add(Dog(value: ["name": "audit \(calls)"])) }
        }
        try realm.write { realm.add(Dog()) }
        #expect(calls == 1)
        #expect(realm.objects(Dog.self).count == 2)
        // Nor does a refresh that finds nothing newer (on an actor, the autorefresh after the
        // audit commit is one): the block would write forever.
        realm.refresh()
        #expect(calls == 1)
        // The audit write is announced when the realm next moves.
        writeOnAnotherThread(configuration) { $0.add(Dog()) }
        realm.refresh()
        #expect(calls == 2)
        withExtendedLifetime(token) {}
    }

    @Test(arguments: [false, true]) func aVersionABlockRefreshesToIsAnnouncedWhenTheBlocksReturn(atRefresh: Bool) throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        var counts: [Int] = []
        var others: [Int] = []
        let token = realm.observe { _, realm in
            counts.append(realm.objects(Dog.self).count)
            guard counts.count == 1 else { return }
            // Another thread commits while the block runs, and the block moves the realm there.
            writeOnAnotherThread(configuration) { $0.add(Dog()) }
            realm.refresh()
        }
        let other = realm.observe { _, realm in others.append(realm.objects(Dog.self).count) }
        if atRefresh {
            writeOnAnotherThread(configuration) { $0.add(Dog()) }
            realm.refresh()
        } else {
            try realm.write { realm.add(Dog()) }
        }
        // Each version once, in order; the second once the blocks returned. The block after
        // the one that moved hears of both at once.
        #expect(counts == [1, 2])
        #expect(others == [2])
        realm.refresh()
        #expect(counts == [1, 2])
        withExtendedLifetime((token, other)) {}
    }

    @Test func blocksCalledWhenAWriteBeginsRunBeforeItTakesTheWriteLane() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        var calls: [String] = []
        let realmToken = realm.observe { _, realm in calls.append("realm, in a write: \(realm.isInWriteTransaction)") }
        let dogsToken = realm.objects(Dog.self).observe { change in
            if case .update = change { calls.append("dogs, in a write: \(realm.isInWriteTransaction)") }
        }
        realm.refresh()
        writeOnAnotherThread(configuration) { $0.add(Dog()) }
        // Not in a write yet: the write waits for the lane only after its observers ran
        // (other writers never wait for them).
        try realm.write { #expect(calls == ["dogs, in a write: false", "realm, in a write: false"]) }
        withExtendedLifetime((realmToken, dogsToken)) {}
    }

    @Test @TestActor func anAsyncCommitEndingInsideTheNextWriteCallsNoBlockThere() async throws {
        let folder = TestFolder()
        let gate = SyncGate()
        var configuration = folder.configuration()
        configuration.holdSyncs(at: gate)
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Dog()) }
        var calls: [Bool] = []
        let token = realm.observe { _, realm in calls.append(realm.isInWriteTransaction) }
        gate.close()
        let first = Task { @TestActor in
            realm.beginWrite()
            realm.add(Dog())
            try await realm.commitWriteAsync()
        }
        // Until the first commit waits in its sync (no time involved).
        while gate.heldSyncs == 0 { await Task.yield() }
        realm.beginWrite()
        realm.add(Dog())
        gate.open()
        try await first.value
        // The first commit ended inside the second write, which builds on it: announced at
        // the second's commit, with it.
        #expect(calls.isEmpty)
        #expect(realm.isInWriteTransaction)
        try realm.commitWrite()
        #expect(calls == [false])
        #expect(realm.objects(Dog.self).count == 3)
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }

    @Test func aCancelledWriteCallsNoBlock() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        let events = Recorder<Realm.Notification>()
        let token = realm.observe { notification, _ in events.record(notification) }
        realm.beginWrite()
        realm.add(Dog())
        realm.cancelWrite()
        #expect(events.take().isEmpty)
        withExtendedLifetime(token) {}
    }
}
