#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An LZ4-compressed copy opened read-only, as the engine sees a realm file: its size and
/// reads are those of the logical image, and its mapping decompresses blocks on demand
/// (FaultRegion.swift). It cannot be written: the engine opens it only read-only, and every
/// write throws.
final class CompressedFile: StorageFile, Sendable {
    let path: String
    let blocks: CompressedBlocks
    private let cacheSize: Int
    private let reading: CompressedReading
    private let mapped = Locked(Mapped())

    /// What the newest mapping reads through.
    private struct Mapped {
        weak var region: FaultRegionHandle?
        var inflatedDamage: Int?
        /// Why the image was inflated rather than read on demand, when it was.
        var fallbackReason: String?
    }

    /// Opens the compressed copy at `path` with `key` (nil: without one; an encrypted copy
    /// needs its key) and verifies its header and block table.
    ///
    /// - Throws: what `CompressedLayout.read` throws, and what opening the file throws.
    init(path: String, key: [UInt8]? = nil, cacheSize: Int, reading: CompressedReading,
         wrapper: (@Sendable (StorageFile) -> StorageFile)?) throws(StorageError) {
        self.path = path
        let posix = try PosixFile(path: path, mode: .readOnly)
        let file = wrapper?(posix) ?? posix
        let read = try CompressedLayout.read(from: file, path: path, key: key)
        blocks = CompressedBlocks(file: file, layout: read.layout, keys: read.keys)
        self.cacheSize = cacheSize
        self.reading = reading
    }

    func size() throws(StorageError) -> UInt64 { blocks.layout.logicalSize }

    /// Reads the logical image by decompressing the blocks `buffer` covers (the header, read
    /// before anything is mapped).
    ///
    /// - Throws: `fileCorrupted` for a block that does not verify.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int {
        let layout = blocks.layout
        guard offset < layout.logicalSize else { return 0 }
        let n = Int(min(UInt64(buffer.count), layout.logicalSize - offset))
        let block = UnsafeMutableRawPointer.allocate(byteCount: layout.blockSize, alignment: 16)
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: blocks.readBufferSize, alignment: 16)
        defer { block.deallocate(); scratch.deallocate() }
        var done = 0
        while done < n {
            let at = offset + UInt64(done)
            let index = Int(at / UInt64(layout.blockSize)), within = Int(at % UInt64(layout.blockSize))
            guard blocks.fill(index, into: block, scratch: scratch) else {
                throw StorageError(.fileCorrupted, "block \(index) of the compressed copy does not match its \(layout.encrypted ? "tag" : "checksum"): the file is damaged", path: path)
            }
            let count = min(n - done, layout.blockSize - within)
            buffer.baseAddress!.advanced(by: done).copyMemory(from: block + within, byteCount: count)
            done += count
        }
        return n
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) { throw Self.readOnly(path) }
    func setSize(_ size: UInt64) throws(StorageError) { throw Self.readOnly(path) }
    func sync() throws(StorageError) { throw Self.readOnly(path) }

    /// The error for anything that would write a compressed copy.
    static func readOnly(_ path: String) -> StorageError {
        StorageError(.readOnlyFile, "an LZ4-compressed copy can only be opened read-only; to get a writable realm, write an "
                     + "uncompressed copy of it (writeCopy(toFile:) from a read-only realm of it, or `openrealm copy <file> <copy>` "
                     + "without --lz4)", path: path)
    }

    /// The region the logical image is read through (`length` is ignored: the image never grows).
    func map(length: Int) throws(StorageError) -> Mapping {
        try mapped.withLock { (mapped) throws(StorageError) -> Mapping in
            if reading == .onDemand {
                let made = FaultRegion.make(blocks, cacheSize: cacheSize)
                if let handle = made.region {
                    mapped.region = handle
                    return Mapping(base: UnsafeRawPointer(handle.region.base), length: handle.region.length, path: path) { withExtendedLifetime(handle) {} }
                }
                mapped.fallbackReason = made.reason
            } else {
                mapped.fallbackReason = "inflating was asked for"
            }
            let inflated = try blocks.inflate(path: path)
            mapped.inflatedDamage = inflated.damaged
            return Mapping(base: UnsafeRawPointer(inflated.base), length: inflated.length, path: path) { munmap(inflated.base, inflated.length) }
        }
    }

    /// The region of the newest mapping while a mapping holds it (nil once none does, or when
    /// the image was inflated).
    var currentRegion: FaultRegion? { mapped.withLock { $0.region?.region } }

    /// What the region of the newest mapping has done (the inflated image: all blocks resident).
    var counts: FaultRegionCounts {
        mapped.withLock { mapped in
            if let region = mapped.region { return region.region.counts }
            let n = blocks.layout.blocks.count
            return FaultRegionCounts(onDemand: false, fallbackReason: mapped.fallbackReason, resident: n, peakResident: n, budget: n, installs: n,
                                     damaged: mapped.inflatedDamage ?? 0)
        }
    }
}
