import RealmStorage

// Delivering a realm's notifications.
//
// Each `Realm` with observers has one notifier. Notifications are computed and delivered in
// the realm's own context, when the realm moves to a newer version, never by the writer:
//
//   - `refresh()`, and autorefresh, which RealmContext posts to a realm of an actor or a
//     dispatch queue after each version this process publishes;
//   - a write about to ask for the write lane (`write`, `beginWrite`, async writes) first
//     moves the realm to the newest version and delivers, as `refresh()` does, so that no
//     observer runs while the write holds the lane. What is committed between that and the
//     lane (usually nothing) is delivered to collection and object observers when the write
//     begins, before its block runs, so that what a write skips (`withoutNotifying`) is
//     exactly that write's changes;
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
// The rules of a delivery:
//
//   1. Deliveries do not nest. A block that refreshes, writes or cancels the write moves the
//      realm (its `generation` changes); the delivery goes on at the new version with the
//      observers it has not called yet. Each observer is called at most once per delivery:
//      one called already catches up at the next (posted to the realm's actor or queue; on a
//      thread, at its next refresh or write), so that blocks that write whenever they are
//      called cannot keep one delivery going forever.
//   2. Realm blocks are called after the other observers, never inside a write (what the
//      start of a write would announce, they hear at the write's commit or cancel) and never
//      from inside themselves. Every version the realm moves to is announced once, in order,
//      several at once when they come together. A move a realm block makes by refreshing is
//      announced at once: the blocks after it are called at the new version, those before
//      it again once the blocks return. A commit a realm block makes is announced when the
//      realm next moves to another version: announced at once, or at a refresh that finds
//      nothing newer (as the autorefresh after that very commit does), a block that audits
//      every change would write forever (Realm never announces it).
//   3. An observation that ended (token invalidated or released, final change reported)
//      keeps no version pinned: its snapshot and anchor go at once in the realm's context,
//      else as soon as the context runs (posted to the realm's actor or queue; on a thread,
//      at the notifier's next delivery).

final class RealmNotifier {
    /// The realm owns its notifier; observations (held by tokens) can outlive neither.
    private unowned let realm: Realm
    private var realmObservations: [Weak<RealmObservation>] = []
    private var changeObservations: [Weak<ChangeObservation>] = []
    /// The version realm notification blocks were last told about.
    private var notifiedVersion: VersionID
    /// A version a realm block committed while the blocks were being called: announced when
    /// the realm moves on from it (rule 2).
    private var committedByARealmBlock: VersionID?
    /// The pin of the version observations were last brought to, shared by all of them.
    /// Weak: the observations anchored there own it, and once none is, the version must not
    /// stay pinned (the file could not reuse the space it reaches).
    private weak var currentPin: VersionPin?
    private var isDelivering = false
    /// Set when a delivery was asked for during another one (by a block that refreshed or
    /// wrote): observers called already are behind, and catch up at the next delivery.
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
        pruneEnded()
        // A new block hears of the versions after the one the realm shows now.
        if realmObservations.isEmpty { notifiedVersion = realm.writeTransaction?.baseVersion ?? realm.readTransaction.version }
        realmObservations.append(Weak(observation))
    }

    /// Registers a collection or object observation; one that reports an initial change gets
    /// it at the realm's next delivery (posted to the realm's actor or queue, if it has one).
    func add(_ observation: ChangeObservation) {
        pruneEnded()
        changeObservations.append(Weak(observation))
        if observation.wantsInitialDelivery { scheduleDelivery() }
    }

    /// Whether anything may be waiting for a delivery (ended observations not yet pruned
    /// count: this only decides whether a write delivers before it asks for the lane).
    var hasObservers: Bool { !realmObservations.isEmpty || !changeObservations.isEmpty }

    /// The pin of the realm's current version (outside write transactions).
    func pinForCurrentVersion() -> VersionPin {
        let read = realm.readTransaction
        return pin(read.version, read: read)
    }

    /// The pin of `version`, shared by the observations anchored there; `read` reads it, when
    /// the realm has it as a read transaction (not at the start of a write).
    private func pin(_ version: VersionID, read: ReadTransaction?) -> VersionPin {
        if let currentPin, currentPin.version == version, currentPin.read != nil || read == nil { return currentPin }
        let pin = VersionPin(version, in: realm.store, read: read)
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

    /// Forgets the observations that ended, letting go of what they hold (rule 3).
    private func pruneEnded() {
        changeObservations.removeAll { entry in
            guard let observation = entry.value else { return true }
            if observation.isActive { return false }
            observation.release()
            return true
        }
        realmObservations.removeAll { $0.value?.isActive != true }
    }

    // MARK: Delivering

    /// What one delivery did so far (rule 1).
    private struct Pass {
        /// The observations whose blocks were called, held so that their identities stay theirs.
        var called: [ChangeObservation] = []
        var calledIdentities: Set<ObjectIdentifier> = []
        /// Whether one of them was left behind the realm's version by a later move.
        var leftBehind = false
    }

    /// Brings every observation to the realm's current version and calls the blocks whose
    /// subjects changed. `beginning`: called at the start of a write transaction, before
    /// anything in it changed (any other time inside a write, nothing is delivered: the
    /// realm shows uncommitted changes).
    func deliver(beginning: Bool = false) {
        guard !isDelivering else {
            deliveryDeferred = true
            return
        }
        let write = realm.writeTransaction
        guard write == nil || beginning else { return }
        isDelivering = true
        defer { isDelivering = false }
        pruneEnded()
        var pass = Pass()
        while let source = source(inside: write) {
            // A block moved the realm: on at the new version.
            if deliverChanges(from: source, &pass) { continue }
            if let write, realm.writeTransaction === write {
                writeBase = source.version
                break
            }
            // Realm blocks are not told of a write's base; its commit or cancel told them.
            guard write == nil else { break }
            let stamp = realm.generation
            notifyRealmObservations()
            // A realm block moved the realm: the observers not called yet follow it.
            guard realm.generation != stamp else { break }
        }
        if !pass.called.isEmpty { realm.reportDelivery() }
        if pass.leftBehind || deliveryDeferred {
            deliveryDeferred = false
            scheduleDelivery()
        }
    }

    /// What a delivery reads: the realm's read version, or at the start of `write`, the
    /// version it builds on; nil once the realm is in another write (a block began one).
    private func source(inside write: WriteTransaction?) -> ChangeSource? {
        guard let current = realm.writeTransaction else { return .read(realm.readTransaction) }
        return current === write ? .write(current) : nil
    }

    /// Brings the collection and object observations that `pass` has not called to
    /// `source`'s version. Returns true as soon as a block moved the realm.
    private func deliverChanges(from source: ChangeSource, _ pass: inout Pass) -> Bool {
        let version = source.version
        let read: ReadTransaction?
        if case .read(let transaction) = source { read = transaction } else { read = nil }
        let stamp = realm.generation
        // Observations anchored at one version share the changes read since it.
        var changesSince: [VersionID: ChangeSet?] = [:]
        for entry in changeObservations {
            guard let observation = entry.value, observation.isActive, !observation.isFinished else { continue }
            let identity = ObjectIdentifier(observation)
            if pass.calledIdentities.contains(identity) {
                if observation.isBehind(version) { pass.leftBehind = true }
                continue
            }
            let called: Bool
            if observation.wantsInitialDelivery {
                called = observation.deliverInitial(at: pin(version, read: read))
            } else {
                called = observation.advance(to: version, pin: { pin(version, read: read) }) { anchor in
                    if let known = changesSince[anchor] { return known }
                    let changes = source.changes(since: anchor)
                    changesSince[anchor] = changes
                    return changes
                }
            }
            if called {
                pass.called.append(observation)
                pass.calledIdentities.insert(identity)
            }
            if realm.generation != stamp { return true }
        }
        return false
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
        let version = realm.readTransaction.version
        if isNotifyingRealm { committedByARealmBlock = version }
        // Realm's rule: a skipped block misses only this commit; if others' commits came with
        // it (before it, not yet announced, or after it), it is told.
        let skipped = skip.map { $0.pin.version == version && $0.base == notifiedVersion ? $0.realmObservations : [] } ?? []
        notifyRealmObservations(skipping: skipped)
        scheduleDelivery()
    }

    /// After the realm moved without a delivery (a write cancelled or failed).
    func didMove() {
        pendingSkip = nil
        writeBase = nil
        notifyRealmObservations()
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

    /// Calls the realm blocks until every version the realm moved to is announced (rule 2).
    private func notifyRealmObservations(skipping skipped: [RealmObservation] = []) {
        guard !isNotifyingRealm, realm.writeTransaction == nil else { return }
        isNotifyingRealm = true
        defer { isNotifyingRealm = false }
        var skipped = skipped
        // The version each block was called at: a block after one that moved the realm is
        // called once, at the newer version, as observers are (rule 1).
        var told: [ObjectIdentifier: VersionID] = [:]
        while true {
            let version = realm.readTransaction.version
            guard version != notifiedVersion, version != committedByARealmBlock else { return }
            notifiedVersion = version
            committedByARealmBlock = nil
            for entry in realmObservations {
                guard let observation = entry.value, !skipped.contains(where: { $0 === observation }),
                      let block = observation.currentBlock else { continue }
                let now = realm.readTransaction.version
                guard told.updateValue(now, forKey: ObjectIdentifier(observation)) != now else { continue }
                block(.didChange, realm)
            }
            skipped = []
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
        /// The version the write built on.
        let base: VersionID
        let snapshots: [(ChangeObservation, Any)]
        let realmObservations: [RealmObservation]
    }

    /// Before the commit of the open write: the observations of `tokens` take their snapshots
    /// of what the commit will hold, to adopt silently once it is committed (`didCommit`).
    /// Only observations brought to the write's base when it began can skip exactly its
    /// changes; the others are told as usual. Tokens that ended have nothing to skip.
    func prepareSkip(_ tokens: [NotificationToken]) {
        pendingSkip = nil
        guard !tokens.isEmpty, let transaction = realm.writeTransaction else { return }
        var snapshots: [(ChangeObservation, Any)] = []
        var realmBlocks: [RealmObservation] = []
        for token in tokens {
            let observation = token.observation
            guard observation.isActive else { continue }
            // Tokens of other realms, and of observations registered on another queue or
            // actor (`observe(on:)`), cannot be skipped: Realm's rule.
            ensure(owns(observation), "Incorrect Realm: only notifications for the Realm being modified can be skipped.")
            if let blocks = observation as? RealmObservation {
                realmBlocks.append(blocks)
            } else if let change = observation as? ChangeObservation,
                      let base = writeBase, change.anchor?.version == base, let snapshot = change.takeSkipSnapshot() {
                snapshots.append((change, snapshot))
            }
        }
        // Pinned before the commit exists: its history boundary must survive the commits
        // after it until the skipped observations move on from it.
        pendingSkip = Skip(pin: VersionPin(transaction.version, in: realm.store), base: transaction.baseVersion,
                           snapshots: snapshots, realmObservations: realmBlocks)
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
