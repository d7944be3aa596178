import Dispatch
import Synchronization

// Telling the layer above how commits went, for metrics and slow-commit logs.
//
// Nothing here may cost a commit anything while nobody observes: the commit path reads one
// atomic flag (`isActive`) when it prepares a commit and once more when its group is synced,
// and takes a clock reading only when the flag is set. Observers are added for the life of
// the store (a `Realm` opened with a logger or an event handler adds its own, once per
// distinct key), so the list stays as small as the set of distinct configurations that asked.

/// One commit made durable, as the store reports it.
package struct CommitReport: Sendable {
    package let version: UInt64
    /// From the start of the commit's encoding to the end of the sync that made it durable.
    package let nanoseconds: UInt64
    /// How many versions that sync made durable (group commit: 1 when it synced alone).
    package let groupSize: Int
    /// Bytes the commit wrote.
    package let bytes: Int
    /// The file's logical size at this version.
    package let fileSize: UInt64
}

/// Told after each sync that made commits durable; called on the syncing thread, outside the
/// store's locks, so it must be quick (record a number, queue a log line).
package protocol CommitObserver: AnyObject, Sendable {
    func storeDidCommit(_ reports: [CommitReport], activeVersions: Int)
}

/// A store's commit observers.
package final class CommitObservers: Sendable {
    private let active = Atomic<Bool>(false)
    private let entries = Locked([AnyHashable: any CommitObserver]())
    /// When the last sync published a version (`DispatchTime` nanoseconds; 0 before any was
    /// published while observed): the start of the notification lag the layer above measures.
    private let published = Atomic<UInt64>(0)
    /// Whether this store's opening has been announced (the first `Realm` logs it).
    private let announced = Atomic<Bool>(false)

    init() {}

    /// Whether any observer is registered: the commit path's only question while none is.
    @inline(__always)
    package var isActive: Bool { active.load(ordering: .relaxed) }

    /// Registers the observer `make` builds, unless one was registered under `key` already.
    package func add(key: some Hashable & Sendable, _ make: () -> any CommitObserver) {
        entries.withLock { entries in
            let key = AnyHashable(key)
            guard entries[key] == nil else { return }
            entries[key] = make()
            active.store(true, ordering: .releasing)
        }
    }

    /// The `DispatchTime` nanoseconds of the last published version, 0 when unknown.
    package var lastPublished: UInt64 { published.load(ordering: .relaxed) }

    /// True for the first caller only.
    package func claimOpeningAnnouncement() -> Bool {
        !announced.exchange(true, ordering: .relaxed)
    }

    /// Reports a synced group (`started` per version, 0 for versions prepared before anyone
    /// observed).
    func report(_ batch: [Store.Unsynced], activeVersions: Int) {
        let now = DispatchTime.now().uptimeNanoseconds
        published.store(now, ordering: .relaxed)
        let reports = batch.compactMap { version -> CommitReport? in
            guard version.started != 0 else { return nil }
            return CommitReport(version: version.state.slot.version.value, nanoseconds: now - min(now, version.started), groupSize: batch.count,
                                bytes: Int(version.bytes), fileSize: version.state.slot.logicalSize)
        }
        guard !reports.isEmpty else { return }
        let observers = entries.withLock { Array($0.values) }
        for observer in observers { observer.storeDidCommit(reports, activeVersions: activeVersions) }
    }
}
