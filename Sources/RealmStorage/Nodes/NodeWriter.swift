/// Builds one node's bytes in memory before the commit writes it.
///
/// `finish(kind:version:)` fills in the header (kind, length, version) and pads the body to the
/// node alignment. Fields are little-endian.
package struct NodeWriter {
    package private(set) var bytes: [UInt8]

    package init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(contentsOf: repeatElement(0, count: NodeLayout.headerSize))
    }

    package var count: Int { bytes.count }

    package mutating func withUnsafeMutableBytesOfStorage(_ body: (UnsafeMutableRawBufferPointer) -> Void) {
        bytes.withUnsafeMutableBytes(body)
    }

    @inline(__always) package mutating func u8(_ v: UInt8) { bytes.append(v) }

    @inline(__always) package mutating func u32(_ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) package mutating func u64(_ v: UInt64) {
        withUnsafeBytes(of: v.littleEndian) { bytes.append(contentsOf: $0) }
    }

    @inline(__always) package mutating func i64(_ v: Int64) { u64(UInt64(bitPattern: v)) }

    package mutating func raw<C: Collection>(_ data: C) where C.Element == UInt8 { bytes.append(contentsOf: data) }

    package mutating func raw(_ data: UnsafeRawBufferPointer) { bytes.append(contentsOf: data) }

    /// Appends `count` bytes that `body` fills (one growth for many small pieces).
    package mutating func reserve(_ count: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        let start = bytes.count
        bytes.append(contentsOf: repeatElement(0, count: count))
        bytes.withUnsafeMutableBytes { body($0.baseAddress! + start) }
    }

    /// A length-prefixed byte string (u32 length).
    package mutating func lengthPrefixed<C: Collection>(_ data: C) where C.Element == UInt8 {
        u32(UInt32(data.count))
        bytes.append(contentsOf: data)
    }

    package mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { lengthPrefixed($0) }
    }

    package mutating func padToAlignment() {
        while bytes.count & 7 != 0 { bytes.append(0) }
    }

    /// Overwrites a u32 written earlier (for offset tables filled in after the fact).
    package mutating func patchU32(at offset: Int, _ v: UInt32) {
        withUnsafeBytes(of: v.littleEndian) { src in
            for i in 0..<4 { bytes[offset + i] = src[i] }
        }
    }

    package mutating func finish(kind: NodeKind, version: VersionID, flags: UInt8 = 0) -> [UInt8] {
        padToAlignment()
        bytes[0] = kind.rawValue
        bytes[1] = flags
        patchU32(at: 4, UInt32(bytes.count))
        withUnsafeBytes(of: version.value.littleEndian) { src in
            for i in 0..<8 { bytes[8 + i] = src[i] }
        }
        return bytes
    }
}
