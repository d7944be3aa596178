// Proving a version free of damage: every node it reaches matches its checksum.
//
// The full check (Verify.swift) proves the file consistent: trees ordered, indexes equal to
// their objects, links resolving, space covered exactly. That decodes every value and looks
// up every link and index entry, minutes per GiB, and what it finds beyond damage are a
// writer's bugs. Damage (a flipped bit, a torn or misplaced page, a truncation) changes a
// node's bytes, and every node's checksum covers its bytes and its offset (NodeFormat.swift):
// so reading each node the version reaches once, through the checks every read makes, finds
// all the damage a read could meet, at the speed of the checksum. That is this walk, and what
// `Realm.Configuration.verifyIntegrityOnOpen` runs. It also marks each node verified in the
// mapping (VerifiedNodes.swift), so the reads after it pay nothing more.
//
// Reached: the top node, the commit record, the run header, the free list's chain, the
// schema, the history's change sets, and each table's cluster tree (inner nodes, leaves, and
// the lists the leaves name) and index trees. A node is decoded only as far as naming its
// children needs.

package struct NodeWalkReport: Sendable, Equatable {
    package var nodes = 0
    package var bytes: UInt64 = 0
}

extension ReadTransaction {
    /// Reads every node this version reaches through the checks of a read, checksum first;
    /// `visiting` is told each node's place, kind and length (tests that damage every kind).
    ///
    /// - Throws: `fileCorrupted` naming the first damaged node (its offset and kind).
    package func walkNodes(visiting: ((Ref, NodeKind, Int) -> Void)? = nil) throws(StorageError) -> NodeWalkReport {
        var walk = NodeWalk(context: context, visiting: visiting)
        try walk.visit(slot.topRef, .top)
        try walk.visit(slot.commitRecordRef, .commitRecord)
        if !slot.runHeader.isNone { try walk.visit(slot.runHeader, .runHeader) }
        // Decoding the free space reads its chain through the same checks.
        let free = try FreeSpace.decode(head: slot.freeListRef, mapping: context.base, logicalSize: slot.logicalSize, check: context.check)
        for node in free.chain {
            // A chain node's length here is its footprint (FreeListNode), the same under checksums.
            walk.count(Int(node.length))
            visiting?(node.ref, node.kind, Int(node.length))
        }
        if !top.schemaBlob.isNone { try walk.visit(top.schemaBlob, .blob) }
        for entry in top.history where !entry.ref.isNone { try walk.visit(entry.ref, .changeSet) }
        for info in top.tables {
            let columns = info.columns
            let lists = columns.indices.filter { columns[$0].isList && !columns[$0].removed }
            if !info.clusterRoot.isNone {
                try walk.tree(ClusterFormat.self, info.clusterRoot, depth: 0) { (leaf, walk) throws(StorageError) in
                    guard !lists.isEmpty else { return }
                    let view = try ClusterLeafView(leaf)
                    for c in lists {
                        guard let refs = try view.listRefs(c) else { continue }
                        for i in 0..<refs.count where !refs.ref(i).isNone { try walk.visit(refs.ref(i), .list) }
                    }
                }
            }
            for root in info.indexRoots where !root.isNone {
                try walk.tree(IndexFormat.self, root, depth: 0) { _, _ throws(StorageError) in }
            }
        }
        return walk.report
    }
}

struct NodeWalk {
    let context: TreeContext
    var visiting: ((Ref, NodeKind, Int) -> Void)?
    var report = NodeWalkReport()

    mutating func count(_ length: Int) {
        report.nodes += 1
        report.bytes += UInt64(length)
    }

    mutating func visit(_ ref: Ref, _ kind: NodeKind) throws(StorageError) {
        let length = try context.node(ref, kind).length
        count(context.check.sealing.footprint(length))
        visiting?(ref, kind, length)
    }

    /// Reads a committed tree's nodes, handing each leaf to `leaf`.
    mutating func tree<F: TreeFormat>(_ format: F.Type, _ ref: Ref, depth: Int,
                                      _ leaf: (NodeView, inout NodeWalk) throws(StorageError) -> Void) throws(StorageError) {
        guard depth <= 64 else { throw StorageError(.fileCorrupted, "tree deeper than 64 levels at \(ref)") }
        let (node, kind) = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
        count(context.check.sealing.footprint(node.length))
        visiting?(ref, kind, node.length)
        if kind == F.leafKind { return try leaf(node, &self) }
        let inner = try InnerView<F>(node)
        for i in 0..<inner.childCount { try tree(format, inner.child(i), depth: depth + 1, leaf) }
    }
}
