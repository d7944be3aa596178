/// A checked, read-only view of one node inside a mapping.
///
/// Construction validates the header against the bytes the version may reach (`limit`), so a
/// damaged ref or length produces `fileCorrupted` instead of a wild read. All accessors take
/// offsets relative to the node start and check them against the node's length.
package struct NodeView {
    package let ref: Ref
    package let base: UnsafeRawPointer
    package let length: Int

    /// - Parameter check: how the node's checksum is verified (NodeCheck: VerifiedNodes.swift);
    ///   by default every time.
    @inline(__always)
    package init(ref: Ref, mapping: UnsafeRawPointer, limit: UInt64, expecting kind: NodeKind, check: NodeCheck = .always) throws(StorageError) {
        let offset = ref.offset
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, offset <= limit &- UInt64(NodeLayout.headerSize),
              limit >= UInt64(NodeLayout.headerSize) else {
            throw StorageError(.fileCorrupted, "node \(ref) lies outside the file (size \(limit))")
        }
        let node = mapping + Int(offset)
        let length = Int(node.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian)
        guard length >= NodeLayout.headerSize, length & 7 == 0, UInt64(length) <= limit - offset else {
            throw StorageError(.fileCorrupted, "node \(ref) has an impossible length \(length)")
        }
        guard node.load(as: UInt8.self) == kind.rawValue else {
            throw StorageError(.fileCorrupted, "node \(ref) is not a \(kind) node (kind byte \(node.load(as: UInt8.self)))")
        }
        try check.verify(node, offset: offset, length: length, kind: kind, limit: limit)
        // The seal the parent holds, at every open (NodeSealing.swift, S5): verify put the tag
        // inside `limit`.
        if check.comparesSeals, NodeSealing.storedSeal(node, length: length) != ref.seal {
            try check.sealMismatch(ref, kind: kind, length: length)
        }
        self.ref = ref
        self.base = node
        self.length = length
    }

    package var flags: UInt8 { base.load(fromByteOffset: 1, as: UInt8.self) }
    package var version: UInt64 { NodeLayout.version(of: base) }

    @inline(__always)
    package func check(_ offset: Int, _ size: Int) throws(StorageError) {
        guard offset >= 0, size >= 0, offset <= length, size <= length - offset else {
            throw StorageError(.fileCorrupted, "node \(ref): field at \(offset)+\(size) exceeds its length \(length)")
        }
    }

    @inline(__always)
    package func u32(_ offset: Int) throws(StorageError) -> UInt32 {
        try check(offset, 4)
        return base.loadUnaligned(fromByteOffset: offset, as: UInt32.self).littleEndian
    }

    @inline(__always)
    package func u64(_ offset: Int) throws(StorageError) -> UInt64 {
        try check(offset, 8)
        return base.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
    }

    /// A bounded reader over the node body, for the self-describing nodes (top, change sets).
    package func reader(from offset: Int = NodeLayout.headerSize) -> ByteReader {
        ByteReader(base: base, length: length, position: offset, context: "node \(ref)")
    }

    /// A packed integer block starting at `offset`.
    @inline(__always)
    package func packedInts(at offset: Int) throws(StorageError) -> PackedInts {
        try PackedInts(node: self, offset: offset)
    }
}

/// Sequential bounded reads over a byte range; every read checks what is left.
package struct ByteReader {
    let base: UnsafeRawPointer
    let length: Int
    package var position: Int
    let context: String

    package init(base: UnsafeRawPointer, length: Int, position: Int, context: String) {
        self.base = base
        self.length = length
        self.position = position
        self.context = context
    }

    private func need(_ n: Int) throws(StorageError) {
        guard n >= 0, position <= length, n <= length - position else {
            throw StorageError(.fileCorrupted, "\(context): record truncated at byte \(position)")
        }
    }

    package mutating func u8() throws(StorageError) -> UInt8 {
        try need(1)
        defer { position += 1 }
        return base.load(fromByteOffset: position, as: UInt8.self)
    }

    package mutating func u32() throws(StorageError) -> UInt32 {
        try need(4)
        defer { position += 4 }
        return base.loadUnaligned(fromByteOffset: position, as: UInt32.self).littleEndian
    }

    package mutating func u64() throws(StorageError) -> UInt64 {
        try need(8)
        defer { position += 8 }
        return base.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian
    }

    package mutating func i64() throws(StorageError) -> Int64 { Int64(bitPattern: try u64()) }

    /// A count that must be satisfiable by the bytes left, each element taking `minSize`.
    package mutating func count(elementSize minSize: Int) throws(StorageError) -> Int {
        let n = Int(try u32())
        guard n <= (length - position) / max(minSize, 1) else {
            throw StorageError(.fileCorrupted, "\(context): count \(n) exceeds the record")
        }
        return n
    }

    package mutating func bytes() throws(StorageError) -> [UInt8] {
        let n = Int(try u32())
        try need(n)
        defer { position += n }
        return Array(UnsafeRawBufferPointer(start: base + position, count: n))
    }

    package mutating func string() throws(StorageError) -> String {
        let n = Int(try u32())
        try need(n)
        defer { position += n }
        return String(decoding: UnsafeRawBufferPointer(start: base + position, count: n), as: UTF8.self)
    }
}
