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
package final class MemoryFile: StorageFile, Sendable {
    package let path: String
    /// Readers never touch the region directly; they read through `Mapping`s, which stay
    /// immutable for the bytes they reach.
    private let region: Locked<Region>

    private struct Region {
        /// Written through as well as read: the region is this file's own, private memory.
        var mapping: Mapping
        var logicalSize: UInt64 = 0

        mutating func grow(to size: UInt64, name: String) throws(StorageError) {
            if size > UInt64(mapping.length) {
                var length = mapping.length
                while UInt64(length) < size { length *= 2 }
                let larger = try MemoryFile.allocate(length: length, name: name)
                UnsafeMutableRawPointer(mutating: larger.base).copyMemory(from: mapping.base, byteCount: Int(logicalSize))
                mapping = larger
            }
            logicalSize = max(logicalSize, size)
        }
    }

    package init(name: String) throws(StorageError) {
        self.path = name
        region = Locked(Region(mapping: try MemoryFile.allocate(length: 64 << 20, name: name)))
    }

    fileprivate static func allocate(length: Int, name: String) throws(StorageError) -> Mapping {
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0),
              base != MAP_FAILED else {
            throw StorageError.system("mmap", path: name, errno: errno)
        }
        return Mapping(base: UnsafeRawPointer(base), length: length, path: name) { munmap(base, length) }
    }

    package func size() throws(StorageError) -> UInt64 { region.withLock { $0.logicalSize } }

    package func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        region.withLock { region in
            guard offset < region.logicalSize else { return 0 }
            let n = Int(min(UInt64(buffer.count), region.logicalSize - offset))
            let mapping = region.mapping
            buffer.baseAddress!.copyMemory(from: mapping.base + Int(offset), byteCount: n)
            return n
        }
    }

    package func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try region.withLock { (region) throws(StorageError) in
            let end = offset + UInt64(bytes.count)
            if end > region.logicalSize { try region.grow(to: end, name: path) }
            let mapping = region.mapping
            // The region is mapped writable (`allocate`); only this file writes to it.
            UnsafeMutableRawPointer(mutating: mapping.base + Int(offset)).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count)
        }
    }

    package func setSize(_ size: UInt64) throws(StorageError) {
        try region.withLock { (region) throws(StorageError) in
            if size > region.logicalSize { try region.grow(to: size, name: path) }
            region.logicalSize = size
        }
    }

    package func sync() throws(StorageError) {}

    package func map(length: Int) throws(StorageError) -> Mapping { region.withLock { $0.mapping } }
}
