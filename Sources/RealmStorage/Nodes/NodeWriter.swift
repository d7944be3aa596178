/// Builds one node's bytes in memory before the commit writes it.
///
/// `finish(kind:version:)` pads the body to the node alignment and fills in the header (kind,
/// length, version; the checksum, which covers the node's place in the file, is stamped when
/// the commit has placed it: CommitWriter.finish). Fields are little-endian.
///
/// The bytes live in a zero-filled array at least `count` long, grown by doubling (within the
/// capacity reserved up front: estimates can be generous, and zeroing all of one cost more than
/// the encoding), and every field is stored in place: appending each field to an array
/// (`append(contentsOf:)` of its bytes) cost about 100 instructions per field, a tenth of a
/// one-object commit (callgrind, W2; the free list alone writes four fields per free extent).
/// Everything past `count` is zero, so padding and bulk areas cost no writes.
package struct NodeWriter {
    private var storage: [UInt8]
    package private(set) var count: Int

    package init(capacity: Int = 256) {
        let initial = min(max(capacity, 64), 256)
        storage = []
        storage.reserveCapacity(max(capacity, initial))
        storage.append(contentsOf: NodeWriter.zeroPage[0..<initial])
        count = NodeLayout.headerSize
    }

    /// The bytes written so far.
    package var bytes: [UInt8] { Array(storage[0..<count]) }

    /// Makes room for `extra` more bytes past `count`.
    @inline(__always)
    private mutating func ensure(_ extra: Int) {
        if count + extra > storage.count { grow(to: count + extra) }
    }

    @inline(never)
    private mutating func grow(to needed: Int) {
        // Appended from a page of zeros: a contiguous source is copied with memcpy, where
        // `repeatElement` went byte by byte.
        var missing = max(needed, storage.count * 2) - storage.count
        while missing > 0 {
            let n = min(missing, NodeWriter.zeroPage.count)
            storage.append(contentsOf: NodeWriter.zeroPage[0..<n])
            missing -= n
        }
    }

    private static let zeroPage = [UInt8](repeating: 0, count: 16 << 10)

    @inline(__always)
    private mutating func store<T: FixedWidthInteger>(_ v: T) {
        let size = MemoryLayout<T>.size
        ensure(size)
        let at = count
        storage.withUnsafeMutableBytes { $0.storeBytes(of: v.littleEndian, toByteOffset: at, as: T.self) }
        count = at + size
    }

    package mutating func withUnsafeMutableBytesOfStorage(_ body: (UnsafeMutableRawBufferPointer) -> Void) {
        let written = count
        storage.withUnsafeMutableBytes { body(UnsafeMutableRawBufferPointer(rebasing: $0[0..<written])) }
    }

    @inline(__always) package mutating func u8(_ v: UInt8) { store(v) }

    @inline(__always) package mutating func u32(_ v: UInt32) { store(v) }

    @inline(__always) package mutating func u64(_ v: UInt64) { store(v) }

    @inline(__always) package mutating func i64(_ v: Int64) { store(UInt64(bitPattern: v)) }

    package mutating func raw<C: Collection>(_ data: C) where C.Element == UInt8 {
        let n = data.count
        ensure(n)
        let at = count
        storage.withUnsafeMutableBufferPointer { out in
            _ = UnsafeMutableBufferPointer(rebasing: out[at..<(at + n)]).initialize(from: data)
        }
        count = at + n
    }

    package mutating func raw(_ data: UnsafeRawBufferPointer) {
        let n = data.count
        guard n > 0 else { return }
        ensure(n)
        let at = count
        storage.withUnsafeMutableBytes { $0.baseAddress!.advanced(by: at).copyMemory(from: data.baseAddress!, byteCount: n) }
        count = at + n
    }

    /// Appends `count` zero bytes (the storage past `count` is zero already).
    package mutating func zeros(_ n: Int) {
        ensure(n)
        count += n
    }

    /// Appends `count` bytes that `body` fills (one growth for many small pieces); they are
    /// zero when `body` starts.
    package mutating func reserve(_ n: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        ensure(n)
        let start = count
        count += n
        storage.withUnsafeMutableBytes { body($0.baseAddress! + start) }
    }

    /// A length-prefixed byte string (u32 length).
    package mutating func lengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
        u32(UInt32(data.count))
        raw(data)
    }

    package mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { lengthPrefixed($0) }
    }

    package mutating func padToAlignment() {
        let padded = (count + 7) & ~7
        ensure(padded - count)
        count = padded
    }

    /// Overwrites a u32 written earlier (for offset tables filled in after the fact).
    package mutating func patchU32(at offset: Int, _ v: UInt32) {
        precondition(offset >= 0 && offset + 4 <= count, "patch outside the node")
        storage.withUnsafeMutableBytes { $0.storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self) }
    }

    package mutating func finish(kind: NodeKind, version: VersionID, flags: UInt8 = 0) -> [UInt8] {
        padToAlignment()
        let length = count
        storage.withUnsafeMutableBytes { out in
            NodeLayout.storeHeader(out.baseAddress!, kind: kind, flags: flags, length: length, version: version.value)
        }
        storage.removeLast(storage.count - length)
        return storage
    }
}
