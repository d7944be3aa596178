import RealmStorage

// Changes as an `AsyncSequence`, for code on an actor.
//
// `for await change in results.changes { … }` registers an observation when the loop first
// asks for an element and ends it when the loop ends: when the consuming task is cancelled
// (the pending `next()` returns nil), when the iterator goes, or after a final change (an
// object deleted). The observation keeps the snapshot its consumer last saw: deliveries only
// note that something it depends on changed and wake the consumer, and `next()` reads one
// delta from that snapshot to the newest (ObservationCore.swift). So a slow consumer gets
// one change covering several commits, nothing queues up without bound, and commits whose
// changes cancel out (a title set and set back) give no element.
//
// Elements hold live collections and objects, which belong to the realm's actor, so the loop
// must run on that actor (a realm opened with `Realm.open` or on the main actor); Swift hands
// them over without `Sendable` because `next(isolation:)` runs in the caller's isolation.
// Before answering, `next()` brings the realm's observers up to date, so that the change
// matches what the live collection shows when the consumer reads it.

/// The changes of a collection or an object, one element per change, for `for await` loops
/// on the realm's actor.
///
/// ```swift
/// for await change in realm.objects(Order.self).where({ $0.open }).changes {
///     if case .update(let orders, _, let insertions, _) = change {
///         for index in insertions { await notify(orders[index].id) }
///     }
/// }
/// ```
///
/// Changes made while the loop body runs come as one element, the next. The loop ends
/// when its task is cancelled, or after `.deleted` for an object.
public struct ChangeSequence<Change>: AsyncSequence {
    /// Each element is one change: a `RealmCollectionChange`, `RealmMapChange` or `ObjectChange`.
    public typealias Element = Change
    /// The sequence never throws: an error arrives as an element (`.error`).
    public typealias Failure = Never

    /// Registers the observation (in the realm's isolation, at the first `next`).
    let start: () -> ChangeStream<Change>

    /// An iterator that registers the observation at its first `next()`.
    public func makeAsyncIterator() -> Iterator { Iterator(start: start) }

    /// Iterates on the realm's actor. Dropping it ends the observation.
    public struct Iterator: AsyncIteratorProtocol {
        let start: () -> ChangeStream<Change>
        var stream: ChangeStream<Change>?

        /// The next change: at once if one is waiting, else when one comes; nil once the task
        /// is cancelled or the subject is gone.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> Change? {
            let stream = self.stream ?? start()
            self.stream = stream
            return await stream.next(isolation: actor)
        }

        /// `next(isolation:)` outside any actor. A `for await` loop passes its isolation;
        /// without it the change could not stay on the realm's actor, so this traps, naming
        /// the rule (as every async use of a realm off its actor does).
        public mutating func next() async -> Change? {
            await next(isolation: nil)
        }
    }
}

/// A registered stream, type-erased over what it observes; owns the observation's token.
class ChangeStream<Change> {
    func next(isolation actor: isolated (any Actor)?) async -> Change? { nil }
}

final class SubjectChangeStream<Subject: ObservedSubject>: ChangeStream<Subject.Change> {
    private let observation: StreamObservation<Subject>
    private let token: NotificationToken

    /// Registers an observation of `subject`, whose realm is checked to allow it.
    init(_ subject: Subject) {
        let realm = subject.realm
        observation = StreamObservation(subject)
        let notifier = realm.notifierForObserving()
        if !subject.deliversInitial { observation.startWithoutInitial(at: notifier.pinForCurrentVersion()) }
        notifier.add(observation)
        token = NotificationToken(observation)
    }

    override func next(isolation actor: isolated (any Actor)?) async -> Subject.Change? {
        let realm = observation.subject.realm
        realm.verifyUsableAcrossSuspension(actor, "iterating changes", needsContext: true)
        while observation.isActive && !Task.isCancelled {
            // Outside a write this brings the observation to the realm's version.
            realm.notifier?.deliver()
            if let change = observation.take() { return change }
            // A final change (an object deleted) was the last.
            if observation.isFinished { break }
            let waiter = observation.waiter
            await withTaskCancellationHandler {
                await waiter.wait(isolation: actor)
            } onCancel: {
                waiter.signal()
            }
        }
        token.invalidate()
        return nil
    }
}

/// The observation behind a stream: it remembers what its consumer last saw, and whether a
/// delivery found changes since.
final class StreamObservation<Subject: ObservedSubject>: SubjectObservation<Subject>, @unchecked Sendable {
    // @unchecked: see `ChangeObservation`; `waiter` is Sendable.
    private var initialWaiting = false
    /// Set when a delivery found changes the consumer has not seen: deliveries then read
    /// nothing more until it asks.
    private var changed = false
    let waiter = Waiter()

    override var wantsInitialDelivery: Bool { subject.deliversInitial && snapshot == nil }

    func startWithoutInitial(at pin: VersionPin) {
        start(at: pin)
    }

    override func deliverInitial(at pin: VersionPin) -> Bool {
        start(at: pin)
        initialWaiting = true
        waiter.signal()
        return false
    }

    override func advance(to version: VersionID, pin: () -> VersionPin, changes: (VersionID) -> ChangeSet?) -> Bool {
        // The initial change is read when taken, as the collection is then.
        guard let anchor, anchor.version < version, !isFinished, !initialWaiting else { return false }
        if !changed {
            if let changes = changes(anchor.version), let snapshot, !subject.mayBeAffected(by: changes, from: snapshot, anchor: anchor.read) {
                self.anchor = pin()
                return false
            }
            changed = true
        }
        waiter.signal()
        return false
    }

    /// The change waiting for the consumer, if any: from what it last saw to the realm's
    /// version now. Nil inside a write (the realm shows uncommitted changes; its end
    /// delivers again) and when nothing is to be reported.
    func take() -> Subject.Change? {
        let realm = subject.realm
        guard isActive, !isFinished, realm.writeTransaction == nil, let anchor else { return nil }
        let read = realm.readTransaction
        let pin = { realm.notifierForObserving().pinForCurrentVersion() }
        if initialWaiting {
            initialWaiting = false
            changed = false
            if anchor.version != read.version { start(at: pin()) }
            return subject.initialChange()
        }
        changed = false
        guard anchor.version < read.version,
              let delta = moveSnapshot(to: pin, changes: ChangeSource.read(read).changes(since: anchor.version)) else { return nil }
        return subject.change(for: delta)
    }

    override func didCancel() {
        waiter.signal()
        super.didCancel()
    }
}

/// Where a stream's consumer waits: a signal given before the wait is not lost.
final class Waiter: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var signalled = false
    }

    private let state = Locked(State())

    func wait(isolation actor: isolated (any Actor)?) async {
        await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock { state in
                if state.signalled {
                    state.signalled = false
                    return true
                }
                state.continuation = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Wakes the consumer (now, or at its next wait). From any thread.
    func signal() {
        let waiting: CheckedContinuation<Void, Never>? = state.withLock { state in
            guard let waiting = state.continuation else {
                state.signalled = true
                return nil
            }
            state.continuation = nil
            return waiting
        }
        waiting?.resume()
    }
}
