import CStorageSupport
import Synchronization

/// State that only one thread at a time may touch: the one lock of the engine and the library.
///
/// The state lives inside the lock, and `withLock` is the only way to it, so the compiler
/// checks what a lock comment used to promise ("guarded by `lock`"):
///
/// ```swift
/// private let pins = Locked([UInt64: Int]())
/// pins.withLock { counts in counts[version, default: 0] += 1 }
/// ```
///
/// A `Synchronization.Mutex<State>` underneath, with one addition: on Linux that mutex is a
/// futex ThreadSanitizer does not see, so every access to the state would look like a race to
/// it. `withLock` tells TSan of the lock (`openrealm_tsan_acquire` after taking it,
/// `openrealm_tsan_release` before letting it go, on this object's address); in a build
/// without the sanitizer both are empty C functions.
///
/// There is no condition variable. A thread that must wait for a change another makes
/// registers a semaphore of its own in the state and sleeps on it outside the lock; whoever
/// makes the change signals it, once, under the lock (WriteLane.swift does both). A signal
/// given before the sleeper reaches its wait is kept by the semaphore, so none is lost, and
/// only the thread that is owed the change wakes.
///
/// A class, so that the annotated address never moves and holders share one lock by
/// reference; the mutex is stored inline in it. Not reentrant: calling `withLock` inside
/// `withLock` on the same instance deadlocks.
package final class Locked<State>: Sendable {
    private let mutex: Synchronization.Mutex<State>

    package init(_ initial: sending State) {
        mutex = Synchronization.Mutex(initial)
    }

    /// Runs `body` with the state, holding the lock throughout.
    package func withLock<Result, E: Error>(
        _ body: (inout sending State) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try mutex.withLock { (state: inout sending State) throws(E) -> sending Result in
            // Only an identity for TSan, never dereferenced.
            let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
            openrealm_tsan_acquire(address)
            defer { openrealm_tsan_release(address) }
            return try body(&state)
        }
    }
}
