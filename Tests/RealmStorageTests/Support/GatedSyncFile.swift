import Dispatch
@testable import RealmStorage

/// A file layer whose syncs wait for the test's go-ahead, so that a test decides which
/// commits share a sync: while sync N waits, the commits written meanwhile form the next
/// group. Sync N can also be made to fail.
final class GatedSyncFile: StorageFile, Sendable {
    let inner: StorageFile
    private struct State {
        var syncs = 0
        var failing: Set<Int> = []
        var broken = false
    }
    private let state = Locked(State())
    private let arrived = DispatchSemaphore(value: 0)
    private let permits = DispatchSemaphore(value: 0)
    private let passAfterFailure: Bool
    private let gateAfterSync: Bool

    /// With `gateAfterSync`, a sync waits at the gate after the inner file synced (so writes
    /// made meanwhile are not made durable by it); a failed inner sync then signals its arrival
    /// and throws without waiting. With `passAfterFailure`, once the inner file's sync failed
    /// (a simulated crash) every later sync passes the gate without waiting.
    init(wrapping inner: StorageFile, passAfterFailure: Bool = false, gateAfterSync: Bool = false) {
        self.inner = inner
        self.passAfterFailure = passAfterFailure
        self.gateAfterSync = gateAfterSync
    }

    var path: String { inner.path }
    var syncCount: Int { state.withLock { $0.syncs } }

    /// Makes sync `n` (1-based) fail with EIO after it is let through.
    func fail(sync n: Int) { state.withLock { _ = $0.failing.insert(n) } }

    /// Waits until a sync is waiting at the gate.
    func waitForSyncAtGate() { arrived.wait() }

    /// Lets one waiting (or the next) sync through.
    func open() { permits.signal() }

    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) { try inner.write(bytes, at: offset) }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }

    func sync() throws(StorageError) {
        let number = state.withLock { state in
            state.syncs += 1
            return state.syncs
        }
        let gated = !state.withLock({ $0.broken && passAfterFailure })
        if gated && !gateAfterSync {
            arrived.signal()
            permits.wait()
        }
        if state.withLock({ $0.failing.contains(number) }) {
            throw StorageError.system("fsync", path: inner.path, errno: 5)
        }
        do throws(StorageError) {
            try inner.sync()
        } catch {
            state.withLock { $0.broken = true }
            if gated && gateAfterSync { arrived.signal() }
            throw error
        }
        if gated && gateAfterSync {
            arrived.signal()
            permits.wait()
        }
    }
}
