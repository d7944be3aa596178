// LZ4-compressed copies: the file format.
//
// A compressed copy holds the logical image of a compacted copy (CompactCopy.swift: a realm
// file of one version, packed from the header on) cut into blocks of `blockSize` bytes, each
// compressed on its own with LZ4, behind a table that says where each block lies. It is opened
// read-only, in place: the engine reads the logical image through a region whose blocks are
// decompressed when first touched (FaultRegion.swift), so a file of any size opens without
// being inflated. An encrypted copy (format 3) compresses, then encrypts and authenticates,
// block by block: the logical image is a plain realm file whose nodes carry checksums, and
// nothing of it reaches the disk in the clear.
//
//   offset  size  field
//   0       8     magic "ORealmZ\u{1}" (never a realm file's "ORealm\0\u{1}")
//   8       4     format version: 2 plain, 3 encrypted (CompressedFormat.version is the newest)
//   12      4     block size: a power of two, a multiple of the page size, 4 KiB ... 1 MiB
//   16      8     logical size: bytes of the image (a realm file), at least its header
//   24      4     block count: ceil(logical size / block size)
//   28      4     codec: 1 = LZ4 block format
//   32      8     checksum of the block table (Checksum over its bytes)
//   40      8     nonce: random, this copy's own
//   48      8     format 2 and 3: offset of the block table; format 1: 0
//   56      8     checksum of bytes 0..<56
//   format 3 only, in the clear:
//   64      4     cipher suite: 1 = AES-256-XTS blocks, HMAC-SHA-256 tags, HKDF-SHA-256 keys
//   68      4     reserved, 0
//   72      32    salt: random, this copy's own
//   104     16    key check: HMAC-SHA-256(check key, "OpenRealm key check"), first 16 bytes
//   120     8     reserved, 0
//   128     32    layout MAC: HMAC-SHA-256(layout key, bytes 0..<128 ‖ the block table)
//   64 (format 3: 160)
//           the stored blocks, back to back: blocks 1, 2, ..., n-1, then block 0
//   table   24 (format 3: 32) × block count: the block table, one entry per block, by
//           index, to the end of the file:
//             0   8  offset of the block's stored bytes in this file
//             8   4  stored length (format 3: before padding)
//             12  4  flags: 1 = stored uncompressed (LZ4 would not shrink it)
//             16  8  format 2: checksum of the copy's nonce, the block's index, its logical
//                    offset and the lanes checksum of its stored bytes (Checksum.lanes)
//             16  16 format 3: the block's tag, HMAC-SHA-256(tag key, u64 index << 32 | stored
//                    length ‖ u8 flags ‖ its stored bytes as written)[0..<16]
//
// Format 3's keys (Crypto/EncryptionKeys.swift, labels "OpenRealm/z3/…"; the layout key
// "OpenRealm/z3/layout"): HKDF-SHA-256 over the user's 64-byte key with the copy's salt, as
// an encrypted realm file derives its own (File/EncryptionHeader.swift) under other labels.
// A block's stored bytes (LZ4's, or the raw block) are padded with zeros to a multiple of 16
// and encrypted with AES-256-XTS as one data unit whose tweak is the block's index; the
// padded bytes are what the file holds, the table's length is the unpadded one. XTS has no
// nonce: a copy is written once under keys no other file has (a fresh salt), so no (key,
// tweak) pair ever encrypts two different blocks.
//
// Block 0 comes last because it begins with the realm file's header, whose root slot is known
// only when the whole copy is made, and the table comes after the blocks because their number
// is known only then: so a copy is compressed as it streams in, whatever its size
// (CompressedCopyImage.swift). Format 1 (the first writer's, which built the whole image in memory)
// had the table at 64 and blocks 0 ... n-1 after it; it is still read. Plain copies are still
// written in format 2, so that builds before format 3 read them.
//
// Invariants (checked at open, before anything is read through the region):
//   1. The header's checksum, then the table's, verify; the block count and size agree with the
//      logical size, and the table fits in the file before it is read (a damaged count cannot
//      make the reader allocate or read beyond the file).
//   2. The stored blocks lie back to back in the order above from the end of the header, and
//      the table follows the last and ends at the end of the file (format 1: the table from 64,
//      the blocks after it, in order, to the end): a truncated file, or blocks cut out or
//      added, is refused at open.
//   3. A block is installed only after its checksum (format 3: its tag, then decryption)
//      verifies and it decompresses to exactly its logical length (the block size; the last
//      block, what is left). The checksum covers the block's index and logical offset and
//      the copy's nonce, so a block copied into another block's place, or from another copy
//      (spliced), does not verify there even with its table entry. Format 3's tag covers the
//      index (and so, with the authenticated block size, the logical offset), the stored
//      length and flags, under a key only this copy has: a block of another copy, even one
//      written under the same user key, does not verify, nor does a swapped one.
//   4. A block that fails 3 is installed as zeros. Zeros never pass for data: every node
//      checks its kind byte (kind 0 is no kind), its length (at least its 16-byte header) and
//      its checksum, which covers its offset (NodeFormat.swift); so reads of a damaged block
//      throw `fileCorrupted`, as reads of a damaged node of a realm file do.
//   5. The file is never written after it was named: a copy is written and synced under a
//      temporary name, then linked into place (CopyFile.swift).
//   6. Format 3: the key is checked before the table is read: a copy opened without a key, a
//      key that is not the copy's, and a key given for a plain copy fail with
//      `decryptionFailed` saying which, before any block is read. Then the layout MAC, which
//      covers the whole header before it and the table (and so every block's tag), verifies
//      before any entry is used: a changed header field, entry or tag is `fileCorrupted`.

import CLZ4

package enum CompressedFormat {
    package static let magic: [UInt8] = Array("ORealmZ\u{1}".utf8)
    /// The newest format this build reads (and writes for encrypted copies).
    package static let version: UInt32 = 3
    /// The format of plain copies.
    package static let plainVersion: UInt32 = 2
    /// The format of encrypted copies.
    package static let encryptedVersion: UInt32 = 3
    package static let headerSize = 64
    package static let encryptedHeaderSize = 160
    package static let entrySize = 24
    package static let encryptedEntrySize = 32
    /// Format 3's cipher suite: AES-256-XTS blocks, HMAC-SHA-256 tags, HKDF-SHA-256 keys.
    package static let suiteXTSHMAC: UInt32 = 1
    static let suiteOffset = 64, saltOffset = 72, keyCheckOffset = 104, layoutMACOffset = 128
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
    /// Format 1 and 2: the block's checksum (invariant 3); format 3: 0.
    var checksum: UInt64
    /// Format 3: the block's tag (invariant 3); before: 0.
    var tag = NodeTag(low: 0, high: 0)

    var stored: Bool { flags & CompressedFormat.storedFlag != 0 }
}

/// The header and block table of a compressed copy, as written and as verified at open.
struct CompressedLayout {
    var blockSize: Int
    var logicalSize: UInt64
    var nonce: UInt64
    var blocks: [CompressedBlock]
    /// Whether the blocks are encrypted (format 3).
    var encrypted = false

    var headerSize: Int { encrypted ? CompressedFormat.encryptedHeaderSize : CompressedFormat.headerSize }
    var entrySize: Int { encrypted ? CompressedFormat.encryptedEntrySize : CompressedFormat.entrySize }
    var tableSize: Int { blocks.count * entrySize }

    /// The logical length of block `index`: the block size, or what is left for the last.
    func logicalLength(of index: Int) -> Int {
        Int(min(UInt64(blockSize), logicalSize - UInt64(index) * UInt64(blockSize)))
    }

    /// The bytes `block` takes in the file: its stored length, padded for the cipher (format 3).
    func fileLength(of block: CompressedBlock) -> Int {
        encrypted ? CompressedCopyKeys.padded(Int(block.length)) : Int(block.length)
    }

    /// The block table's bytes.
    func encodedTable() -> [UInt8] {
        var table = [UInt8]()
        table.reserveCapacity(tableSize)
        for block in blocks {
            table.append(le: block.offset)
            table.append(le: block.length)
            table.append(le: block.flags)
            if encrypted {
                table.append(le: block.tag.low)
                table.append(le: block.tag.high)
            } else {
                table.append(le: block.checksum)
            }
        }
        return table
    }

    /// The header's bytes, for a table at `tableOffset` (format 1: 0, the table follows the
    /// header); with `keys`, format 3's, the layout MAC over it and `table`.
    func encodedHeader(tableOffset: UInt64, version: UInt32 = CompressedFormat.plainVersion, keys: CompressedCopyKeys? = nil) -> [UInt8] {
        precondition(encrypted == (keys != nil), "an encrypted layout is written with its keys")
        let table = encodedTable()
        var header = CompressedFormat.magic
        header.append(le: keys == nil ? version : CompressedFormat.encryptedVersion)
        header.append(le: UInt32(blockSize))
        header.append(le: logicalSize)
        header.append(le: UInt32(blocks.count))
        header.append(le: CompressedFormat.lz4Codec)
        header.append(le: Checksum.of(table))
        header.append(le: nonce)
        header.append(le: tableOffset)
        header.append(le: Checksum.of(header))
        guard let keys else { return header }
        header.append(le: CompressedFormat.suiteXTSHMAC)
        header.append(le: UInt32(0))
        header += keys.salt
        header += keys.keys.keyCheck
        header.append(le: UInt64(0))
        return header + keys.layoutMAC(header: header, table: table)
    }

    /// Reads and verifies the header and table of the compressed copy in `file` (invariants 1
    /// and 2), given no key: a plain copy's.
    static func read(from file: StorageFile, path: String) throws(StorageError) -> CompressedLayout {
        try read(from: file, path: path, key: nil).layout
    }

    /// Reads and verifies the header and table of the compressed copy in `file` (invariants 1,
    /// 2 and 6), opened with `key` (nil: without one). Returns the copy's keys when it is
    /// encrypted.
    ///
    /// - Throws: `invalidDatabase` for a file that is not a compressed copy,
    ///   `unsupportedFormatVersion` for a newer one, `decryptionFailed` when `key` does not fit
    ///   the copy (invariant 6), `fileCorrupted` for a damaged or truncated one.
    static func read(from file: StorageFile, path: String, key: [UInt8]?) throws(StorageError) -> (layout: CompressedLayout, keys: CompressedCopyKeys?) {
        let size = try file.size()
        let header = try file.read(count: CompressedFormat.encryptedHeaderSize, at: 0)
        guard CompressedFormat.isCompressed(header) else {
            throw StorageError(.invalidDatabase, "the file is not an LZ4-compressed realm copy", path: path)
        }
        guard header.count >= CompressedFormat.headerSize else {
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
        let encrypted = u32(8) == CompressedFormat.encryptedVersion
        guard !encrypted || header.count == CompressedFormat.encryptedHeaderSize else {
            throw StorageError(.fileCorrupted, "the encrypted compressed copy is truncated: \(size) bytes, shorter than its header", path: path)
        }
        // Invariant 6: the key, before the table is read.
        let keys = try CompressedCopyKeys.keys(forHeader: header, encrypted: encrypted, key: key, path: path)
        let blockSize = Int(u32(12)), logicalSize = u64(16), count = Int(u32(24))
        guard u32(8) >= 1, u32(28) == CompressedFormat.lz4Codec, blockSize >= CompressedFormat.pageSize, blockSize <= 1 << 20,
              blockSize & (blockSize - 1) == 0, logicalSize >= UInt64(FileHeader.size),
              UInt64(count) == (logicalSize + UInt64(blockSize) - 1) / UInt64(blockSize) else {
            throw StorageError(.fileCorrupted, "the header of the compressed copy describes an impossible layout", path: path)
        }
        var layout = CompressedLayout(blockSize: blockSize, logicalSize: logicalSize, nonce: u64(40), blocks: [], encrypted: encrypted)
        // Before the table is read: a count the file cannot hold is damage, not an allocation.
        let tableSize = UInt64(count) * UInt64(layout.entrySize)
        let formatOne = u32(8) == 1
        guard UInt64(layout.headerSize) + tableSize <= size else {
            throw StorageError(.fileCorrupted, "the compressed copy is truncated: its block table does not fit in its \(size) bytes", path: path)
        }
        // Format 2 and 3: the table ends the file (invariant 2).
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
        if let keys {
            let mac = keys.layoutMAC(header: header[0..<CompressedFormat.layoutMACOffset], table: table)
            guard EncryptionHeader.constantTimeEqual(mac, Array(header[CompressedFormat.layoutMACOffset...])) else {
                throw StorageError(.fileCorrupted, "the header or block table of the encrypted compressed copy does not match its MAC: "
                                   + "the file was damaged or changed", path: path)
            }
        }
        var next = formatOne ? UInt64(CompressedFormat.headerSize) + tableSize : UInt64(layout.headerSize)
        let bound = UInt64(LZ4_compressBound(Int32(blockSize)))
        let entrySize = layout.entrySize
        let entries = table.withUnsafeBytes { raw in
            (0..<count).map { i in
                let at = i * entrySize
                func u64(_ at: Int) -> UInt64 { UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
                func u32(_ at: Int) -> UInt32 { UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: UInt32.self)) }
                return CompressedBlock(offset: u64(at), length: u32(at + 8), flags: u32(at + 12), checksum: encrypted ? 0 : u64(at + 16),
                                       tag: encrypted ? NodeTag(loadingFrom: raw.baseAddress! + at + 16) : NodeTag(low: 0, high: 0))
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
            next += UInt64(layout.fileLength(of: block))
        }
        layout.blocks = entries
        let end = formatOne ? size : tableOffset
        guard next == end else {
            throw StorageError(.fileCorrupted, next > end ? "the compressed copy is truncated: \(size) bytes, its blocks need \(next - end) more"
                               : "the compressed copy has \(end - next) bytes after its last block", path: path)
        }
        return (layout, keys)
    }
}

extension [UInt8] {
    /// Appends `value` little-endian.
    mutating func append<T: FixedWidthInteger>(le value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
