// Decoded leaves handed from one commit to the next write transaction.
//
// A run of small commits keeps changing the same few leaves: the last cluster leaf of a
// table that grows by appends, the index leaf its new entries go to, a hot object's leaf.
// Without help each commit encodes those leaves and the next transaction decodes them again
// from the file, then frees the buffers (the larger part of a one-object commit's CPU time,
// measured with callgrind). A commit therefore keeps the buffers it encoded, keyed by the ref
// each was written to, and the next write transaction takes a buffer instead of decoding the
// node, when it builds on exactly that commit. Inner nodes are kept the same way, their
// children turned into the refs the commit wrote (`keepDecodedInner`); everything below about
// leaves holds for them.
//
// Why a buffer is a faithful copy of its node:
//   - It is the value encoding started from, so decoding the node gives the same entries.
//     Cluster leaves with unwritten lists are not kept (their cells name no ref yet), and a
//     cluster leaf is only taken for the same column specs it was encoded with (decoding
//     depends on them).
//   - It is only offered to a transaction whose base is the commit that wrote it (same
//     version, same lineage, no allocator reset in between): that version still holds the
//     node at that ref. A failed commit stores nothing, and a failed group sync changes the
//     lineage, so leaves of a version that never became durable are never used for another.
//   - Taking a buffer removes it: the transaction edits it in place.
//   - What a commit neither took nor freed is still its version's node; it is carried over
//     to the leaves that commit keeps (`carryOver`).
// Debug builds encode every buffer taken again and check that it gives the node's bytes.
//
// Everything here belongs to the write lane's holder, like the buffers themselves.

/// Leaf buffers by the ref their node was written to (see above). Its properties skip dynamic
/// exclusivity checks: only the write lane's holder touches them.
package final class DecodedLeaves {
    /// The version whose nodes these are, and its lineage (Store+GroupCommit.swift).
    let version: UInt64
    let lineage: UInt64
    /// The buffers, each with the version of the commit that last wrote it (the oldest go
    /// first when the budget is exceeded).
    @exclusivity(unchecked) private var clusters: [UInt64: (columns: [ColumnSpec], leaf: ClusterLeaf, keptAt: UInt64)] = [:]
    @exclusivity(unchecked) private var indexes: [UInt64: (leaf: IndexLeaf, keptAt: UInt64)] = [:]
    /// Inner nodes (an `InnerBuffer` of either format, its children all committed refs), kept
    /// like leaves: a one-object commit otherwise decodes the inner nodes above the leaves it
    /// changes, every key of them (an index's root: 3,700 instructions a commit, callgrind W2).
    @exclusivity(unchecked) private var inners: [UInt64: (node: AnyObject, size: Int, keptAt: UInt64)] = [:]
    /// Roughly the memory the kept buffers take; nothing more is kept past `budget`.
    @exclusivity(unchecked) private var bytes = 0
    /// How many buffers a transaction took (for tests and profiling).
    @exclusivity(unchecked) private(set) var taken = 0
    /// How many inner nodes a transaction took.
    @exclusivity(unchecked) private(set) var takenInners = 0
    /// How many blocks of the cluster leaves this commit encoded were copied or extended from
    /// the nodes those leaves came from, and how many index leaves were written from theirs
    /// (ClusterLeaf+Reuse.swift, IndexLeaf+Reuse.swift; for tests and profiling).
    var reusedBlocks = 0
    var reusedIndexLeaves = 0

    /// Enough for the leaves of a few dozen writers taking turns (a cluster leaf of 256
    /// five-column objects takes about 32 KiB decoded; 64 writers' cluster leaves and the
    /// index leaves their inserts reach, about 4 MiB) without holding much memory while the
    /// store is idle.
    static let defaultBudget = 8 << 20
    /// Roughly the bytes of buffers kept at most (tests use small ones).
    let budget: Int

    init(version: UInt64, lineage: UInt64, budget: Int = DecodedLeaves.defaultBudget) {
        self.version = version
        self.lineage = lineage
        self.budget = budget
    }

    var count: Int { clusters.count + indexes.count + inners.count }

    func keep(_ leaf: ClusterLeaf, at ref: Ref, columns: [ColumnSpec]) {
        // A full leaf an append stream left behind is not touched by it again: keeping the
        // leaves of a bulk load only held memory (W1: 8 MiB of them cost 6,000 page faults, 5%).
        guard !leaf.leftBehindByAppends else { return }
        for cells in leaf.lists {
            for cell in cells {
                if case .dirty = cell { return }
            }
        }
        guard admit(Self.size(of: leaf, columns)) else { return }
        leaf.appendedAtEnd = false
        leaf.matchSource(ref)
        clusters[ref.offset] = (columns, leaf, version)
    }

    func keep(_ leaf: IndexLeaf, at ref: Ref) {
        guard admit(Self.size(of: leaf)) else { return }
        leaf.appendedAtEnd = false
        leaf.matchSource(ref)
        indexes[ref.offset] = (leaf, version)
    }

    /// Moves over what `older` (kept for the version this transaction built on) still holds,
    /// after the leaves this commit wrote, as far as the budget allows: the transaction neither
    /// took nor freed those nodes, so the new version holds them unchanged at the same refs (a
    /// node leaves a version only by being freed, and what a version frees is not reused while
    /// it is the newest). So leaves a commit did not touch stay kept for the next ones (the
    /// writers of a busy server take turns at their leaves).
    ///
    /// `older` is spent by the transaction that took it, so its tables are moved, not copied:
    /// the work is in proportion to what this commit freed and wrote, not to what is kept (a
    /// copy per commit was 14% of a one-object commit's instructions, callgrind on W2).
    func carryOver(_ older: DecodedLeaves, freed: FreedNodes) {
        guard older.count > 0 else { return }
        var olderClusters = older.clusters, olderIndexes = older.indexes, olderInners = older.inners
        var olderBytes = older.bytes
        older.clusters = [:]
        older.indexes = [:]
        older.inners = [:]
        older.bytes = 0
        for entry in freed.entries {
            if let gone = olderClusters.removeValue(forKey: entry.ref.offset) {
                olderBytes -= Self.size(of: gone.leaf, gone.columns)
            } else if let gone = olderIndexes.removeValue(forKey: entry.ref.offset) {
                olderBytes -= Self.size(of: gone.leaf)
            } else if let gone = olderInners.removeValue(forKey: entry.ref.offset) {
                olderBytes -= gone.size
            }
        }
        // This commit's leaves first; a node it wrote cannot be one `older` holds (it was
        // written into space free in the base version), but a replaced entry is counted out.
        for (offset, entry) in clusters {
            if let replaced = olderClusters.updateValue(entry, forKey: offset) { olderBytes -= Self.size(of: replaced.leaf, replaced.columns) }
        }
        for (offset, entry) in indexes {
            if let replaced = olderIndexes.updateValue(entry, forKey: offset) { olderBytes -= Self.size(of: replaced.leaf) }
        }
        for (offset, entry) in inners {
            if let replaced = olderInners.updateValue(entry, forKey: offset) { olderBytes -= replaced.size }
        }
        var total = bytes + olderBytes
        if total > budget {
            // Over budget: the leaves written longest ago go, down to three quarters of the
            // budget (so that this sort happens once in many commits, not at every one). A
            // writer's leaf is rewritten at each of its commits; a leaf nobody writes ages.
            enum Kind { case cluster, index, inner }
            var candidates: [(keptAt: UInt64, offset: UInt64, kind: Kind, size: Int)] = []
            candidates.reserveCapacity(olderClusters.count + olderIndexes.count + olderInners.count)
            for (offset, entry) in olderClusters where entry.keptAt < version {
                candidates.append((entry.keptAt, offset, .cluster, Self.size(of: entry.leaf, entry.columns)))
            }
            for (offset, entry) in olderIndexes where entry.keptAt < version {
                candidates.append((entry.keptAt, offset, .index, Self.size(of: entry.leaf)))
            }
            for (offset, entry) in olderInners where entry.keptAt < version {
                candidates.append((entry.keptAt, offset, .inner, entry.size))
            }
            candidates.sort { $0.keptAt < $1.keptAt }
            for candidate in candidates {
                guard total > budget / 4 * 3 else { break }
                switch candidate.kind {
                case .cluster: olderClusters.removeValue(forKey: candidate.offset)
                case .index: olderIndexes.removeValue(forKey: candidate.offset)
                case .inner: olderInners.removeValue(forKey: candidate.offset)
                }
                total -= candidate.size
            }
        }
        clusters = olderClusters
        indexes = olderIndexes
        inners = olderInners
        bytes = total
    }

    private func admit(_ size: Int) -> Bool {
        guard bytes + size <= budget else { return false }
        bytes += size
        return true
    }

    private static func size(of leaf: ClusterLeaf, _ columns: [ColumnSpec]) -> Int {
        64 + leaf.keys.count * (8 + columns.count * MemoryLayout<Value>.stride)
    }

    private static func size(of leaf: IndexLeaf) -> Int {
        64 + leaf.entries.count * MemoryLayout<IndexEntry>.stride
    }

    func takeCluster(at ref: Ref, columns: [ColumnSpec]) -> ClusterLeaf? {
        guard let entry = clusters.removeValue(forKey: ref.offset) else { return nil }
        bytes -= Self.size(of: entry.leaf, entry.columns)
        guard entry.columns == columns else { return nil }
        taken += 1
        return entry.leaf
    }

    func takeIndex(at ref: Ref) -> IndexLeaf? {
        guard let entry = indexes.removeValue(forKey: ref.offset) else { return nil }
        bytes -= Self.size(of: entry.leaf)
        taken += 1
        return entry.leaf
    }

    /// Keeps `inner`, just encoded to `ref`, whose children are all committed refs.
    func keepInner<F: TreeFormat>(_ inner: InnerBuffer<F>, at ref: Ref) {
        let size = 64 + inner.children.count * (MemoryLayout<F.Key>.stride + MemoryLayout<TreeNode<F>>.stride + 8)
            + (inner.encodedKeys?.count ?? 0)
        guard admit(size) else { return }
        inners[ref.offset] = (inner, size, version)
    }

    func takeInner<F: TreeFormat>(at ref: Ref, as format: F.Type) -> InnerBuffer<F>? {
        guard let entry = inners.removeValue(forKey: ref.offset) else { return nil }
        bytes -= entry.size
        // A node of the other format cannot sit at the same ref of the same version.
        guard let inner = entry.node as? InnerBuffer<F> else { return nil }
        takenInners += 1
        return inner
    }
}

extension TreeFormat {
    /// The buffer the previous commit kept for the leaf `node`, if any, else nil (the caller
    /// decodes). Debug builds check it against the node.
    static func takeDecodedLeaf(_ node: NodeView, _ context: TreeContext) throws(StorageError) -> Leaf? {
        guard let reuse = context.reuse else { return nil }
        let leaf = take(node.ref, from: reuse, context)
        #if DEBUG
        if let leaf { try checkSameContent(leaf, node, context) }
        #endif
        return leaf
    }

    /// Keeps `leaf`, just encoded to `ref` for the commit, for the next transaction.
    static func keepDecodedLeaf(_ leaf: Leaf, at ref: Ref, _ context: TreeContext) {
        guard let written = context.written else { return }
        keep(leaf, at: ref, in: written, context)
    }

    /// The buffer the previous commit kept for the inner node `node`, if any, else nil (the
    /// caller decodes). Debug builds check it against the node.
    static func takeDecodedInner(_ node: NodeView, _ context: TreeContext) -> InnerBuffer<Self>? {
        guard let reuse = context.reuse, let inner = reuse.takeInner(at: node.ref, as: Self.self) else { return nil }
        #if DEBUG
        let refs = inner.children.map { child -> Ref in
            guard case .clean(let ref) = child else { preconditionFailure("a kept inner node has a child buffer") }
            return ref
        }
        precondition(inner.total == inner.counts.reduce(0, +), "a kept inner node's total drifted from its counts")
        var encoded = BTree<Self>.encodeInner(inner, refs: refs, version: VersionID(node.version), sealed: context.check.sealing.storesSeals)
        context.check.sealing.stampHeader(&encoded, offset: node.ref.offset)
        precondition(encoded.elementsEqual(UnsafeRawBufferPointer(start: node.base, count: node.length)),
                     "a kept inner node differs from its node \(node.ref)")
        #endif
        return inner
    }

    /// Keeps `inner`, just encoded to `ref` from children encoded to `refs`, for the next
    /// transaction: its children become those refs (the transaction's tree is done with).
    static func keepDecodedInner(_ inner: InnerBuffer<Self>, refs: [Ref], at ref: Ref, _ context: TreeContext) {
        guard let written = context.written else { return }
        for i in inner.children.indices {
            // A committed child was "encoded" to its own ref: nothing to retire or replace
            // (most of them: an inner node has up to 256 children and a small commit changes one).
            if case .clean = inner.children[i] { continue }
            context.retired?.retire(inner.children[i])
            inner.children[i] = .clean(refs[i])
        }
        written.keepInner(inner, at: ref)
    }

    #if DEBUG
    /// Traps unless `leaf` encodes to the node's bytes exactly: the node was written from this
    /// buffer, and encoding is deterministic.
    private static func checkSameContent(_ leaf: Leaf, _ node: NodeView, _ context: TreeContext) throws(StorageError) {
        let sink = ScratchSink(version: VersionID(node.version), storesSeals: context.check.sealing.storesSeals)
        _ = try encodeLeafInFull(leaf, context, sink)
        var encoded = sink.bytes
        context.check.sealing.stampHeader(&encoded, offset: node.ref.offset)
        precondition(encoded.elementsEqual(UnsafeRawBufferPointer(start: node.base, count: node.length)),
                     "a kept leaf buffer differs from its node \(node.ref)")
    }
    #endif
}

extension ClusterFormat {
    package static func take(_ ref: Ref, from kept: DecodedLeaves, _ context: TreeContext) -> ClusterLeaf? {
        kept.takeCluster(at: ref, columns: context.columns)
    }

    package static func keep(_ leaf: ClusterLeaf, at ref: Ref, in kept: DecodedLeaves, _ context: TreeContext) {
        kept.keep(leaf, at: ref, columns: context.columns)
    }
}

extension IndexFormat {
    package static func take(_ ref: Ref, from kept: DecodedLeaves, _ context: TreeContext) -> IndexLeaf? {
        kept.takeIndex(at: ref)
    }

    package static func keep(_ leaf: IndexLeaf, at ref: Ref, in kept: DecodedLeaves, _ context: TreeContext) {
        kept.keep(leaf, at: ref)
    }
}

#if DEBUG
/// Collects encoded nodes in memory (for comparing encodings).
private final class ScratchSink: NodeSink {
    var bytes: [UInt8] = []
    let version: VersionID
    let storesSeals: Bool
    init(version: VersionID, storesSeals: Bool) {
        self.version = version
        self.storesSeals = storesSeals
    }
    func place(_ node: [UInt8]) throws(StorageError) -> Ref {
        defer { bytes += node }
        return Ref(UInt64(4096 + bytes.count))
    }
}
#endif
