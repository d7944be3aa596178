/// Which versions readers hold, for the allocator (what may be overwritten) and the history
/// (which change sets must be kept).
///
/// Readers pin the newest committed version when they begin and unpin it when they end.
/// The newest committed version counts as pinned whether or not anyone reads it
/// (FreeSpace.swift, invariant 2).
package final class VersionRegistry: @unchecked Sendable {
    // @unchecked: `counts` is only touched under `lock`.
    private let lock = Mutex()
    private var counts: [UInt64: Int] = [:]

    package init() {}

    package func pin(_ version: VersionID) {
        lock.withLock { counts[version.value, default: 0] += 1 }
    }

    package func unpin(_ version: VersionID) {
        lock.withLock {
            guard let n = counts[version.value] else { return }
            if n <= 1 { counts[version.value] = nil } else { counts[version.value] = n - 1 }
        }
    }

    /// The pinned versions, sorted, with `latest` included.
    package func pinned(including latest: VersionID) -> [UInt64] {
        lock.withLock {
            var versions = Array(counts.keys)
            if counts[latest.value] == nil { versions.append(latest.value) }
            return versions.sorted()
        }
    }

    /// Distinct versions readers hold now (the newest counted only if someone reads it).
    package var activeVersionCount: Int { lock.withLock { counts.count } }
}

/// The single write lane of a store within this process: one write transaction at a time.
///
/// Unlike a mutex it may be released from another thread than the one that acquired it,
/// because a write transaction may begin on one thread and commit on another (async code).
package final class WriteLane: @unchecked Sendable {
    // @unchecked: `busy` is guarded by `mutex`, waiters sleep on `condition`.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var busy = false

    package init() {
        mutex.initialize(to: pthread_mutex_t())
        condition.initialize(to: pthread_cond_t())
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    package func acquire() {
        pthread_mutex_lock(mutex)
        while busy { pthread_cond_wait(condition, mutex) }
        busy = true
        pthread_mutex_unlock(mutex)
    }

    package func release() {
        pthread_mutex_lock(mutex)
        busy = false
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
