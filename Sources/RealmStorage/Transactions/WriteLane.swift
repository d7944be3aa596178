import Dispatch

/// The single write lane of a store within this process: one write transaction at a time,
/// granted in arrival order to threads and tasks alike.
///
/// A thread that wants the lane sleeps until it is its turn (`acquire()`); a task suspends
/// instead (`acquire() async`), so a queue of async writers never holds a thread of the
/// cooperative pool. `release` hands the lane straight to the first in line; nobody can barge
/// in between, so writers are served first come, first served, whatever their kind.
///
/// Unlike a mutex the lane may be released from another thread than the one that acquired it:
/// a write transaction may begin on one thread and commit on another (async code). Past
/// `Store.beginWrite` the lane is held through a non-copyable `LaneHold` (Store+Process.swift),
/// whose end alone releases it.
///
/// Each sleeping thread waits on a semaphore of its own, which `release` signals when it hands
/// that thread the lane: with one condition for all, every release woke every sleeping thread
/// to find it was not its turn (15 needless wake-ups per commit with 16 threads committing, on
/// two cores the larger part of a small commit's time).
///
/// A thread that is willing to (`acquire(acceptingRelay: true)`) can be handed the lane
/// together with the holder's open write transaction (`pass`), to add its part to it rather
/// than begin its own (WriteTransaction+Relay.swift).
package final class WriteLane: Sendable {
    private let state = Locked(State())

    private struct State {
        var busy = false
        var queue: [Waiter] = []
        var nextTicket: UInt64 = 0
        /// The holder sleeping in `awaitRelayRecipient` until a writer joins the line or `nudge`
        /// is called: whoever does signals it, once, and clears it.
        var holderWakeUp: DispatchSemaphore?

        mutating func takeTicket() -> UInt64 {
            nextTicket &+= 1
            return nextTicket
        }

        mutating func wakeHolder() {
            holderWakeUp?.signal()
            holderWakeUp = nil
        }
    }

    private enum Resume {
        /// A sleeping thread: its grant's semaphore is signalled when the lane is its.
        case thread(ThreadGrant)
        /// A suspended task: resumed with true when granted, false when cancelled.
        case task(CheckedContinuation<Bool, Never>)
    }

    private struct Waiter {
        let ticket: UInt64
        let resume: Resume
    }

    /// How a sleeping thread is given the lane.
    private final class ThreadGrant: @unchecked Sendable {
        // @unchecked: `relayed` is set under the lane's lock before the semaphore is signalled,
        // and read by the granted thread under the lock after its wait. The transaction it
        // carries is the holder's, which gives it up with the lane (`pass`).
        let semaphore = DispatchSemaphore(value: 0)
        /// It takes over an open write transaction if one is passed to it.
        let acceptsRelay: Bool
        /// The transaction passed with the lane (`pass`).
        var relayed: WriteTransaction?

        init(acceptsRelay: Bool) { self.acceptsRelay = acceptsRelay }
    }

    package init() {}

    /// Waits on this thread until the lane is ours.
    package func acquire() {
        _ = acquire(acceptingRelay: false)
    }

    /// Waits on this thread until the lane is ours; returns the write transaction passed with
    /// it, when `acceptingRelay` and the one before passed its own (`pass`).
    package func acquire(acceptingRelay: Bool) -> WriteTransaction? {
        let granted: ThreadGrant? = state.withLock { state in
            guard state.busy else {
                state.busy = true
                return nil
            }
            let granted = ThreadGrant(acceptsRelay: acceptingRelay)
            state.queue.append(Waiter(ticket: state.takeTicket(), resume: .thread(granted)))
            state.wakeHolder()
            return granted
        }
        guard let granted else { return nil }
        // Signalled exactly once, by the release or pass that hands this thread the lane (a
        // thread waiter is never taken out of the line otherwise).
        granted.semaphore.wait()
        return state.withLock { _ in granted.relayed }
    }

    /// For the lane's holder: hands the lane with `transaction` to the first in line, when it
    /// is a thread that accepts a relay. False when it is not (a task, a thread beginning a
    /// write of its own) or nobody waits: the holder keeps the lane and the transaction.
    package func pass(_ transaction: WriteTransaction) -> Bool {
        let next: ThreadGrant? = state.withLock { state in
            // A thread waiter never leaves the line but by its turn, so the first stays first.
            guard let first = state.queue.first, case .thread(let grant) = first.resume, grant.acceptsRelay else { return nil }
            state.queue.removeFirst()
            grant.relayed = transaction
            return grant
        }
        next?.semaphore.signal()
        return next != nil
    }

    /// Suspends the calling task until the lane is ours.
    ///
    /// - Throws: `cancelled` when the task is cancelled before its turn comes (it then
    ///   leaves the line and holds nothing).
    package func acquire() async throws(StorageError) {
        let ticket = state.withLock { $0.takeTicket() }
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer: Bool? = state.withLock { state in
                    // Checked under the lock: a cancellation either happened before (seen here)
                    // or runs its handler after the waiter is queued (and finds it there).
                    if Task.isCancelled { return false }
                    if !state.busy {
                        state.busy = true
                        return true
                    }
                    state.queue.append(Waiter(ticket: ticket, resume: .task(continuation)))
                    state.wakeHolder()
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let removed: Waiter? = state.withLock { state in
                guard let i = state.queue.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return state.queue.remove(at: i)
            }
            if let removed, case .task(let continuation) = removed.resume { continuation.resume(returning: false) }
        }
        guard granted else {
            throw StorageError(.cancelled, "the task was cancelled while it waited for the write lane")
        }
    }

    /// For the lane's holder, with a transaction it could pass: sleeps while nobody is in
    /// line and `worthWaiting()` holds (called under the lane's lock: it may take the store's
    /// state lock, never the other way round). True when the first in line is a thread that
    /// accepts a relay; false when it is another writer, or when waiting stopped being worth
    /// it (`nudge` wakes the holder to ask again).
    ///
    /// The holder sleeps on a semaphore of its own, outside the lock (Locked.swift: no
    /// condition variable); a joiner or `nudge` that comes before it sleeps leaves the
    /// semaphore signalled, so the wake-up is not lost.
    package func awaitRelayRecipient(while worthWaiting: () -> Bool) -> Bool {
        while true {
            let (answer, wakeUp): (Bool?, DispatchSemaphore?) = state.withLock { state in
                if let first = state.queue.first {
                    guard case .thread(let grant) = first.resume else { return (false, nil) }
                    return (grant.acceptsRelay, nil)
                }
                guard worthWaiting() else { return (false, nil) }
                let wakeUp = DispatchSemaphore(value: 0)
                state.holderWakeUp = wakeUp
                return (nil, wakeUp)
            }
            if let answer { return answer }
            wakeUp?.wait()
        }
    }

    /// Wakes a holder waiting in `awaitRelayRecipient` to check its condition again.
    package func nudge() {
        state.withLock { $0.wakeHolder() }
    }

    /// Gives the lane to the first in line, or frees it.
    package func release() {
        let next: Waiter? = state.withLock { state in
            guard !state.queue.isEmpty else {
                state.busy = false
                return nil
            }
            // `busy` stays true: the lane passes straight to the next waiter.
            return state.queue.removeFirst()
        }
        switch next?.resume {
        case .thread(let granted): granted.semaphore.signal()
        case .task(let continuation): continuation.resume(returning: true)
        case nil: break
        }
    }

    /// How many writers wait for the lane now (for tests and diagnostics).
    package var waitingCount: Int { state.withLock { $0.queue.count } }
}
