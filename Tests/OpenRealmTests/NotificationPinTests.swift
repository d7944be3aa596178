import Foundation
import OpenRealm
import Testing

/// Observations pin the version of their snapshot while they run; once they end (token
/// invalidated, final change reported), they pin nothing, even while the token is still
/// held: a pinned version holds back the file's space and its change history, and counts
/// against `maximumNumberOfActiveVersions`.
@Suite struct NotificationPinTests {
    /// Adds chores `ids` one commit each on another thread, refreshing after each, then
    /// expects no version pinned but the one the realm reads.
    private func expectNoVersionPinned(after ids: ClosedRange<Int>, _ realm: Realm, _ configuration: Realm.Configuration,
                                       sourceLocation: SourceLocation = #_sourceLocation) {
        for id in ids {
            writeOnAnotherThread(configuration) { $0.create(Chore.self, value: ["id": id]) }
            realm.refresh()
        }
        #expect(realm.numberOfActiveVersions == 1, sourceLocation: sourceLocation)
    }

    @Test func anInvalidatedTokenStillHeldPinsNoVersion() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let token = realm.objects(Chore.self).observe { _ in }
        realm.refresh()
        token.invalidate()
        expectNoVersionPinned(after: 1...3, realm, configuration)
        withExtendedLifetime(token) {}
    }

    @Test func anInvalidatedObjectTokenStillHeldPinsNoVersion() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        let token = realm.chore(1).observe { _ in }
        token.invalidate()
        expectNoVersionPinned(after: 2...4, realm, configuration)
        withExtendedLifetime(token) {}
    }

    @Test func aTokenInvalidatedOnAnotherThreadPinsNoVersionAfterTheNextDelivery() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let token = realm.objects(Chore.self).observe { _ in }
        realm.refresh()
        invalidateOnAnotherThread(token)
        // A realm on a thread has no context to post to: its next delivery lets go.
        expectNoVersionPinned(after: 1...1, realm, configuration)
        withExtendedLifetime(token) {}
    }

    @Test func anObjectObservationPinsNoVersionAfterReportingTheDeletion() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        var deleted = 0
        let token = realm.chore(1).observe { if case .deleted = $0 { deleted += 1 } }
        writeOnAnotherThread(configuration) { $0.delete($0.chore(1)) }
        realm.refresh()
        #expect(deleted == 1)
        expectNoVersionPinned(after: 2...4, realm, configuration)
        withExtendedLifetime(token) {}
    }

    @Test func aListObservationPinsNoVersionAfterItsOwnerIsDeleted() throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        let roster = try realm.write { realm.create(Roster.self, value: ["numbers": [1]]) }
        let token = roster.numbers.observe { _ in }
        realm.refresh()
        try realm.commitAndDeliver { realm.delete(roster) }
        expectNoVersionPinned(after: 1...1, realm, configuration)
        withExtendedLifetime(token) {}
    }

    @Test @TestActor func anObjectStreamThatEndedPinsNoVersion() async throws {
        let folder = TestFolder()
        let configuration = folder.configuration()
        let realm = try Realm(configuration: configuration)
        try realm.addChores([1])
        let chore = realm.chore(1)
        var changes = chore.changes.makeAsyncIterator()
        // Runs once `next` registered the observation and waits.
        let deleting = Task { @TestActor in try realm.write { realm.delete(chore) } }
        #expect(await changes.next(isolation: #isolation).map(ObjectEvent.init) == .deleted)
        try await deleting.value
        // The iterator is still held, and not asked again.
        await writeElsewhere(configuration) { $0.create(Chore.self, value: ["id": 2]) }
        realm.refresh()
        #expect(realm.numberOfActiveVersions == 1)
        withExtendedLifetime(changes) {}
    }

    @Test func anInvalidatedTokenStillHeldCountsNoVersionAgainstTheLimit() throws {
        let folder = TestFolder()
        var configuration = folder.configuration()
        configuration.maximumNumberOfActiveVersions = 1
        let realm = try Realm(configuration: configuration)
        let token = realm.objects(Chore.self).observe { _ in }
        realm.refresh()
        token.invalidate()
        // Each write would find the token's version and the realm's pinned otherwise.
        for id in 1...3 { try realm.addChores([id]) }
        #expect(realm.objects(Chore.self).count == 3)
        withExtendedLifetime(token) {}
    }

    @Test func anInvalidatedTokenStillHeldLetsTheHistoryGo() throws {
        let folder = TestFolder()
        let realm = try Realm(configuration: folder.configuration())
        try realm.addChores(Array(1...20))
        let token = realm.objects(Chore.self).observe { _ in }
        realm.refresh()
        token.invalidate()
        for step in 0..<200 {
            try realm.write { realm.chore(1 + step % 20).rank = step }
        }
        // A pinned version keeps the change sets of every commit after it (and the space
        // they reach): 200 here.
        #expect(historyCount(realm) <= 2)
        #expect(realm.numberOfActiveVersions == 1)
        withExtendedLifetime(token) {}
        try RoundTripTests.verify(folder)
    }
}
