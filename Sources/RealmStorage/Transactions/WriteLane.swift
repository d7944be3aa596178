import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The single write lane of a store within this process: one write transaction at a time,
/// granted in arrival order to threads and tasks alike.
///
/// A thread that wants the lane sleeps until it is its turn (`acquire()`); a task suspends
/// instead (`acquire() async`), so a queue of async writers never holds a thread of the
/// cooperative pool. `release` hands the lane straight to the first in line; nobody can barge
/// in between, so writers are served first come, first served, whatever their kind.
///
/// Unlike a mutex the lane may be released from another thread than the one that acquired it:
/// a write transaction may begin on one thread and commit on another (async code).
///
/// Each sleeping thread waits on a semaphore of its own, which `release` signals when it hands
/// that thread the lane: with one condition for all, every release woke every sleeping thread
/// to find it was not its turn (15 needless wake-ups per commit with 16 threads committing, on
/// two cores the larger part of a small commit's time).
///
/// A thread that is willing to (`acquire(acceptingRelay: true)`) can be handed the lane
/// together with the holder's open write transaction (`pass`), to add its part to it rather
/// than begin its own (WriteRelay.swift).
package final class WriteLane: @unchecked Sendable {
    // @unchecked: `busy`, `queue` and `nextTicket` are guarded by `mutex`; a sleeping thread
    // waits on its waiter's semaphore, signalled once, when the lane is its.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    /// Signalled when a writer joins the line or `nudge` is called, while the holder waits for
    /// a thread to pass its transaction to (`awaitRelayRecipient`).
    private let joined = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var holderWaits = false
    private var busy = false
    private var queue: [Waiter] = []
    private var nextTicket: UInt64 = 0

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
    private final class ThreadGrant {
        let semaphore = DispatchSemaphore(value: 0)
        /// It takes over an open write transaction if one is passed to it.
        let acceptsRelay: Bool
        /// The transaction passed with the lane (`pass`); set under `mutex` before the signal.
        var relayed: WriteTransaction?

        init(acceptsRelay: Bool) { self.acceptsRelay = acceptsRelay }
    }

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        joined.initialize(to: pthread_cond_t())
        pthread_cond_init(joined, nil)
    }

    deinit {
        pthread_cond_destroy(joined)
        joined.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Waits on this thread until the lane is ours.
    package func acquire() {
        _ = acquire(acceptingRelay: false)
    }

    /// Waits on this thread until the lane is ours; returns the write transaction passed with
    /// it, when `acceptingRelay` and the one before passed its own (`pass`).
    package func acquire(acceptingRelay: Bool) -> WriteTransaction? {
        let granted: ThreadGrant? = locked {
            guard busy else {
                busy = true
                return nil
            }
            let granted = ThreadGrant(acceptsRelay: acceptingRelay)
            queue.append(Waiter(ticket: takeTicket(), resume: .thread(granted)))
            if holderWaits { pthread_cond_signal(joined) }
            return granted
        }
        guard let granted else { return nil }
        // Signalled exactly once, by the release or pass that hands this thread the lane (a
        // thread waiter is never taken out of the line otherwise).
        granted.semaphore.wait()
        return locked { granted.relayed }
    }

    /// For the lane's holder: hands the lane with `transaction` to the first in line, when it
    /// is a thread that accepts a relay. False when it is not (a task, a thread beginning a
    /// write of its own) or nobody waits: the holder keeps the lane and the transaction.
    package func pass(_ transaction: WriteTransaction) -> Bool {
        let next: ThreadGrant? = locked {
            // A thread waiter never leaves the line but by its turn, so the first stays first.
            guard let first = queue.first, case .thread(let grant) = first.resume, grant.acceptsRelay else { return nil }
            queue.removeFirst()
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
        let ticket = locked { takeTicket() }
        let granted = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let answer: Bool? = locked {
                    // Checked under the mutex: a cancellation either happened before (seen here)
                    // or runs its handler after the waiter is queued (and finds it there).
                    if Task.isCancelled { return false }
                    if !busy {
                        busy = true
                        return true
                    }
                    queue.append(Waiter(ticket: ticket, resume: .task(continuation)))
                    if holderWaits { pthread_cond_signal(joined) }
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            let removed: Waiter? = locked {
                guard let i = queue.firstIndex(where: { $0.ticket == ticket }) else { return nil }
                return queue.remove(at: i)
            }
            if let removed, case .task(let continuation) = removed.resume { continuation.resume(returning: false) }
        }
        guard granted else {
            throw StorageError(.cancelled, "the task was cancelled while it waited for the write lane")
        }
    }

    /// For the lane's holder, with a transaction it could pass: sleeps while nobody is in
    /// line and `worthWaiting()` holds (called under the lane's mutex: it may take the store's
    /// state lock, never the other way round). True when the first in line is a thread that
    /// accepts a relay; false when it is another writer, or when waiting stopped being worth
    /// it (`nudge` wakes the holder to ask again).
    package func awaitRelayRecipient(while worthWaiting: () -> Bool) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while true {
            if let first = queue.first {
                guard case .thread(let grant) = first.resume else { return false }
                return grant.acceptsRelay
            }
            guard worthWaiting() else { return false }
            holderWaits = true
            pthread_cond_wait(joined, mutex)
            holderWaits = false
        }
    }

    /// Wakes a holder waiting in `awaitRelayRecipient` to check its condition again.
    package func nudge() {
        locked { if holderWaits { pthread_cond_signal(joined) } }
    }

    /// Gives the lane to the first in line, or frees it.
    package func release() {
        let next: Waiter? = locked {
            guard !queue.isEmpty else {
                busy = false
                return nil
            }
            // `busy` stays true: the lane passes straight to the next waiter.
            return queue.removeFirst()
        }
        switch next?.resume {
        case .thread(let granted): granted.semaphore.signal()
        case .task(let continuation): continuation.resume(returning: true)
        case nil: break
        }
    }

    /// How many writers wait for the lane now (for tests and diagnostics).
    package var waitingCount: Int { locked { queue.count } }

    private func takeTicket() -> UInt64 {
        nextTicket &+= 1
        return nextTicket
    }

    private func locked<R>(_ body: () -> R) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
