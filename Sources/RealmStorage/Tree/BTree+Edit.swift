// Editing a tree: copy the path to the changed leaf, change it, then restore the invariants
// on the way back up.
//
// Invariants after every edit (checked by `verify` and the small-fan-out tests):
//   1. Every leaf and inner node except the root holds at least one entry; no inner node holds
//      more than `innerCapacity` children; no leaf more than `leafCapacity` entries.
//   2. Separator key i of an inner node equals the first key of child i's subtree.
//   3. The count recorded for child i equals the number of entries in child i's subtree.
//   4. A root inner node has at least two children (a single child becomes the root).
// Nodes under a third full are merged with a neighbour when the two fit in one node, so a
// tree that shrinks does not keep a trail of near-empty nodes.

extension BTree {
    /// Appends through the remembered right edge of the tree: when the last leaf is a buffer
    /// that `fits` accepts (the append neither splits it nor changes its first key), runs
    /// `body` on it and adds the entries it appended to the counts on the path. Returns nil
    /// when the fast path does not apply; the caller then uses `modifyLeaf`.
    @inline(__always)
    package mutating func appendToLastLeaf<R>(fits: (F.Leaf) -> Bool, _ body: (F.Leaf) -> R) -> R? {
        if rightEdge == nil {
            // After an edit elsewhere the edge is forgotten; inserts in random order would
            // rebuild it (an allocation) only to find the entry does not go at the end, so
            // look at the last leaf first.
            guard let last = Self.lastBufferedLeaf(root), last.count > 0, fits(last) else { return nil }
            rightEdge = Self.findRightEdge(root)
        }
        // The tree holds the edge and its buffers for as long as this runs: borrowed, not
        // retained (each retain is an atomic operation, and this runs once per object).
        guard let edge = rightEdge.map({ Unmanaged.passUnretained($0) }) else { return nil }
        return edge._withUnsafeGuaranteedRef { edge in
            let leaf = edge.leaf
            guard leaf.count > 0, fits(leaf) else { return nil }
            let before = leaf.count
            let result = body(leaf)
            let added = leaf.count - before
            for inner in edge.path.indices {
                Unmanaged.passUnretained(edge.path[inner])._withUnsafeGuaranteedRef { $0.addToLastCount(added) }
            }
            return result
        }
    }

    /// The last key of the tree when the path to the last leaf is all buffers (remembered for
    /// appends), else nil.
    package mutating func lastEntryOfBufferedEdge() -> F.Key? where F == IndexFormat {
        if rightEdge == nil { rightEdge = Self.findRightEdge(root) }
        return rightEdge?.leaf.entries.last
    }

    /// The last leaf when the whole path to it is buffers, else nil (allocates nothing).
    static func lastBufferedLeaf(_ root: TreeNode<F>) -> F.Leaf? {
        var node = root
        while true {
            switch node {
            case .clean: return nil
            case .leaf(let leaf): return leaf
            case .inner(let inner): node = inner.children[inner.children.count - 1]
            }
        }
    }

    /// The buffers on the path to the last leaf, or nil when part of it is committed.
    static func findRightEdge(_ root: TreeNode<F>) -> RightEdge<F>? {
        var path: [InnerBuffer<F>] = []
        var node = root
        while true {
            switch node {
            case .clean: return nil
            case .leaf(let leaf): return RightEdge(path: path, leaf: leaf)
            case .inner(let inner):
                path.append(inner)
                node = inner.children[inner.children.count - 1]
            }
        }
    }

    /// Runs `body` on the leaf that holds (or should receive) `key`, then rebalances.
    package mutating func modifyLeaf<R>(for key: F.Key, _ body: (F.Leaf) throws(StorageError) -> R) throws(StorageError) -> R {
        rightEdge = nil
        try Self.makeDirty(&root, context)
        let result = try Self.modify(root, key, context, body)
        try fixRoot()
        return result
    }

    static func modify<R>(_ node: TreeNode<F>, _ key: F.Key, _ context: TreeContext,
                          _ body: (F.Leaf) throws(StorageError) -> R) throws(StorageError) -> R {
        switch node {
        case .leaf(let leaf): return try body(leaf)
        case .inner(let inner):
            let i = inner.childIndex(for: key)
            try makeDirty(&inner.children[i], context)
            let result = try modify(inner.children[i], key, context, body)
            try fixChild(inner, i, context)
            return result
        case .clean: preconditionFailure("modify reached a committed node: makeDirty must run first")
        }
    }

    /// Replaces a committed node by a buffer holding the same entries, and frees its space.
    static func makeDirty(_ node: inout TreeNode<F>, _ context: TreeContext) throws(StorageError) {
        guard case .clean(let ref) = node else { return }
        let (view, kind) = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
        if kind == F.leafKind {
            if let kept = try F.takeDecodedLeaf(view, context) {
                node = .leaf(kept)
            } else {
                node = .leaf(try F.decodeLeaf(view, context))
            }
        } else if let kept = F.takeDecodedInner(view, context) {
            node = .inner(kept)
        } else {
            let inner = try InnerView<F>(view)
            let keys = try F.readKeys(view, at: inner.keysOffset, count: inner.childCount)
            var children = [TreeNode<F>]()
            var counts = [Int]()
            children.reserveCapacity(inner.childCount)
            counts.reserveCapacity(inner.childCount)
            var total = 0
            for i in 0..<inner.childCount {
                let count = inner.counts[i]
                let (sum, overflow) = total.addingReportingOverflow(Int(count))
                guard count > 0, !overflow, sum <= Int(Int32.max) * 1024 else {
                    throw StorageError(.fileCorrupted, "inner node \(ref) records impossible object counts")
                }
                total = sum
                children.append(.clean(inner.child(i)))
                counts.append(Int(count))
            }
            node = .inner(InnerBuffer(keys: keys, children: children, counts: counts))
        }
        context.free(view)
    }

    /// Restores the invariants for child `i` of `inner` after the child changed.
    static func fixChild(_ inner: InnerBuffer<F>, _ i: Int, _ context: TreeContext) throws(StorageError) {
        let limits = context.limits
        switch inner.children[i] {
        case .leaf(let leaf):
            if leaf.count == 0 { inner.remove(at: i); return }
            if isOverfull(leaf, limits) {
                let pieces = splitLeaf(leaf, limits)
                inner.setKey(i, leaf.firstKey!)
                inner.setCount(i, leaf.count)
                for (offset, piece) in pieces.enumerated() {
                    inner.insert(.leaf(piece), key: piece.firstKey!, count: piece.count, at: i + 1 + offset)
                }
                return
            }
            inner.setKey(i, leaf.firstKey!)
            inner.setCount(i, leaf.count)
            // Not a leaf a run of inserts is filling (splitPoint): the neighbour's keys would
            // come back into the leaf the run rewrites at each of its commits.
            if leaf.count * 3 < limits.leafCapacity && leaf.ascendingRunEnd == nil { try mergeLeaf(inner, i, context) }
        case .inner(let child):
            if child.children.isEmpty { inner.remove(at: i); return }
            if child.children.count > limits.innerCapacity {
                let pieces = splitInner(child, limits)
                inner.setKey(i, child.keys[0])
                inner.setCount(i, child.total)
                for (offset, piece) in pieces.enumerated() {
                    inner.insert(.inner(piece), key: piece.keys[0], count: piece.total, at: i + 1 + offset)
                }
                return
            }
            inner.setKey(i, child.keys[0])
            inner.setCount(i, child.total)
            if child.children.count * 3 < limits.innerCapacity { try mergeInner(inner, i, context) }
        case .clean:
            break
        }
    }

    static func isOverfull(_ leaf: F.Leaf, _ limits: TreeLimits) -> Bool {
        leaf.count > limits.leafCapacity || (leaf.count > 1 && leaf.byteEstimate > limits.leafBytes)
    }

    /// Splits an overfull leaf until no piece is overfull; `leaf` keeps the first piece and
    /// the others are returned in key order.
    static func splitLeaf(_ leaf: F.Leaf, _ limits: TreeLimits) -> [F.Leaf] {
        var pieces = [leaf] + cutAppendedLeaf(leaf, limits)
        var i = 0
        while i < pieces.count {
            let piece = pieces[i]
            guard isOverfull(piece, limits) else { i += 1; continue }
            let (at, runLeavesIt) = splitPoint(piece, limits)
            let right = piece.splitOff(at: at)
            right.appendedAtEnd = piece.appendedAtEnd
            if right.appendedAtEnd { right.reserveCapacity(limits.leafCapacity) }
            piece.leftBehindByAppends = runLeavesIt
            piece.appendedAtEnd = false
            pieces.insert(right, at: i + 1)
        }
        return Array(pieces.dropFirst())
    }

    /// A leaf that appends filled far past its capacity (the first sorted batch of index
    /// entries into an empty tree: up to 65,536 of them) is cut into full leaves from its end.
    /// Cut from the front, one piece at a time, the rest was copied again at every cut:
    /// quadratic in the leaf's size. Returns the pieces after `leaf`, which keeps the first.
    private static func cutAppendedLeaf(_ leaf: F.Leaf, _ limits: TreeLimits) -> [F.Leaf] {
        guard leaf.appendedAtEnd, leaf.count > 2 * limits.leafCapacity else { return [] }
        var pieces: [F.Leaf] = []
        var cut = (leaf.count - 1) / limits.leafCapacity * limits.leafCapacity
        while cut > 0 {
            pieces.append(leaf.splitOff(at: cut))
            cut -= limits.leafCapacity
        }
        pieces.reverse()
        // As `splitLeaf` leaves them: the appends go on in the last piece only.
        for piece in [leaf] + pieces.dropLast() {
            piece.appendedAtEnd = false
            piece.leftBehindByAppends = true
        }
        pieces[pieces.count - 1].appendedAtEnd = true
        pieces[pieces.count - 1].reserveCapacity(limits.leafCapacity)
        return pieces
    }

    /// Where to split an overfull leaf, and whether the inserts filling it go on past the left
    /// piece (so it is left behind full).
    ///
    /// Halves, except after a run of ascending inserts: an append workload fills the last
    /// leaf, so the left piece stays full; a run in the middle (one writer's growing ids
    /// among other writers' ranges) ends the left piece, so the run goes on at the end of a
    /// leaf, which fills, while the keys after it move to a leaf the run no longer rewrites.
    /// Halving would leave the run's leaf half to fully packed with keys it never touches,
    /// each of its commits writing them again (InnoDB splits at the insert point for the
    /// same reason).
    static func splitPoint(_ leaf: F.Leaf, _ limits: TreeLimits) -> (at: Int, runLeavesIt: Bool) {
        let half = max(1, leaf.count / 2)
        guard leaf.count > limits.leafCapacity else { return (half, leaf.appendedAtEnd) }
        if leaf.appendedAtEnd { return (limits.leafCapacity, true) }
        guard let end = leaf.ascendingRunEnd, end > 0 else { return (half, false) }
        return end >= leaf.count ? (limits.leafCapacity, true) : (end, false)
    }

    static func splitInner(_ inner: InnerBuffer<F>, _ limits: TreeLimits) -> [InnerBuffer<F>] {
        var pieces = [inner]
        var i = 0
        while i < pieces.count {
            let piece = pieces[i]
            guard piece.children.count > limits.innerCapacity else { i += 1; continue }
            let at = endsInAppend(piece) ? limits.innerCapacity : piece.children.count / 2
            pieces.insert(piece.splitOff(at: at), at: i + 1)
        }
        return Array(pieces.dropFirst())
    }

    /// Whether the rightmost leaf below `inner` is being appended to.
    private static func endsInAppend(_ inner: InnerBuffer<F>) -> Bool {
        var node = inner.children.last!
        while true {
            switch node {
            case .leaf(let leaf): return leaf.appendedAtEnd
            case .inner(let next): node = next.children.last!
            case .clean: return false
            }
        }
    }

    /// Merges child `i` (a leaf) with a neighbour when both fit in one leaf.
    static func mergeLeaf(_ inner: InnerBuffer<F>, _ i: Int, _ context: TreeContext) throws(StorageError) {
        guard inner.children.count > 1 else { return }
        let j = i + 1 < inner.children.count ? i + 1 : i - 1
        guard inner.counts[i] + inner.counts[j] <= context.limits.leafCapacity else { return }
        try makeDirty(&inner.children[j], context)
        let (left, right) = (min(i, j), max(i, j))
        guard case .leaf(let a) = inner.children[left], case .leaf(let b) = inner.children[right] else { return }
        guard a.byteEstimate + b.byteEstimate <= context.limits.leafBytes else { return }
        a.absorb(b)
        inner.setCount(left, a.count)
        inner.setKey(left, a.firstKey!)
        inner.remove(at: right)
    }

    static func mergeInner(_ inner: InnerBuffer<F>, _ i: Int, _ context: TreeContext) throws(StorageError) {
        guard inner.children.count > 1 else { return }
        let j = i + 1 < inner.children.count ? i + 1 : i - 1
        try makeDirty(&inner.children[j], context)
        let (left, right) = (min(i, j), max(i, j))
        guard case .inner(let a) = inner.children[left], case .inner(let b) = inner.children[right] else { return }
        guard a.children.count + b.children.count <= context.limits.innerCapacity else { return }
        a.absorb(b)
        inner.setCount(left, a.total)
        inner.setKey(left, a.keys[0])
        inner.remove(at: right)
    }

    /// Grows or shrinks the root after an edit (invariant 4).
    mutating func fixRoot() throws(StorageError) {
        let limits = context.limits
        while true {
            switch root {
            case .leaf(let leaf):
                guard Self.isOverfull(leaf, limits) else { return }
                let pieces = [leaf] + Self.splitLeaf(leaf, limits)
                root = .inner(InnerBuffer(keys: pieces.map { $0.firstKey! }, children: pieces.map { .leaf($0) },
                                          counts: pieces.map(\.count)))
            case .inner(let inner):
                if inner.children.isEmpty { root = .leaf(F.emptyLeaf(context)); return }
                if inner.children.count == 1 { root = inner.children[0]; continue }
                guard inner.children.count > limits.innerCapacity else { return }
                let pieces = [inner] + Self.splitInner(inner, limits)
                root = .inner(InnerBuffer(keys: pieces.map { $0.keys[0] }, children: pieces.map { .inner($0) },
                                          counts: pieces.map(\.total)))
            case .clean:
                return
            }
        }
    }
}

extension BTree {
    /// Encodes every buffer bottom-up through `sink`; afterwards the tree is all committed.
    /// The buffers are used up: leaves and inner nodes go to the next transaction through
    /// `context.written` (an inner node's children become the refs just written), so nothing
    /// may hold on to them and edit or read them as this tree's.
    package mutating func commit(to sink: NodeSink) throws(StorageError) -> Ref {
        rightEdge = nil
        let ref = try Self.encode(root, context, sink)
        root = .clean(ref)
        return ref
    }

    static func encode(_ node: TreeNode<F>, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        switch node {
        case .clean(let ref): return ref
        case .leaf(let leaf):
            let ref = try F.encodeLeaf(leaf, context, sink)
            F.keepDecodedLeaf(leaf, at: ref, context)
            return ref
        case .inner(let inner):
            var refs = [Ref]()
            refs.reserveCapacity(inner.children.count)
            for child in inner.children {
                refs.append(try encode(child, context, sink))
            }
            let ref = try sink.place(encodeInner(inner, refs: refs, version: sink.version, sealed: sink.storesSeals))
            F.keepDecodedInner(inner, refs: refs, at: ref, context)
            return ref
        }
    }

    /// The bytes of inner node `inner` whose children were written to `refs`; `sealed`: the
    /// file stores seals (TreeFormat.swift's inner layout).
    static func encodeInner(_ inner: InnerBuffer<F>, refs: [Ref], version: VersionID, sealed: Bool) -> [UInt8] {
        #if DEBUG
        // Debug builds check the cache against the keys as they are: a change to them that
        // did not go through `keys` (so kept a stale encoding) would write wrong separators.
        if let cached = inner.encodedKeys {
            inner.encodedKeys = nil
            precondition(encodeKeys(inner) == cached, "an inner node's cached key encoding is stale")
        }
        #endif
        let keys = inner.encodedKeys ?? encodeKeys(inner)
        var w = NodeWriter(capacity: 64 + refs.count * (sealed ? 24 : 16) + keys.count)
        PackedInts.write(refs.map { Int64(bitPattern: $0.offset) }, to: &w)
        // As Int64s in place (Int is 64 bits wide here): a lazy map called its closure per
        // child, unspecialised.
        inner.counts.withUnsafeBufferPointer { counts in
            counts.withMemoryRebound(to: Int64.self) { PackedInts.write($0, to: &w) }
        }
        if sealed { InnerView<F>.writeSeals(refs, to: &w) }
        // The key block starts 8-aligned here as in `encodeKeys`' scratch node, so its
        // padding comes out the same.
        assert(w.count & 7 == 0, "an inner node's key block starts unaligned")
        keys.withUnsafeBytes { w.raw($0) }
        return w.finish(kind: F.innerKind, version: version, flags: sealed ? SealedRefs.flag : 0)
    }

    /// Encodes `inner`'s keys alone (as they follow the refs and counts) and caches them.
    private static func encodeKeys(_ inner: InnerBuffer<F>) -> [UInt8] {
        var scratch = NodeWriter(capacity: 64 + inner.keys.count * 16)
        let start = scratch.count
        F.writeKeys(inner.keys, to: &scratch)
        let keys = Array(scratch.bytes[start...])
        inner.encodedKeys = keys
        return keys
    }
}
