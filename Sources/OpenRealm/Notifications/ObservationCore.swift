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
//   3. A callback observation turns the delta into a change and calls its block at once.
//      A stream observation (ChangeSequence.swift) merges it into the one delta it keeps for
//      its consumer: however many commits arrive before the consumer asks, it holds one delta
//      from the snapshot the consumer last saw to the newest, never a queue.

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
    /// What differs from `old` to `new`; nil when nothing worth reporting does. `changes` is nil
    /// when the change sets are unknown: everything present in both counts as modified.
    func delta(from old: Snapshot, to new: Snapshot, changes: ChangeSet?) -> Delta?
    /// The change an observation reports first (collections only).
    func initialChange() -> Change
    func change(for delta: Delta) -> Change
}

/// What changed between two snapshots, mergeable with what changed afterwards.
protocol ObservedDelta {
    /// This delta followed by `later`: from this one's old snapshot to `later`'s new one.
    mutating func merge(_ later: Self)
    /// Whether the subject is gone for good (a deleted object, a list whose owner was
    /// deleted): the observation reports nothing after this.
    var isFinal: Bool { get }
}

/// A collection or object observation, as the notifier sees it. Used only in the realm's
/// context, except for what `Observation` guards.
class ChangeObservation: Observation, @unchecked Sendable {
    // @unchecked: see `Observation`; the state below is only touched in the realm's context.
    /// The version of the snapshot, pinned; nil until the first snapshot.
    var anchor: VersionPin?
    /// Set once a final delta was reported.
    var isFinished = false

    /// Whether the notifier should take the first snapshot (and report the initial change)
    /// at its next delivery; streams take theirs when their consumer asks.
    var wantsInitialDelivery: Bool { false }

    func deliverInitial(at pin: VersionPin) {}

    /// Moves the observation from its anchor to `pin`, the realm's current version.
    func advance(to pin: VersionPin, changes: ChangeSet?) {}

    /// A snapshot of the subject now, kept to be adopted with `adoptSkipped` (withoutNotifying).
    func takeSkipSnapshot() -> Any? { nil }
    func adoptSkipped(_ snapshot: Any, at pin: VersionPin) {}
}

/// The snapshot bookkeeping shared by callback and stream observations.
class SubjectObservation<Subject: ObservedSubject>: ChangeObservation, @unchecked Sendable {
    // @unchecked: see `ChangeObservation`.
    let subject: Subject
    var snapshot: Subject.Snapshot?

    init(_ subject: Subject) {
        self.subject = subject
    }

    /// Takes the first snapshot, anchored at `pin`.
    func start(at pin: VersionPin) {
        snapshot = subject.snapshot()
        anchor = pin
    }

    override func advance(to pin: VersionPin, changes: ChangeSet?) {
        guard let old = snapshot, !isFinished else { return }
        if let changes, !subject.mayBeAffected(by: changes) {
            anchor = pin
            return
        }
        let new = subject.snapshot()
        let delta = subject.delta(from: old, to: new, changes: changes)
        snapshot = new
        anchor = pin
        guard let delta else { return }
        if delta.isFinal { isFinished = true }
        emit(delta)
    }

    /// Reports a delta (subclasses).
    func emit(_ delta: Subject.Delta) {}

    override func takeSkipSnapshot() -> Any? {
        guard snapshot != nil, !isFinished else { return nil }
        return subject.snapshot()
    }

    override func adoptSkipped(_ snapshot: Any, at pin: VersionPin) {
        guard let snapshot = snapshot as? Subject.Snapshot else { return }
        self.snapshot = snapshot
        anchor = pin
    }
}

/// An observation that calls a block with each change (`observe`).
final class CallbackObservation<Subject: ObservedSubject>: SubjectObservation<Subject>, @unchecked Sendable {
    // @unchecked: `block` is guarded by `lock` (a token may be invalidated on any thread);
    // it is only called in the realm's context.
    private var block: ((Subject.Change) -> Void)?

    init(_ subject: Subject, _ block: @escaping (Subject.Change) -> Void) {
        self.block = block
        super.init(subject)
    }

    override var wantsInitialDelivery: Bool { subject.deliversInitial && snapshot == nil }

    /// Objects report no initial change, so their snapshot is taken when they are observed.
    func startWithoutInitial(at pin: VersionPin) {
        start(at: pin)
    }

    override func deliverInitial(at pin: VersionPin) {
        start(at: pin)
        call(subject.initialChange())
    }

    override func emit(_ delta: Subject.Delta) {
        call(subject.change(for: delta))
    }

    private func call(_ change: Subject.Change) {
        guard let block = lock.withLock({ block }) else { return }
        block(change)
    }

    override func didCancel() {
        let dropped = lock.withLock {
            defer { block = nil }
            return block
        }
        withExtendedLifetime(dropped) {}
    }
}
