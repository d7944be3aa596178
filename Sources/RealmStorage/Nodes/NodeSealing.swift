// Node sealing: what vouches for a node's bytes (issue 29; docs/EncryptionProposal.md §4, §5).
//
// Two ways, one per file:
//
//   checksum       (format 4, every plain file) the 32-bit `NodeChecksum` in the header (bytes
//                  12..<16), over the node's bytes and its offset. A node takes `length` bytes (a
//                  multiple of 8) at an 8-aligned offset. Nothing here changes its bytes.
//   authenticated  (format 6, encrypted files; plain files too, as a store
//                  option of the tests: StoreOptions.sealing) a keyed 16-byte tag after the node:
//
//                    offset            size                      field
//                    0                 length                    the node; header checksum field 0
//                    length            align16(length) - length  zero padding (0 or 8 bytes; checked)
//                    align16(length)   16                        tag = NodeAuthenticator.tag(offset,
//                                                                kind, bytes 0..<length)
//
// The node's *footprint* is what it takes in the file: `length` for checksums,
// `align16(length) + 16` for tags. Invariants of the authenticated way:
//   S1. Nodes start 16-aligned, and every allocation and every free is a whole footprint, so the
//       allocator works in 16-byte units (FreeSpace.alignment) and no 16-byte block holds bytes
//       of two nodes (invariant E1: the encrypted file layer writes whole blocks only).
//   S2. The tag binds the node's offset and kind: a node copied elsewhere, or read as another
//       kind, does not verify. Its length is bound by the bytes it covers (byte 4..<8).
//   S3. A node's bytes are used only once its tag verified in this process (invariant E4), at
//       the one place checksums are verified today (NodeCheck.verifyNow, once per node per
//       process: VerifiedNodes.swift). A mismatch is `fileCorrupted`, as a checksum's is.
//   S4. The tag must lie inside the bytes the version may reach: a length that puts it past
//       them is `fileCorrupted`, never a read past the mapping.
//
// Seals (format 6; EncryptionHeader.swift E10-E12). A tag binds a node to its place, not to its
// version: an older node restored at its own offset from an older copy of the file verifies.
// So every stored ref of an authenticated file carries the first 8 bytes of its child's tag
// (the *seal*, `Ref.seal`), and the tree of refs is a Merkle tree:
//   S5. Every ref stored in an authenticated node, root slot or run header is followed by (or
//       stored beside) its child's seal (tables: NodeFormat, TreeFormat, ColumnCodec, Catalog,
//       FreeList+Chain, FileHeader). A node is opened only through a ref whose seal equals its
//       tag's first 8 bytes, compared at every `NodeView`, after the tag verified (S3): not
//       cached in the verified bit, since one node is reached through refs of several versions.
//       A mismatch is `fileCorrupted`. A rolled-back node, or a rolled-back subtree below the
//       root, fails at the first parent not rolled back with it (false pass 2^-64).
//   S6. Bottom-up: a node is sealed when it is placed (`NodeSink.place` returns the sealed ref),
//       and placed before any node naming it, so every parent is encoded with its children's
//       seals.
//   S7. A ref's identity is its offset: equality, hashing and order ignore the seal, so every
//       in-memory carrier keeps whatever seal its ref was made with. A ref made from a bare
//       offset has seal 0 and may free space or key caches, but never opens an authenticated
//       node (it fails S5, by design: a decoder that misses a seal cannot pass).
// Checksummed files (format 4) store no seal and compare none: their bytes are as before.
//
// Only the node's `length` bytes count as the node everywhere else (NodeView, the commit record's
// checksum, DecodedLeaves' comparisons); the footprint matters where space is placed, freed or
// walked (CommitWriter, CopyWriter, FreeSpace, TreeContext.free, the integrity check's coverage).

/// How the nodes of a file are sealed (see above).
package enum NodeSealing: Sendable {
    case checksum
    case authenticated(NodeAuthenticator)

    /// Bytes of an authenticated node's tag.
    package static let tagSize = 16

    /// Whether nodes carry tags.
    @inline(__always)
    package var isAuthenticated: Bool {
        if case .authenticated = self { return true }
        return false
    }

    /// The alignment of every node and of every allocation (invariant S1).
    @inline(__always)
    package var alignment: Int { isAuthenticated ? 16 : NodeLayout.alignment }

    /// The bytes a node of `length` bytes (a multiple of 8) takes in the file.
    @inline(__always)
    package func footprint(_ length: Int) -> Int {
        switch self {
        case .checksum: return length
        case .authenticated: return Self.tagOffset(length) + Self.tagSize
        }
    }

    /// `footprint` for lengths held as UInt64 (lengths read from a verified node's header are below 2^32).
    @inline(__always)
    package func footprint(_ length: UInt64) -> UInt64 { UInt64(footprint(Int(length))) }

    /// Where an authenticated node's tag starts: right after the node, 16-aligned.
    @inline(__always)
    static func tagOffset(_ length: Int) -> Int { (length + 15) & ~15 }

    /// Whether parents store their children's seals and `NodeView` compares them (S5).
    @inline(__always)
    package var storesSeals: Bool { isAuthenticated }

    /// Seals the node of `length` bytes at `node`, which goes to `offset` in the file. For
    /// tags, the `footprint(length)` bytes from `node` must be writable: the padding is zeroed
    /// and the tag written after it. Returns the node's seal for the ref naming it (S5; 0 for
    /// checksums).
    @inline(__always)
    @discardableResult
    package func seal(_ node: UnsafeMutableRawPointer, length: Int, offset: UInt64) -> UInt64 {
        switch self {
        case .checksum:
            NodeChecksum.stamp(node, length: length, offset: offset)
            return 0
        case .authenticated(let authenticator):
            node.storeBytes(of: UInt32(0), toByteOffset: NodeLayout.checksumOffset, as: UInt32.self)
            let tagAt = Self.tagOffset(length)
            (node + length).initializeMemory(as: UInt8.self, repeating: 0, count: tagAt - length)
            let kind = node.load(as: UInt8.self)
            let tag = authenticator.tag(offset: offset, kind: kind, bytes: UnsafeRawBufferPointer(start: node, count: length))
            tag.store(to: node + tagAt)
            return tag.low
        }
    }

    /// The seal a ref to the authenticated node of `length` bytes at `node` must carry: its
    /// tag's first 8 bytes (S5). Only for nodes whose footprint lies in readable bytes.
    @inline(__always)
    package static func storedSeal(_ node: UnsafeRawPointer, length: Int) -> UInt64 {
        UInt64(littleEndian: node.loadUnaligned(fromByteOffset: tagOffset(length), as: UInt64.self))
    }

    /// The seal of the sealed node `footprint` (a node of `length` bytes and its tag).
    package static func seal(ofSealed footprint: [UInt8], length: Int) -> UInt64 {
        footprint.withUnsafeBytes { storedSeal($0.baseAddress!, length: length) }
    }

    /// Appends the node `bytes` to `buffer`, sealed for `offset`: `footprint(bytes.count)`
    /// bytes. Returns where in `buffer` it starts and its seal (0 for checksums).
    @discardableResult
    package func append(_ bytes: [UInt8], to buffer: inout [UInt8], offset: UInt64) -> (at: Int, seal: UInt64) {
        let at = buffer.count
        buffer.append(contentsOf: bytes)
        let length = bytes.count
        let footprint = footprint(length)
        if footprint > length { buffer.append(contentsOf: repeatElement(0, count: footprint - length)) }
        let sealed = buffer.withUnsafeMutableBytes { bytes -> UInt64 in self.seal(bytes.baseAddress! + at, length: length, offset: offset) }
        return (at, sealed)
    }

    /// The node `bytes` sealed for `offset`: `footprint(bytes.count)` bytes.
    package func sealed(_ bytes: consuming [UInt8], offset: UInt64) -> [UInt8] {
        if case .checksum = self {
            // Stamped in place, no copy: as before sealing had a choice.
            NodeChecksum.stamp(&bytes, offset: offset)
            return bytes
        }
        var out: [UInt8] = []
        out.reserveCapacity(footprint(bytes.count))
        append(bytes, to: &out, offset: offset)
        return out
    }

    /// Makes the encoded node `bytes` read as the node's `length` bytes do in the file at
    /// `offset` (for comparisons with a node): checksums are stamped, a tagged node's header
    /// keeps 0 there.
    package func stampHeader(_ bytes: inout [UInt8], offset: UInt64) {
        if case .checksum = self { NodeChecksum.stamp(&bytes, offset: offset) }
    }

    /// Whether the node of `length` bytes at `node`, at `offset` in the file, carries the seal of
    /// its bytes there; `available` is how many bytes from `node` on may be read (the tag must lie
    /// inside them, invariant S4).
    package func matches(_ node: UnsafeRawPointer, length: Int, offset: UInt64, available: UInt64) -> Bool {
        switch self {
        case .checksum:
            return NodeChecksum.matches(node, length: length, offset: offset)
        case .authenticated(let authenticator):
            let tagAt = Self.tagOffset(length)
            guard offset & 15 == 0, UInt64(tagAt + Self.tagSize) <= available else { return false }
            // The padding (0 or 8 bytes: lengths are multiples of 8) is not under the tag; zero,
            // so that every bit of the footprint is checked.
            if tagAt > length, node.loadUnaligned(fromByteOffset: length, as: UInt64.self) != 0 { return false }
            let kind = node.load(as: UInt8.self)
            return authenticator.tag(offset: offset, kind: kind, bytes: UnsafeRawBufferPointer(start: node, count: length))
                == NodeTag(loadingFrom: node + tagAt)
        }
    }
}
