// Node format.
//
// Everything below the file header is a node addressed by its `Ref` (file offset). Nodes are
// 8-byte aligned and immutable once a committed version reaches them. Every node begins with
// the same 16-byte header (format 4; FileHeader.swift):
//
//   offset  size  field
//   0       1     kind (NodeKind)
//   1       1     flags (kind-specific, 0 unless stated)
//   2       2     version, bits 32..47
//   4       4     length: total bytes of the node including this header, a multiple of 8
//   8       4     version, bits 0..31: the version whose commit wrote the node (48 bits)
//   12      4     checksum of the node's `length` bytes, this field taken as 0, and of its offset
//                 in the file (NodeChecksum)
//
// The version is what lets the allocator reuse space early: a node written in version A and
// replaced in version F is visible exactly to versions A ..< F, so its space is free as soon
// as no pinned version falls in that range (see Allocator/FreeSpace.swift).
//
// Files of formats 1-3 had "reserved, 0" at 2 and a u64 version at 8; with versions below
// 2^32 those bytes read the same in this layout, apart from the checksum, which their nodes do
// not have: their nodes are read unverified (`NodeCheck.never`).
//
// Nodes sealed with authentication tags instead of checksums (NodeSealing.swift: encrypted
// files, and plain files under a test option) keep this header with the checksum field 0, are
// 16-byte aligned, and take `align16(length) + 16` bytes: the node, zero padding, the tag.
// Where such a file stores seals (format 6, every encrypted file), each ref a node holds is
// stored with its child's seal, the tag's first 8 bytes (NodeSealing.swift, S5): flag 0x80
// (`SealedRefs.flag`) on inner, top and free-list delta nodes, block tag 0x81 for a cluster
// leaf's list refs. Leaves of indexes, lists, blobs, change sets, full free lists and commit
// records hold no refs and are unchanged.
//
// Multi-byte integers are little-endian everywhere. Readers never trust a node: the checksum is
// verified before a node's bytes are used (once per node per process: VerifiedNodes.swift),
// and every offset and count is checked against the node's length, and the length against the
// mapped file, before anything is read (see NodeView).

package enum NodeKind: UInt8, Sendable {
    case clusterLeaf = 1
    case clusterInner = 2
    case indexLeaf = 3
    case indexInner = 4
    case list = 5
    case top = 6
    case freeList = 7
    case commitRecord = 8
    case changeSet = 9
    case blob = 10
    /// A version's root at the start of its commit's run (FileHeader.swift, format 2).
    case runHeader = 11
    /// The changes one commit made to the free list (FreeList+Chain.swift, format 3).
    case freeListDelta = 12
}

package enum NodeLayout {
    package static let headerSize = 16
    package static let alignment = 8
    /// The largest node the format can describe (length is a u32).
    package static let maxLength = Int(UInt32.max) & ~7

    package static let checksumOffset = 12
    /// The largest version the header can name (48 bits): at a million commits a second,
    /// nine years of them.
    package static let maxVersion: UInt64 = (1 << 48) - 1

    @inline(__always)
    package static func aligned(_ n: Int) -> Int { (n + 7) & ~7 }

    /// The version in the header of the node at `node`.
    @inline(__always)
    package static func version(of node: UnsafeRawPointer) -> UInt64 {
        let low = UInt64(UInt32(littleEndian: node.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))
        let high = UInt64(UInt16(littleEndian: node.loadUnaligned(fromByteOffset: 2, as: UInt16.self)))
        return high << 32 | low
    }

    /// Writes the header fields of a node of `length` bytes at `node` (checksum 0).
    @inline(__always)
    package static func storeHeader(_ node: UnsafeMutableRawPointer, kind: NodeKind, flags: UInt8, length: Int, version: UInt64) {
        node.storeBytes(of: kind.rawValue, toByteOffset: 0, as: UInt8.self)
        node.storeBytes(of: flags, toByteOffset: 1, as: UInt8.self)
        node.storeBytes(of: UInt16(truncatingIfNeeded: version >> 32).littleEndian, toByteOffset: 2, as: UInt16.self)
        node.storeBytes(of: UInt32(length).littleEndian, toByteOffset: 4, as: UInt32.self)
        node.storeBytes(of: UInt32(truncatingIfNeeded: version).littleEndian, toByteOffset: 8, as: UInt32.self)
        node.storeBytes(of: UInt32(0), toByteOffset: checksumOffset, as: UInt32.self)
    }
}

/// The checksum a node carries (bytes 12..<16 of its header).
///
/// It covers the node's offset in the file as well as its bytes: a node copied whole to another
/// place (a page written twice, a write that landed at the wrong offset) does not verify there.
/// So it is stamped when the commit has placed the node (CommitWriter.finish), not when the
/// node is encoded.
///
/// Four independent multiply-rotate lanes over 32-byte blocks, like `Checksum.lanes` (a single
/// chain waits for each multiply before the next word), folded with the length and finalised,
/// then cut to 32 bits. Every step is a bijection of a lane's state for a given word, so a
/// changed word always changes its lane; what reaches the 32 bits misses a change with a
/// probability of 2^-32. Not a MAC: it finds damage, not forgery.
package enum NodeChecksum {
    /// The checksum of the `length` bytes at `node` (a multiple of 8, at least the header),
    /// with the checksum field read as zero, for a node at `offset` in the file.
    @inline(__always)
    package static func compute(_ node: UnsafeRawPointer, length: Int, offset: UInt64) -> UInt32 {
        // Wrapping multiply and add are the point of the mixer.
        @inline(__always) func mix(_ state: inout UInt64, _ word: UInt64) {
            state ^= word &* 0xBF58_476D_1CE4_E5B9
            state = ((state << 27) | (state >> 37)) &* 0x94D0_49BB_1331_11EB &+ 0x2545_F491_4F6C_DD1D
        }
        @inline(__always) func word(_ i: Int) -> UInt64 { UInt64(littleEndian: node.loadUnaligned(fromByteOffset: i, as: UInt64.self)) }
        var a: UInt64 = 0x9E37_79B9_7F4A_7C15, b: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        var c: UInt64 = 0x1656_67B1_9E37_79F9, d: UInt64 = 0x85EB_CA77_C2B2_AE63
        mix(&a, word(0))
        mix(&b, word(8) & 0xFFFF_FFFF)
        mix(&d, offset)
        var i = 16
        while i + 32 <= length {
            mix(&a, word(i))
            mix(&b, word(i + 8))
            mix(&c, word(i + 16))
            mix(&d, word(i + 24))
            i += 32
        }
        while i + 8 <= length {
            mix(&c, word(i))
            i += 8
        }
        var h = UInt64(length)
        mix(&h, a)
        mix(&h, b)
        mix(&h, c)
        mix(&h, d)
        h = (h ^ (h >> 30)) &* 0xBF58_476D_1CE4_E5B9
        h = (h ^ (h >> 27)) &* 0x94D0_49BB_1331_11EB
        h ^= h >> 31
        return UInt32(truncatingIfNeeded: h ^ (h >> 32))
    }

    /// Computes and stores the checksum of the finished node at `node`, which goes to `offset`
    /// in the file; `length` is the node's (its header's length field).
    @inline(__always)
    package static func stamp(_ node: UnsafeMutableRawPointer, length: Int, offset: UInt64) {
        node.storeBytes(of: UInt32(0), toByteOffset: NodeLayout.checksumOffset, as: UInt32.self)
        let sum = compute(UnsafeRawPointer(node), length: length, offset: offset)
        node.storeBytes(of: sum.littleEndian, toByteOffset: NodeLayout.checksumOffset, as: UInt32.self)
    }

    /// `stamp` for the node that fills `bytes`.
    package static func stamp(_ bytes: inout [UInt8], offset: UInt64) {
        let length = bytes.count
        bytes.withUnsafeMutableBytes { stamp($0.baseAddress!, length: length, offset: offset) }
    }

    /// Stamps the node at `at` in `bytes` (its length read from its header).
    package static func stamp(in bytes: UnsafeMutableRawBufferPointer, at: Int, offset: UInt64) {
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self)))
        precondition(length >= NodeLayout.headerSize && at + length <= bytes.count, "stamping a node that is not whole")
        stamp(bytes.baseAddress! + at, length: length, offset: offset)
    }

    /// Whether the node at `node`, at `offset` in the file, carries the checksum of its bytes.
    @inline(__always)
    package static func matches(_ node: UnsafeRawPointer, length: Int, offset: UInt64) -> Bool {
        UInt32(littleEndian: node.loadUnaligned(fromByteOffset: NodeLayout.checksumOffset, as: UInt32.self))
            == compute(node, length: length, offset: offset)
    }
}
