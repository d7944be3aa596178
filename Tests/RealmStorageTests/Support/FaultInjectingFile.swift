#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@testable import RealmStorage

/// A file layer that fails the Nth call of one kind (write, sync or size change) with an
/// errno, once, and passes everything else through (SQLite's fault matrix: fail the 1st, 2nd,
/// 3rd… I/O call, then check integrity).
///
/// A failed write first writes half its bytes, as a short write on a full disk would.
final class FaultInjectingFile: StorageFile, Sendable {

    enum Call: String, Sendable, CaseIterable, CustomStringConvertible {
        case write, sync, setSize
        var description: String { rawValue }
    }

    let inner: StorageFile
    let failing: Call
    let failAt: Int
    let errorNumber: Int32
    private struct State {
        var counts: [Call: Int] = [:]
        var fired = false
        /// A call to fail next, besides the Nth of `failing` (`failNext`).
        var armed: Call?
    }
    private let state = Locked(State())

    init(wrapping inner: StorageFile, failing: Call, at n: Int, errno errorNumber: Int32) {
        self.inner = inner
        self.failing = failing
        self.failAt = n
        self.errorNumber = errorNumber
    }

    var path: String { inner.path }
    /// Whether the fault has been injected.
    var didFail: Bool { state.withLock { $0.fired } }
    func count(of call: Call) -> Int { state.withLock { $0.counts[call, default: 0] } }

    /// Fails the next call of kind `call`, once.
    func failNext(_ call: Call) { state.withLock { $0.armed = call } }

    /// Counts a call; true when this is the one to fail.
    private func shouldFail(_ call: Call) -> Bool {
        state.withLock { state in
            state.counts[call, default: 0] += 1
            if state.armed == call {
                state.armed = nil
                state.fired = true
                return true
            }
            guard call == failing, state.counts[call] == failAt else { return false }
            state.fired = true
            return true
        }
    }

    private func fault(_ operation: String) -> StorageError {
        StorageError.system(operation, path: inner.path, errno: errorNumber)
    }

    func size() throws(StorageError) -> UInt64 { try inner.size() }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        if shouldFail(.write) {
            try inner.write(UnsafeRawBufferPointer(rebasing: bytes[0..<(bytes.count / 2)]), at: offset)
            throw fault("write")
        }
        try inner.write(bytes, at: offset)
    }

    func setSize(_ size: UInt64) throws(StorageError) {
        if shouldFail(.setSize) { throw fault("truncate") }
        try inner.setSize(size)
    }

    func sync() throws(StorageError) {
        if shouldFail(.sync) { throw fault("sync") }
        try inner.sync()
    }

    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}
