@testable import RealmStorage

/// A file layer that passes everything to the file below and records the writes, writeback
/// hints and syncs made through it, in order.
final class RecordingFile: StorageFile, Sendable {
    enum Event: Equatable, Sendable {
        case write(offset: UInt64, count: Int)
        case writeback(offset: UInt64, count: Int)
        case sync
    }

    let inner: StorageFile
    private let recorded = Locked<[Event]>([])

    init(wrapping inner: StorageFile) { self.inner = inner }

    var events: [Event] { recorded.withLock { $0 } }
    func clear() { recorded.withLock { $0 = [] } }

    var path: String { inner.path }
    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        try inner.read(into: buffer, at: offset)
    }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        recorded.withLock { $0.append(.write(offset: offset, count: bytes.count)) }
        try inner.write(bytes, at: offset)
    }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func sync() throws(StorageError) {
        recorded.withLock { $0.append(.sync) }
        try inner.sync()
    }
    func startWriteback(at offset: UInt64, length: Int) {
        recorded.withLock { $0.append(.writeback(offset: offset, count: length)) }
        inner.startWriteback(at: offset, length: length)
    }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}
