#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The backing of a `.memOnly` store: an anonymous region that plays the part of the file.
///
/// It follows the same write-then-commit protocol as a disk file, so an in-memory realm runs
/// the same code as a durable one. When the region fills up, a larger one is allocated and the
/// contents copied; the old region lives on as long as a reader's `Mapping` retains it.
package final class MemoryFile: StorageFile, @unchecked Sendable {
    // @unchecked: all mutable state is guarded by `lock`. Readers never touch `region`
    // directly; they read through `Mapping`s, which stay immutable for the bytes they reach.
    package let path: String
    private let lock = Mutex()
    private var region: Mapping
    private var writable: UnsafeMutableRawPointer
    private var logicalSize: UInt64 = 0

    package init(name: String) throws(StorageError) {
        self.path = name
        (region, writable) = try MemoryFile.allocate(length: 64 << 20, name: name)
    }

    private static func allocate(length: Int, name: String) throws(StorageError) -> (Mapping, UnsafeMutableRawPointer) {
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              base != MAP_FAILED else {
            throw StorageError.system("mmap", path: name, errno: errno)
        }
        return (Mapping(base: UnsafeRawPointer(base), length: length, path: name) { munmap(base, length) }, base)
    }

    package func size() throws(StorageError) -> UInt64 { lock.withLock { logicalSize } }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        lock.withLock {
            guard offset < logicalSize else { return 0 }
            let n = Int(min(UInt64(buffer.count), logicalSize - offset))
            buffer.baseAddress!.copyMemory(from: writable + Int(offset), byteCount: n)
            return n
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try lock.withLock { () throws(StorageError) in
            let end = offset + UInt64(bytes.count)
            if end > logicalSize { try growLocked(to: end) }
            (writable + Int(offset)).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
    }

    package func setSize(_ size: UInt64) throws(StorageError) {
        try lock.withLock { () throws(StorageError) in
            if size > logicalSize { try growLocked(to: size) }
            logicalSize = size
        }
    }

    private func growLocked(to size: UInt64) throws(StorageError) {
        if size > UInt64(region.length) {
            var length = region.length
            while UInt64(length) < size { length *= 2 }
            let (newRegion, newWritable) = try MemoryFile.allocate(length: length, name: path)
            newWritable.copyMemory(from: writable, byteCount: Int(logicalSize))
            region = newRegion
            writable = newWritable
        }
        logicalSize = max(logicalSize, size)
    }

    package func sync() throws(StorageError) {}

    package func map(length: Int) throws(StorageError) -> Mapping { lock.withLock { region } }
}
