/// A node of a tree inside a write transaction: committed (by ref) or changed (a buffer).
package enum TreeNode<F: TreeFormat> {
    case clean(Ref)
    case leaf(F.Leaf)
    case inner(InnerBuffer<F>)
}

/// A changed inner node.
package final class InnerBuffer<F: TreeFormat> {
    // @exclusivity(unchecked): buffers are confined to their write transaction's thread, and
    // the dynamic checks cost more than the edits on the insert path (measured with callgrind).
    // Any change to the keys drops their cached encoding (`encodedKeys`). A `didSet` that
    // does not read the old value keeps edits in place (no copy of the array).
    @exclusivity(unchecked) package var keys: [F.Key] { didSet { encodedKeys = nil } }
    @exclusivity(unchecked) package var children: [TreeNode<F>]
    @exclusivity(unchecked) package var counts: [Int]
    /// The sum of `counts`, kept up to date so that an edit costs O(1) per level.
    @exclusivity(unchecked) package var total: Int
    /// The keys as `BTree.encodeInner` last wrote them, until they change. A one-object
    /// commit rewrites the inner nodes above its leaf with one child ref and one count changed
    /// and the keys as they were; encoding the keys again (an index's entry block, with its
    /// shared-prefix search) was about a tenth of such a commit's instructions on the
    /// 1,000,000-object file (callgrind, W2).
    @exclusivity(unchecked) var encodedKeys: [UInt8]?

    package init(keys: [F.Key], children: [TreeNode<F>], counts: [Int]) {
        self.keys = keys
        self.children = children
        self.counts = counts
        self.total = counts.reduce(0, +)
    }

    /// Sets child `i`'s separator, keeping the cached encoding when it is the same: after
    /// an edit below a child its separator is set again, and it rarely changes.
    func setKey(_ i: Int, _ key: F.Key) {
        if keys[i] != key { keys[i] = key }
    }

    func setCount(_ i: Int, _ n: Int) {
        total += n - counts[i]
        counts[i] = n
    }

    /// Adds `n` to the count of the last child (an append below it).
    func addToLastCount(_ n: Int) {
        counts[counts.count - 1] += n
        total += n
    }

    func remove(at i: Int) {
        total -= counts[i]
        keys.remove(at: i)
        children.remove(at: i)
        counts.remove(at: i)
    }

    func insert(_ child: TreeNode<F>, key: F.Key, count: Int, at i: Int) {
        keys.insert(key, at: i)
        children.insert(child, at: i)
        counts.insert(count, at: i)
        total += count
    }

    /// Moves children `index...` into a new buffer.
    func splitOff(at index: Int) -> InnerBuffer<F> {
        let right = InnerBuffer(keys: Array(keys[index...]), children: Array(children[index...]), counts: Array(counts[index...]))
        keys.removeSubrange(index...)
        children.removeSubrange(index...)
        counts.removeSubrange(index...)
        total -= right.total
        return right
    }

    func absorb(_ other: InnerBuffer<F>) {
        keys += other.keys
        children += other.children
        counts += other.counts
        total += other.total
    }

    /// The child to descend into for `key`: the last whose separator is <= key.
    package func childIndex(for key: F.Key) -> Int {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if keys[mid] <= key { low = mid + 1 } else { high = mid }
        }
        return max(low - 1, 0)
    }
}

/// A committed inner node, read in place.
package struct InnerView<F: TreeFormat> {
    package let node: NodeView
    package let refs: PackedInts
    package let counts: PackedInts
    package let keysOffset: Int
    /// Where the children's seals start (flag `SealedRefs.flag`), else 0: no seals.
    let sealsOffset: Int

    package init(_ node: NodeView) throws(StorageError) {
        self.node = node
        refs = try node.packedInts(at: NodeLayout.headerSize)
        counts = try node.packedInts(at: NodeLayout.headerSize + refs.byteSize)
        let afterCounts = NodeLayout.headerSize + refs.byteSize + counts.byteSize
        guard refs.count == counts.count, refs.count > 0 else {
            throw StorageError(.fileCorrupted, "inner node \(node.ref) has \(refs.count) children and \(counts.count) counts")
        }
        if node.flags & SealedRefs.flag != 0 {
            try node.check(afterCounts, refs.count * 8)
            sealsOffset = afterCounts
            keysOffset = afterCounts + refs.count * 8
        } else {
            sealsOffset = 0
            keysOffset = afterCounts
        }
    }

    package var childCount: Int { refs.count }
    /// Child `i`'s ref, with its seal when the node stores seals (checked in range at init).
    @inline(__always) package func child(_ i: Int) -> Ref {
        let offset = UInt64(bitPattern: refs[i])
        guard sealsOffset != 0 else { return Ref(offset) }
        return Ref(offset, seal: UInt64(littleEndian: node.base.loadUnaligned(fromByteOffset: sealsOffset + i * 8, as: UInt64.self)))
    }

    /// Writes the seals of `refs`, u64 each, as an inner node stores them after its counts.
    static func writeSeals(_ refs: [Ref], to w: inout NodeWriter) {
        for ref in refs { w.u64(ref.seal) }
    }

    package func childIndex(for key: F.Key) throws(StorageError) -> Int {
        try F.childIndex(node, keysAt: keysOffset, count: refs.count, for: key)
    }

    package var totalCount: Int {
        var total = 0
        for i in 0..<counts.count { total &+= Int(counts[i]) }
        return total
    }
}

/// Where a leaf lives: committed (read in place) or in a write transaction's buffer.
package enum LeafLocation<F: TreeFormat> {
    case clean(NodeView)
    case dirty(F.Leaf)
}

/// The buffers from a tree's root down to its last leaf (`BTree.rightEdge`). A class, not a
/// tuple: every append reads it, and copying a tuple of an array and a leaf cost two retains
/// and two releases.
final class RightEdge<F: TreeFormat> {
    let path: [InnerBuffer<F>]
    let leaf: F.Leaf

    init(path: [InnerBuffer<F>], leaf: F.Leaf) {
        self.path = path
        self.leaf = leaf
    }
}

/// A copy-on-write B+tree rooted in `root`, read and edited through `context`.
package struct BTree<F: TreeFormat> {
    package var root: TreeNode<F>
    /// Replaced when the table's columns change within a write transaction.
    package var context: TreeContext
    /// The buffers from the root down to the last leaf, remembered between appends so that
    /// a run of appends skips the descent (see `appendToLastLeaf`). Any other edit forgets it.
    var rightEdge: RightEdge<F>?

    package init(root: Ref, context: TreeContext) {
        self.root = root.isNone ? .leaf(F.emptyLeaf(context)) : .clean(root)
        self.context = context
    }

    // MARK: Reading

    /// The leaf that holds (or would hold) `key`.
    package func leaf(for key: F.Key) throws(StorageError) -> LeafLocation<F> {
        var node = root
        var depth = 0
        while true {
            switch node {
            case .leaf(let leaf): return .dirty(leaf)
            case .inner(let inner): node = inner.children[inner.childIndex(for: key)]
            case .clean(var ref):
                while true {
                    let view = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
                    if view.kind == F.leafKind { return .clean(view.node) }
                    let inner = try InnerView<F>(view.node)
                    ref = inner.child(try inner.childIndex(for: key))
                    depth += 1
                    if depth > 64 { throw StorageError(.fileCorrupted, "tree deeper than 64 levels: a cycle of refs") }
                }
            }
            depth += 1
        }
    }

    /// Number of entries in the whole tree.
    package func count() throws(StorageError) -> Int { try Self.count(root, context) }

    static func count(_ node: TreeNode<F>, _ context: TreeContext) throws(StorageError) -> Int {
        switch node {
        case .leaf(let leaf): return leaf.count
        case .inner(let inner): return inner.total
        case .clean(let ref):
            let view = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
            if view.kind == F.leafKind { return try F.leafCount(view.node) }
            return try InnerView<F>(view.node).totalCount
        }
    }

    /// Visits the leaves in key order, starting with the one that holds `start` (or the first
    /// leaf), until `body` returns false. Returns false if `body` stopped the walk.
    @discardableResult
    package func forEachLeaf(from start: F.Key? = nil, _ body: (LeafLocation<F>) throws(StorageError) -> Bool) throws(StorageError) -> Bool {
        try Self.walk(root, from: start, context, depth: 0, body)
    }

    static func walk(_ node: TreeNode<F>, from start: F.Key?, _ context: TreeContext, depth: Int,
                     _ body: (LeafLocation<F>) throws(StorageError) -> Bool) throws(StorageError) -> Bool {
        guard depth <= 64 else { throw StorageError(.fileCorrupted, "tree deeper than 64 levels: a cycle of refs") }
        switch node {
        case .leaf(let leaf): return try body(.dirty(leaf))
        case .inner(let inner):
            let first = start.map { inner.childIndex(for: $0) } ?? 0
            for i in first..<inner.children.count {
                if !(try walk(inner.children[i], from: i == first ? start : nil, context, depth: depth + 1, body)) { return false }
            }
            return true
        case .clean(let ref):
            let view = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
            if view.kind == F.leafKind { return try body(.clean(view.node)) }
            let inner = try InnerView<F>(view.node)
            let first = try start.map { k throws(StorageError) in try inner.childIndex(for: k) } ?? 0
            for i in first..<inner.childCount {
                if !(try walk(.clean(inner.child(i)), from: i == first ? start : nil, context, depth: depth + 1, body)) { return false }
            }
            return true
        }
    }
}

extension TreeContext {
    /// A node that must be one of two kinds (a tree's inner or leaf kind).
    package func node(_ ref: Ref, _ a: NodeKind, orLeaf b: NodeKind) throws(StorageError) -> (node: NodeView, kind: NodeKind) {
        let offset = ref.offset
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, limit >= 16, offset <= limit - 16 else {
            throw StorageError(.fileCorrupted, "node \(ref) lies outside the file (size \(limit))")
        }
        let kindByte = base.load(fromByteOffset: Int(offset), as: UInt8.self)
        let kind = kindByte == b.rawValue ? b : a
        return (try NodeView(ref: ref, mapping: base, limit: limit, expecting: kind, check: check), kind)
    }
}

extension BTree {
    /// Visits every leaf in key order like `forEachLeaf`, and before each child of a committed
    /// inner node calls `ahead` with the refs of the committed siblings three and two places
    /// after it (distance 3, then 2). A scan uses it to start loading what it will read from the
    /// next leaves while it reads this one: leaves lie kilobytes apart, so the hardware
    /// prefetcher, which stops at page boundaries, cannot run ahead across them.
    package func forEachLeaf(lookahead ahead: (Ref, Int) -> Void, _ body: (LeafLocation<F>) throws(StorageError) -> Bool) throws(StorageError) {
        _ = try Self.walk(root, context, depth: 0, lookahead: ahead, body)
    }

    static func walk(_ node: TreeNode<F>, _ context: TreeContext, depth: Int, lookahead ahead: (Ref, Int) -> Void,
                     _ body: (LeafLocation<F>) throws(StorageError) -> Bool) throws(StorageError) -> Bool {
        guard depth <= 64 else { throw StorageError(.fileCorrupted, "tree deeper than 64 levels: a cycle of refs") }
        switch node {
        case .leaf(let leaf): return try body(.dirty(leaf))
        case .inner(let inner):
            for child in inner.children {
                if !(try walk(child, context, depth: depth + 1, lookahead: ahead, body)) { return false }
            }
            return true
        case .clean(let ref):
            let view = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
            if view.kind == F.leafKind { return try body(.clean(view.node)) }
            let inner = try InnerView<F>(view.node)
            let count = inner.childCount
            for i in 0..<count {
                if i + 3 < count { ahead(inner.child(i + 3), 3) }
                if i + 2 < count { ahead(inner.child(i + 2), 2) }
                if !(try walk(.clean(inner.child(i)), context, depth: depth + 1, lookahead: ahead, body)) { return false }
            }
            return true
        }
    }
}
