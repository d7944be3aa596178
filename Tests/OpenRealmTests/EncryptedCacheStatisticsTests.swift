import Foundation
@testable import OpenRealm
import RealmStorage
import Synchronization
import Testing
import TestSupport

/// `Realm.encryptedCacheStatistics`: what an encrypted realm's decrypted pages take against
/// `encryptedCacheSize`, and whether the budget holds the working set (reads of the same data
/// decrypt nothing again when it does, and decrypt again when it does not).
@Suite struct EncryptedCacheStatisticsTests {
    static let key = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 3) })

    /// Writes `count` dogs with long names in one file and reopens it (a new store: nothing
    /// decrypted yet), with `cacheSize` as its budget.
    static func reopened(_ folder: TestFolder, count: Int, cacheSize: Int) throws -> Realm {
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = key
        configuration.encryptedCacheSize = cacheSize
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write {
                for i in 0..<count { realm.create(Dog.self, value: ["name": "dog \(i) " + String(repeating: "woof ", count: 20), "age": i]) }
            }
        }
        return try Realm(configuration: configuration)
    }

    /// The statistics after a pass reading every dog's name; the test stops where pages are
    /// not decrypted on demand (userfaultfd refused), since the counts then mean nothing.
    static func statisticsAfterReadingEveryName(_ realm: Realm) throws -> Realm.EncryptedCacheStatistics {
        _ = realm.objects(Dog.self).reduce(0) { $0 + $1.name.utf8.count }
        let statistics = try #require(realm.encryptedCacheStatistics)
        try #require(statistics.decryptsOnDemand, "userfaultfd refused here: \(statistics.fallbackReason ?? "")")
        return statistics
    }

    @Test func aBudgetThatHoldsTheWorkingSetDecryptsEachUnitOnce() throws {
        let folder = TestFolder()
        let realm = try Self.reopened(folder, count: 5_000, cacheSize: 64 << 20)
        let first = try Self.statisticsAfterReadingEveryName(realm)
        #expect(first.budgetBytes == 64 << 20)
        #expect(first.decryptedUnits > 0)
        #expect(first.residentBytes > 0 && first.residentBytes <= first.budgetBytes)
        #expect(first.peakResidentBytes >= first.residentBytes)
        #expect(first.damagedUnits == 0)
        let second = try Self.statisticsAfterReadingEveryName(realm)
        #expect(second.decryptedUnits == first.decryptedUnits, "the second pass found every unit in memory")
    }

    @Test func aBudgetBelowTheWorkingSetDecryptsAgainAndStaysWithinIt() throws {
        let folder = TestFolder()
        let realm = try Self.reopened(folder, count: 20_000, cacheSize: 128 << 10)
        let first = try Self.statisticsAfterReadingEveryName(realm)
        #expect(first.budgetBytes == 128 << 10)
        let second = try Self.statisticsAfterReadingEveryName(realm)
        #expect(second.decryptedUnits > first.decryptedUnits, "the second pass decrypted again what was dropped")
        #expect(second.peakResidentBytes <= second.budgetBytes)
    }

    @Test func aWholeFileFallbackSaysSoAndWhy() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        configuration.encryptedReading = .wholeAsIfRefused
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let statistics = try #require(realm.encryptedCacheStatistics)
        #expect(!statistics.decryptsOnDemand)
        #expect(statistics.fallbackReason != nil)
        #expect(statistics.residentBytes == statistics.budgetBytes)
    }

    @Test func plainAndInMemoryRealmsHaveNone() throws {
        let folder = TestFolder()
        let plain = try Realm(configuration: folder.configuration([Dog.self]))
        #expect(plain.encryptedCacheStatistics == nil)
        let memory = try Realm(configuration: Realm.Configuration(inMemoryIdentifier: "stats-\(UUID())", objectTypes: [Dog.self], encryptionKey: Self.key))
        #expect(memory.encryptedCacheStatistics == nil)
    }

    final class Events: RealmEventHandler, Sendable {
        let caches = Mutex<[Realm.EncryptedCacheStatistics?]>([])
        func realmDidCommit(_ event: RealmCommitEvent) { caches.withLock { $0.append(event.encryptedCache) } }
    }

    @Test func commitEventsCarryTheStatisticsOfEncryptedRealmsOnly() throws {
        let folder = TestFolder()
        let events = Events()
        var configuration = folder.configuration([Dog.self])
        configuration.encryptionKey = Self.key
        configuration.eventHandler = events
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.create(Dog.self, value: ["name": "Rex"]) }
        let last = try #require(events.caches.withLock { $0.last })
        #expect(try #require(last).budgetBytes == configuration.encryptedCacheSize)

        let plainEvents = Events()
        let plainFolder = TestFolder()
        var plain = plainFolder.configuration([Dog.self])
        plain.eventHandler = plainEvents
        let plainRealm = try Realm(configuration: plain)
        try plainRealm.write { plainRealm.create(Dog.self, value: ["name": "Rex"]) }
        #expect(plainEvents.caches.withLock { $0 }.allSatisfy { $0 == nil })
        #expect(!plainEvents.caches.withLock { $0 }.isEmpty)
    }
}
