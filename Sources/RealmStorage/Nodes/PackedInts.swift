// Packed integer arrays: the workhorse encoding for keys, refs, counts, integer, bool and link
// columns, and string offsets.
//
//   offset  size  field
//   0       1     width in bits: 0, 1, 2, 4, 8, 16, 32 or 64
//   1       3     reserved, 0
//   4       4     count
//   8       8     base (Int64)
//   16      ...   count × width bits, little-endian bit order, padded to 8 bytes
//
// Element i is `base &+ Int64(bitPattern: stored_i)`. The writer picks base = minimum and the
// narrowest width that holds (maximum - minimum) as an unsigned number, so a column of
// timestamps around 1.7e9 or of sequential keys packs into a few bits per value. Width 0 means
// every element equals `base`.

package struct PackedInts {
    package let data: UnsafeRawPointer
    package let width: Int
    package let count: Int
    package let base: Int64
    /// Bytes the whole block occupies, header included.
    package let byteSize: Int

    package static let headerSize = 16

    @inline(__always)
    package static func dataSize(count: Int, width: Int) -> Int {
        NodeLayout.aligned((count * width + 7) / 8)
    }

    @inline(__always)
    init(node: NodeView, offset: Int) throws(StorageError) {
        try node.check(offset, PackedInts.headerSize)
        let header = node.base + offset
        let width = Int(header.load(as: UInt8.self))
        let count = Int(header.loadUnaligned(fromByteOffset: 4, as: UInt32.self).littleEndian)
        guard width == 0 || width == 1 || width == 2 || width == 4 || width == 8 || width == 16 || width == 32 || width == 64 else {
            throw StorageError(.fileCorrupted, "node \(node.ref): packed integers with width \(width)")
        }
        let size = PackedInts.dataSize(count: count, width: width)
        try node.check(offset + PackedInts.headerSize, size)
        self.data = header + PackedInts.headerSize
        self.width = width
        self.count = count
        self.base = Int64(bitPattern: header.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian)
        self.byteSize = PackedInts.headerSize + size
    }

    /// Element `i`; the caller guarantees `i < count`.
    // Inlinable: query scans in the object layer read every element through it.
    @inlinable @inline(__always)
    package subscript(i: Int) -> Int64 {
        let raw: UInt64
        switch width {
        case 0: raw = 0
        case 8: raw = UInt64(data.load(fromByteOffset: i, as: UInt8.self))
        case 16: raw = UInt64(UInt16(littleEndian: data.loadUnaligned(fromByteOffset: i << 1, as: UInt16.self)))
        case 32: raw = UInt64(UInt32(littleEndian: data.loadUnaligned(fromByteOffset: i << 2, as: UInt32.self)))
        case 64: raw = UInt64(littleEndian: data.loadUnaligned(fromByteOffset: i << 3, as: UInt64.self))
        default:
            let bit = i &* width
            let byte = data.load(fromByteOffset: bit >> 3, as: UInt8.self)
            raw = UInt64((byte >> UInt8(bit & 7)) & UInt8((1 << width) - 1))
        }
        // Wrapping: the writer stored (value - base) modulo 2^64, so adding back wraps too.
        return base &+ Int64(bitPattern: raw)
    }

    /// Where `value` would sit if the elements rose evenly from the first to the last: for
    /// object keys, which are mostly consecutive, this is usually the exact position.
    @inline(__always)
    func interpolate(_ value: Int64) -> Int {
        let first = self[0], last = self[count &- 1]
        guard count > 2, value > first, value < last else { return value <= first ? 0 : count &- 1 }
        // Wrapping: differences of ordered Int64s fit in UInt64; the ratio is below 1.
        let span = Double(UInt64(bitPattern: last &- first))
        let offset = Double(UInt64(bitPattern: value &- first))
        return min(max(Int(offset / span * Double(count &- 1)), 0), count &- 1)
    }

    /// The first index whose element is >= `value`, assuming the elements ascend strictly.
    @inline(__always)
    package func lowerBound(_ value: Int64) -> Int {
        var low = 0, high = count
        if count > 8 {
            let guess = interpolate(value)
            let g = self[guess]
            if g == value { return guess }
            if g < value { low = guess &+ 1 } else { high = guess }
        }
        while low < high {
            let mid = (low &+ high) >> 1
            if self[mid] < value { low = mid &+ 1 } else { high = mid }
        }
        return low
    }

    /// The last index whose element is <= `value` (0 when none is), for ascending elements.
    @inline(__always)
    package func lastNotAbove(_ value: Int64) -> Int {
        var low = 0, high = count
        if count > 8 {
            let guess = interpolate(value)
            if self[guess] <= value {
                if guess &+ 1 == count || self[guess &+ 1] > value { return guess }
                low = guess &+ 1
            } else {
                high = guess
            }
        }
        while low < high {
            let mid = (low &+ high) >> 1
            if self[mid] <= value { low = mid &+ 1 } else { high = mid }
        }
        return max(low &- 1, 0)
    }

    package func toArray() -> [Int64] {
        var result = [Int64]()
        result.reserveCapacity(count)
        for i in 0..<count { result.append(self[i]) }
        return result
    }

    /// Appends the block for the integers `integer` makes of `elements`. They are gathered in
    /// an array first: the block walks its input twice (the range, then the bits), and over a
    /// lazy map of `Value`s or index entries every step copies the element (a retain and a
    /// release); leaves encoded that way cost about six times as much (callgrind, W1).
    @inline(__always)
    package static func write<T>(_ elements: [T], to writer: inout NodeWriter, _ integer: (T) -> Int64) {
        // With no elements the initializer below writes a count of 0 into the runtime's shared
        // empty array, a benign race that ThreadSanitizer reports (.ci/run's TSan pass).
        guard !elements.isEmpty else { return write([Int64](), to: &writer) }
        let integers = [Int64](unsafeUninitializedCapacity: elements.count) { out, count in
            elements.withUnsafeBufferPointer { input in
                for i in input.indices { out.initializeElement(at: i, to: integer(input[i])) }
            }
            count = elements.count
        }
        write(integers, to: &writer)
    }

    /// Appends the block for `values` to `writer`.
    package static func write<C: Collection>(_ values: C, to writer: inout NodeWriter) where C.Element == Int64 {
        var minimum = Int64.max, maximum = Int64.min
        for v in values {
            if v < minimum { minimum = v }
            if v > maximum { maximum = v }
        }
        if values.isEmpty { minimum = 0; maximum = 0 }
        // Wrapping: the difference of two Int64s always fits in UInt64.
        let range = UInt64(bitPattern: maximum &- minimum)
        let width: Int
        switch range {
        case 0: width = 0
        case 1: width = 1
        case 2...3: width = 2
        case 4...15: width = 4
        case 16...0xFF: width = 8
        case 0x100...0xFFFF: width = 16
        case 0x1_0000...0xFFFF_FFFF: width = 32
        default: width = 64
        }
        writer.u8(UInt8(width))
        writer.u8(0); writer.u8(0); writer.u8(0)
        writer.u32(UInt32(values.count))
        writer.i64(minimum)
        let size = dataSize(count: values.count, width: width)
        let start = writer.count
        writer.zeros(size)
        guard width > 0 else { return }
        writer.withBody(from: start) { out in
            // One loop per width, the width chosen once: a store that switched on it for each
            // element was most of the cost of encoding a leaf's keys.
            switch width {
            case 8: storeAll(values, minimum, into: out, as: UInt8.self)
            case 16: storeAll(values, minimum, into: out, as: UInt16.self)
            case 32: storeAll(values, minimum, into: out, as: UInt32.self)
            case 64: storeAll(values, minimum, into: out, as: UInt64.self)
            default:
                var i = 0
                for v in values {
                    // Wrapping: the difference from the minimum fits the width chosen above.
                    store(UInt64(bitPattern: v &- minimum), at: i, width: width, into: out)
                    i += 1
                }
            }
        }
    }

    /// Stores each of `values` less `minimum` as a little-endian `T`.
    @inline(__always)
    private static func storeAll<C: Collection, T: FixedWidthInteger & UnsignedInteger>(
        _ values: C, _ minimum: Int64, into out: UnsafeMutableRawPointer, as: T.Type
    ) where C.Element == Int64 {
        var at = out
        for v in values {
            // Wrapping: the difference from the minimum fits the width chosen by the caller.
            at.storeBytes(of: T(truncatingIfNeeded: UInt64(bitPattern: v &- minimum)).littleEndian, as: T.self)
            at += MemoryLayout<T>.size
        }
    }

    /// Stores element `i` of a block of `width`-bit elements whose data starts at `out` (the
    /// byte of a narrow element is ORed into: the data starts zeroed).
    @inline(__always)
    static func store(_ raw: UInt64, at i: Int, width: Int, into out: UnsafeMutableRawPointer) {
        switch width {
        case 8: out.storeBytes(of: UInt8(truncatingIfNeeded: raw), toByteOffset: i, as: UInt8.self)
        case 16: out.storeBytes(of: UInt16(truncatingIfNeeded: raw).littleEndian, toByteOffset: i << 1, as: UInt16.self)
        case 32: out.storeBytes(of: UInt32(truncatingIfNeeded: raw).littleEndian, toByteOffset: i << 2, as: UInt32.self)
        case 64: out.storeBytes(of: raw.littleEndian, toByteOffset: i << 3, as: UInt64.self)
        default:
            let bit = i * width
            let old = out.load(fromByteOffset: bit >> 3, as: UInt8.self)
            out.storeBytes(of: old | (UInt8(truncatingIfNeeded: raw) << UInt8(bit & 7)), toByteOffset: bit >> 3, as: UInt8.self)
        }
    }

    // MARK: Appending to a committed block

    /// Whether `write` of this block's elements followed by `more` would keep this block's base
    /// and width: then that block is this one's bytes with `more` added (`writeAppending`).
    /// `write` takes the minimum as the base and the narrowest width for the range, and
    /// appending can only widen the range, so the base and width stay exactly when every new
    /// element lies between the base and what the width reaches from it.
    package func holds<C: Collection>(_ more: C) -> Bool where C.Element == Int64 {
        guard count > 0 else { return false }
        let limit: UInt64 = width == 64 ? .max : (1 << UInt64(width)) &- 1
        for v in more {
            // Wrapping: a value below the base wraps to a distance beyond every narrow limit,
            // and is refused by the comparison for width 64.
            guard v >= base, UInt64(bitPattern: v &- base) <= limit else { return false }
        }
        return true
    }

    /// Writes this block with `more` appended, as `write` would write all of them; `holds(more)`
    /// must be true.
    package func writeAppending<C: Collection>(_ more: C, to writer: inout NodeWriter) where C.Element == Int64 {
        writeInserting(more, at: count, to: &writer)
    }

    /// Writes this block with `more` inserted before element `position`, as `write` would
    /// write all of them; `holds(more)` must be true.
    package func writeInserting<C: Collection>(_ more: C, at position: Int, to writer: inout NodeWriter) where C.Element == Int64 {
        precondition(position >= 0 && position <= count, "insertion outside the packed array")
        let total = count + more.count
        writer.u8(UInt8(width))
        writer.u8(0); writer.u8(0); writer.u8(0)
        writer.u32(UInt32(total))
        writer.i64(base)
        let start = writer.count
        writer.zeros(Self.dataSize(count: total, width: width))
        guard width > 0 else { return }
        let (width, base, count, data) = (self.width, self.base, self.count, self.data)
        writer.withBody(from: start) { out in
            if position == count {
                // Appending: the old elements' bytes whole. Bits past them in the last byte
                // are cleared (the writer leaves them zero, but the new elements are ORed in,
                // so a damaged node must not leak into them).
                let oldBits = count * width
                let oldBytes = (oldBits + 7) / 8
                out.copyMemory(from: data, byteCount: oldBytes)
                if oldBits & 7 != 0 {
                    let last = out.load(fromByteOffset: oldBytes - 1, as: UInt8.self)
                    out.storeBytes(of: last & UInt8((1 << (oldBits & 7)) - 1), toByteOffset: oldBytes - 1, as: UInt8.self)
                }
            } else if width & 7 == 0 {
                let size = width / 8
                out.copyMemory(from: data, byteCount: position * size)
                (out + (position + more.count) * size).copyMemory(from: data + position * size, byteCount: (count - position) * size)
            } else {
                for i in 0..<count {
                    // Wrapping: stored elements are distances from the base.
                    let raw = UInt64(bitPattern: self[i] &- base)
                    Self.store(raw, at: i < position ? i : i + more.count, width: width, into: out)
                }
            }
            var i = position
            for v in more {
                // Wrapping: `holds` checked that the distance fits the width.
                Self.store(UInt64(bitPattern: v &- base), at: i, width: width, into: out)
                i += 1
            }
        }
    }

    /// The bytes of the whole block (header and data), for copying it unchanged.
    package var blockBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: data - Self.headerSize, count: byteSize)
    }
}

extension NodeWriter {
    /// Gives mutable access to the bytes from `start` to the end (for bulk encoders).
    package mutating func withBody(from start: Int, _ body: (UnsafeMutableRawPointer) -> Void) {
        withUnsafeMutableBytesOfStorage { buffer in body(buffer.baseAddress! + start) }
    }
}
