import RealmStorage

// Collection and object observations: what they remember and how a delivery moves them on.
//
// An observation remembers a snapshot of what it watches (the keys of results, the elements
// of a list, the values of an object's properties) and the version it was taken at (its
// anchor, pinned). A delivery (RealmNotifier.swift) brings it to the realm's current
// version:
//
//   1. The change sets of every commit in between tell, per table, which objects were
//      inserted, deleted and modified, and which columns changed. If none of the tables the
//      observation depends on changed, only the anchor moves: nothing is read.
//   2. Otherwise a new snapshot is read and compared with the old one: elements that left or
//      arrived are deletions and insertions; elements present in both whose objects the
//      change sets mark modified (in the properties the observation watches) are
//      modifications. The difference is a delta, and the new snapshot replaces the old.
//      A subject that keeps enough in its snapshot applies the change sets to it instead
//      (`advance(_:by:)`: results over a table, KeptOrder.swift), reading only the objects
//      that changed; where the change sets cannot say enough it reads and compares in full.
//   3. A callback observation turns the delta into a change and calls its block at once.
//      A stream observation (ChangeSequence.swift) does not read anything at a delivery: it
//      keeps the snapshot its consumer last saw, notes that something changed and wakes the
//      consumer, which reads one delta from that snapshot to the newest when it asks. However
//      many commits arrive before it asks, that is one comparison, never a queue, and changes
//      that cancel out are no element.
//   4. An observation that ended (its token went, or it reported a final delta) lets go of
//      its snapshot and its anchor: it must not keep a version pinned.

/// What an observation watches: how to read it, and what its changes look like.
protocol ObservedSubject {
    associatedtype Snapshot
    associatedtype Delta: ObservedDelta
    associatedtype Change

    var realm: Realm { get }
    /// Whether the first delivery is an initial change (collections) or nothing (objects).
    var deliversInitial: Bool { get }
    /// What the subject holds now, at the realm's current state.
    func snapshot() -> Snapshot
    /// Whether `changes` can have changed the subject (false: no need to read it again).
    func mayBeAffected(by changes: ChangeSet) -> Bool
    /// Whether `changes` can have changed the subject as `old` holds it; a subject that keeps
    /// enough in its snapshot answers per changed object (results: KeptOrder.swift). `anchor`:
    /// the version `old` was taken at, when it can be read.
    func mayBeAffected(by changes: ChangeSet, from old: Snapshot, anchor: ReadTransaction?) -> Bool
    /// Moves `old` to the subject now by applying `changes`, without reading the whole
    /// subject: what changed, or nil when this cannot be done (then `old` is untouched and
    /// the full comparison runs). `anchor`: as above.
    func advance(_ old: inout Snapshot, by changes: ChangeSet, anchor: ReadTransaction?) -> Advanced<Delta>?
    /// What differs from `old` to `new`; nil when nothing worth reporting does. `changes` is nil
    /// when the change sets are unknown: everything present in both counts as modified.
    func delta(from old: Snapshot, to new: Snapshot, changes: ChangeSet?) -> Delta?
    /// The same, for a subject that reads what its snapshot does not keep at `anchor`, the
    /// version `old` was taken at (results with key paths read watched values there).
    func delta(from old: Snapshot, to new: Snapshot, changes: ChangeSet?, anchor: ReadTransaction?) -> Delta?
    /// The change an observation reports first (collections only).
    func initialChange() -> Change
    func change(for delta: Delta) -> Change
}

/// What an in-place advance of a snapshot found.
enum Advanced<Delta> {
    /// Nothing to report.
    case unchanged
    case changed(Delta)

    var delta: Delta? {
        if case .changed(let delta) = self { return delta }
        return nil
    }
}

extension ObservedSubject {
    func mayBeAffected(by changes: ChangeSet, from old: Snapshot, anchor: ReadTransaction?) -> Bool { mayBeAffected(by: changes) }
    func advance(_ old: inout Snapshot, by changes: ChangeSet, anchor: ReadTransaction?) -> Advanced<Delta>? { nil }
    func delta(from old: Snapshot, to new: Snapshot, changes: ChangeSet?, anchor: ReadTransaction?) -> Delta? {
        delta(from: old, to: new, changes: changes)
    }
}

/// What changed between two snapshots.
protocol ObservedDelta {
    /// Whether the subject is gone for good (a deleted object, a list whose owner was
    /// deleted): the observation reports nothing after this.
    var isFinal: Bool { get }
}

/// A collection or object observation, as the notifier sees it. Used only in the realm's
/// context, except for what `Observation` guards.
class ChangeObservation: Observation, @unchecked Sendable {
    // @unchecked: see `Observation`; the state below is only touched in the realm's context.
    /// The version of the snapshot, pinned; nil until the first snapshot and once ended.
    var anchor: VersionPin?
    /// Set once a final delta was reported.
    var isFinished = false

    /// The realm observed (immutable: `didCancel` reads it from any thread).
    let observedRealm: Realm

    init(realm: Realm) {
        observedRealm = realm
    }

    /// Whether the notifier should take the first snapshot (and report the initial change)
    /// at its next delivery; streams take theirs when their consumer asks.
    var wantsInitialDelivery: Bool { false }

    /// Takes the first snapshot and reports the initial change; returns whether a block was
    /// called.
    func deliverInitial(at pin: VersionPin) -> Bool { false }

    /// Moves the observation from its anchor to `version`, the realm's current version
    /// (`pin` pins it; `changes` gives the changes since a version). Returns whether a block
    /// was called.
    func advance(to version: VersionID, pin: () -> VersionPin, changes: (VersionID) -> ChangeSet?) -> Bool { false }

    /// Whether the observation's snapshot is older than `version`.
    func isBehind(_ version: VersionID) -> Bool { anchor.map { $0.version < version } ?? false }

    /// A snapshot of the subject now, kept to be adopted with `adoptSkipped` (withoutNotifying).
    func takeSkipSnapshot() -> Any? { nil }
    func adoptSkipped(_ snapshot: Any, at pin: VersionPin) {}

    /// Lets go of the snapshot and the anchor. In the realm's context only.
    func release() {
        anchor = nil
    }

    /// Releases what the observation holds: at once in the realm's context, else posted there
    /// (a realm on a thread has nowhere to post: its notifier releases it at its next
    /// delivery).
    override func didCancel() {
        let realm = observedRealm
        if realm.confinement.isKnownCurrent {
            release()
        } else {
            realm.context?.post { [self] in release() }
        }
    }
}

/// The snapshot bookkeeping shared by callback and stream observations.
class SubjectObservation<Subject: ObservedSubject>: ChangeObservation, @unchecked Sendable {
    // @unchecked: see `ChangeObservation`.
    let subject: Subject
    var snapshot: Subject.Snapshot?

    init(_ subject: Subject) {
        self.subject = subject
        super.init(realm: subject.realm)
    }

    /// Takes the first snapshot, anchored at `pin`.
    func start(at pin: VersionPin) {
        snapshot = subject.snapshot()
        anchor = pin
    }

    /// Moves the snapshot to the subject as it is now (at the version `pin` pins), given the
    /// changes since the anchor; returns what changed, nil when nothing is to be reported. A
    /// final delta ends the observation.
    func moveSnapshot(to pin: () -> VersionPin, changes: ChangeSet?) -> Subject.Delta? {
        guard var old = snapshot, !isFinished else { return nil }
        if let changes, !subject.mayBeAffected(by: changes, from: old, anchor: anchor?.read) {
            anchor = pin()
            return nil
        }
        if let changes {
            // The kept snapshot is changed in place: let go of the stored copy first so that
            // its arrays are not copied.
            snapshot = nil
            let advanced = subject.advance(&old, by: changes, anchor: anchor?.read)
            snapshot = old
            if let advanced {
                anchor = pin()
                return advanced.delta
            }
        }
        let new = subject.snapshot()
        let delta = subject.delta(from: old, to: new, changes: changes, anchor: anchor?.read)
        snapshot = new
        anchor = pin()
        if delta?.isFinal == true {
            isFinished = true
            release()
        }
        return delta
    }

    override func release() {
        snapshot = nil
        super.release()
    }

    override func takeSkipSnapshot() -> Any? {
        guard snapshot != nil, !isFinished else { return nil }
        return subject.snapshot()
    }

    override func adoptSkipped(_ snapshot: Any, at pin: VersionPin) {
        guard isActive, let snapshot = snapshot as? Subject.Snapshot else { return }
        self.snapshot = snapshot
        anchor = pin
    }
}

/// An observation that calls a block with each change (`observe`).
final class CallbackObservation<Subject: ObservedSubject>: SubjectObservation<Subject>, @unchecked Sendable {
    // @unchecked: see `ChangeObservation`; `block` is in a `Locked` (a token may be
    // invalidated on any thread).
    /// Only called in the realm's context (`InContext`); a cancelling token only lets it go.
    private let block: Locked<InContext<(Subject.Change) -> Void>?>

    init(_ subject: Subject, _ block: @escaping (Subject.Change) -> Void) {
        self.block = Locked(InContext(block))
        super.init(subject)
    }

    override var wantsInitialDelivery: Bool { subject.deliversInitial && snapshot == nil }

    /// Objects report no initial change, so their snapshot is taken when they are observed.
    func startWithoutInitial(at pin: VersionPin) {
        start(at: pin)
    }

    override func deliverInitial(at pin: VersionPin) -> Bool {
        start(at: pin)
        return call(subject.initialChange())
    }

    override func advance(to version: VersionID, pin: () -> VersionPin, changes: (VersionID) -> ChangeSet?) -> Bool {
        guard let anchor, anchor.version < version,
              let delta = moveSnapshot(to: pin, changes: changes(anchor.version)) else { return false }
        return call(subject.change(for: delta))
    }

    private func call(_ change: Subject.Change) -> Bool {
        guard let block = block.withLock({ $0?.value }) else { return false }
        block(change)
        return true
    }

    override func didCancel() {
        let dropped = block.withLock { block in
            defer { block = nil }
            return block
        }
        withExtendedLifetime(dropped) {}
        super.didCancel()
    }
}
