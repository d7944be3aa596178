import Dispatch

/// A committing thread waiting until its commit is durable: answered by whichever sync step
/// settles its version (`deliver`), or woken to lead the next sync (`Store.awaitDurable`).
/// Also a relayed write's rider, answered by the commit that carries its part (WriteTransaction+Relay.swift).
final class DurabilityWaiter: Sendable {
    /// `settled` and `leadsNext` are set and read by sync steps, hand-overs and the waiting
    /// thread while they hold the store's `stateLock` as well, which orders them with the
    /// store's list of followers; this lock only makes each access safe on its own.
    private struct State {
        var result: Result<VersionID, StorageError>?
        /// A sync step took the version off `unsynced`: it will be answered without leading.
        var settled = false
        /// A leader handed this thread the lead.
        var leadsNext = false
    }

    /// Counts wake-ups (an answer, a promotion); each is checked against `state`.
    private let semaphore = DispatchSemaphore(value: 0)
    private let state = Locked(State())

    var deliver: @Sendable (Result<VersionID, StorageError>) -> Void {
        { result in
            self.state.withLock { $0.result = result }
            self.semaphore.signal()
        }
    }

    var isAnswered: Bool { state.withLock { $0.result != nil } }

    /// For a sync step that took the version off `unsynced` (under the store's `stateLock`).
    func settle() { state.withLock { $0.settled = true } }

    /// For a leader handing the lead on (under the store's `stateLock`): promotes this thread
    /// unless its version is settled already (true when promoted).
    func leadUnlessSettled() -> Bool {
        state.withLock { state in
            guard !state.settled else { return false }
            state.leadsNext = true
            return true
        }
    }

    /// For the waiting thread (under the store's `stateLock`): whether it was handed the lead,
    /// which it takes.
    func takeLead() -> Bool {
        state.withLock { state in
            defer { state.leadsNext = false }
            return state.leadsNext
        }
    }

    /// Wakes the waiting thread (after `leadsNext` was set).
    func wake() { semaphore.signal() }

    /// Sleeps until the next wake-up (an answer or a promotion).
    func sleep() { semaphore.wait() }

    /// Sleeps until answered; returns the version made durable.
    func wait() throws(StorageError) -> VersionID {
        while true {
            if let result = state.withLock({ $0.result }) { return try result.get() }
            semaphore.wait()
        }
    }
}
