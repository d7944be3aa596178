// Telling the layer above when versions are published.
//
// A version is published (readers can begin on it) when the sync that makes it durable is
// done (Store+GroupCommit.swift). Realms that refresh themselves (`autorefresh` on an actor or a
// dispatch queue) register an observer; `asyncRefresh` waits for the commits written when it
// was called. Both are told from the sync step, after the committers' answers, outside every
// lock; a failed sync tells them too (nothing new is published, but nothing is in flight).

/// The observers of a store's published versions.
package final class VersionObservers: Sendable {
    private struct Entries {
        var callbacks: [Int: @Sendable () -> Void] = [:]
        var next = 0
    }

    private let entries = Locked(Entries())

    func add(_ callback: @escaping @Sendable () -> Void) -> Int {
        entries.withLock { entries in
            entries.next += 1
            entries.callbacks[entries.next] = callback
            return entries.next
        }
    }

    func remove(_ id: Int) {
        _ = entries.withLock { $0.callbacks.removeValue(forKey: id) }
    }

    func notifyAll() {
        // No array when nobody observes (a plain writer's every sync).
        let callbacks = entries.withLock { $0.callbacks.isEmpty ? [] : Array($0.callbacks.values) }
        for callback in callbacks { callback() }
    }
}

/// An observer's registration: it ends when this goes.
package final class VersionObservation: Sendable {
    private let observers: VersionObservers
    private let id: Int

    init(_ observers: VersionObservers, _ id: Int) {
        self.observers = observers
        self.id = id
    }

    deinit { observers.remove(id) }
}

extension Store {
    /// Calls `callback` (from the store's sync step, on any thread) after each sync, whether it
    /// published a version or failed, until the returned observation goes.
    package func observePublishedVersions(_ callback: @escaping @Sendable () -> Void) -> VersionObservation {
        VersionObservation(observers, observers.add(callback))
    }

    /// Suspends until every commit written by now is durable and published, or failed.
    package func waitUntilPublished() async {
        while true {
            let settled: Bool = await withCheckedContinuation { continuation in
                let now: Bool = stateLock.withLock { state in
                    guard state.group.tip != nil else { return true }
                    state.publishWaiters.append(continuation)
                    return false
                }
                if now { continuation.resume(returning: true) }
            }
            if settled { return }
        }
    }

    /// The waiters and observers to answer after a sync (called under `stateLock`): the
    /// waiters go; each checks again whether anything is still in flight.
    func takePublishAnswers(_ state: inout State) -> PublishAnswers {
        let waiters = state.publishWaiters
        state.publishWaiters = []
        return PublishAnswers(waiters: waiters, observers: observers)
    }
}

/// The waiters and observers a sync step tells (`Store.takePublishAnswers`).
struct PublishAnswers {
    let waiters: [CheckedContinuation<Bool, Never>]
    let observers: VersionObservers

    func give() {
        for waiter in waiters { waiter.resume(returning: false) }
        observers.notifyAll()
    }
}
