#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CLZ4

/// The blocks of one compressed copy, read from its file and decompressed one at a time
/// (CompressedFormat.swift, invariants 3 and 4).
final class CompressedBlocks: Sendable {
    let file: StorageFile
    let layout: CompressedLayout
    /// An encrypted copy's keys (format 3); nil for a plain copy.
    let keys: CompressedCopyKeys?

    init(file: StorageFile, layout: CompressedLayout, keys: CompressedCopyKeys? = nil) {
        precondition(layout.encrypted == (keys != nil), "an encrypted copy's blocks are read with its keys")
        self.file = file
        self.layout = layout
        self.keys = keys
    }

    /// The largest stored block (padded, when encrypted): the size of the buffer `fill` reads into.
    var readBufferSize: Int { CompressedCopyKeys.padded(Int(LZ4_compressBound(Int32(layout.blockSize)))) }

    /// Writes block `index`'s logical bytes to `destination` (`layout.blockSize` bytes; what
    /// lies past the logical image is zero), reading its stored bytes into `scratch`
    /// (`readBufferSize` bytes). Returns false, and writes zeros, when the block cannot be
    /// read, does not verify or does not decompress to its length: zeros read as damage
    /// (invariant 4). An encrypted block is decrypted in `scratch` once its tag verifies.
    /// Allocates nothing, so the fault handler may call it (the cipher and MAC contexts are
    /// pooled: CCrypto).
    func fill(_ index: Int, into destination: UnsafeMutableRawPointer, scratch: UnsafeMutableRawPointer) -> Bool {
        let block = layout.blocks[index]
        let logical = layout.logicalLength(of: index)
        let stored = UnsafeMutableRawBufferPointer(start: scratch, count: layout.fileLength(of: block))
        let good: Bool
        if let n = try? file.read(into: stored, at: block.offset), n == stored.count, verify(block, index: index, stored) {
            if block.stored {
                destination.copyMemory(from: scratch, byteCount: logical)
                good = true
            } else {
                let produced = LZ4_decompress_safe(scratch.assumingMemoryBound(to: CChar.self), destination.assumingMemoryBound(to: CChar.self),
                                                   Int32(block.length), Int32(logical))
                good = produced == Int32(logical)
            }
        } else {
            good = false
        }
        let kept = good ? logical : 0
        if kept < layout.blockSize { memset(destination + kept, 0, layout.blockSize - kept) }
        return good
    }

    /// Whether the stored bytes of block `index`, as read, verify (invariant 3): a plain copy's
    /// against their checksum; an encrypted copy's against their tag, then decrypted in place.
    private func verify(_ block: CompressedBlock, index: Int, _ stored: UnsafeMutableRawBufferPointer) -> Bool {
        guard let keys else {
            return CompressedFormat.blockChecksum(nonce: layout.nonce, index: index, offset: UInt64(index) * UInt64(layout.blockSize),
                                                  UnsafeRawBufferPointer(stored)) == block.checksum
        }
        guard keys.blockTag(index: index, length: block.length, flags: block.flags, ciphertext: UnsafeRawBufferPointer(stored)) == block.tag else {
            return false
        }
        keys.keys.pages.decrypt(unit: UInt64(index), stored)
        return true
    }
}
