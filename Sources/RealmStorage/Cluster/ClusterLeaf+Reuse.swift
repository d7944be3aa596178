// Encoding a changed cluster leaf from the node it came from.
//
// A one-object commit used to encode its whole cluster leaf again, a few hundred objects
// column by column, to change one row: most of a small commit's CPU time (callgrind, W2).
// A leaf buffer knows the node it was decoded from or last encoded to (its `source`) and, per
// column, how many of that node's rows still begin and end it unchanged (ClusterLeaf's edit
// methods keep both counts). Encoding then takes, per block:
//   - a block whose rows all stay and that gained none: the node's bytes, copied;
//   - a block whose rows all stay and that gained rows (at its end, or between two of its
//     rows): the node's block with the new values put in (ColumnCodec+Insert.swift), when its
//     parameters hold them;
//   - any other block: encoded from the values, as before.
// The result is the same bytes, to the byte, as encoding every value (debug builds check each
// such leaf against a full encoding). The source node belongs to the version the transaction
// builds on, so it is mapped and unchanged while the transaction lasts: the space it frees is
// not reused before the next commit (FreeSpace.swift).

/// The node a leaf buffer came from, opened for copying its blocks.
struct LeafSource {
    let rows: ClusterLeaf.SourceRows
    let view: ClusterLeafView

    /// Nil when no block of the node can be reused, which is known before its pages are
    /// touched (a bulk load's leaves are new or changed everywhere, and reading their nodes
    /// only cost page faults), or when the node cannot be read as the leaf it was (then
    /// everything is encoded).
    init?(_ rows: ClusterLeaf.SourceRows, _ context: TreeContext) {
        guard rows.count > 0, rows.keys.holdsAll(of: rows.count) || rows.columns.contains(where: { $0.holdsAll(of: rows.count) }),
              let node = try? context.node(rows.ref, .clusterLeaf),
              let view = try? ClusterLeafView(node), view.count == rows.count else { return nil }
        self.rows = rows
        self.view = view
    }

    /// Writes the keys block when the source's keys all stay; false when they do not.
    func writeKeys(_ leaf: ClusterLeaf, to w: inout NodeWriter) -> Bool {
        let n = rows.count, run = rows.keys
        guard run.holdsAll(of: n), leaf.keys.count >= n else { return false }
        if leaf.keys.count == n {
            w.raw(view.keys.blockBytes)
            return true
        }
        let added = leaf.keys[run.leading..<(leaf.keys.count - run.rest(of: n))]
        guard view.keys.holds(added) else { return false }
        view.keys.writeInserting(added, at: run.leading, to: &w)
        return true
    }

    /// Writes the block of scalar column `c` when the source's rows of it all stay and its
    /// block holds the new ones; false otherwise.
    func writeColumn(_ c: Int, _ type: ColumnType, _ values: [Value], to w: inout NodeWriter) -> Bool {
        let n = rows.count, run = rows.columns[c]
        guard run.holdsAll(of: n), values.count >= n, let old = try? view.column(c, type) else { return false }
        if values.count == n {
            w.raw(UnsafeRawBufferPointer(start: old.start, count: old.byteSize))
            return true
        }
        return ColumnCodec.writeInserting(old, values[run.leading..<(values.count - run.rest(of: n))], at: run.leading, to: &w)
    }

    /// The same for list column `c`, whose lists are at `refs` (new lists already written).
    /// `sealed`: the block to write stores seals; only a block of the same kind is reused,
    /// and a sealed one only whole (its seals are not extended in place).
    func writeListRefs(_ c: Int, _ refs: [Ref], sealed: Bool, to w: inout NodeWriter) -> Bool {
        let n = rows.count, run = rows.columns[c]
        guard run.holdsAll(of: n), refs.count >= n, let old = try? view.listRefs(c), old.isSealed == sealed else { return false }
        if refs.count == n {
            w.raw(old.blockBytes)
            return true
        }
        if sealed { return false }
        let added = refs[run.leading..<(refs.count - run.rest(of: n))].map { Int64(bitPattern: $0.offset) }
        guard old.refs.holds(added) else { return false }
        w.u8(ColumnCodec.listRefsTag); w.u8(0); w.u8(0); w.u8(0)
        w.u32(UInt32(refs.count))
        old.refs.writeInserting(added, at: run.leading, to: &w)
        return true
    }
}
