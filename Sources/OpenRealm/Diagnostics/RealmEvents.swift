import Dispatch
import RealmStorage

/// Receives measurements of a realm file as it works, for metrics: each durable commit and each
/// delivery of change notifications. Set one on `Realm.Configuration.eventHandler`;
/// `OpenRealmServer`'s `RealmMetrics` records them with swift-metrics.
///
/// ```swift
/// final class CommitCounter: RealmEventHandler {
///     let commits = Atomic<Int>(0)
///     func realmDidCommit(_ event: RealmCommitEvent) { commits.add(1, ordering: .relaxed) }
/// }
/// var config = Realm.Configuration(fileURL: url)
/// config.eventHandler = CommitCounter()
/// ```
///
/// Events of a file reach every handler that a realm opened on it was configured with, for as
/// long as the file is open in the process. They are called on the thread that synced the
/// commit or delivered the notifications, outside every lock, and must return quickly.
/// Without a handler (and without a logger that would log slow commits) a commit pays one
/// atomic load for all this.
public protocol RealmEventHandler: AnyObject, Sendable {
    /// A commit was made durable.
    func realmDidCommit(_ event: RealmCommitEvent)
    /// A realm delivered change notifications.
    func realmDidDeliverNotifications(_ event: RealmNotificationEvent)
}

extension RealmEventHandler {
    public func realmDidCommit(_ event: RealmCommitEvent) {}
    public func realmDidDeliverNotifications(_ event: RealmNotificationEvent) {}
}

/// One durable commit.
public struct RealmCommitEvent: Sendable {
    /// The realm file (or in-memory identifier).
    public let path: String
    /// The version the commit made.
    public let version: UInt64
    /// From the start of the commit's encoding to the end of the sync that made it durable
    /// (the write block's own time is not included).
    public let duration: Duration
    /// How many commits that sync made durable together (1 when it synced alone).
    public let groupSize: Int
    /// Bytes the commit wrote.
    public let bytes: Int
    /// The file's size in use at this version.
    public let fileSize: Int
    /// Distinct versions pinned by readers in this process after the sync.
    public let activeVersions: Int
    /// An encrypted realm's decrypted pages after the commit (`Realm.encryptedCacheStatistics`);
    /// nil for a realm without a key.
    public let encryptedCache: Realm.EncryptedCacheStatistics?
}

/// One delivery of change notifications.
public struct RealmNotificationEvent: Sendable {
    /// The realm file (or in-memory identifier).
    public let path: String
    /// From the moment the newest version was made durable to its delivery to observers.
    public let lag: Duration
}

/// The store's observer for one configuration's logger and event handler: turns commit
/// reports into events and slow-commit log lines.
final class CommitEventRelay: CommitObserver {
    struct Key: Hashable {
        let logger: ObjectIdentifier
        let handler: ObjectIdentifier?
        let slowCommitThreshold: Duration?
    }

    let path: String
    let logger: Logger
    let handler: (any RealmEventHandler)?
    let slowCommitThreshold: Duration?
    /// The store's decrypted pages (encrypted files): weak, since the store holds the relay.
    private weak let store: Store?

    init(path: String, logger: Logger, handler: (any RealmEventHandler)?, slowCommitThreshold: Duration?, store: Store) {
        self.path = path
        self.logger = logger
        self.handler = handler
        self.slowCommitThreshold = slowCommitThreshold
        self.store = store
    }

    func storeDidCommit(_ reports: [CommitReport], activeVersions: Int) {
        // Once for the group: its commits were made durable by one sync, and the counts take
        // the file's lock.
        let encryptedCache = handler == nil ? nil : store?.decryptedPages.map(Realm.EncryptedCacheStatistics.init)
        for report in reports {
            let duration = Duration.nanoseconds(Int64(clamping: report.nanoseconds))
            if let slowCommitThreshold, duration > slowCommitThreshold {
                logger.log(level: .warn, message: "Slow commit to \(path): version \(report.version) took \(Self.milliseconds(duration)) "
                           + "(\(report.bytes) bytes, synced with \(report.groupSize - 1) other commits), more than "
                           + "slowCommitThreshold \(Self.milliseconds(slowCommitThreshold))")
            }
            handler?.realmDidCommit(RealmCommitEvent(path: path, version: report.version, duration: duration, groupSize: report.groupSize,
                                                     bytes: report.bytes, fileSize: Int(report.fileSize), activeVersions: activeVersions,
                                                     encryptedCache: encryptedCache))
        }
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let microseconds = seconds * 1_000_000 + attoseconds / 1_000_000_000_000
        return "\(microseconds / 1000).\(String(microseconds % 1000 / 100)) ms"
    }
}

extension Realm.Configuration {
    /// The logger this configuration's realms write to.
    var effectiveLogger: Logger { logger ?? Logger.shared }
}

extension Realm {
    /// Registers this configuration's relay with the store, when it has a handler or a logger
    /// that would log slow commits; and logs the opening.
    func announceOpening() {
        let logger = configuration.effectiveLogger
        let slowThreshold = logger.isEnabled(.warn) ? configuration.slowCommitThreshold : nil
        if configuration.eventHandler != nil || slowThreshold != nil {
            let key = CommitEventRelay.Key(logger: ObjectIdentifier(logger), handler: configuration.eventHandler.map { ObjectIdentifier($0) },
                                           slowCommitThreshold: slowThreshold)
            store.commitObservers.add(key: key) {
                CommitEventRelay(path: configuration.path, logger: logger, handler: configuration.eventHandler, slowCommitThreshold: slowThreshold,
                                 store: store)
            }
        }
        let first = store.commitObservers.claimOpeningAnnouncement()
        if first, logger.isEnabled(.warn), let counts = store.decryptedPages {
            // Once per file: the bound the configuration asks for does not hold.
            if !counts.onDemand, let reason = counts.fallbackReason, !reason.hasSuffix("asked for") {
                logger.log(level: .warn, message: "\(configuration.path) is decrypted into memory whole, not on demand (\(reason)): "
                           + "its memory grows with the file and encryptedCacheSize does not bound it")
            }
        }
        let level: LogLevel = first ? .info : .debug
        guard logger.isEnabled(level) else { return }
        let usage = try? store.spaceUsage()
        logger.log(level: level, message: "Opened \(configuration.path) at version \(readTransaction.version.value), "
                   + "\(usage.map { "\($0.fileSize) bytes" } ?? "size unknown"), schema version \(schemaVersionOfFile)"
                   + (configuration.readOnly ? ", read-only" : ""))
    }

    /// Logs an error `operation` threw: damaged files as `fatal`, the rest as `error`.
    static func logFailure(_ error: Swift.Error, of operation: String, _ configuration: Configuration) {
        let logger = configuration.effectiveLogger
        guard logger.isEnabled(.error) else { return }
        if let error = error as? Realm.Error, error.code == .fileCorrupted {
            logger.log(level: .fatal, message: "Damaged file detected while \(operation) \(configuration.path): \(error.message)")
        } else {
            logger.log(level: .error, message: "Failed \(operation) \(configuration.path): \(error)")
        }
    }

    /// Tells the configuration's handler how late a delivery is, when it has one.
    func reportDelivery() {
        guard let handler = configuration.eventHandler else { return }
        let published = store.commitObservers.lastPublished
        guard published != 0 else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        handler.realmDidDeliverNotifications(RealmNotificationEvent(path: configuration.path,
                                                                    lag: .nanoseconds(Int64(clamping: now - min(now, published)))))
    }
}
