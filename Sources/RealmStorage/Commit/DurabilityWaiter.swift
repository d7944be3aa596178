import Dispatch

/// A committing thread waiting until its commit is durable: answered by whichever sync step
/// settles its version (`deliver`), or woken to lead the next sync (`Store.awaitDurable`).
/// Also a relayed write's rider, answered by the commit that carries its part (WriteTransaction+Relay.swift).
final class DurabilityWaiter: @unchecked Sendable {
    // @unchecked: `settled` and `leadsNext` are guarded by the store's `stateLock` (set by sync
    // steps and hand-overs, read by the waiting thread under it). The semaphore counts
    // wake-ups (an answer, a promotion); each is checked against that state or `result`.
    private let semaphore = DispatchSemaphore(value: 0)
    private let result = Locked<Result<VersionID, StorageError>?>(nil)
    /// A sync step took the version off `unsynced`: it will be answered without leading.
    var settled = false
    /// A leader handed this thread the lead.
    var leadsNext = false

    var deliver: @Sendable (Result<VersionID, StorageError>) -> Void {
        { result in
            self.result.withLock { $0 = result }
            self.semaphore.signal()
        }
    }

    var isAnswered: Bool { result.withLock { $0 != nil } }

    /// Wakes the waiting thread (after `leadsNext` was set).
    func wake() { semaphore.signal() }

    /// Sleeps until the next wake-up (an answer or a promotion).
    func sleep() { semaphore.wait() }

    /// Sleeps until answered; returns the version made durable.
    func wait() throws(StorageError) -> VersionID {
        while true {
            if let result = result.withLock({ $0 }) { return try result.get() }
            semaphore.wait()
        }
    }
}
