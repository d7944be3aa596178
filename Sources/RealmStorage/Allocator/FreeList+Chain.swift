// The free list in the file: a full list, then deltas (format 3).
//
// A version's root names the newest node of its chain. Each delta names the node before it;
// the chain ends at a full list. The list of the version is the full list with every delta
// applied, oldest first.
//
// Full list (kind freeList, formats 1-3):
//   16  4   entry count n
//   20  4   reserved, 0
//   24  32n entries: u64 offset, u64 length, u64 first version, u64 end version
//           (first = end = 0 for extents free for good), sorted by offset
//
// Delta (kind freeListDelta, format 3):
//   16  4   range count r
//   20  4   entry count e
//   24  8   the node before it (a full list or a delta)
//   32  24r ranges, sorted and apart: u64 low, u64 high, u64 entries inside
//   ..  32e entries as in a full list, range by range, each wholly inside its range
// With flag 0x80 (`SealedRefs.flag`; format 6, encrypted files), the node before it's seal
// (NodeSealing.swift, S5) is a u64 at 32, and the ranges start at 40.
//
// Applying a delta replaces every extent of the list before it that lies inside one of its
// ranges by the entries it lists for that range. That is exact because of how ranges are made
// (FreeSpace.touched): a commit records the span of every extent it changes, before and after
// the change; an extent it leaves as it was overlaps none of those spans (the list before and
// the list after each hold no overlapping extents), so it lies wholly outside every range, and
// every extent inside a range is listed. Ranges are widened to whole extents before they are
// written all the same, so that a delta never splits an extent. Debug builds check at every
// delta that applying it to the list it started from gives the new list.
//
// When a version writes a new full list. A delta costs what the commit changed; the deltas
// of a chain stay reachable (and are read at every open) until a version writes a full list
// again, which it does once they take half the size of a full list, or number
// `maxChainDeltas`, so that a commit writes at most about three times its own changes on
// average, and reading a chain costs about a full list and a half. That version releases every
// node of the old chain, each tagged with the versions that reached it (FreeSpace.swift).
// Files of format 2 (readers that know no deltas) get full lists only, until a root slot is
// written and the file becomes format 3 (Store.writeSlot).
//
// Decoding is bounded on damaged files: every node is checked by NodeView, a chain runs back
// in versions strictly (so it cannot loop), and every list is checked sorted and apart.

/// One node of a free list chain in the file.
package struct FreeListNode: Equatable, Sendable {
    package var ref: Ref
    /// Its footprint in the file (NodeSealing.swift): its length, or with its tag.
    package var length: UInt64
    /// The version that wrote it: it is reachable from that version on.
    package var version: UInt64
    /// A full list (kind freeList), else a delta.
    package var isFull: Bool
    package var kind: NodeKind { isFull ? .freeList : .freeListDelta }
}

extension FreeSpace {
    /// The most deltas a chain holds before a full list is written again.
    static let maxChainDeltas = 1024

    /// Whether the next commit should write a full list rather than a delta (see the header).
    package var wantsFullList: Bool {
        guard let first = chain.first, first.isFull else { return true }
        let deltaBytes = chain.dropFirst().reduce(0) { $0 + $1.length }
        return chain.count > Self.maxChainDeltas || deltaBytes * 2 >= UInt64(Self.nodeSize(entries: extents.count))
    }

    /// Releases every node of the chain, reachable up to `endVersion`, for a commit that
    /// writes a full list.
    package mutating func releaseChain(endVersion: UInt64) {
        let nodes = chain
        chain = []
        for node in nodes {
            release(offset: node.ref.offset, length: node.length, firstVersion: node.version, endVersion: endVersion)
        }
    }

    /// Records the node a commit wrote for this list.
    package mutating func wrote(_ node: FreeListNode) {
        if node.isFull { chain = [node] } else { chain.append(node) }
    }

    // MARK: Deltas

    /// The ranges of the next delta: the touched spans, sorted, merged and widened to whole
    /// extents.
    private func deltaRanges() -> [(low: UInt64, high: UInt64)] {
        var ranges: [(low: UInt64, high: UInt64)] = []
        for span in touched.sorted(by: { $0.low < $1.low }) where span.low < span.high {
            var span = span
            // Widened to whole extents (see the header: never needed, by construction).
            let first = firstExtent(endingAfter: span.low)
            if first < extents.count, extents[first].offset < span.low { span.low = extents[first].offset }
            let last = firstExtent(endingAfter: span.high)
            if last < extents.count, extents[last].offset < span.high { span.high = max(span.high, extents[last].end) }
            if let previous = ranges.last, previous.high >= span.low {
                ranges[ranges.count - 1].high = max(previous.high, span.high)
            } else {
                ranges.append(span)
            }
        }
        return ranges
    }

    /// The index of the first extent whose end lies after `offset`.
    private func firstExtent(endingAfter offset: UInt64) -> Int {
        var low = 0, high = extents.count
        while low < high {
            let mid = (low + high) >> 1
            if extents[mid].end <= offset { low = mid + 1 } else { high = mid }
        }
        return low
    }

    /// The extents inside `range`, as positions in `extents`.
    private func extentIndices(in range: (low: UInt64, high: UInt64)) -> Range<Int> {
        let first = firstExtent(endingAfter: range.low)
        var end = first
        while end < extents.count, extents[end].offset < range.high { end += 1 }
        return first..<end
    }

    /// Bytes of the next delta node, with room for `spare` more ranges and entries: what the
    /// commit's last allocations (the node itself, the commit record) may still change, each
    /// taking from one extent.
    /// `sealed`: the file stores seals (the delta holds its predecessor's).
    package func deltaNodeSize(spare: Int, sealed: Bool = false) -> Int {
        let ranges = deltaRanges()
        let entries = ranges.reduce(0) { $0 + extentIndices(in: $1).count }
        return NodeLayout.aligned(Self.deltaRangesOffset(sealed: sealed) + 24 * (ranges.count + spare) + 32 * (entries + spare))
    }

    /// Where a delta's ranges start.
    static func deltaRangesOffset(sealed: Bool) -> Int { sealed ? 40 : 32 }

    /// The delta node, applying to `previous`, padded to `size` bytes (reserved before the list
    /// was final).
    package func encodedDelta(version: VersionID, previous: Ref, size: Int, sealed: Bool = false) -> [UInt8] {
        let ranges = deltaRanges()
        let slices = ranges.map { extentIndices(in: $0) }
        var w = NodeWriter(capacity: size)
        w.u32(UInt32(ranges.count))
        w.u32(UInt32(slices.reduce(0) { $0 + $1.count }))
        w.u64(previous.offset)
        if sealed { w.u64(previous.seal) }
        for (range, slice) in zip(ranges, slices) {
            w.u64(range.low)
            w.u64(range.high)
            w.u64(UInt64(slice.count))
        }
        for slice in slices { Self.store(extents[slice], into: &w) }
        precondition(w.count <= size, "free list delta grew after its node was reserved")
        #if DEBUG
        if let base = deltaBase {
            let applied = try? Self.apply(zip(ranges, slices).map { ($0.0.low, $0.0.high, Array(extents[$0.1])) }, to: base)
            assert(applied == extents, "a free list delta does not turn the list it started from into the new one")
        }
        #endif
        w.zeros(size - w.count)
        return w.finish(kind: .freeListDelta, version: version, flags: sealed ? SealedRefs.flag : 0)
    }

    /// `list` with every extent inside one of `ranges` (sorted, apart) replaced by the range's
    /// entries.
    static func apply(_ ranges: [(low: UInt64, high: UInt64, entries: [FreeExtent])], to list: [FreeExtent]) throws(StorageError) -> [FreeExtent] {
        var result: [FreeExtent] = []
        result.reserveCapacity(list.count + ranges.reduce(0) { $0 + $1.entries.count })
        var i = 0
        for range in ranges {
            while i < list.count, list[i].end <= range.low {
                result.append(list[i])
                i += 1
            }
            while i < list.count, list[i].offset < range.high {
                guard list[i].offset >= range.low, list[i].end <= range.high else {
                    throw StorageError(.fileCorrupted, "a free list delta's range \(range.low)..<\(range.high) splits the extent at \(list[i].offset)")
                }
                i += 1
            }
            result += range.entries
        }
        result += list[i...]
        return result
    }

    // MARK: Reading a chain

    /// The free list whose newest node is `head`, in a version whose space ends at
    /// `logicalSize` (the nodes lie before it).
    ///
    /// - Throws: `fileCorrupted` when a node is not a free list node, a chain does not run back
    ///   in versions, or a list is not sorted, apart and inside the version's space.
    package static func decode(head: Ref, mapping: UnsafeRawPointer, logicalSize: UInt64, check: NodeCheck = .always) throws(StorageError) -> FreeSpace {
        var deltas: [NodeView] = []
        var ref = head
        var full: NodeView
        while true {
            let delta: NodeView
            do throws(StorageError) {
                delta = try NodeView(ref: ref, mapping: mapping, limit: logicalSize, expecting: .freeListDelta, check: check)
            } catch {
                full = try NodeView(ref: ref, mapping: mapping, limit: logicalSize, expecting: .freeList, check: check)
                break
            }
            if let later = deltas.last, delta.version >= later.version {
                throw StorageError(.fileCorrupted, "free list delta \(ref) (version \(delta.version)) is not older than the one after it")
            }
            deltas.append(delta)
            ref = delta.flags & SealedRefs.flag != 0 ? Ref(try delta.u64(24), seal: try delta.u64(32)) : Ref(try delta.u64(24))
        }
        if let oldest = deltas.last, full.version >= oldest.version {
            throw StorageError(.fileCorrupted, "free list \(full.ref) (version \(full.version)) is not older than its deltas")
        }
        var extents = try decodeEntries(full, at: 24, count: Int(try full.u32(16)))
        try checkSorted(extents, of: full)
        for delta in deltas.reversed() {
            extents = try apply(try decodeRanges(delta), to: extents)
            try checkSorted(extents, of: delta)
        }
        for extent in extents where extent.length > logicalSize || extent.offset > logicalSize - extent.length {
            throw StorageError(.fileCorrupted, "free list \(head) has an extent at \(extent.offset)+\(extent.length) past the end of the version (\(logicalSize))")
        }
        // Authenticated nodes: 16-byte granular (FreeSpace.swift).
        let sealing = check.sealing
        let alignment = UInt64(sealing.alignment)
        guard logicalSize % alignment == 0 else {
            throw StorageError(.fileCorrupted, "the version's size \(logicalSize) is not a multiple of \(alignment)")
        }
        for extent in extents where (extent.offset | extent.length) % alignment != 0 {
            throw StorageError(.fileCorrupted, "free list \(head) has an extent at \(extent.offset)+\(extent.length) off the \(alignment)-byte grid")
        }
        var space = FreeSpace(extents: extents, logicalSize: logicalSize, alignment: alignment)
        // What each node of the chain takes in the file: released whole when the chain is.
        space.chain = [FreeListNode(ref: full.ref, length: sealing.footprint(UInt64(full.length)), version: full.version, isFull: true)]
            + deltas.reversed().map { FreeListNode(ref: $0.ref, length: sealing.footprint(UInt64($0.length)), version: $0.version, isFull: false) }
        return space
    }

    private static func decodeRanges(_ delta: NodeView) throws(StorageError) -> [(low: UInt64, high: UInt64, entries: [FreeExtent])] {
        let rangeCount = Int(try delta.u32(16))
        let entryCount = Int(try delta.u32(20))
        let at = deltaRangesOffset(sealed: delta.flags & SealedRefs.flag != 0)
        try delta.check(at, rangeCount * 24)
        var entries = try decodeEntries(delta, at: at + rangeCount * 24, count: entryCount)[...]
        var ranges: [(low: UInt64, high: UInt64, entries: [FreeExtent])] = []
        ranges.reserveCapacity(rangeCount)
        var previousHigh: UInt64 = 0
        for r in 0..<rangeCount {
            let low = try delta.u64(at + r * 24), high = try delta.u64(at + 8 + r * 24), count = try delta.u64(at + 16 + r * 24)
            guard low >= previousHigh, low < high, count <= UInt64(entries.count) else {
                throw StorageError(.fileCorrupted, "free list delta \(delta.ref) has an invalid range \(low)..<\(high)")
            }
            let inside = entries.prefix(Int(count))
            entries = entries.dropFirst(Int(count))
            for extent in inside where extent.offset < low || extent.end > high {
                throw StorageError(.fileCorrupted, "free list delta \(delta.ref) lists \(extent.offset)+\(extent.length) outside its range \(low)..<\(high)")
            }
            ranges.append((low, high, Array(inside)))
            previousHigh = high
        }
        guard entries.isEmpty else { throw StorageError(.fileCorrupted, "free list delta \(delta.ref) lists entries outside its ranges") }
        return ranges
    }

    private static func decodeEntries(_ node: NodeView, at offset: Int, count: Int) throws(StorageError) -> [FreeExtent] {
        guard count <= node.length / 32 else { throw StorageError(.fileCorrupted, "free list node \(node.ref): count \(count) exceeds the node") }
        try node.check(offset, count * 32)
        var extents: [FreeExtent] = []
        extents.reserveCapacity(count)
        for i in 0..<count {
            let at = node.base + offset + i * 32
            let e = FreeExtent(offset: UInt64(littleEndian: at.loadUnaligned(as: UInt64.self)),
                               length: UInt64(littleEndian: at.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
                               firstVersion: UInt64(littleEndian: at.loadUnaligned(fromByteOffset: 16, as: UInt64.self)),
                               endVersion: UInt64(littleEndian: at.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
            guard e.length > 0, e.length & 7 == 0, e.offset & 7 == 0, e.offset >= UInt64(FileHeader.size),
                  e.offset <= UInt64.max - e.length, e.firstVersion <= e.endVersion else {
                throw StorageError(.fileCorrupted, "free list node \(node.ref) has an invalid extent at \(e.offset)+\(e.length)")
            }
            extents.append(e)
        }
        return extents
    }

    private static func checkSorted(_ extents: [FreeExtent], of node: NodeView) throws(StorageError) {
        var previousEnd = UInt64(FileHeader.size)
        for e in extents {
            guard e.offset >= previousEnd else {
                throw StorageError(.fileCorrupted, "free list node \(node.ref) leaves overlapping or unsorted extents at \(e.offset)")
            }
            previousEnd = e.end
        }
    }
}
