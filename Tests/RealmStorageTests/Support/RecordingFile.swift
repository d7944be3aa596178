@testable import RealmStorage

/// A file layer that passes everything to the file below and records the writes, writeback
/// hints and syncs made through it, in order.
final class RecordingFile: StorageFile, @unchecked Sendable {
    // @unchecked: `recorded` is guarded by `lock`; `inner` is itself Sendable.
    enum Event: Equatable {
        case write(offset: UInt64, count: Int)
        case writeback(offset: UInt64, count: Int)
        case sync
    }

    let inner: StorageFile
    private let lock = Mutex()
    private var recorded: [Event] = []

    init(wrapping inner: StorageFile) { self.inner = inner }

    var events: [Event] { lock.withLock { recorded } }
    func clear() { lock.withLock { recorded = [] } }

    var path: String { inner.path }
    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        lock.withLock { recorded.append(.write(offset: offset, count: bytes.count)) }
        try inner.write(bytes, at: offset)
    }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func sync() throws(StorageError) {
        lock.withLock { recorded.append(.sync) }
        try inner.sync()
    }
    func startWriteback(at offset: UInt64, length: Int) {
        lock.withLock { recorded.append(.writeback(offset: offset, count: length)) }
        inner.startWriteback(at: offset, length: length)
    }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}
