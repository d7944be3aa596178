// Node sealing: what vouches for a node's bytes (issue 29; docs/EncryptionProposal.md §4, §5).
//
// Two ways, one per file:
//
//   checksum       (format 4, every plain file) the 32-bit `NodeChecksum` in the header (bytes
//                  12..<16), over the node's bytes and its offset. A node takes `length` bytes (a
//                  multiple of 8) at an 8-aligned offset. Nothing here changes its bytes.
//   authenticated  (format 5, encrypted files; until those exist, plain files too, as a store
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

    /// Seals the node of `length` bytes at `node`, which goes to `offset` in the file. For
    /// tags, the `footprint(length)` bytes from `node` must be writable: the padding is zeroed
    /// and the tag written after it.
    @inline(__always)
    package func seal(_ node: UnsafeMutableRawPointer, length: Int, offset: UInt64) {
        switch self {
        case .checksum:
            NodeChecksum.stamp(node, length: length, offset: offset)
        case .authenticated(let authenticator):
            node.storeBytes(of: UInt32(0), toByteOffset: NodeLayout.checksumOffset, as: UInt32.self)
            let tagAt = Self.tagOffset(length)
            (node + length).initializeMemory(as: UInt8.self, repeating: 0, count: tagAt - length)
            let kind = node.load(as: UInt8.self)
            authenticator.tag(offset: offset, kind: kind, bytes: UnsafeRawBufferPointer(start: node, count: length)).store(to: node + tagAt)
        }
    }

    /// Appends the node `bytes` to `buffer`, sealed for `offset`: `footprint(bytes.count)`
    /// bytes. Returns where in `buffer` it starts.
    @discardableResult
    package func append(_ bytes: [UInt8], to buffer: inout [UInt8], offset: UInt64) -> Int {
        let at = buffer.count
        buffer.append(contentsOf: bytes)
        let length = bytes.count
        let footprint = footprint(length)
        if footprint > length { buffer.append(contentsOf: repeatElement(0, count: footprint - length)) }
        buffer.withUnsafeMutableBytes { seal($0.baseAddress! + at, length: length, offset: offset) }
        return at
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
