import CStorageSupport

// Column blocks: one column of a cluster leaf, or the elements of a list node.
//
//   offset  size  field
//   0       1     column type (ColumnType), or 0x80 for a block of list refs, 0x81 for one
//                 whose refs carry seals (format 6, encrypted files)
//   1       1     layout (string and binary columns; 0 otherwise)
//   2       2     reserved, 0
//   4       4     count
//   8       ...   null flags: PackedInts, 1 = null (width 0 when no value is null)
//   ...           payload, by type:
//                   int, bool, link   PackedInts of the values (0 where null)
//                   float             count × 4 bytes IEEE-754, padded to 8
//                   double            count × 8 bytes IEEE-754
//                   timestamp         PackedInts seconds, PackedInts nanoseconds
//                   decimal, uuid     count × 16 bytes; objectId: count × 12 bytes; padded to 8
//                   mixed             as binary, each value tagged (MixedCodec)
//                   string, binary    layout 0: PackedInts end offsets, then the bytes,
//                                     padded to 8
//                                     layout 1 (short values): u32 slot width W (4…64, a
//                                     multiple of 4), u32 0, then count × W bytes padded to 8;
//                                     slot i = length byte, then the value's bytes
//                   list refs         PackedInts of list node refs (0 = empty list), no nulls;
//                                     tag 0x81: then count × u64, each list node's seal
//                                     (NodeSealing.swift, S5; 0 for an empty list)
//
// Every block is 8-byte aligned and self-describing, so a reader checks the type it expects
// and every offset against the node before reading a value.
//
// Why two string layouts: with end offsets, a lookup must load the offsets before it knows
// where the bytes are, two cache misses in a row; a slot's place follows from the header, so
// short strings (names, codes, e-mail addresses) cost one. Columns of long or very uneven
// values keep the compact offsets layout.

package enum ColumnCodec {
    static let listRefsTag: UInt8 = 0x80
    /// A block of list refs followed by their seals.
    static let sealedListRefsTag: UInt8 = 0x81

    static let offsetsLayout: UInt8 = 0
    static let slotsLayout: UInt8 = 1
    static let maxSlotWidth = 64

    /// The slot width for short values, or nil when the offsets layout is better: a value
    /// longer than 63 bytes, or slots would take more than twice the room.
    static func slotWidth(_ values: [Value]) -> Int? {
        var longest = 0, total = 0
        for v in values {
            let n = v.payloadSize
            longest = max(longest, n)
            total += n
        }
        return slotWidth(count: values.count, longest: longest, total: total)
    }

    /// The same choice from the values' count, longest payload and total payload bytes.
    static func slotWidth(count: Int, longest: Int, total: Int) -> Int? {
        guard count > 0, longest < maxSlotWidth else { return nil }
        let width = (longest + 1 + 3) & ~3
        return count * width <= 2 * (total + 2 * count) + 64 ? width : nil
    }

    package static func write(_ values: [Value], type: ColumnType, to w: inout NodeWriter) {
        if type == .mixed {
            let tagged = values.map { $0.isNull ? Value.null : Value.binary(MixedCodec.encode($0)) }
            return writeBytes(tagged, type: .mixed, to: &w)
        }
        writeBytes(values, type: type, to: &w)
    }

    private static func writeBytes(_ values: [Value], type: ColumnType, to w: inout NodeWriter) {
        let slots = type.holdsBytes ? slotWidth(values) : nil
        w.u8(type.rawValue); w.u8(slots == nil ? offsetsLayout : slotsLayout); w.u8(0); w.u8(0)
        w.u32(UInt32(values.count))
        let anyNull = values.contains { $0.isNull }
        if anyNull {
            PackedInts.write(values, to: &w) { $0.isNull ? 1 : 0 }
        } else {
            PackedInts.writeConstant(0, count: values.count, to: &w)
        }
        switch type {
        case .int, .bool, .link:
            PackedInts.write(values, to: &w, integerPayload)
        case .float:
            writeFloats(values[...], to: &w)
            w.padToAlignment()
        case .double:
            writeDoubles(values[...], to: &w)
        case .timestamp:
            PackedInts.write(values, to: &w) { if case .timestamp(let t) = $0 { return t.seconds } else { return 0 } }
            PackedInts.write(values, to: &w) { if case .timestamp(let t) = $0 { return Int64(t.nanoseconds) } else { return 0 } }
        case .decimal, .objectId, .uuid:
            writeFixed(values[...], type, to: &w)
            w.padToAlignment()
        case .string, .binary, .mixed:
            if let width = slots {
                w.u32(UInt32(width))
                w.u32(0)
                writeSlots(values[...], width: width, to: &w)
                w.padToAlignment()
                return
            }
            var ends = [Int64]()
            ends.reserveCapacity(values.count)
            var end: Int64 = 0
            for v in values {
                end += Int64(v.payloadSize)
                ends.append(end)
            }
            PackedInts.write(ends, to: &w)
            writeConcatenated(values[...], total: Int(end), to: &w)
            w.padToAlignment()
        }
    }

    // The elements of the blocks' arrays, unpadded; shared with inserting into a committed
    // block (ColumnCodec+Insert.swift).

    static func writeFloats(_ values: ArraySlice<Value>, to w: inout NodeWriter) {
        for v in values {
            if case .float(let f) = v { w.u32(f.bitPattern) } else { w.u32(0) }
        }
    }

    static func writeDoubles(_ values: ArraySlice<Value>, to w: inout NodeWriter) {
        for v in values {
            if case .double(let d) = v { w.u64(d.bitPattern) } else { w.u64(0) }
        }
    }

    static func writeFixed(_ values: ArraySlice<Value>, _ type: ColumnType, to w: inout NodeWriter) {
        let width = type.fixedWidth
        for v in values {
            switch v {
            case .decimal(let x), .uuid(let x): w.u64(x.a); w.u64(x.b)
            case .objectId(let x): w.u64(x.a); w.u32(UInt32(truncatingIfNeeded: x.b))
            default: w.zeros(width)
            }
        }
    }

    /// One growth of the node, then each slot filled in place: its length, its bytes, zeros
    /// to the slot width.
    static func writeSlots(_ values: ArraySlice<Value>, width: Int, to w: inout NodeWriter) {
        w.reserve(values.count * width) { out in
            for (i, v) in values.enumerated() {
                withPayload(v) { bytes in
                    let slot = out + i * width
                    slot.storeBytes(of: UInt8(bytes.count), as: UInt8.self)
                    if bytes.count > 0 { (slot + 1).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                }
            }
        }
    }

    /// The values' bytes one after another (`total` of them).
    static func writeConcatenated(_ values: ArraySlice<Value>, total: Int, to w: inout NodeWriter) {
        w.reserve(total) { out in
            var at = out
            for v in values {
                withPayload(v) { bytes in
                    if bytes.count > 0 { at.copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
                    at += bytes.count
                }
            }
        }
    }

    /// Calls `body` with the bytes a string or binary value stores (none for others).
    @inline(__always)
    static func withPayload(_ value: Value, _ body: (UnsafeRawBufferPointer) -> Void) {
        switch value {
        case .string(let s):
            if s.utf8.withContiguousStorageIfAvailable({ body(UnsafeRawBufferPointer($0)) }) == nil {
                Array(s.utf8).withUnsafeBytes(body)
            }
        case .binary(let b): b.withUnsafeBytes(body)
        default: body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
    }

    /// `sealed`: the file stores seals (tag 0x81).
    package static func writeListRefs(_ refs: [Ref], sealed: Bool, to w: inout NodeWriter) {
        w.u8(sealed ? sealedListRefsTag : listRefsTag); w.u8(0); w.u8(0); w.u8(0)
        w.u32(UInt32(refs.count))
        PackedInts.write(refs.lazy.map { Int64(bitPattern: $0.offset) }, to: &w)
        if sealed { for ref in refs { w.u64(ref.seal) } }
    }

    /// A decimal, object id or UUID read from its fixed-width slot (checked by the caller).
    @inline(__always)
    static func fixedValue(_ type: ColumnType, at p: UnsafeRawPointer) -> Value {
        let a = UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))
        switch type {
        case .objectId: return .objectId(Bytes16(a: a, b: UInt64(UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt32.self)))))
        case .uuid: return .uuid(Bytes16(a: a, b: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))))
        default: return .decimal(Bytes16(a: a, b: UInt64(littleEndian: p.loadUnaligned(fromByteOffset: 8, as: UInt64.self))))
        }
    }

    /// The value of a string, binary or mixed element from its bytes.
    @inline(__always)
    static func bytesValue(_ type: ColumnType, _ bytes: UnsafeRawBufferPointer) throws(StorageError) -> Value {
        switch type {
        case .string: return .string(String(decoding: bytes, as: UTF8.self))
        case .mixed: return try MixedCodec.decode(bytes)
        default: return .binary(Array(bytes))
        }
    }

    @inline(__always)
    static func integerPayload(_ v: Value) -> Int64 {
        switch v {
        case .int(let i): return i
        case .bool(let b): return b ? 1 : 0
        case .link(let k): return k.value
        default: return 0
        }
    }
}

extension PackedInts {
    /// Writes a width-0 block: `count` elements all equal to `value`.
    static func writeConstant(_ value: Int64, count: Int, to w: inout NodeWriter) {
        w.u8(0); w.u8(0); w.u8(0); w.u8(0)
        w.u32(UInt32(count))
        w.i64(value)
    }
}

/// A checked reader over one column block of a committed node.
package struct ColumnView {
    package let type: ColumnType
    package let count: Int
    // @usableFromInline: the scans of the query engine inline the element reads.
    @usableFromInline let nulls: PackedInts
    @usableFromInline let ints: PackedInts
    let ints2: PackedInts?
    @usableFromInline let raw: UnsafeRawPointer
    let rawLength: Int
    /// Slot width of a string or binary block in the slots layout; 0 for the offsets layout.
    let slotWidth: Int
    let ref: Ref
    /// Where the block starts, and how many bytes it occupies.
    let start: UnsafeRawPointer
    package let byteSize: Int

    package init(node: NodeView, offset: Int, expecting expected: ColumnType) throws(StorageError) {
        try node.check(offset, 8)
        let tag = node.base.load(fromByteOffset: offset, as: UInt8.self)
        guard let type = ColumnType(rawValue: tag), type == expected else {
            throw StorageError(.fileCorrupted, "node \(node.ref): column of type \(tag) where \(expected) was expected")
        }
        let count = Int(try node.u32(offset + 4))
        let nulls = try node.packedInts(at: offset + 8)
        guard nulls.count == count, nulls.width <= 1 else {
            throw StorageError(.fileCorrupted, "node \(node.ref): null flags do not match the column")
        }
        var position = offset + 8 + nulls.byteSize
        var ints2: PackedInts? = nil
        var raw = node.base
        var rawLength = 0
        var slotWidth = 0
        let ints: PackedInts
        switch type {
        case .int, .bool, .link:
            ints = try node.packedInts(at: position)
            position += ints.byteSize
        case .float, .double:
            ints = nulls
            let size = NodeLayout.aligned(count * (type == .float ? 4 : 8))
            try node.check(position, size)
            raw = node.base + position
            rawLength = size
            position += size
        case .timestamp:
            ints = try node.packedInts(at: position)
            position += ints.byteSize
            let nanos = try node.packedInts(at: position)
            position += nanos.byteSize
            ints2 = nanos
        case .decimal, .objectId, .uuid:
            ints = nulls
            let size = NodeLayout.aligned(count * type.fixedWidth)
            try node.check(position, size)
            raw = node.base + position
            rawLength = size
            position += size
        case .string where node.base.load(fromByteOffset: offset + 1, as: UInt8.self) == ColumnCodec.slotsLayout,
             .binary where node.base.load(fromByteOffset: offset + 1, as: UInt8.self) == ColumnCodec.slotsLayout,
             .mixed where node.base.load(fromByteOffset: offset + 1, as: UInt8.self) == ColumnCodec.slotsLayout:
            let width = Int(try node.u32(position))
            guard width >= 4, width <= ColumnCodec.maxSlotWidth, width & 3 == 0 else {
                throw StorageError(.fileCorrupted, "node \(node.ref): string slots \(width) bytes wide")
            }
            let size = NodeLayout.aligned(count * width)
            try node.check(position + 8, size)
            ints = nulls
            raw = node.base + position + 8
            rawLength = count * width
            slotWidth = width
            position += 8 + size
        case .string, .binary, .mixed:
            ints = try node.packedInts(at: position)
            position += ints.byteSize
            guard ints.count == count else {
                throw StorageError(.fileCorrupted, "node \(node.ref): column arrays disagree on the count")
            }
            let total = ints.count > 0 ? ints[ints.count - 1] : 0
            guard total >= 0, total <= Int64(node.length - position) else {
                throw StorageError(.fileCorrupted, "node \(node.ref): string data exceeds the node")
            }
            raw = node.base + position
            rawLength = Int(total)
            position += NodeLayout.aligned(Int(total))
            try node.check(position, 0)
        }
        guard ints.count == count, ints2.map({ $0.count == count }) ?? true else {
            throw StorageError(.fileCorrupted, "node \(node.ref): column arrays disagree on the count")
        }
        self.type = type
        self.count = count
        self.nulls = nulls
        self.ints = ints
        self.ints2 = ints2
        self.raw = raw
        self.rawLength = rawLength
        self.slotWidth = slotWidth
        self.ref = node.ref
        self.start = node.base + offset
        self.byteSize = position - offset
    }

    @inlinable @inline(__always)
    package func isNull(_ i: Int) -> Bool { nulls[i] != 0 }

    /// Value `i`; the caller guarantees `i < count`.
    package func value(_ i: Int) throws(StorageError) -> Value {
        if isNull(i) { return .null }
        switch type {
        case .int: return .int(ints[i])
        case .bool: return .bool(ints[i] != 0)
        case .link: return .link(ObjectKey(ints[i]))
        case .float: return .float(Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i << 2, as: UInt32.self))))
        case .double: return .double(Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i << 3, as: UInt64.self))))
        case .timestamp:
            return .timestamp(Timestamp(seconds: ints[i], nanoseconds: Int32(truncatingIfNeeded: ints2![i])))
        case .string:
            return .string(String(decoding: try bytes(i), as: UTF8.self))
        case .binary:
            return .binary(Array(try bytes(i)))
        case .mixed:
            return try MixedCodec.decode(try bytes(i))
        case .decimal, .objectId, .uuid:
            return ColumnCodec.fixedValue(type, at: raw + i * type.fixedWidth)
        }
    }

    /// The raw bytes of string or binary value `i`, checked against the block.
    @inline(__always)
    package func bytes(_ i: Int) throws(StorageError) -> UnsafeRawBufferPointer {
        if slotWidth > 0 {
            let slot = raw + i * slotWidth
            let length = Int(slot.load(as: UInt8.self))
            guard length < slotWidth else { throw StorageError(.fileCorrupted, "node \(ref): string slot overflows") }
            return UnsafeRawBufferPointer(start: slot + 1, count: length)
        }
        let start = i == 0 ? 0 : ints[i - 1]
        let end = ints[i]
        guard start >= 0, start <= end, end <= Int64(rawLength) else {
            throw StorageError(.fileCorrupted, "node \(ref): string offsets out of order")
        }
        return UnsafeRawBufferPointer(start: raw + Int(start), count: Int(end - start))
    }

    package func values() throws(StorageError) -> [Value] {
        var result = [Value]()
        result.reserveCapacity(count)
        for i in 0..<count { result.append(try value(i)) }
        return result
    }
}

extension ColumnView {
    /// Value `row` of the column block at `offset`, reading only the headers it needs: the
    /// lookup path (one object, every column) calls this instead of building a `ColumnView`.
    @inline(__always)
    package static func value(in node: NodeView, at offset: Int, row: Int, expecting type: ColumnType) throws(StorageError) -> Value {
        try node.check(offset, 8)
        let header = node.base + offset
        let count = Int(UInt32(littleEndian: header.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        guard header.load(as: UInt8.self) == type.rawValue, row < count else {
            throw StorageError(.fileCorrupted, "node \(node.ref): column block at \(offset) does not hold \(type) value \(row)")
        }
        let nulls = try node.packedInts(at: offset + 8)
        guard nulls.count == count else { throw StorageError(.fileCorrupted, "node \(node.ref): null flags do not match the column") }
        if nulls[row] != 0 { return .null }
        let payload = offset + 8 + nulls.byteSize
        switch type {
        case .int, .bool, .link:
            let ints = try node.packedInts(at: payload)
            guard ints.count == count else { throw StorageError(.fileCorrupted, "node \(node.ref): column arrays disagree on the count") }
            let v = ints[row]
            return type == .int ? .int(v) : (type == .bool ? .bool(v != 0) : .link(ObjectKey(v)))
        case .double:
            try node.check(payload + row * 8, 8)
            return .double(Double(bitPattern: UInt64(littleEndian: node.base.loadUnaligned(fromByteOffset: payload + row * 8, as: UInt64.self))))
        case .float:
            try node.check(payload + row * 4, 4)
            return .float(Float(bitPattern: UInt32(littleEndian: node.base.loadUnaligned(fromByteOffset: payload + row * 4, as: UInt32.self))))
        case .timestamp:
            let seconds = try node.packedInts(at: payload)
            let nanos = try node.packedInts(at: payload + seconds.byteSize)
            guard seconds.count == count, nanos.count == count else {
                throw StorageError(.fileCorrupted, "node \(node.ref): column arrays disagree on the count")
            }
            return .timestamp(Timestamp(seconds: seconds[row], nanoseconds: Int32(truncatingIfNeeded: nanos[row])))
        case .decimal, .objectId, .uuid:
            let width = type.fixedWidth
            try node.check(payload + row * width, width)
            return ColumnCodec.fixedValue(type, at: node.base + payload + row * width)
        case .string where header.load(fromByteOffset: 1, as: UInt8.self) == ColumnCodec.slotsLayout,
             .binary where header.load(fromByteOffset: 1, as: UInt8.self) == ColumnCodec.slotsLayout,
             .mixed where header.load(fromByteOffset: 1, as: UInt8.self) == ColumnCodec.slotsLayout:
            let width = Int(try node.u32(payload))
            guard width >= 4, width <= ColumnCodec.maxSlotWidth, width & 3 == 0 else {
                throw StorageError(.fileCorrupted, "node \(node.ref): string slots \(width) bytes wide")
            }
            let slot = payload + 8 + row * width
            try node.check(slot, width)
            let length = Int(node.base.load(fromByteOffset: slot, as: UInt8.self))
            guard length < width else { throw StorageError(.fileCorrupted, "node \(node.ref): string slot overflows") }
            let bytes = UnsafeRawBufferPointer(start: node.base + slot + 1, count: length)
            return try ColumnCodec.bytesValue(type, bytes)
        case .string, .binary, .mixed:
            let ends = try node.packedInts(at: payload)
            guard ends.count == count else { throw StorageError(.fileCorrupted, "node \(node.ref): column arrays disagree on the count") }
            let data = payload + ends.byteSize
            let start = row == 0 ? 0 : ends[row - 1]
            let end = ends[row]
            guard start >= 0, start <= end, end <= Int64(node.length - data) else {
                throw StorageError(.fileCorrupted, "node \(node.ref): string offsets out of order")
            }
            let bytes = UnsafeRawBufferPointer(start: node.base + data + Int(start), count: Int(end - start))
            return try ColumnCodec.bytesValue(type, bytes)
        }
    }
}

extension ColumnView {
    /// Starts loading the cache lines that hold value `row` of the column block at `offset`.
    /// Reads only headers, checked like `value(in:at:row:expecting:)`; on any inconsistency it
    /// simply prefetches nothing (the read that follows reports the damage).
    @inline(__always)
    package static func prefetchValue(in node: NodeView, at offset: Int, row: Int, type: ColumnType) {
        guard offset >= 0, offset <= node.length - 8 else { return }
        guard let nulls = try? node.packedInts(at: offset + 8), row < nulls.count else { return }
        if nulls.width != 0 { openrealm_prefetch(nulls.data + (row * nulls.width) / 8) }
        let payload = offset + 8 + nulls.byteSize
        switch type {
        case .int, .bool, .link, .timestamp:
            guard let ints = try? node.packedInts(at: payload), row < ints.count else { return }
            openrealm_prefetch(ints.data + (row * ints.width) / 8)
        case .double:
            if payload + row * 8 < node.length { openrealm_prefetch(node.base + payload + row * 8) }
        case .decimal, .objectId, .uuid:
            if payload + row * type.fixedWidth < node.length { openrealm_prefetch(node.base + payload + row * type.fixedWidth) }
        case .float:
            if payload + row * 4 < node.length { openrealm_prefetch(node.base + payload + row * 4) }
        case .string, .binary, .mixed:
            if node.base.load(fromByteOffset: offset + 1, as: UInt8.self) == ColumnCodec.slotsLayout {
                guard payload <= node.length - 8 else { return }
                let width = Int(UInt32(littleEndian: node.base.loadUnaligned(fromByteOffset: payload, as: UInt32.self)))
                let slot = payload + 8 + row * min(width, ColumnCodec.maxSlotWidth)
                if slot < node.length { openrealm_prefetch(node.base + slot) }
                return
            }
            guard let ends = try? node.packedInts(at: payload), row < ends.count else { return }
            openrealm_prefetch(ends.data + (max(row - 1, 0) * ends.width) / 8)
        }
    }

    /// For string and binary columns, starts loading the bytes of value `row` (once its end
    /// offsets are loaded: call after `prefetchValue` for every column).
    @inline(__always)
    package static func prefetchBytes(in node: NodeView, at offset: Int, row: Int, type: ColumnType) {
        guard type.holdsBytes, offset >= 0, offset <= node.length - 8,
              node.base.load(fromByteOffset: offset + 1, as: UInt8.self) == ColumnCodec.offsetsLayout,
              let nulls = try? node.packedInts(at: offset + 8), row < nulls.count,
              let ends = try? node.packedInts(at: offset + 8 + nulls.byteSize), row < ends.count else { return }
        let start = row == 0 ? 0 : ends[row - 1]
        let data = offset + 8 + nulls.byteSize + ends.byteSize
        guard start >= 0, start < Int64(node.length - data) else { return }
        openrealm_prefetch(node.base + data + Int(start))
    }
}

/// A checked reader over a block of list refs.
package struct ListRefsView {
    let refs: PackedInts
    package let byteSize: Int
    /// The seals after the refs (tag 0x81), else nil.
    let seals: UnsafeRawPointer?

    package init(node: NodeView, offset: Int) throws(StorageError) {
        try node.check(offset, 8)
        let tag = node.base.load(fromByteOffset: offset, as: UInt8.self)
        guard tag == ColumnCodec.listRefsTag || tag == ColumnCodec.sealedListRefsTag else {
            throw StorageError(.fileCorrupted, "node \(node.ref): expected a block of list refs")
        }
        let count = Int(try node.u32(offset + 4))
        refs = try node.packedInts(at: offset + 8)
        guard refs.count == count else {
            throw StorageError(.fileCorrupted, "node \(node.ref): list ref count mismatch")
        }
        if tag == ColumnCodec.sealedListRefsTag {
            try node.check(offset + 8 + refs.byteSize, count * 8)
            seals = node.base + offset + 8 + refs.byteSize
            byteSize = 8 + refs.byteSize + count * 8
        } else {
            seals = nil
            byteSize = 8 + refs.byteSize
        }
    }

    package var count: Int { refs.count }
    /// Whether the refs carry seals (tag 0x81).
    var isSealed: Bool { seals != nil }
    /// List `i`'s ref, with its seal when the block stores seals (checked in range at init).
    @inline(__always) package func ref(_ i: Int) -> Ref {
        let offset = UInt64(bitPattern: refs[i])
        guard let seals else { return Ref(offset) }
        return Ref(offset, seal: UInt64(littleEndian: seals.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)))
    }

    /// The bytes of the whole block, for copying it unchanged.
    var blockBytes: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: refs.data - PackedInts.headerSize - 8, count: byteSize)
    }
}
