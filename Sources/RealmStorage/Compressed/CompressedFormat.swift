// LZ4-compressed copies: the file format.
//
// A compressed copy holds the logical image of a compacted copy (CompactCopy.swift: a realm
// file of one version, packed from the header on) cut into blocks of `blockSize` bytes, each
// compressed on its own with LZ4, behind a table that says where each block lies. It is opened
// read-only, in place: the engine reads the logical image through a region whose blocks are
// decompressed when first touched (FaultRegion.swift), so a file of any size opens without
// being inflated.
//
//   offset  size  field
//   0       8     magic "ORealmZ\u{1}" (never a realm file's "ORealm\0\u{1}")
//   8       4     format version (CompressedFormat.version)
//   12      4     block size: a power of two, a multiple of the page size, 4 KiB ... 1 MiB
//   16      8     logical size: bytes of the image (a realm file), at least its header
//   24      4     block count: ceil(logical size / block size)
//   28      4     codec: 1 = LZ4 block format
//   32      8     checksum of the block table (Checksum over its bytes)
//   40      8     nonce: random, this copy's own
//   48      8     format 2: offset of the block table; format 1: 0
//   56      8     checksum of bytes 0..<56
//   64      the stored blocks, back to back: blocks 1, 2, ..., n-1, then block 0
//   table   24 × block count: the block table, one entry per block, by index, to the end of
//           the file:
//             0   8  offset of the block's stored bytes in this file
//             8   4  stored length
//             12  4  flags: 1 = stored uncompressed (LZ4 would not shrink it)
//             16  8  checksum of the copy's nonce, the block's index, its logical offset and
//                    the lanes checksum of its stored bytes (Checksum.lanes)
//
// Block 0 comes last because it begins with the realm file's header, whose root slot is known
// only when the whole copy is made, and the table comes after the blocks because their number
// is known only then: so a copy is compressed as it streams in, whatever its size
// (CompressedCopyImage.swift). Format 1 (the first writer's, which built the whole image in memory)
// had the table at 64 and blocks 0 ... n-1 after it; it is still read.
//
// Invariants (checked at open, before anything is read through the region):
//   1. The header's checksum, then the table's, verify; the block count and size agree with the
//      logical size, and the table fits in the file before it is read (a damaged count cannot
//      make the reader allocate or read beyond the file).
//   2. The stored blocks lie back to back in the order above from offset 64, and the table
//      follows the last and ends at the end of the file (format 1: the table from 64, the
//      blocks after it, in order, to the end): a truncated file, or blocks cut out or added,
//      is refused at open.
//   3. A block is installed only after its checksum verifies and it decompresses to exactly
//      its logical length (the block size; the last block, what is left). The checksum
//      covers the block's index and logical offset and the copy's nonce, so a block copied
//      into another block's place, or from another copy (spliced), does not verify there even
//      with its table entry.
//   4. A block that fails 3 is installed as zeros. Zeros never pass for data: every node
//      checks its kind byte (kind 0 is no kind), its length (at least its 16-byte header) and
//      its checksum, which covers its offset (NodeFormat.swift); so reads of a damaged block
//      throw `fileCorrupted`, as reads of a damaged node of a realm file do.
//   5. The file is never written after it was named: a copy is written and synced under a
//      temporary name, then linked into place (CopyFile.swift).
//
// Compress, then encrypt (DESIGN.md), when encryption lands: blocks are the unit either way.

import CLZ4

package enum CompressedFormat {
    package static let magic: [UInt8] = Array("ORealmZ\u{1}".utf8)
    package static let version: UInt32 = 2
    package static let headerSize = 64
    package static let entrySize = 24
    package static let lz4Codec: UInt32 = 1
    /// The block size copies are written with: 16 KiB gave 1.7-2.5× at 13-22 µs a random block
    /// on record-like data, where 64 KiB compressed little better at four times the latency
    /// (issue 25's measurements; DESIGN.md, "Copies").
    package static let defaultBlockSize = 16 << 10
    package static let pageSize = 4096
    package static let storedFlag: UInt32 = 1

    /// Whether `prefix` (the first bytes of a file) names a compressed copy.
    package static func isCompressed(_ prefix: [UInt8]) -> Bool {
        prefix.count >= magic.count && Array(prefix[0..<magic.count]) == magic
    }

    /// Whether the file at `path` starts with the magic of a compressed copy (false when it
    /// cannot be read: opening it reports why).
    package static func isCompressedFile(at path: String) -> Bool {
        guard let file = try? PosixFile(path: path, mode: .readOnly),
              let prefix = try? file.read(count: magic.count, at: 0) else { return false }
        return isCompressed(prefix)
    }

    /// The checksum of block `index` at logical offset `offset` stored as `bytes` in the copy
    /// with `nonce` (invariant 3).
    static func blockChecksum(nonce: UInt64, index: Int, offset: UInt64, _ bytes: UnsafeRawBufferPointer) -> UInt64 {
        // The bytes through the four-lane checksum (a fifth of the single chain's time on a
        // block), folded with what places them.
        var sum = Checksum()
        sum.update(nonce)
        sum.update(UInt64(index))
        sum.update(offset)
        sum.update(Checksum.lanes(bytes))
        return sum.finalize()
    }
}

/// One entry of the block table.
struct CompressedBlock: Equatable {
    var offset: UInt64
    var length: UInt32
    var flags: UInt32
    var checksum: UInt64

    var stored: Bool { flags & CompressedFormat.storedFlag != 0 }
}

/// The header and block table of a compressed copy, as written and as verified at open.
struct CompressedLayout {
    var blockSize: Int
    var logicalSize: UInt64
    var nonce: UInt64
    var blocks: [CompressedBlock]

    var tableSize: Int { blocks.count * CompressedFormat.entrySize }

    /// The logical length of block `index`: the block size, or what is left for the last.
    func logicalLength(of index: Int) -> Int {
        Int(min(UInt64(blockSize), logicalSize - UInt64(index) * UInt64(blockSize)))
    }

    /// The block table's bytes.
    func encodedTable() -> [UInt8] {
        var table = [UInt8]()
        table.reserveCapacity(tableSize)
        for block in blocks {
            table.append(le: block.offset)
            table.append(le: block.length)
            table.append(le: block.flags)
            table.append(le: block.checksum)
        }
        return table
    }

    /// The header's bytes, for a table at `tableOffset` (format 1: 0, the table follows the header).
    func encodedHeader(tableOffset: UInt64, version: UInt32 = CompressedFormat.version) -> [UInt8] {
        var header = CompressedFormat.magic
        header.append(le: version)
        header.append(le: UInt32(blockSize))
        header.append(le: logicalSize)
        header.append(le: UInt32(blocks.count))
        header.append(le: CompressedFormat.lz4Codec)
        header.append(le: Checksum.of(encodedTable()))
        header.append(le: nonce)
        header.append(le: tableOffset)
        header.append(le: Checksum.of(header))
        return header
    }

    /// Reads and verifies the header and table of the compressed copy in `file` (invariants 1
    /// and 2).
    ///
    /// - Throws: `invalidDatabase` for a file that is not a compressed copy,
    ///   `unsupportedFormatVersion` for a newer one, `fileCorrupted` for a damaged or truncated one.
    static func read(from file: StorageFile, path: String) throws(StorageError) -> CompressedLayout {
        let size = try file.size()
        let header = try file.read(count: CompressedFormat.headerSize, at: 0)
        guard CompressedFormat.isCompressed(header) else {
            throw StorageError(.invalidDatabase, "the file is not an LZ4-compressed realm copy", path: path)
        }
        guard header.count == CompressedFormat.headerSize else {
            throw StorageError(.fileCorrupted, "the compressed copy is truncated: \(size) bytes, shorter than its header", path: path)
        }
        func u32(_ at: Int) -> UInt32 { header.withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt32.self)) } }
        func u64(_ at: Int) -> UInt64 { header.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: at, as: UInt64.self)) } }
        guard Checksum.of(Array(header[0..<56])) == u64(56) else {
            throw StorageError(.fileCorrupted, "the header of the compressed copy does not match its checksum: the file is damaged", path: path)
        }
        guard u32(8) <= CompressedFormat.version else {
            throw StorageError(.unsupportedFormatVersion, "the compressed copy has format version \(u32(8)); this build reads up to "
                               + "\(CompressedFormat.version). Open it with a newer OpenRealm", path: path)
        }
        let blockSize = Int(u32(12)), logicalSize = u64(16), count = Int(u32(24))
        guard u32(8) >= 1, u32(28) == CompressedFormat.lz4Codec, blockSize >= CompressedFormat.pageSize, blockSize <= 1 << 20,
              blockSize & (blockSize - 1) == 0, logicalSize >= UInt64(FileHeader.size),
              UInt64(count) == (logicalSize + UInt64(blockSize) - 1) / UInt64(blockSize) else {
            throw StorageError(.fileCorrupted, "the header of the compressed copy describes an impossible layout", path: path)
        }
        // Before the table is read: a count the file cannot hold is damage, not an allocation.
        let tableSize = UInt64(count) * UInt64(CompressedFormat.entrySize)
        let formatOne = u32(8) == 1
        guard UInt64(CompressedFormat.headerSize) + tableSize <= size else {
            throw StorageError(.fileCorrupted, "the compressed copy is truncated: its block table does not fit in its \(size) bytes", path: path)
        }
        // Format 2: the table ends the file (invariant 2).
        let tableOffset = formatOne ? UInt64(CompressedFormat.headerSize) : u64(48)
        guard formatOne ? u64(48) == 0 : tableOffset == size - tableSize else {
            throw StorageError(.fileCorrupted, tableOffset > size - tableSize
                               ? "the compressed copy is truncated: \(size) bytes, its block table needs \(tableOffset + tableSize)"
                               : "the compressed copy's block table is not where its header says", path: path)
        }
        let table = try file.read(count: Int(tableSize), at: tableOffset)
        guard table.count == Int(tableSize), Checksum.of(table) == u64(32) else {
            throw StorageError(.fileCorrupted, "the block table of the compressed copy does not match its checksum: the file is damaged", path: path)
        }
        var layout = CompressedLayout(blockSize: blockSize, logicalSize: logicalSize, nonce: u64(40), blocks: [])
        var next = formatOne ? UInt64(CompressedFormat.headerSize) + tableSize : UInt64(CompressedFormat.headerSize)
        let bound = UInt64(LZ4_compressBound(Int32(blockSize)))
        let entries = table.withUnsafeBytes { raw in
            (0..<count).map { i in
                let at = i * CompressedFormat.entrySize
                return CompressedBlock(offset: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)),
                                       length: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 8, as: UInt32.self)),
                                       flags: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at + 12, as: UInt32.self)),
                                       checksum: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at + 16, as: UInt64.self)))
            }
        }
        // The order the blocks are stored in (see the header).
        let order = formatOne ? Array(0..<count) : Array(1..<max(count, 1)) + [0]
        for i in order {
            let block = entries[i]
            let limit = block.stored ? UInt64(layout.logicalLength(of: i)) : bound
            guard block.offset == next, block.length > 0, UInt64(block.length) <= limit, block.flags & ~CompressedFormat.storedFlag == 0 else {
                throw StorageError(.fileCorrupted, "block \(i) of the compressed copy has an impossible place or length", path: path)
            }
            next += UInt64(block.length)
        }
        layout.blocks = entries
        let end = formatOne ? size : tableOffset
        guard next == end else {
            throw StorageError(.fileCorrupted, next > end ? "the compressed copy is truncated: \(size) bytes, its blocks need \(next - end) more"
                               : "the compressed copy has \(end - next) bytes after its last block", path: path)
        }
        return layout
    }
}

extension [UInt8] {
    /// Appends `value` little-endian.
    mutating func append<T: FixedWidthInteger>(le value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
