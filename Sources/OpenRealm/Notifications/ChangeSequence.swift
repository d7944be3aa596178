import RealmStorage

// Changes as an `AsyncSequence`, for code on an actor.
//
// `for await change in results.changes { … }` registers an observation when the loop first
// asks for an element and ends it when the loop ends: when the consuming task is cancelled
// (the pending `next()` returns nil), when the iterator goes, or after a final change (an
// object deleted). The observation keeps at most one delta for its consumer: deltas that
// arrive before the consumer asks are merged into it (ObservationCore.swift), so a slow
// consumer gets one change covering several commits, and nothing queues up without bound.
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
/// Changes made while the loop body runs are merged into the next element. The loop ends
/// when its task is cancelled, or after `.deleted` for an object.
public struct ChangeSequence<Change>: AsyncSequence {
    public typealias Element = Change
    public typealias Failure = Never

    /// Registers the observation (in the realm's isolation, at the first `next`).
    let start: () -> ChangeStream<Change>

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
        realm.verifyUsableAcrossSuspension(actor, "iterating changes")
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

/// The observation behind a stream: deltas wait here, merged, until the consumer asks.
final class StreamObservation<Subject: ObservedSubject>: SubjectObservation<Subject>, @unchecked Sendable {
    // @unchecked: see `ChangeObservation`; `waiter` is Sendable.
    private var pending: Subject.Delta?
    private var initialWaiting = false
    let waiter = Waiter()

    override var wantsInitialDelivery: Bool { subject.deliversInitial && snapshot == nil }

    func startWithoutInitial(at pin: VersionPin) {
        start(at: pin)
    }

    override func deliverInitial(at pin: VersionPin) {
        start(at: pin)
        initialWaiting = true
        waiter.signal()
    }

    override func emit(_ delta: Subject.Delta) {
        // The initial change shows the collection as it is when taken: later deltas are in it.
        guard !initialWaiting else { return }
        if var merged = pending {
            merged.merge(delta)
            pending = merged
        } else {
            pending = delta
        }
        waiter.signal()
    }

    /// The change waiting for the consumer, if any.
    func take() -> Subject.Change? {
        if initialWaiting {
            initialWaiting = false
            return subject.initialChange()
        }
        guard let delta = pending else { return nil }
        pending = nil
        return subject.change(for: delta)
    }

    override func didCancel() {
        waiter.signal()
    }
}

/// Where a stream's consumer waits: a signal given before the wait is not lost.
final class Waiter: @unchecked Sendable {
    // @unchecked: `continuation` and `signalled` are only touched under `state`.
    private let state = Mutex()
    private var continuation: CheckedContinuation<Void, Never>?
    private var signalled = false

    func wait(isolation actor: isolated (any Actor)?) async {
        await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<Void, Never>) in
            let now: Bool = state.withLock {
                if signalled {
                    signalled = false
                    return true
                }
                self.continuation = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Wakes the consumer (now, or at its next wait). From any thread.
    func signal() {
        let waiting: CheckedContinuation<Void, Never>? = state.withLock {
            guard let waiting = continuation else {
                signalled = true
                return nil
            }
            continuation = nil
            return waiting
        }
        waiting?.resume()
    }
}
