import Metrics
import OpenRealm
import RealmStorage

/// Records a realm's events with swift-metrics: set it as a configuration's `eventHandler`.
///
/// | metric | kind | what |
/// |---|---|---|
/// | `openrealm_commit_duration` | Timer | a commit's encoding, write and sync |
/// | `openrealm_commit_group_size` | Recorder | commits made durable by the same sync |
/// | `openrealm_commit_bytes` | Recorder | bytes a commit wrote |
/// | `openrealm_active_versions` | Gauge | versions pinned by readers in the process |
/// | `openrealm_file_size_bytes` | Gauge | the file's size in use |
/// | `openrealm_notification_lag` | Timer | from a commit's sync to its notifications' delivery |
/// | `openrealm_encrypted_cache_resident_bytes` | Gauge | decrypted bytes in memory (encrypted files) |
/// | `openrealm_encrypted_cache_budget_bytes` | Gauge | the most kept (`encryptedCacheSize`) |
/// | `openrealm_encrypted_cache_decrypted_units` | Counter | 16 KiB units read and decrypted: growing with every pass over the same data means the budget is below the working set |
///
/// The encrypted cache's figures are those of `Realm.encryptedCacheStatistics`, taken at each
/// commit; a file without a key has none.
///
/// Each carries the dimension `path` (the realm file) beside those given.
///
/// ```swift
/// MetricsSystem.bootstrap(PrometheusMetricsFactory())
/// var config = Realm.Configuration(fileURL: url)
/// config.eventHandler = RealmMetrics()
/// ```
public final class RealmMetrics: RealmEventHandler, Sendable {
    private let prefix: String
    private let dimensions: [(String, String)]
    private let factory: any MetricsFactory
    private let byPath = Locked([String: FileMetrics]())

    /// - Parameters:
    ///   - prefix: the start of every label (`openrealm` gives `openrealm_commit_duration`).
    ///   - dimensions: added to every metric, after `path`.
    ///   - factory: where the metrics go; the bootstrapped `MetricsSystem.factory` by default.
    public init(prefix: String = "openrealm", dimensions: [(String, String)] = [], factory: any MetricsFactory = MetricsSystem.factory) {
        self.prefix = prefix
        self.dimensions = dimensions
        self.factory = factory
    }

    public func realmDidCommit(_ event: RealmCommitEvent) {
        let metrics = metrics(for: event.path)
        metrics.commitDuration.recordNanoseconds(Self.nanoseconds(event.duration))
        metrics.groupSize.record(event.groupSize)
        metrics.commitBytes.record(event.bytes)
        metrics.activeVersions.record(event.activeVersions)
        metrics.fileSize.record(event.fileSize)
        if let cache = event.encryptedCache { metrics.record(cache) }
    }

    public func realmDidDeliverNotifications(_ event: RealmNotificationEvent) {
        metrics(for: event.path).notificationLag.recordNanoseconds(Self.nanoseconds(event.lag))
    }

    private func metrics(for path: String) -> FileMetrics {
        byPath.withLock { byPath in
            if let known = byPath[path] { return known }
            let made = FileMetrics(prefix: prefix, dimensions: [("path", path)] + dimensions, factory: factory)
            byPath[path] = made
            return made
        }
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// The metrics of one file.
private final class FileMetrics: Sendable {
    private let prefix: String
    private let dimensions: [(String, String)]
    private let factory: any MetricsFactory
    /// Made at the first commit that reports an encrypted cache; with the decrypted-unit count
    /// seen last (the counter gets the difference).
    private let encrypted = Locked<(metrics: EncryptedCacheMetrics, lastDecrypted: Int)?>(nil)
    let commitDuration: Timer
    let groupSize: Recorder
    let commitBytes: Recorder
    let activeVersions: Gauge
    let fileSize: Gauge
    let notificationLag: Timer

    init(prefix: String, dimensions: [(String, String)], factory: any MetricsFactory) {
        self.prefix = prefix
        self.dimensions = dimensions
        self.factory = factory
        commitDuration = Timer(label: prefix + "_commit_duration", dimensions: dimensions, factory: factory)
        groupSize = Recorder(label: prefix + "_commit_group_size", dimensions: dimensions, factory: factory)
        commitBytes = Recorder(label: prefix + "_commit_bytes", dimensions: dimensions, factory: factory)
        activeVersions = Gauge(label: prefix + "_active_versions", dimensions: dimensions, factory: factory)
        fileSize = Gauge(label: prefix + "_file_size_bytes", dimensions: dimensions, factory: factory)
        notificationLag = Timer(label: prefix + "_notification_lag", dimensions: dimensions, factory: factory)
    }

    func record(_ cache: Realm.EncryptedCacheStatistics) {
        encrypted.withLock { encrypted in
            let metrics = encrypted?.metrics ?? EncryptedCacheMetrics(prefix: prefix, dimensions: dimensions, factory: factory)
            let last = encrypted?.lastDecrypted ?? 0
            metrics.resident.record(cache.residentBytes)
            metrics.budget.record(cache.budgetBytes)
            // The count starts again with a new mapping of the file (a file grown past its
            // mapping): then all of it is new.
            let added = cache.decryptedUnits >= last ? cache.decryptedUnits - last : cache.decryptedUnits
            if added > 0 { metrics.decrypted.increment(by: added) }
            encrypted = (metrics, cache.decryptedUnits)
        }
    }
}

/// The encrypted cache's metrics of one file.
private struct EncryptedCacheMetrics: Sendable {
    let resident: Gauge
    let budget: Gauge
    let decrypted: Counter

    init(prefix: String, dimensions: [(String, String)], factory: any MetricsFactory) {
        resident = Gauge(label: prefix + "_encrypted_cache_resident_bytes", dimensions: dimensions, factory: factory)
        budget = Gauge(label: prefix + "_encrypted_cache_budget_bytes", dimensions: dimensions, factory: factory)
        decrypted = Counter(label: prefix + "_encrypted_cache_decrypted_units", dimensions: dimensions, factory: factory)
    }
}
