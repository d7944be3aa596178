// Online shrinking and the nodes a cluster leaf refers to (BTree+Evacuate.swift).
//
// A list lives in a node of its own, named by the leaf. Moving the leaf does not move its
// lists: a list past the limit is read into the leaf's buffer instead (`ListCell.dirty`), so
// the commit writes it again, below the limit, and the leaf names the new place. The tree
// formats without such nodes (indexes) have nothing to do here.

extension ClusterFormat {
    /// Whether the committed leaf at `ref`, itself below `limit`, names a list node that is
    /// not: only tables with list columns pay for looking (the leaf is then verified and read).
    static func leafReachesPast(_ limit: UInt64, leaf ref: Ref, _ context: TreeContext) throws(StorageError) -> Bool {
        guard context.columns.contains(where: { $0.isList && !$0.removed }) else { return false }
        let view = try ClusterLeafView(try context.node(ref, .clusterLeaf))
        for (c, spec) in context.columns.enumerated() where spec.isList && !spec.removed {
            guard let refs = try view.listRefs(c) else { continue }
            for i in 0..<refs.count {
                if try isPast(limit, refs.ref(i), context) { return true }
            }
        }
        return false
    }

    /// Reads every list of `leaf` that lies past `limit` into the buffer, freeing its node.
    static func evacuateLists(of leaf: ClusterLeaf, limit: UInt64, _ context: TreeContext, _ budget: inout EvacuationBudget) throws(StorageError) {
        for (c, spec) in context.columns.enumerated() where spec.isList && !spec.removed && c < leaf.lists.count {
            for row in leaf.lists[c].indices {
                guard case .clean(let ref) = leaf.lists[c][row], try isPast(limit, ref, context) else { continue }
                let node = try context.node(ref, .list)
                let values = try readList(ref, spec.type, context)
                context.free(node)
                leaf.setList(.dirty(values), column: c, row: row)
                budget.bytes -= node.length
                budget.moved += node.length
            }
        }
    }

    /// Whether the list node at `ref` ends past `limit` (none: no).
    private static func isPast(_ limit: UInt64, _ ref: Ref, _ context: TreeContext) throws(StorageError) -> Bool {
        guard !ref.isNone else { return false }
        let offset = ref.offset
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, context.limit >= 16, offset <= context.limit - 16 else {
            throw StorageError(.fileCorrupted, "list \(ref) lies outside the file (size \(context.limit))")
        }
        let length = UInt32(littleEndian: context.base.loadUnaligned(fromByteOffset: Int(offset) + 4, as: UInt32.self))
        return offset + context.check.sealing.footprint(UInt64(length)) > limit
    }
}

extension TreeFormat {
    /// Online shrinking: whether a committed leaf below `limit` names a node past it.
    static func reachesPast(_ limit: UInt64, leaf ref: Ref, _ context: TreeContext) throws(StorageError) -> Bool {
        Self.self == ClusterFormat.self ? try ClusterFormat.leafReachesPast(limit, leaf: ref, context) : false
    }

    /// Online shrinking: moves what a leaf buffer names past `limit` into the commit.
    static func evacuateContents(of leaf: Leaf, limit: UInt64, _ context: TreeContext, _ budget: inout EvacuationBudget) throws(StorageError) {
        if let leaf = leaf as? ClusterLeaf { try ClusterFormat.evacuateLists(of: leaf, limit: limit, context, &budget) }
    }
}
