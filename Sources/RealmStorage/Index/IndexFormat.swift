// Search index nodes: a B+tree of `IndexEntry` (value prefix, object key), sorted.
//
// Leaf (kind indexLeaf):
//   16  4   entry count n
//   20  4   reserved, 0
//   24  ... entry block
// Inner (kind indexInner): the common inner layout (TreeFormat.swift) with an entry block as
// its separator keys.
//
// Entry block:
//   PackedInts end offset of each prefix in the byte area
//   PackedInts object keys
//   the prefixes, concatenated, padded to 8

/// A changed index leaf.
package final class IndexLeaf: TreeLeafBuffer {
    // @exclusivity(unchecked): buffers are confined to their write transaction's thread, and
    // the dynamic checks cost more than the edits on the insert path (measured with callgrind).
    @exclusivity(unchecked) package var entries: [IndexEntry]
    @exclusivity(unchecked) package var appendedAtEnd = false

    package init(entries: [IndexEntry]) { self.entries = entries }

    package var count: Int { entries.count }
    package var firstKey: IndexEntry? { entries.first }
    package var byteEstimate: Int { entries.count * (IndexEntry.prefixLimit + 16) }

    package func position(of entry: IndexEntry) -> (index: Int, found: Bool) {
        var low = 0, high = entries.count
        while low < high {
            let mid = (low + high) >> 1
            if entries[mid] < entry { low = mid + 1 } else { high = mid }
        }
        return (low, low < entries.count && entries[low] == entry)
    }

    package func splitOff(at index: Int) -> IndexLeaf {
        let right = IndexLeaf(entries: Array(entries[index...]))
        entries.removeSubrange(index...)
        return right
    }

    package func absorb(_ other: IndexLeaf) { entries += other.entries }
}

/// A committed entry block, read in place.
package struct EntryBlockView {
    let ends: PackedInts
    let keys: PackedInts
    let bytes: UnsafeRawPointer
    let byteCount: Int
    let ref: Ref

    init(_ node: NodeView, at offset: Int, count: Int) throws(StorageError) {
        ends = try node.packedInts(at: offset)
        keys = try node.packedInts(at: offset + ends.byteSize)
        guard ends.count == count, keys.count == count else {
            throw StorageError(.fileCorrupted, "index node \(node.ref): entry block holds \(ends.count) entries, not \(count)")
        }
        let start = offset + ends.byteSize + keys.byteSize
        let total = count > 0 ? ends[count - 1] : 0
        guard total >= 0, total <= Int64(node.length - start) else {
            throw StorageError(.fileCorrupted, "index node \(node.ref): entry block does not fit")
        }
        bytes = node.base + start
        byteCount = Int(total)
        ref = node.ref
    }

    var count: Int { keys.count }

    @inline(__always)
    func prefix(_ i: Int) throws(StorageError) -> UnsafeRawBufferPointer {
        let start = i == 0 ? 0 : ends[i - 1]
        let end = ends[i]
        guard start >= 0, start <= end, end <= Int64(byteCount) else {
            throw StorageError(.fileCorrupted, "index node \(ref): entry offsets out of order")
        }
        return UnsafeRawBufferPointer(start: bytes + Int(start), count: Int(end - start))
    }

    func entry(_ i: Int) throws(StorageError) -> IndexEntry {
        IndexEntry(prefix: Array(try prefix(i)), key: keys[i])
    }

    /// -1, 0 or 1 as entry i compares with `entry`.
    @inline(__always)
    func compare(_ i: Int, _ entry: IndexEntry) throws(StorageError) -> Int {
        let p = try prefix(i)
        let c = entry.prefix.withUnsafeBytes { compareBytes(p, $0) }
        if c != 0 { return c }
        let k = keys[i]
        return k == entry.key ? 0 : (k < entry.key ? -1 : 1)
    }

    /// The first i whose entry is >= `entry`.
    func lowerBound(_ entry: IndexEntry) throws(StorageError) -> Int {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) >> 1
            if try compare(mid, entry) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }

    static func write(_ entries: [IndexEntry], to w: inout NodeWriter) {
        var ends = [Int64]()
        ends.reserveCapacity(entries.count)
        var end: Int64 = 0
        for e in entries {
            end += Int64(e.prefix.count)
            ends.append(end)
        }
        PackedInts.write(ends, to: &w)
        PackedInts.write(entries.lazy.map(\.key), to: &w)
        for e in entries { w.raw(e.prefix) }
        w.padToAlignment()
    }
}

/// A committed index leaf.
package struct IndexLeafView {
    package let entries: EntryBlockView

    package init(_ node: NodeView) throws(StorageError) {
        let count = Int(try node.u32(16))
        entries = try EntryBlockView(node, at: 24, count: count)
    }
}

package enum IndexFormat: TreeFormat {
    package typealias Key = IndexEntry
    package typealias Leaf = IndexLeaf
    package static var leafKind: NodeKind { .indexLeaf }
    package static var innerKind: NodeKind { .indexInner }

    package static func emptyLeaf(_ context: TreeContext) -> IndexLeaf { IndexLeaf(entries: []) }

    package static func leafCount(_ node: NodeView) throws(StorageError) -> Int { try IndexLeafView(node).entries.count }

    package static func decodeLeaf(_ node: NodeView, _ context: TreeContext) throws(StorageError) -> IndexLeaf {
        let view = try IndexLeafView(node)
        var entries = [IndexEntry]()
        entries.reserveCapacity(view.entries.count)
        for i in 0..<view.entries.count { entries.append(try view.entries.entry(i)) }
        return IndexLeaf(entries: entries)
    }

    package static func encodeLeaf(_ leaf: IndexLeaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        var w = NodeWriter(capacity: 64 + leaf.count * 24)
        w.u32(UInt32(leaf.count))
        w.u32(0)
        EntryBlockView.write(leaf.entries, to: &w)
        return try sink.place(w.finish(kind: .indexLeaf, version: sink.version))
    }

    package static func writeKeys(_ keys: [IndexEntry], to writer: inout NodeWriter) {
        EntryBlockView.write(keys, to: &writer)
    }

    package static func readKeys(_ node: NodeView, at offset: Int, count: Int) throws(StorageError) -> [IndexEntry] {
        let block = try EntryBlockView(node, at: offset, count: count)
        var keys = [IndexEntry]()
        keys.reserveCapacity(count)
        for i in 0..<count { keys.append(try block.entry(i)) }
        return keys
    }

    package static func childIndex(_ node: NodeView, keysAt offset: Int, count: Int, for key: IndexEntry) throws(StorageError) -> Int {
        let block = try EntryBlockView(node, at: offset, count: count)
        var low = 0, high = count
        while low < high {
            let mid = (low + high) >> 1
            if try block.compare(mid, key) <= 0 { low = mid + 1 } else { high = mid }
        }
        return max(low - 1, 0)
    }
}
