// Appending to a committed column block.
//
// A leaf that only gained rows at its end (the last leaf of a table growing by inserts, a
// writer's own leaf under group commit) need not be encoded again value by value: its new
// block for a column is the old block with the new values added to each of its arrays,
// provided the block's parameters still hold them. `write` chooses those parameters from all
// the values (the base and width of each packed integer array, the null flags, the string
// layout and slot width); `writeAppending` keeps the old ones only when `write` would choose
// the same for the old and new values together, so the bytes are exactly those `write` would
// produce. Debug builds check that on every leaf encoded this way (ClusterLeaf+Reuse.swift).

extension ColumnCodec {
    /// Writes the block `write` would write for `old`'s values followed by `more`, by copying
    /// `old`'s arrays and adding `more`; returns false, having written nothing, when `write`
    /// would choose other parameters for them (then the caller encodes all values).
    static func writeAppending(_ old: ColumnView, _ more: ArraySlice<Value>, to w: inout NodeWriter) -> Bool {
        let type = old.type
        guard old.count > 0, !more.isEmpty else { return false }
        let flags = more.map { $0.isNull ? Int64(1) : 0 }
        guard old.nulls.holds(flags) else { return false }
        switch type {
        case .int, .bool, .link:
            let payload = more.map(integerPayload)
            guard old.ints.holds(payload) else { return false }
            header(old, flags, to: &w)
            old.ints.writeAppending(payload, to: &w)
        case .float:
            header(old, flags, to: &w)
            w.raw(UnsafeRawBufferPointer(start: old.raw, count: old.count * 4))
            writeFloats(more, to: &w)
        case .double:
            header(old, flags, to: &w)
            w.raw(UnsafeRawBufferPointer(start: old.raw, count: old.count * 8))
            writeDoubles(more, to: &w)
        case .timestamp:
            let seconds = more.map { if case .timestamp(let t) = $0 { return t.seconds } else { return Int64(0) } }
            let nanos = more.map { if case .timestamp(let t) = $0 { return Int64(t.nanoseconds) } else { return Int64(0) } }
            guard let oldNanos = old.ints2, old.ints.holds(seconds), oldNanos.holds(nanos) else { return false }
            header(old, flags, to: &w)
            old.ints.writeAppending(seconds, to: &w)
            oldNanos.writeAppending(nanos, to: &w)
        case .decimal, .objectId, .uuid:
            header(old, flags, to: &w)
            w.raw(UnsafeRawBufferPointer(start: old.raw, count: old.count * type.fixedWidth))
            writeFixed(more, type, to: &w)
        case .string, .binary:
            return appendBytes(old, more, flags, to: &w)
        case .mixed:
            let tagged = more.map { $0.isNull ? Value.null : Value.binary(MixedCodec.encode($0)) }
            return appendBytes(old, tagged[...], flags, to: &w)
        }
        return true
    }

    /// The header of `old` and its null flags, with elements flagged `flags` added.
    private static func header(_ old: ColumnView, _ flags: [Int64], to w: inout NodeWriter) {
        w.u8(old.type.rawValue)
        w.u8(old.slotWidth > 0 ? slotsLayout : offsetsLayout)
        w.u8(0); w.u8(0)
        w.u32(UInt32(old.count + flags.count))
        old.nulls.writeAppending(flags, to: &w)
    }

    /// Strings, binaries and mixed values: the layout `write` chooses depends on the longest
    /// and the total payload of all values, so both are taken from the old block first.
    private static func appendBytes(_ old: ColumnView, _ more: ArraySlice<Value>, _ flags: [Int64], to w: inout NodeWriter) -> Bool {
        var longest = 0, total = 0
        for v in more {
            let n = v.payloadSize
            longest = max(longest, n)
            total += n
        }
        let count = old.count + more.count
        if old.slotWidth > 0 {
            // The old slot width followed from the old longest value, so the new width follows
            // from it and the new values' longest.
            let width = max(old.slotWidth, (longest + 1 + 3) & ~3)
            guard longest < maxSlotWidth, width == old.slotWidth else { return false }
            // Slots stay when they take at most about twice the payload. The old block met
            // that, so new values that meet it alone keep it (no need to add up the old
            // payload, a load per old value); otherwise the old payload decides.
            if more.count * width > 2 * (total + 2 * more.count) {
                var oldTotal = 0
                for i in 0..<old.count { oldTotal += Int(old.raw.load(fromByteOffset: i * old.slotWidth, as: UInt8.self)) }
                guard count * width <= 2 * (oldTotal + total + 2 * count) + 64 else { return false }
            }
            header(old, flags, to: &w)
            w.u32(UInt32(width))
            w.u32(0)
            w.raw(UnsafeRawBufferPointer(start: old.raw, count: old.count * width))
            writeSlots(more, width: width, to: &w)
            return true
        }
        // Offsets layout: it stays when `write` would not choose slots for all the values,
        // which a new value of 64 bytes or more settles; else the old longest decides.
        let ends = old.ints
        let oldTotal = Int(ends[ends.count - 1])
        if longest < maxSlotWidth {
            var oldLongest = 0, previous: Int64 = 0
            for i in 0..<ends.count {
                let end = ends[i]
                oldLongest = max(oldLongest, Int(end - previous))
                previous = end
            }
            guard slotWidth(count: count, longest: max(oldLongest, longest), total: oldTotal + total) == nil else { return false }
        }
        var newEnds: [Int64] = []
        newEnds.reserveCapacity(more.count)
        var end = Int64(oldTotal)
        for v in more {
            end += Int64(v.payloadSize)
            newEnds.append(end)
        }
        guard ends.holds(newEnds) else { return false }
        header(old, flags, to: &w)
        ends.writeAppending(newEnds, to: &w)
        w.raw(UnsafeRawBufferPointer(start: old.raw, count: oldTotal))
        writeConcatenated(more, total: total, to: &w)
        return true
    }
}
