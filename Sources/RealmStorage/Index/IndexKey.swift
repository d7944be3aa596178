// Search index keys: values encoded so that comparing the bytes compares the values.
//
//   value      encoding
//   null       00
//   bool       10, 00 | 01
//   int        20, 8 bytes big-endian with the sign bit flipped
//   float      30, the double encoding (floats widen exactly)
//   double     30, 8 bytes big-endian: sign bit flipped for positives, all bits for negatives
//              (-0 is written as +0 and every NaN as one NaN, so equal values match)
//   timestamp  40, seconds as int, nanoseconds as 4 bytes big-endian
//   string     50, UTF-8 with 00 written as 00 FF, then 00 00 (so "a" < "a\0" < "ab")
//   binary     60, as string
//   link       70, as int
//   decimal    80, high word then low word big-endian: the raw bits, so equal bit patterns
//              group together but 1.0 and 1 do not (the object layer indexes no decimal
//              column; mixed indexes answer equality of decimals by scanning their candidates)
//   objectId   90, the 12 bytes
//   uuid       A0, the 16 bytes
//   typed link B0, table key 4 bytes big-endian, then the object key as int
//
// An index entry stores at most `IndexEntry.prefixLimit` bytes of the encoding followed by
// the object key. Entries whose value was cut are still in value order up to the cut, so
// lookups and range scans read the real value for candidates whose prefix equals a bound's.

package struct IndexEntry: Comparable, Sendable {
    // The prefix lives inline when it fits 24 bytes (an integer's 9, a date's 13, a UUID's
    // 17, short strings), on the heap otherwise: decoding a leaf of such entries, which every
    // insert into a committed leaf does, allocates nothing per entry.
    private var w0: UInt64 = 0, w1: UInt64 = 0, w2: UInt64 = 0
    private var inlineCount: UInt8 = 0
    private var heap: [UInt8]?
    package var key: Int64

    package static let prefixLimit = 64
    static let inlineCapacity = 24

    package init(prefix: [UInt8], key: Int64) {
        self.key = key
        if prefix.count <= Self.inlineCapacity {
            prefix.withUnsafeBytes { storeInline($0, UnsafeRawBufferPointer(start: nil, count: 0)) }
        } else {
            heap = prefix
        }
    }

    /// The entry of `value` (its encoding, cut to `prefixLimit` bytes) for object `key`.
    /// Integers and links, the usual indexed values, skip the byte array.
    package init(value: Value, key: Int64) {
        switch value {
        case .int(let i): self.init(tag: 0x20, orderedBits: IndexKey.orderedBits(i), key: key)
        case .link(let k): self.init(tag: 0x70, orderedBits: IndexKey.orderedBits(k.value), key: key)
        default: self.init(prefix: IndexKey.prefix(value).bytes, key: key)
        }
    }

    /// The 9-byte encoding `tag` then `bits` big-endian (see IndexKey.encode).
    private init(tag: UInt8, orderedBits bits: UInt64, key: Int64) {
        self.key = key
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &words) { out in
            out[0] = tag
            out.storeBytes(of: bits.bigEndian, toByteOffset: 1, as: UInt64.self)
        }
        (w0, w1, w2) = words
        inlineCount = 9
    }

    /// An entry whose prefix is `shared` followed by `suffix` (a stored entry's two parts).
    init(shared: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer, key: Int64) {
        self.key = key
        if shared.count + suffix.count <= Self.inlineCapacity {
            storeInline(shared, suffix)
        } else {
            var bytes = [UInt8]()
            bytes.reserveCapacity(shared.count + suffix.count)
            bytes.append(contentsOf: shared)
            bytes.append(contentsOf: suffix)
            heap = bytes
        }
    }

    /// Keeps `first` then `second` (together at most `inlineCapacity` bytes) inline.
    private mutating func storeInline(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) {
        var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &words) { out in
            if first.count > 0 { out.baseAddress!.copyMemory(from: first.baseAddress!, byteCount: first.count) }
            if second.count > 0 { (out.baseAddress! + first.count).copyMemory(from: second.baseAddress!, byteCount: second.count) }
        }
        (w0, w1, w2) = words
        inlineCount = UInt8(first.count + second.count)
    }

    /// Calls `body` with the prefix's bytes (do not let the pointer escape).
    @inline(__always)
    package func withPrefixBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        if let heap { return heap.withUnsafeBytes(body) }
        return withUnsafeBytes(of: (w0, w1, w2)) { raw in body(UnsafeRawBufferPointer(rebasing: raw[..<Int(inlineCount)])) }
    }

    /// The prefix's bytes, in a new array (for the rare paths; the hot ones use
    /// `withPrefixBytes`).
    package var prefix: [UInt8] {
        if let heap { return heap }
        return withUnsafeBytes(of: (w0, w1, w2)) { Array($0[..<Int(inlineCount)]) }
    }

    package var prefixCount: Int { heap?.count ?? Int(inlineCount) }

    /// How many leading bytes this entry's prefix shares with `other`'s, at most `limit`.
    func sharedPrefixLength(with other: IndexEntry, limit: Int) -> Int {
        if heap == nil, other.heap == nil {
            // Inline words hold the bytes in memory order: the first differing byte is the
            // lowest set byte of the little-endian XOR. Zero padding may match, hence the cap.
            let cap = min(limit, Int(inlineCount), Int(other.inlineCount))
            let x0 = UInt64(littleEndian: w0) ^ UInt64(littleEndian: other.w0)
            if x0 != 0 { return min(cap, x0.trailingZeroBitCount / 8) }
            let x1 = UInt64(littleEndian: w1) ^ UInt64(littleEndian: other.w1)
            if x1 != 0 { return min(cap, 8 + x1.trailingZeroBitCount / 8) }
            let x2 = UInt64(littleEndian: w2) ^ UInt64(littleEndian: other.w2)
            return min(cap, x2 != 0 ? 16 + x2.trailingZeroBitCount / 8 : 24)
        }
        return withPrefixBytes { a in
            other.withPrefixBytes { b in
                var n = 0
                let end = min(limit, a.count, b.count)
                while n < end && a[n] == b[n] { n += 1 }
                return n
            }
        }
    }

    /// For an inline prefix: its words as big-endian numbers and its length, which order
    /// like the bytes (see `comparePrefix`); nil for a prefix on the heap.
    var inlineOrderWords: (UInt64, UInt64, UInt64, UInt8)? {
        heap == nil ? (UInt64(bigEndian: w0), UInt64(bigEndian: w1), UInt64(bigEndian: w2), inlineCount) : nil
    }

    /// -1, 0 or 1 as this entry's prefix compares with `other`.
    @inline(__always)
    package func comparePrefix(_ other: UnsafeRawBufferPointer) -> Int {
        withPrefixBytes { compareBytes($0, other) }
    }

    @inline(__always)
    package func comparePrefix(_ other: IndexEntry) -> Int {
        if heap == nil, other.heap == nil {
            // Both inline: the words are zero-padded, so comparing them as big-endian numbers
            // compares the bytes, and on a tie the shorter prefix comes first.
            if w0 != other.w0 { return UInt64(bigEndian: w0) < UInt64(bigEndian: other.w0) ? -1 : 1 }
            if w1 != other.w1 { return UInt64(bigEndian: w1) < UInt64(bigEndian: other.w1) ? -1 : 1 }
            if w2 != other.w2 { return UInt64(bigEndian: w2) < UInt64(bigEndian: other.w2) ? -1 : 1 }
            return inlineCount == other.inlineCount ? 0 : (inlineCount < other.inlineCount ? -1 : 1)
        }
        return other.withPrefixBytes { comparePrefix($0) }
    }

    @inline(__always)
    package static func < (a: IndexEntry, b: IndexEntry) -> Bool {
        let c = a.comparePrefix(b)
        return c != 0 ? c < 0 : a.key < b.key
    }

    @inline(__always)
    package static func == (a: IndexEntry, b: IndexEntry) -> Bool { a.key == b.key && a.comparePrefix(b) == 0 }
}

@inline(__always)
package func compareBytes(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int {
    let n = min(a.count, b.count)
    if n > 0 {
        let c = memcmpBytes(a.baseAddress!, b.baseAddress!, n)
        if c != 0 { return c }
    }
    return a.count == b.count ? 0 : (a.count < b.count ? -1 : 1)
}

@inline(__always)
package func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { pa in b.withUnsafeBytes { pb in compareBytes(pa, pb) } }
}

@inline(__always)
private func memcmpBytes(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, _ n: Int) -> Int {
    var i = 0
    while i + 8 <= n {
        let x = UInt64(bigEndian: a.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        let y = UInt64(bigEndian: b.loadUnaligned(fromByteOffset: i, as: UInt64.self))
        if x != y { return x < y ? -1 : 1 }
        i += 8
    }
    while i < n {
        let x = a.load(fromByteOffset: i, as: UInt8.self), y = b.load(fromByteOffset: i, as: UInt8.self)
        if x != y { return x < y ? -1 : 1 }
        i += 1
    }
    return 0
}

package enum IndexKey {
    /// The full order-preserving encoding of `value`.
    package static func encode(_ value: Value) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(16)
        switch value {
        case .null: out.append(0x00)
        case .bool(let b): out.append(0x10); out.append(b ? 1 : 0)
        case .int(let i): out.append(0x20); appendInt(i, &out)
        case .float(let f): out.append(0x30); appendDouble(Double(f), &out)
        case .double(let d): out.append(0x30); appendDouble(d, &out)
        case .timestamp(let t):
            out.append(0x40)
            appendInt(t.seconds, &out)
            appendBigEndian(UInt32(bitPattern: t.nanoseconds), &out)
        case .string(var s): out.append(0x50); s.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), &out) }
        case .binary(let b): out.append(0x60); b.withUnsafeBytes { appendEscaped($0, &out) }
        case .link(let k): out.append(0x70); appendInt(k.value, &out)
        case .decimal(let d): out.append(0x80); appendBigEndian(d.b, &out); appendBigEndian(d.a, &out)
        case .objectId(let o): out.append(0x90); out.append(contentsOf: o.bytes(12))
        case .uuid(let u): out.append(0xA0); out.append(contentsOf: u.bytes(16))
        case .typedLink(let t, let k): out.append(0xB0); appendBigEndian(t.value, &out); appendInt(k.value, &out)
        }
        return out
    }

    /// The stored prefix of `value` and whether it was cut.
    package static func prefix(_ value: Value) -> (bytes: [UInt8], truncated: Bool) {
        let full = encode(value)
        if full.count <= IndexEntry.prefixLimit { return (full, false) }
        return (Array(full[..<IndexEntry.prefixLimit]), true)
    }

    /// An integer as an unsigned number in the same order (the sign bit flipped); written
    /// big-endian, its bytes order like the integers.
    @inline(__always)
    static func orderedBits(_ i: Int64) -> UInt64 { UInt64(bitPattern: i) ^ (1 << 63) }

    private static func appendInt(_ i: Int64, _ out: inout [UInt8]) {
        appendBigEndian(orderedBits(i), &out)
    }

    private static func appendDouble(_ d: Double, _ out: inout [UInt8]) {
        let canonical = d.isNaN ? Double.nan : (d == 0 ? 0.0 : d)
        let bits = canonical.bitPattern
        appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits ^ (1 << 63), &out)
    }

    private static func appendBigEndian<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    private static func appendEscaped(_ bytes: UnsafeRawBufferPointer, _ out: inout [UInt8]) {
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        out.append(0); out.append(0)
    }
}

extension Value {
    /// Orders two values of the same column the way the index does (strings by UTF-8 bytes,
    /// null first). Used to check candidates whose index prefix was cut.
    package static func compare(_ a: Value, _ b: Value) -> Int {
        compareBytes(IndexKey.encode(a), IndexKey.encode(b))
    }
}
