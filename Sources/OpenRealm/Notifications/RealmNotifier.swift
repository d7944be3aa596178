import RealmStorage

// Delivering a realm's notifications.
//
// Each `Realm` with observers has one notifier. Notifications are computed and delivered in
// the realm's own context, when the realm moves to a newer version, never by the writer:
//
//   - `refresh()`, and autorefresh, which RealmContext posts to a realm of an actor or a
//     dispatch queue after each version this process publishes;
//   - the start of a write transaction (`write`, `beginWrite`, async writes), which moves the
//     realm to the version the write builds on: observers are told before the block runs, so
//     that what a write skips (`withoutNotifying`) is exactly that write's changes;
//   - after this realm's own commit: realm notification blocks synchronously, as in Realm;
//     collection and object observers from a delivery posted to the realm's actor or queue
//     (asynchronously, as Realm schedules them), or for a realm on a plain thread, which has
//     no event loop on Linux, at its next `refresh()` or write.
//
// A commit's writer never waits for any of this: the change sets are in the file, written
// with the commit, and each observing realm reads those of the versions it skipped over when
// it moves on, after the commit and off the write lane. Realms that lag behind read the
// changes of all the versions they missed at once (coalescing), one delta per observer.
//
// Deliveries do not nest: a block that refreshes or writes does not deliver from inside a
// delivery; what its changes bring is delivered at the realm's next delivery.

final class RealmNotifier {
    /// The realm owns its notifier; observations (held by tokens) can outlive neither.
    private unowned let realm: Realm
    private var realmObservations: [Weak<RealmObservation>] = []
    private var changeObservations: [Weak<ChangeObservation>] = []
    /// The version realm notification blocks were last told about.
    private var notifiedVersion: VersionID
    /// The pin of the version observations were last brought to, shared by all of them.
    /// Weak: the observations anchored there own it, and once none is, the version must not
    /// stay pinned (the file could not reuse the space it reaches).
    private weak var currentPin: VersionPin?
    private var isDelivering = false
    /// Set when a delivery was asked for during another (by a block that refreshed or wrote).
    private var deliveryDeferred = false
    /// Set while realm notification blocks are being called.
    private var isNotifyingRealm = false
    /// The version the open write builds on, once its observers were told at its start.
    private var writeBase: VersionID?
    /// What `withoutNotifying` asked of the commit under way (`prepareSkip`).
    private var pendingSkip: Skip?

    init(realm: Realm) {
        self.realm = realm
        notifiedVersion = realm.readTransaction.version
    }

    // MARK: Registering

    func add(_ observation: RealmObservation) {
        realmObservations.removeAll { $0.value?.isActive != true }
        // A new block hears of the versions after the one the realm reads now.
        if realmObservations.isEmpty { notifiedVersion = currentVersion }
        realmObservations.append(Weak(observation))
    }

    /// The version the realm shows: the one its write builds on, else the one it reads.
    private var currentVersion: VersionID {
        realm.writeTransaction?.baseVersion ?? realm.readTransaction.version
    }

    /// Registers a collection or object observation; one that reports an initial change gets
    /// it at the realm's next delivery (posted to the realm's actor or queue, if it has one).
    func add(_ observation: ChangeObservation) {
        changeObservations.removeAll { $0.value?.isActive != true }
        changeObservations.append(Weak(observation))
        if observation.wantsInitialDelivery { scheduleDelivery() }
    }

    /// The pin of the realm's current version (outside write transactions).
    func pinForCurrentVersion() -> VersionPin {
        pin(realm.readTransaction.version)
    }

    private func pin(_ version: VersionID) -> VersionPin {
        if let currentPin, currentPin.version == version { return currentPin }
        let pin = VersionPin(version, in: realm.store)
        currentPin = pin
        return pin
    }

    /// The collection and object observations still registered (for tests).
    var activeObservationCount: Int {
        changeObservations.count { $0.value?.isActive == true }
    }

    func owns(_ observation: Observation) -> Bool {
        realmObservations.contains { $0.value === observation } || changeObservations.contains { $0.value === observation }
    }

    // MARK: Delivering

    /// Brings every observation to the realm's current version and calls the blocks whose
    /// subjects changed. `beginning`: called at the start of a write transaction, before
    /// anything in it changed (any other time inside a write, nothing is delivered: the
    /// realm shows uncommitted changes).
    func deliver(beginning: Bool = false) {
        guard !isDelivering else {
            deliveryDeferred = true
            return
        }
        let source: ChangeSource
        if let transaction = realm.writeTransaction {
            guard beginning else { return }
            source = .write(transaction)
        } else {
            source = .read(realm.readTransaction)
        }
        isDelivering = true
        defer {
            isDelivering = false
            if deliveryDeferred {
                deliveryDeferred = false
                scheduleDelivery()
            }
        }
        let version = source.version
        let stamp = realm.generation
        var changesSince: [VersionID: ChangeSet?] = [:]
        for entry in changeObservations {
            guard let observation = entry.value, observation.isActive, !observation.isFinished else { continue }
            // A block that refreshed, wrote or cancelled the write moved the realm: the rest
            // wait for the next delivery, which that move scheduled.
            guard realm.generation == stamp else { break }
            if observation.wantsInitialDelivery {
                observation.deliverInitial(at: pin(version))
                continue
            }
            // No snapshot yet (a stream whose consumer has not asked), or already here, or
            // ahead of the realm (anchored at a write's base, the realm went back to the
            // newest published version after the write was cancelled): nothing to do now.
            guard let anchor = observation.anchor?.version, anchor < version else { continue }
            let changes = changesSince[anchor] ?? {
                let changes = source.changes(since: anchor)
                changesSince[anchor] = changes
                return changes
            }()
            observation.advance(to: pin(version), changes: changes)
        }
        if beginning { writeBase = version }
        notifyRealmObservations(version: currentVersion, skipping: nil)
    }

    /// After this realm's commit of `committed` (now at its newest version): realm blocks are
    /// called now, the other observers at the next delivery. Observations the commit was to
    /// skip take the snapshots read before it, without a call.
    func didCommit(_ committed: VersionID) {
        let skip = pendingSkip
        pendingSkip = nil
        if let skip {
            for (observation, snapshot) in skip.snapshots { observation.adoptSkipped(snapshot, at: skip.pin) }
        }
        writeBase = nil
        notifyRealmObservations(version: realm.readTransaction.version, skipping: skip.map { ($0.pin.version, $0.realmObservations) })
        scheduleDelivery()
    }

    /// After the realm moved without a delivery (a write cancelled or failed, `invalidate()`).
    func didMove() {
        pendingSkip = nil
        writeBase = nil
        notifyRealmObservations(version: realm.readTransaction.version, skipping: nil)
        scheduleDelivery()
    }

    /// For a realm whose autorefresh is off, on its actor or queue: a newer version exists.
    func refreshRequired() {
        guard realm.store.latestVersion != realm.readTransaction.version else { return }
        for entry in realmObservations {
            guard let observation = entry.value, let block = observation.currentBlock else { continue }
            block(.refreshRequired, realm)
        }
    }

    private func notifyRealmObservations(version: VersionID, skipping skip: (version: VersionID, observations: [RealmObservation])?) {
        // A block that writes is not called again from inside itself (as in Realm); the
        // version it made is announced at the realm's next move.
        guard version != notifiedVersion, !isNotifyingRealm else { return }
        isNotifyingRealm = true
        defer { isNotifyingRealm = false }
        notifiedVersion = version
        // Realm's rule: a skipped block misses only this commit; if others' commits arrived
        // with it, it is told.
        let skipped = skip.map { $0.version == version ? $0.observations : [] } ?? []
        for entry in realmObservations {
            guard let observation = entry.value, !skipped.contains(where: { $0 === observation }),
                  let block = observation.currentBlock else { continue }
            block(.didChange, realm)
        }
    }

    /// Delivers on the realm's actor or queue soon; a realm on a thread delivers at its next
    /// `refresh()` or write.
    private func scheduleDelivery() {
        guard changeObservations.contains(where: { $0.value?.isActive == true }) else { return }
        realm.context?.postDelivery()
    }

    // MARK: Skipping (withoutNotifying)

    private struct Skip {
        let pin: VersionPin
        let snapshots: [(ChangeObservation, Any)]
        let realmObservations: [RealmObservation]
    }

    /// Before the commit of the open write: the observations of `tokens` take their snapshots
    /// of what the commit will hold, to adopt silently once it is committed (`didCommit`).
    /// Only observations brought to the write's base when it began can skip exactly its
    /// changes; the others are told as usual.
    func prepareSkip(_ tokens: [NotificationToken]) {
        pendingSkip = nil
        guard !tokens.isEmpty, let transaction = realm.writeTransaction else { return }
        var snapshots: [(ChangeObservation, Any)] = []
        var realmBlocks: [RealmObservation] = []
        for token in tokens {
            let observation = token.observation
            // Tokens of other realms, and of observations registered on another queue or
            // actor (`observe(on:)`), cannot be skipped: Realm's rule.
            ensure(owns(observation), "Incorrect Realm: only notifications for the Realm being modified can be skipped.")
            if let blocks = observation as? RealmObservation {
                realmBlocks.append(blocks)
            } else if let change = observation as? ChangeObservation, change.isActive,
                      let base = writeBase, change.anchor?.version == base, let snapshot = change.takeSkipSnapshot() {
                snapshots.append((change, snapshot))
            }
        }
        // Pinned before the commit exists: its history boundary must survive the commits
        // after it until the skipped observations move on from it.
        pendingSkip = Skip(pin: VersionPin(transaction.version, in: realm.store), snapshots: snapshots, realmObservations: realmBlocks)
    }

    /// After a failed commit: nothing was committed, nothing is skipped.
    func dropSkip() {
        pendingSkip = nil
    }
}

/// Where a delivery reads the changes from: the realm's read version, or at the start of a
/// write, the version the write builds on.
enum ChangeSource {
    case read(ReadTransaction)
    case write(WriteTransaction)

    var version: VersionID {
        switch self {
        case .read(let read): return read.version
        case .write(let write): return write.baseVersion
        }
    }

    /// The changes since `version`; nil when they are no longer known (only after a failed
    /// sync replaced versions): observers then compare snapshots and count every object
    /// still there as modified.
    func changes(since version: VersionID) -> ChangeSet? {
        switch self {
        case .read(let read): return try? read.changes(since: version)
        case .write(let write): return try? write.changesToBase(since: version)
        }
    }
}

/// A weak reference, for the notifier's lists: tokens own observations.
struct Weak<Value: AnyObject> {
    weak var value: Value?
    init(_ value: Value) { self.value = value }
}
