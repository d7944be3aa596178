import Dispatch
import RealmStorage

// How work reaches a realm from other threads.
//
// A realm confined to an actor or a dispatch queue can be called back: async write callbacks
// (Realm+AsyncWriteCallbacks.swift), autorefresh and notification deliveries
// (RealmNotifier.swift) run there, posted from the engine's threads. A realm confined to a thread has no event loop to post to, so it has no context:
// it refreshes when asked (`refresh()`, or a write beginning), as in Realm for threads
// without a run loop.
//
// Work posted to one realm runs in the order it was posted: on a queue, one block drains the
// mailbox; on an actor, one task at a time does.

/// A value used only in its realm's context, carried there through `Sendable` closures and
/// locks.
struct InContext<Value>: @unchecked Sendable {
    // @unchecked: the value is created in the realm's context, or handed over by whoever made
    // it (a block posted to the context), and only used again in that context: in closures
    // that `RealmContext.post` runs there, or by a notification delivery there. Other threads
    // only carry it or let it go.
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// The mailbox of a realm on an actor or a dispatch queue.
final class RealmContext: @unchecked Sendable {
    // @unchecked: `target` and `observation` are set by init and never change (`observation`
    // is a `var` only because it is made once `self` is whole; `ActorReference` is not
    // Sendable only because a weak reference must be a `var`, which only its init sets);
    // everything that changes is in `state`.
    private struct State {
        /// Blocks posted and not yet run, in order (`InContext`: they run only in the context).
        var pending: [InContext<() -> Void>] = []
        var draining = false
        var refreshPosted = false
        var deliveryPosted = false
        /// The realm, not retained and not weak (UnretainedReference.swift says why). Its last
        /// reference may go on any thread, while a block reads it here: the read takes the
        /// realm only if its deinit has not begun, and the deinit clears it (`realmWillGo`)
        /// before the memory goes, both under the lock. (`InContext`: it is used only in the
        /// context; the deinit only clears it.)
        var realm: InContext<UnretainedReference<Realm>>?
    }

    private let state: Locked<State>
    private let target: Target
    private var observation: VersionObservation?

    private enum Target {
        case actor(ActorReference)
        case queue(DispatchQueue)
    }

    /// The context of `realm`; nil for a realm confined to a thread (other than the main
    /// actor's) or a task, which have nowhere to post to, or a frozen one.
    init?(for realm: Realm) {
        switch realm.confinement {
        case .actor(let reference): target = .actor(reference)
        case .queue(let reference): target = .queue(reference.queue)
        case .thread(_, mainActor: true): target = .actor(ActorReference(MainActor.shared))
        case .thread, .task, .none: return nil
        }
        state = Locked(State(realm: InContext(UnretainedReference(realm))))
        observation = realm.store.observePublishedVersions { [weak self] in self?.versionPublished() }
    }

    /// Runs `body` in the realm's context, after everything posted before it. From any thread.
    func post(_ body: @escaping () -> Void) {
        let posted = InContext(body)
        let start: Bool = state.withLock { state in
            state.pending.append(posted)
            if state.draining { return false }
            state.draining = true
            return true
        }
        guard start else { return }
        switch target {
        case .queue(let queue):
            queue.async { self.drain() }
        case .actor(let reference):
            // An actor that is gone has no realm left to call back.
            guard let actor = reference.actor else { return }
            Task { await Self.run(on: actor) { self.drain() } }
        }
    }

    private static func run(on actor: isolated any Actor, _ body: () -> Void) {
        body()
    }

    private func drain() {
        while true {
            let batch: [InContext<() -> Void>] = state.withLock { state in
                let batch = state.pending
                state.pending = []
                if batch.isEmpty { state.draining = false }
                return batch
            }
            if batch.isEmpty { return }
            for body in batch { body.value() }
        }
    }

    /// Called by the realm's deinit, on whichever thread let the realm go (a commit's callback
    /// may hold the last reference on the store's sync thread): blocks still posted, or running
    /// meanwhile, find no realm.
    func realmWillGo() {
        state.withLock { $0.realm = nil }
    }

    /// After a sync: one refresh is posted, however many versions arrive before it runs.
    private func versionPublished() {
        postOnce(\.refreshPosted) { realm in
            if realm.autorefresh {
                realm.refresh()
            } else {
                // As in Realm: the realm stays where it is, and its blocks hear that it could move.
                realm.notifier?.refreshRequired()
            }
        }
    }

    /// Posts one delivery of the realm's notifications (RealmNotifier.swift), however many are
    /// asked for before it runs: after the realm's own commit, or for a new observation's
    /// initial change.
    func postDelivery() {
        postOnce(\.deliveryPosted) { $0.notifier?.deliver() }
    }

    /// Posts `body` unless it is posted already and has not run yet (`posted` says so).
    private func postOnce(_ posted: WritableKeyPath<State, Bool> & Sendable, _ body: @escaping (Realm) -> Void) {
        let post: Bool = state.withLock { state in
            if state[keyPath: posted] { return false }
            state[keyPath: posted] = true
            return true
        }
        guard post else { return }
        self.post { [weak self] in
            guard let self else { return }
            state.withLock { $0[keyPath: posted] = false }
            if let realm = state.withLock({ $0.realm?.value.retainedUnlessGoing() }) { body(realm) }
        }
    }
}

extension Realm {
    /// Waits until every commit written by now (in this process) is durable, then refreshes.
    /// Returns whether the realm moved to another version.
    ///
    /// A realm on an actor or a dispatch queue refreshes itself when `autorefresh` is on; this
    /// is for waiting for a commit another task has just made, without polling.
    @discardableResult
    public func asyncRefresh(isolation: isolated (any Actor)? = #isolation) async -> Bool {
        verifyUsableAcrossSuspension(isolation, "asyncRefresh")
        await store.waitUntilPublished()
        return refresh()
    }
}
