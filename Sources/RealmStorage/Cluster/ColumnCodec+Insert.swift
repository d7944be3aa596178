// Inserting into a committed column block.
//
// A leaf whose rows were only added to (the last leaf of a table growing by inserts, a leaf
// that several writers append to in their own key ranges) need not be encoded again value by
// value: its new block for a column is the old block with the new values put into each of its
// arrays at the same position, provided the block's parameters still hold them. `write`
// chooses those parameters from all the values (the base and width of each packed integer
// array, the null flags, the string layout and slot width); `writeInserting` keeps the old ones
// only when `write` would choose the same for the old and new values together, so the bytes
// are exactly those `write` would produce. Debug builds check that on every leaf encoded this
// way (ClusterLeaf+Reuse.swift).

extension ColumnCodec {
    /// Writes the block `write` would write for `old`'s values with `middle` put in before old
    /// value `position`, by copying `old`'s arrays around `middle`; returns false, having
    /// written nothing, when `write` would choose other parameters for them (then the caller
    /// encodes all values).
    static func writeInserting(_ old: ColumnView, _ middle: ArraySlice<Value>, at position: Int, to w: inout NodeWriter) -> Bool {
        guard old.count > 0, !middle.isEmpty, position >= 0, position <= old.count else { return false }
        // One new value (a commit of one object): its flag and integers need no arrays, which
        // were two allocations per column of every such commit.
        if middle.count == 1 {
            return writeInserting(old, middle, at: position, to: &w) { values, integer in CollectionOfOne(integer(values[values.startIndex])) }
        }
        return writeInserting(old, middle, at: position, to: &w) { values, integer in values.map(integer) }
    }

    /// `writeInserting` with the integers taken from the new values by `integers`.
    private static func writeInserting<Integers: Collection<Int64>>(
        _ old: ColumnView, _ middle: ArraySlice<Value>, at position: Int, to w: inout NodeWriter,
        integers: (ArraySlice<Value>, (Value) -> Int64) -> Integers
    ) -> Bool {
        let type = old.type
        let flags = integers(middle) { $0.isNull ? 1 : 0 }
        guard old.nulls.holds(flags) else { return false }
        switch type {
        case .int, .bool, .link:
            let payload = integers(middle, integerPayload)
            guard old.ints.holds(payload) else { return false }
            header(old, flags, at: position, to: &w)
            old.ints.writeInserting(payload, at: position, to: &w)
        case .float:
            header(old, flags, at: position, to: &w)
            copyAround(old.raw, size: 4, position, old.count, to: &w) { writeFloats(middle, to: &$0) }
            w.padToAlignment()
        case .double:
            header(old, flags, at: position, to: &w)
            copyAround(old.raw, size: 8, position, old.count, to: &w) { writeDoubles(middle, to: &$0) }
        case .timestamp:
            let seconds = integers(middle) { if case .timestamp(let t) = $0 { return t.seconds } else { return 0 } }
            let nanos = integers(middle) { if case .timestamp(let t) = $0 { return Int64(t.nanoseconds) } else { return 0 } }
            guard let oldNanos = old.ints2, old.ints.holds(seconds), oldNanos.holds(nanos) else { return false }
            header(old, flags, at: position, to: &w)
            old.ints.writeInserting(seconds, at: position, to: &w)
            oldNanos.writeInserting(nanos, at: position, to: &w)
        case .decimal, .objectId, .uuid:
            header(old, flags, at: position, to: &w)
            copyAround(old.raw, size: type.fixedWidth, position, old.count, to: &w) { writeFixed(middle, type, to: &$0) }
            w.padToAlignment()
        case .string, .binary:
            return insertBytes(old, middle, flags, at: position, to: &w)
        case .mixed:
            let tagged = middle.map { $0.isNull ? Value.null : Value.binary(MixedCodec.encode($0)) }
            return insertBytes(old, tagged[...], flags, at: position, to: &w)
        }
        return true
    }

    /// The header of `old` and its null flags, with elements flagged `flags` put in.
    private static func header(_ old: ColumnView, _ flags: some Collection<Int64>, at position: Int, to w: inout NodeWriter) {
        w.u8(old.type.rawValue)
        w.u8(old.slotWidth > 0 ? slotsLayout : offsetsLayout)
        w.u8(0); w.u8(0)
        w.u32(UInt32(old.count + flags.count))
        old.nulls.writeInserting(flags, at: position, to: &w)
    }

    /// The first `position` of `count` elements of `size` bytes at `elements`, what `middle`
    /// writes, then the rest.
    private static func copyAround(_ elements: UnsafeRawPointer, size: Int, _ position: Int, _ count: Int,
                                   to w: inout NodeWriter, _ middle: (inout NodeWriter) -> Void) {
        w.raw(UnsafeRawBufferPointer(start: elements, count: position * size))
        middle(&w)
        w.raw(UnsafeRawBufferPointer(start: elements + position * size, count: (count - position) * size))
    }

    /// Strings, binaries and mixed values: the layout `write` chooses depends on the longest
    /// and the total payload of all values, so both are taken from the old block first.
    private static func insertBytes(_ old: ColumnView, _ middle: ArraySlice<Value>, _ flags: some Collection<Int64>, at position: Int,
                                    to w: inout NodeWriter) -> Bool {
        var longest = 0, total = 0
        for v in middle {
            let n = v.payloadSize
            longest = max(longest, n)
            total += n
        }
        let count = old.count + middle.count
        if old.slotWidth > 0 {
            // The old slot width followed from the old longest value, so the new width follows
            // from it and the new values' longest.
            let width = max(old.slotWidth, (longest + 1 + 3) & ~3)
            guard longest < maxSlotWidth, width == old.slotWidth else { return false }
            // Slots stay when they take at most about twice the payload. The old block met
            // that, so new values that meet it alone keep it (no need to add up the old
            // payload, a load per old value); otherwise the old payload decides.
            if middle.count * width > 2 * (total + 2 * middle.count) {
                var oldTotal = 0
                for i in 0..<old.count { oldTotal += Int(old.raw.load(fromByteOffset: i * old.slotWidth, as: UInt8.self)) }
                guard count * width <= 2 * (oldTotal + total + 2 * count) + 64 else { return false }
            }
            header(old, flags, at: position, to: &w)
            w.u32(UInt32(width))
            w.u32(0)
            copyAround(old.raw, size: width, position, old.count, to: &w) { writeSlots(middle, width: width, to: &$0) }
            w.padToAlignment()
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
        // Every end offset after the new values moves, so the offsets are written anew (from
        // integers, not values); the bytes are copied around the new ones.
        let before = position == 0 ? 0 : Int(ends[position - 1])
        var newEnds = [Int64]()
        newEnds.reserveCapacity(count)
        for i in 0..<position { newEnds.append(ends[i]) }
        var end = Int64(before)
        for v in middle {
            end += Int64(v.payloadSize)
            newEnds.append(end)
        }
        for i in position..<old.count { newEnds.append(ends[i] + Int64(total)) }
        header(old, flags, at: position, to: &w)
        PackedInts.write(newEnds, to: &w)
        w.raw(UnsafeRawBufferPointer(start: old.raw, count: before))
        writeConcatenated(middle, total: total, to: &w)
        w.raw(UnsafeRawBufferPointer(start: old.raw + before, count: oldTotal - before))
        w.padToAlignment()
        return true
    }
}
