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
package final class WriteLane: @unchecked Sendable {
    // @unchecked: `busy`, `queue` and `nextTicket` are guarded by `mutex`; a sleeping thread
    // waits on its waiter's semaphore, signalled once, when the lane is its.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private var busy = false
    private var queue: [Waiter] = []
    private var nextTicket: UInt64 = 0

    private enum Resume {
        /// A sleeping thread: its semaphore is signalled when the lane is its.
        case thread(DispatchSemaphore)
        /// A suspended task: resumed with true when granted, false when cancelled.
        case task(CheckedContinuation<Bool, Never>)
    }

    private struct Waiter {
        let ticket: UInt64
        let resume: Resume
    }

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Waits on this thread until the lane is ours.
    package func acquire() {
        let granted: DispatchSemaphore? = locked {
            guard busy else {
                busy = true
                return nil
            }
            let granted = DispatchSemaphore(value: 0)
            queue.append(Waiter(ticket: takeTicket(), resume: .thread(granted)))
            return granted
        }
        // Signalled exactly once, by the release that hands this thread the lane (a thread
        // waiter is never taken out of the line otherwise).
        granted?.wait()
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
        case .thread(let granted): granted.signal()
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
