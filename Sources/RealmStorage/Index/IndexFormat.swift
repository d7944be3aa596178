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
//   0   4   shared length S: the bytes every prefix of the block begins with
//   4   4   suffix length F when every prefix is S + F bytes long, else 0xFFFFFFFF
//   8   S   the shared bytes, padded to 8
//   ...     PackedInts end offset of each suffix in the byte area (only when F varies)
//   ...     PackedInts object keys
//   ...     the suffixes, concatenated, padded to 8
//
// Why shared bytes: entries of one leaf are sorted, so their encodings mostly begin alike
// (an integer index over small values shares 8 of its 9 bytes). Storing those once makes
// the index of a million small integers about 3.5 bytes an entry instead of 13, and
// comparisons start with one comparison of the shared bytes.

/// A changed index leaf.
///
/// Its entries change only through the methods below, so that the leaf knows which of them
/// still equal the entries of the node it was decoded from or last encoded to (`source`):
/// encoding then copies those from that node (IndexLeaf+Reuse.swift).
package final class IndexLeaf: TreeLeafBuffer {
    // @exclusivity(unchecked): buffers are confined to their write transaction's thread, and
    // the dynamic checks cost more than the edits on the insert path (measured with callgrind).
    @exclusivity(unchecked) package private(set) var entries: [IndexEntry]
    @exclusivity(unchecked) package var appendedAtEnd = false
    @exclusivity(unchecked) package var leftBehindByAppends = false
    /// The committed node whose entries this buffer still partly holds, if any.
    @exclusivity(unchecked) package private(set) var source: SourceEntries?
    /// The node's bytes, encoded ahead of the commit's placing them (LeafPreEncoding.swift).
    /// Set only once the transaction's edits are over, so no edit can outdate it.
    @exclusivity(unchecked) var preEncoded: PreEncodedLeaf?

    /// A committed node and how much of it a buffer still holds (`entries`).
    package struct SourceEntries {
        package let ref: Ref
        package let count: Int
        package fileprivate(set) var entries: SourceRun
    }

    package init(entries: [IndexEntry]) { self.entries = entries }

    package var count: Int { entries.count }
    package var firstKey: IndexEntry? { entries.first }
    package var byteEstimate: Int { entries.count * (IndexEntry.prefixLimit + 16) }

    /// Records that this buffer holds exactly the entries of the node at `ref`.
    package func matchSource(_ ref: Ref) {
        source = SourceEntries(ref: ref, count: entries.count, entries: .all(entries.count))
    }

    /// Entries before `first` and from `last` on (positions before the change) stay.
    private func sourceKeeps(before first: Int, from last: Int) {
        assert(preEncoded == nil, "an index leaf was edited after it was encoded")
        source?.entries.keep(before: first, from: last, of: entries.count)
    }

    package func insert(_ entry: IndexEntry, at i: Int) {
        sourceKeeps(before: i, from: i)
        if i == entries.count { entries.append(entry) } else { entries.insert(entry, at: i) }
    }

    /// Inserts `run` (sorted) at `i`, between entries it sorts between.
    func insert(contentsOf run: ArraySlice<IndexEntry>, at i: Int) {
        sourceKeeps(before: i, from: i)
        entries.insert(contentsOf: run, at: i)
    }

    package func append<C: Collection>(contentsOf more: C) where C.Element == IndexEntry {
        sourceKeeps(before: entries.count, from: entries.count)
        entries.append(contentsOf: more)
    }

    package func remove(at i: Int) {
        sourceKeeps(before: i, from: i + 1)
        entries.remove(at: i)
    }

    /// Replaces every entry (a merge's result): `first` and `last` as in `sourceKeeps`.
    func replaceEntries(_ merged: [IndexEntry], keepingBefore first: Int, from last: Int) {
        sourceKeeps(before: first, from: last)
        entries = merged
    }

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
        sourceKeeps(before: index, from: entries.count)
        entries.removeSubrange(index...)
        return right
    }

    package func absorb(_ other: IndexLeaf) {
        sourceKeeps(before: entries.count, from: entries.count)
        entries += other.entries
    }
}

/// The prefix of one stored index entry: the block's shared bytes followed by the entry's
/// own suffix (valid while the node is mapped).
package struct IndexPrefixView {
    let shared: UnsafeRawBufferPointer
    let suffix: UnsafeRawBufferPointer

    /// -1, 0 or 1 as this prefix compares with `other` (bytewise, shorter first on a tie).
    @inline(__always)
    package func compare(_ other: UnsafeRawBufferPointer) -> Int {
        if shared.count > 0 {
            let n = min(shared.count, other.count)
            let c = compareBytes(UnsafeRawBufferPointer(rebasing: shared[..<n]), UnsafeRawBufferPointer(rebasing: other[..<n]))
            if c != 0 { return c }
            if other.count < shared.count { return 1 }
            return compareBytes(suffix, UnsafeRawBufferPointer(rebasing: other[shared.count...]))
        }
        return compareBytes(suffix, other)
    }

    @inline(__always)
    package func compare(_ other: [UInt8]) -> Int { other.withUnsafeBytes { compare($0) } }
}

/// A committed entry block, read in place.
package struct EntryBlockView {
    let shared: UnsafeRawBufferPointer
    /// Each suffix's length when they are all alike, else -1 (then `ends` locates them).
    let fixedSuffix: Int
    let ends: PackedInts?
    let keys: PackedInts
    let bytes: UnsafeRawPointer
    let byteCount: Int
    let ref: Ref

    static let variableSuffix = UInt32.max

    init(_ node: NodeView, at offset: Int, count: Int) throws(StorageError) {
        try node.check(offset, 8)
        let sharedCount = Int(try node.u32(offset))
        let fixed = try node.u32(offset + 4)
        guard sharedCount <= IndexEntry.prefixLimit,
              fixed == Self.variableSuffix || sharedCount + Int(fixed) <= IndexEntry.prefixLimit else {
            throw StorageError(.fileCorrupted, "index node \(node.ref): entry block header holds \(sharedCount) and \(fixed)")
        }
        try node.check(offset + 8, NodeLayout.aligned(sharedCount))
        shared = UnsafeRawBufferPointer(start: node.base + offset + 8, count: sharedCount)
        var position = offset + 8 + NodeLayout.aligned(sharedCount)
        if fixed == Self.variableSuffix {
            let ends = try node.packedInts(at: position)
            position += ends.byteSize
            guard ends.count == count else {
                throw StorageError(.fileCorrupted, "index node \(node.ref): entry block holds \(ends.count) entries, not \(count)")
            }
            self.ends = ends
            fixedSuffix = -1
        } else {
            ends = nil
            fixedSuffix = Int(fixed)
        }
        keys = try node.packedInts(at: position)
        position += keys.byteSize
        guard keys.count == count else {
            throw StorageError(.fileCorrupted, "index node \(node.ref): entry block holds \(keys.count) keys, not \(count)")
        }
        let total = fixedSuffix >= 0 ? Int64(fixedSuffix * count) : (count > 0 ? ends![count - 1] : 0)
        guard total >= 0, total <= Int64(node.length - position) else {
            throw StorageError(.fileCorrupted, "index node \(node.ref): entry block does not fit")
        }
        bytes = node.base + position
        byteCount = Int(total)
        ref = node.ref
    }

    var count: Int { keys.count }

    @inline(__always)
    func prefix(_ i: Int) throws(StorageError) -> IndexPrefixView {
        if fixedSuffix >= 0 {
            return IndexPrefixView(shared: shared, suffix: UnsafeRawBufferPointer(start: bytes + i * fixedSuffix, count: fixedSuffix))
        }
        let start = i == 0 ? 0 : ends![i - 1]
        let end = ends![i]
        guard start >= 0, start <= end, end <= Int64(byteCount), shared.count + Int(end - start) <= IndexEntry.prefixLimit else {
            throw StorageError(.fileCorrupted, "index node \(ref): entry offsets out of order")
        }
        return IndexPrefixView(shared: shared, suffix: UnsafeRawBufferPointer(start: bytes + Int(start), count: Int(end - start)))
    }

    func entry(_ i: Int) throws(StorageError) -> IndexEntry {
        let p = try prefix(i)
        return IndexEntry(shared: p.shared, suffix: p.suffix, key: keys[i])
    }

    /// -1, 0 or 1 as entry i compares with `entry`.
    @inline(__always)
    func compare(_ i: Int, _ entry: IndexEntry) throws(StorageError) -> Int {
        let p = try prefix(i)
        let c = entry.withPrefixBytes { p.compare($0) }
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
        // The shared bytes: the common beginning of every prefix. Sorted entries share what
        // the first and last share, but a damaged leaf need not be sorted, so every entry is
        // compared (each comparison can only shorten the shared part).
        var shared = entries.first?.prefixCount ?? 0
        if let first = entries.first {
            for entry in entries.dropFirst() where shared > 0 {
                shared = first.sharedPrefixLength(with: entry, limit: min(shared, entry.prefixCount))
            }
        }
        let firstLength = entries.first?.prefixCount ?? shared
        let fixed = entries.allSatisfy { $0.prefixCount == firstLength }
        w.u32(UInt32(shared))
        w.u32(fixed ? UInt32(firstLength - shared) : Self.variableSuffix)
        if let first = entries.first, shared > 0 { first.withPrefixBytes { w.raw(UnsafeRawBufferPointer(rebasing: $0[..<shared])) } }
        w.padToAlignment()
        if !fixed {
            var ends = [Int64]()
            ends.reserveCapacity(entries.count)
            var end: Int64 = 0
            for e in entries {
                end += Int64(e.prefixCount - shared)
                ends.append(end)
            }
            PackedInts.write(ends, to: &w)
        }
        PackedInts.write(entries, to: &w) { $0.key }
        let suffixBytes = entries.reduce(0) { $0 + $1.prefixCount - shared }
        w.reserve(suffixBytes) { out in
            var at = out
            for e in entries {
                e.withPrefixBytes { bytes in
                    let n = bytes.count - shared
                    if n > 0 { at.copyMemory(from: bytes.baseAddress! + shared, byteCount: n) }
                    at += n
                }
            }
        }
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
        let leaf = IndexLeaf(entries: entries)
        leaf.matchSource(node.ref)
        return leaf
    }

    package static func encodeLeaf(_ leaf: IndexLeaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        try encodeLeaf(leaf, context, sink, reusingSource: true)
    }

    package static func encodeLeafInFull(_ leaf: IndexLeaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        try encodeLeaf(leaf, context, sink, reusingSource: false)
    }

    private static func encodeLeaf(_ leaf: IndexLeaf, _ context: TreeContext, _ sink: NodeSink,
                                   reusingSource: Bool) throws(StorageError) -> Ref {
        if let encoded = leaf.takeEncoded(for: sink.version, reusingSource: reusingSource) {
            context.written?.reusedIndexLeaves += encoded.reusedBlocks
            return try sink.place(encoded.bytes)
        }
        let encoded = encodeNode(leaf, context, version: sink.version, reusingSource: reusingSource)
        context.written?.reusedIndexLeaves += encoded.reusedBlocks
        return try sink.place(encoded.bytes)
    }

    /// The leaf's node, for `version`; `reusedBlocks` is 1 when its block came from the
    /// leaf's source node.
    static func encodeNode(_ leaf: IndexLeaf, _ context: TreeContext, version: VersionID, reusingSource: Bool) -> PreEncodedLeaf {
        var w = NodeWriter(capacity: 64 + leaf.count * 24)
        w.u32(UInt32(leaf.count))
        w.u32(0)
        let source = reusingSource ? leaf.source.flatMap { IndexLeafSource($0, context) } : nil
        var reused = 0
        if source?.writeBlock(leaf, to: &w) == true {
            reused = 1
            #if DEBUG
            var full = NodeWriter(capacity: 64 + leaf.count * 24)
            full.u32(UInt32(leaf.count))
            full.u32(0)
            EntryBlockView.write(leaf.entries, to: &full)
            precondition(full.bytes == w.bytes, "an index leaf encoded from its source node \(source!.rows.ref) differs from its full encoding")
            #endif
        } else {
            EntryBlockView.write(leaf.entries, to: &w)
        }
        return PreEncodedLeaf(bytes: w.finish(kind: .indexLeaf, version: version), version: version, reusedBlocks: reused)
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
