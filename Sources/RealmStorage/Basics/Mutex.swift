#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A pthread mutex that guards state kept beside it, not in it. Being replaced by `Locked`
/// (Locked.swift), which holds its state so that the compiler checks every access; what
/// still takes this one: the store's `stateLock` and `syncing`, notification observations,
/// the query probe, a realm's context and an actor's write requests, and test support.
/// Readers of committed data never take it.
package final class Mutex: @unchecked Sendable {
    // @unchecked: the pthread mutex is itself the synchronisation; it lives in its own
    // allocation so that its address never moves.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    package init() {
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func withLock<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }
}
