#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// How a compressed copy is read in place: through a FaultRegion (File/FaultRegion.swift) whose
// units are the copy's blocks, each verified and decompressed when first touched
// (CompressedFormat.swift, invariants 3 and 4); or, where userfaultfd is not allowed, through
// the whole image decompressed at open.

/// How a compressed copy is read in place.
package enum CompressedReading: Sendable, Equatable {
    /// Blocks decompressed on first touch through userfaultfd, at most the cache budget of them
    /// resident; the whole image inflated where userfaultfd is not allowed.
    case onDemand
    /// The whole image decompressed into memory at open (the fallback; tests force it).
    case inflate
}

/// A compressed copy's blocks as the units of a region.
final class CompressedBlockSource: FaultSource, @unchecked Sendable {
    // @unchecked: `scratch` is used by `fill` alone, which only the region's handler calls,
    // one call at a time (FaultSource).
    let blocks: CompressedBlocks
    private let scratch: UnsafeMutableRawPointer

    init(_ blocks: CompressedBlocks) {
        self.blocks = blocks
        scratch = .allocate(byteCount: blocks.readBufferSize, alignment: 16)
    }

    deinit { scratch.deallocate() }

    var unitSize: Int { blocks.layout.blockSize }

    func fill(_ index: Int, into buffer: UnsafeMutableRawPointer) -> Bool {
        blocks.fill(index, into: buffer, scratch: scratch)
    }
}

extension FaultRegion {
    /// A read-only region of `blocks`' logical image with at most `cacheSize` bytes of blocks
    /// resident; nil when userfaultfd is not available (`reason` says why).
    static func make(_ blocks: CompressedBlocks, cacheSize: Int) -> (region: FaultRegionHandle?, reason: String) {
        make(length: blocks.layout.blocks.count * blocks.layout.blockSize, source: CompressedBlockSource(blocks), cacheSize: cacheSize,
             writable: false)
    }
}

extension CompressedBlocks {
    /// The whole image decompressed into an anonymous mapping (the fallback), read-only.
    /// Returns the mapping and how many blocks did not verify (installed as zeros).
    func inflate(path: String) throws(StorageError) -> (base: UnsafeMutableRawPointer, length: Int, damaged: Int) {
        let length = layout.blocks.count * layout.blockSize
        guard let base = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0), base != MAP_FAILED else {
            throw StorageError.system("mmap", path: path, errno: errno)
        }
        let scratch = UnsafeMutableRawPointer.allocate(byteCount: readBufferSize, alignment: 16)
        defer { scratch.deallocate() }
        var damaged = 0
        for index in layout.blocks.indices where !fill(index, into: base + index * layout.blockSize, scratch: scratch) {
            damaged += 1
        }
        mprotect(base, length, PROT_READ)
        return (base, length, damaged)
    }
}
