// Moving a tree's nodes out of the end of the file, a few per commit (online shrinking:
// Allocator/OnlineShrink.swift has the design).
//
// A node lies past the limit when any of its bytes do. Such a node is made a buffer
// (`makeDirty`), exactly as an edit would make it: the commit writes it again where the
// allocator puts it, below the limit, and its old place joins the free list tagged with the
// versions that reach it. Its parent must name the new place, so a committed inner node above
// a node that moves becomes a buffer too; the path to the root is rewritten as for any edit.
// Contents never change: no entry, count or key of the tree is touched, so the invariants of
// BTree+Edit.swift hold as they did.
//
// The walk resumes from a key, in key order, and stops at a budget of leaves looked at and
// of bytes moved: a commit's extra work is bounded whatever the tree's size. A leaf below the
// limit is only looked at through its parent's ref and its own first 8 bytes (kind and length,
// bounds-checked), never decoded or verified: the walk reads what a scan would not.

/// What one commit's evacuation may still do (OnlineShrink.swift sets it).
struct EvacuationBudget {
    /// Leaves (and the nodes above them) still to be looked at.
    var visits: Int
    /// Bytes of nodes still to be moved.
    var bytes: Int
    /// Bytes this commit moved so far.
    var moved = 0

    var isSpent: Bool { visits <= 0 || bytes <= 0 }
}

/// How far a walk got.
enum EvacuationProgress<Key> {
    /// The whole tree from the start key on was walked.
    case finished
    /// The budget ran out; the walk resumes at this key.
    case stopped(at: Key)
}

extension BTree {
    /// Moves the nodes past `limit`, from the leaf holding `start` (or the first) on, within
    /// `budget`.
    mutating func evacuate(from start: F.Key?, limit: UInt64, budget: inout EvacuationBudget) throws(StorageError) -> EvacuationProgress<F.Key> {
        // Buffers on the right edge may be replaced below: appends find it again.
        rightEdge = nil
        var resume: F.Key?
        let done = try Self.evacuate(&root, from: start, limit: limit, context, &budget, &resume, depth: 0)
        if done { return .finished }
        // Stopped before the first leaf of the tree: only a root leaf has no separator, and
        // the budget is checked before each leaf, so this is the root leaf itself.
        guard let resume else { return .finished }
        return .stopped(at: resume)
    }

    /// The node's kind and footprint (NodeSealing.swift) as its header states them, without
    /// verifying it (a leaf the walk only passes by), or nil when it lies outside the version.
    private static func peek(_ ref: Ref, _ context: TreeContext) -> (kind: UInt8, length: UInt64)? {
        let offset = ref.offset
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, context.limit >= 16, offset <= context.limit - 16 else { return nil }
        let kind = context.base.load(fromByteOffset: Int(offset), as: UInt8.self)
        let length = UInt32(littleEndian: context.base.loadUnaligned(fromByteOffset: Int(offset) + 4, as: UInt32.self))
        return (kind, context.check.sealing.footprint(UInt64(length)))
    }

    /// Walks `node` from `start` on. Returns true when its subtree was walked to the end; false
    /// when the budget ran out, with `resume` set by the lowest inner node that knows the first
    /// key of what is left.
    private static func evacuate(_ node: inout TreeNode<F>, from start: F.Key?, limit: UInt64, _ context: TreeContext,
                                 _ budget: inout EvacuationBudget, _ resume: inout F.Key?, depth: Int) throws(StorageError) -> Bool {
        guard depth <= 64 else { throw StorageError(.fileCorrupted, "tree deeper than 64 levels: a cycle of refs") }
        switch node {
        case .leaf(let leaf):
            // Written by this commit anyway, below the limit when there is room.
            guard !budget.isSpent else { return false }
            budget.visits -= 1
            try F.evacuateContents(of: leaf, limit: limit, context, &budget)
            return true
        case .inner(let inner):
            return try evacuateChildren(of: inner, from: start, limit: limit, context, &budget, &resume, depth: depth)
        case .clean(let ref):
            guard let header = peek(ref, context) else {
                throw StorageError(.fileCorrupted, "node \(ref) lies outside the file (size \(context.limit))")
            }
            let (kind, length) = header
            let past = ref.offset + length > limit
            if kind == F.leafKind.rawValue {
                guard !budget.isSpent else { return false }
                budget.visits -= 1
                let moves = past ? true : try F.reachesPast(limit, leaf: ref, context)
                guard moves else { return true }
                try makeDirty(&node, context)
                budget.bytes -= Int(length)
                budget.moved += Int(length)
                if case .leaf(let leaf) = node { try F.evacuateContents(of: leaf, limit: limit, context, &budget) }
                return true
            }
            if past {
                try makeDirty(&node, context)
                budget.bytes -= Int(length)
                budget.moved += Int(length)
                guard case .inner(let inner) = node else { return true }
                return try evacuateChildren(of: inner, from: start, limit: limit, context, &budget, &resume, depth: depth)
            }
            // A committed inner node below the limit: it becomes a buffer only when a child
            // below it moves (its ref to the child changes).
            let view = try context.node(ref, F.innerKind)
            let inner = try InnerView<F>(view)
            let first = try start.map { k throws(StorageError) in try inner.childIndex(for: k) } ?? 0
            for i in first..<inner.childCount {
                var child = TreeNode<F>.clean(inner.child(i))
                let before = budget.moved
                let finished = try evacuate(&child, from: i == first ? start : nil, limit: limit, context, &budget, &resume, depth: depth + 1)
                if budget.moved != before {
                    // Something below moved: continue on this node as a buffer, which holds the
                    // same children (the moved one replaced).
                    try makeDirty(&node, context)
                    guard case .inner(let buffer) = node else { preconditionFailure("an inner node decoded as a leaf") }
                    buffer.children[i] = child
                    if !finished {
                        if resume == nil { resume = buffer.keys[i] }
                        return false
                    }
                    return try evacuateChildren(of: buffer, fromChild: i + 1, limit: limit, context, &budget, &resume, depth: depth)
                }
                if !finished {
                    if resume == nil { resume = try F.readKeys(view, at: inner.keysOffset, count: inner.childCount)[i] }
                    return false
                }
            }
            return true
        }
    }

    private static func evacuateChildren(of inner: InnerBuffer<F>, from start: F.Key?, limit: UInt64, _ context: TreeContext,
                                         _ budget: inout EvacuationBudget, _ resume: inout F.Key?, depth: Int) throws(StorageError) -> Bool {
        let first = start.map { inner.childIndex(for: $0) } ?? 0
        guard first < inner.children.count else { return true }
        if !(try evacuate(&inner.children[first], from: start, limit: limit, context, &budget, &resume, depth: depth + 1)) {
            if resume == nil { resume = inner.keys[first] }
            return false
        }
        return try evacuateChildren(of: inner, fromChild: first + 1, limit: limit, context, &budget, &resume, depth: depth)
    }

    private static func evacuateChildren(of inner: InnerBuffer<F>, fromChild first: Int, limit: UInt64, _ context: TreeContext,
                                         _ budget: inout EvacuationBudget, _ resume: inout F.Key?, depth: Int) throws(StorageError) -> Bool {
        var i = first
        while i < inner.children.count {
            if !(try evacuate(&inner.children[i], from: nil, limit: limit, context, &budget, &resume, depth: depth + 1)) {
                if resume == nil { resume = inner.keys[i] }
                return false
            }
            i += 1
        }
        return true
    }
}
