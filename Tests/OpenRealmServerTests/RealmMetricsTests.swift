import Foundation
import MetricsTestKit
import OpenRealm
import OpenRealmServer
import Testing

/// Events reach swift-metrics through `RealmMetrics`, into a factory of the test's own.
@Suite struct RealmMetricsTests {
    @Test func commitsRecordLatencyGroupSizeBytesFileSizeAndActiveVersions() throws {
        let folder = ServerTestFolder()
        let metrics = TestMetrics()
        var configuration = folder.configuration()
        configuration.eventHandler = RealmMetrics(dimensions: [("service", "test")], factory: metrics)
        let realm = try Realm(configuration: configuration)
        for id in 1...3 { try realm.write { realm.add(ServerEntry(value: ["id": id])) } }
        let dimensions = [("path", folder.path), ("service", "test")]
        let latency = try metrics.expectTimer("openrealm_commit_duration", dimensions)
        #expect(latency.values.count == 3)
        #expect(latency.values.allSatisfy { $0 > 0 })
        let groups = try metrics.expectRecorder("openrealm_commit_group_size", dimensions)
        #expect(groups.values == [1, 1, 1])
        #expect(try metrics.expectRecorder("openrealm_commit_bytes", dimensions).values.allSatisfy { $0 > 0 })
        #expect(try metrics.expectGauge("openrealm_file_size_bytes", dimensions).lastValue ?? 0 > 0)
        // The realm reads a version: at least that one is pinned.
        #expect(try metrics.expectGauge("openrealm_active_versions", dimensions).lastValue ?? 0 >= 1)
        try folder.verify()
    }

    @Test func concurrentWritersCanShareASync() async throws {
        let folder = ServerTestFolder()
        let metrics = TestMetrics()
        var configuration = folder.configuration()
        configuration.eventHandler = RealmMetrics(factory: metrics)
        let writers = (0..<4).map { _ in RealmActor(configuration: configuration) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (n, writer) in writers.enumerated() {
                group.addTask {
                    for i in 0..<10 { try await writer.write { $0.add(ServerEntry(value: ["id": n * 100 + i])) } }
                }
            }
            try await group.waitForAll()
        }
        let groups = try metrics.expectRecorder("openrealm_commit_group_size", [("path", folder.path)]).values
        // Every commit counted once (the 40 writes, merged or not, and the writes that record the
        // schema as the actors' realms open), in a group of at least one.
        #expect(groups.count <= 44 && groups.count >= 10, "\(groups)")
        #expect(groups.allSatisfy { $0 >= 1 })
        for writer in writers { await writer.close() }
        try folder.verify()
    }

    @Test func notificationDeliveryRecordsItsLag() throws {
        let folder = ServerTestFolder()
        let metrics = TestMetrics()
        var configuration = folder.configuration()
        configuration.eventHandler = RealmMetrics(factory: metrics)
        let observer = try Realm(configuration: configuration)
        let writer = try Realm(configuration: configuration)
        let changes = LogLines()
        let token = observer.objects(ServerEntry.self).observe { changes.append(.info, "\($0)") }
        observer.refresh()
        try writer.write { writer.add(ServerEntry(value: ["id": 1])) }
        observer.refresh()
        #expect(changes.all.count == 2)
        let lag = try metrics.expectTimer("openrealm_notification_lag", [("path", folder.path)])
        #expect(!lag.values.isEmpty)
        #expect(lag.values.allSatisfy { $0 >= 0 })
        withExtendedLifetime(token) {}
        try folder.verify()
    }

    @Test func withoutAHandlerNothingIsRecorded() throws {
        let folder = ServerTestFolder()
        let metrics = TestMetrics()
        let realm = try Realm(configuration: folder.configuration())
        try realm.write { realm.add(ServerEntry(value: ["id": 1])) }
        _ = RealmMetrics(factory: metrics)
        #expect(metrics.timers.isEmpty && metrics.recorders.isEmpty)
    }
}

/// An encrypted realm's decrypted pages reach swift-metrics at every commit; a plain one has none.
@Suite struct RealmMetricsEncryptedCacheTests {
    @Test func anEncryptedRealmRecordsItsResidentBytesBudgetAndDecryptedUnits() throws {
        let folder = ServerTestFolder()
        let metrics = TestMetrics()
        var configuration = folder.configuration()
        configuration.encryptionKey = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 3 &+ 1) })
        configuration.encryptedCacheSize = 1 << 20
        configuration.eventHandler = RealmMetrics(factory: metrics)
        do {
            let realm = try Realm(configuration: configuration)
            try realm.write { for id in 1...500 { realm.add(ServerEntry(value: ["id": id])) } }
        }
        // A new process's view of the file: its reads decrypt what the first realm wrote.
        let again = try Realm(configuration: configuration)
        #expect(again.objects(ServerEntry.self).count == 500)
        try again.write { again.add(ServerEntry(value: ["id": 501])) }
        let statistics = try #require(again.encryptedCacheStatistics)
        try #require(statistics.decryptsOnDemand, "userfaultfd refused here: \(statistics.fallbackReason ?? "")")
        let dimensions = [("path", folder.path)]
        let resident = try metrics.expectGauge("openrealm_encrypted_cache_resident_bytes", dimensions)
        #expect((resident.lastValue ?? 0) > 0)
        #expect(try metrics.expectGauge("openrealm_encrypted_cache_budget_bytes", dimensions).lastValue == Double(1 << 20))
        let decrypted = try metrics.expectCounter("openrealm_encrypted_cache_decrypted_units", dimensions)
        #expect(decrypted.totalValue > 0)
        configuration.verifyIntegrityOnOpen = true
        configuration.eventHandler = nil
        _ = try Realm(configuration: configuration)
    }

    @Test func aPlainRealmRecordsNoEncryptedCache() throws {
        let folder = ServerTestFolder()
        let metrics = TestMetrics()
        var configuration = folder.configuration()
        configuration.eventHandler = RealmMetrics(factory: metrics)
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(ServerEntry(value: ["id": 1])) }
        #expect(realm.encryptedCacheStatistics == nil)
        #expect(throws: (any Error).self) { try metrics.expectGauge("openrealm_encrypted_cache_resident_bytes", [("path", folder.path)]) }
        #expect(try metrics.expectGauge("openrealm_file_size_bytes", [("path", folder.path)]).lastValue ?? 0 > 0)
    }
}
