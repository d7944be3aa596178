import RealmStorage

// Registrations and their tokens.
//
// Every `observe` makes an observation: what is watched, the block to call, and (for
// collections and objects) the version and contents last reported. The token returned owns
// it; the realm's notifier (RealmNotifier.swift) only holds it weakly. So:
//
//   1. Observation ends when the token is invalidated or deallocated, whichever comes first.
//      This is what Realm Swift does: its realm keeps notification tokens in a weak table and
//      collection tokens unregister when released; only a warning tells Realm users to keep
//      the token. Servers drop tokens with the tasks that held them, and nothing must leak.
//   2. A block may capture the observed collection, object or realm without a retain cycle:
//      the chain token → observation → block → realm ends at the realm, whose notifier does
//      not hold the observation strongly.
//   3. Tokens are `Sendable` and may be invalidated or released on any thread. Only the flag
//      and the block are touched then, each in a `Locked`; everything else of an observation is
//      used in its realm's context alone, during delivery, while the notifier holds it.

/// A registration of a change notification block: keep it for as long as the block should be
/// called, and call `invalidate()` (or let it go) to stop.
///
/// ```swift
/// let token = realm.objects(Dog.self).observe { change in
///     print(change)
/// }
/// …
/// token.invalidate()
/// ```
///
/// As in Realm Swift, releasing the token also ends the observation: store it in a property
/// (or a collection of tokens) that lives as long as the observer.
public final class NotificationToken: Sendable {
    let observation: Observation

    init(_ observation: Observation) {
        self.observation = observation
    }

    /// Stops the notifications. Safe to call more than once, from any thread. Called in the
    /// realm's context (typically from the block itself), no call follows; from another
    /// thread, a call the realm's context has already begun still completes.
    public func invalidate() {
        observation.cancel()
    }

    deinit {
        observation.cancel()
    }
}

/// One registration: whether it is still wanted, and its block. Subclasses add what they
/// watch (RealmObservation below, ChangeObservation in ObservationCore.swift).
class Observation: @unchecked Sendable {
    // @unchecked: only a final class can be checked Sendable, and this one has subclasses.
    // What a token touches from any thread is in a `Locked` (`active` here, each subclass's
    // block); everything else is used only in the realm's context (see the essay above).
    private let active = Locked(true)

    var isActive: Bool { active.withLock { $0 } }

    /// Marks the observation ended and lets its block go. From any thread.
    func cancel() {
        let wasActive = active.withLock { active in
            defer { active = false }
            return active
        }
        if wasActive { didCancel() }
    }

    /// Drops the block (and what it captured), outside the lock.
    func didCancel() {}
}

/// An observation whose registration happens later, in another context (`observe(on:)` with
/// a queue or an actor): the token exists at once, the real observation once the other
/// context has opened its realm. Cancelling either way round ends both.
final class DeferredObservation: Observation, @unchecked Sendable {
    // @unchecked: as `Observation`'s; `inner` is in a `Locked`.
    private let inner = Locked<NotificationToken?>(nil)

    /// Hands over the real registration; it is ended at once if this one already was.
    ///
    /// `inner` and `active` are two locks: `attach` sets `inner` then reads `active`, `cancel`
    /// clears `active` then takes `inner`, so whichever comes second sees the other's change
    /// and the token is invalidated either way.
    func attach(_ token: NotificationToken) {
        let keep: Bool = inner.withLock { inner in
            guard inner == nil else { return false }
            inner = token
            return true
        }
        if !keep || !isActive { token.invalidate() }
    }

    override func didCancel() {
        let token = inner.withLock { inner in
            defer { inner = nil }
            return inner
        }
        token?.invalidate()
    }
}

/// A realm notification block (`Realm.observe`).
final class RealmObservation: Observation, @unchecked Sendable {
    // @unchecked: as `Observation`'s; `block` is in a `Locked`.
    /// The block is only called in the realm's context (`InContext`); from another thread a
    /// cancelling token only lets it go.
    private let block: Locked<InContext<Realm.NotificationBlock>?>

    init(_ block: @escaping Realm.NotificationBlock) {
        self.block = Locked(InContext(block))
    }

    /// The block, unless the observation ended.
    var currentBlock: Realm.NotificationBlock? { block.withLock { $0?.value } }

    override func didCancel() {
        let dropped = block.withLock { block in
            defer { block = nil }
            return block
        }
        withExtendedLifetime(dropped) {}
    }
}

/// A version held for observations: its change history stays in the file while it is pinned,
/// so the changes since it can be read (History.swift). Unpinned when the last observation
/// anchored there moves on or goes.
final class VersionPin {
    let version: VersionID
    /// The version to read, when the pin was taken at the realm's read version (a kept
    /// result reads its changed objects' old sort values there: KeptOrder.swift); nil for a
    /// pin taken before its commit exists (skipped notifications).
    let read: ReadTransaction?
    private let registry: VersionRegistry

    init(_ version: VersionID, in store: Store, read: ReadTransaction? = nil) {
        self.version = version
        self.read = read
        registry = store.registry
        registry.pin(version)
    }

    deinit { registry.unpin(version) }
}
