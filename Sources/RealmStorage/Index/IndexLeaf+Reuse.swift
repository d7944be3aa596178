// Encoding a changed index leaf from the node it came from.
//
// A small commit inserts a few entries into an index leaf of a few hundred (an indexed age,
// a date: the new object's entry goes at the end of its value's run, inside the leaf), and
// encoding the whole leaf again was, after the cluster leaf, the largest part of a one-object
// commit's CPU time (callgrind, W2). A leaf buffer knows the node it was decoded from or last
// encoded to and how many of that node's entries still begin and end it (IndexLeaf's edit
// methods keep both counts). When every entry of the node is still there and the new ones
// keep the node's entry block parameters (the shared prefix and the fixed suffix length, and
// keys within the packed width), the new block is the node's block with the new entries put
// in: the shared bytes and the two runs of suffixes copied, the keys shifted. That is the
// same bytes as encoding every entry (debug builds check each such leaf); anything else, a
// removal among them, is encoded in full. The source node belongs to the version the
// transaction builds on, so it stays mapped and unchanged while the transaction lasts.

/// The node an index leaf buffer came from, opened for copying its entry block.
struct IndexLeafSource {
    let rows: IndexLeaf.SourceEntries
    let block: EntryBlockView

    /// Nil when the node's block cannot be reused, which is known before its pages are touched,
    /// or when the node cannot be read as the leaf it was (then everything is encoded).
    init?(_ rows: IndexLeaf.SourceEntries, _ context: TreeContext) {
        guard rows.count > 0, rows.entries.leading >= 1, rows.entries.holdsAll(of: rows.count),
              let node = try? context.node(rows.ref, .indexLeaf),
              let view = try? IndexLeafView(node), view.entries.count == rows.count else { return nil }
        self.rows = rows
        self.block = view.entries
    }

    /// Writes the leaf's entry block from the source's when it holds all of the source's
    /// entries (the first among them) and the others keep its parameters; false, having
    /// written nothing, otherwise.
    func writeBlock(_ leaf: IndexLeaf, to w: inout NodeWriter) -> Bool {
        let n = rows.count
        let entries = leaf.entries
        let shared = block.shared.count, suffix = block.fixedSuffix
        let run = rows.entries
        guard run.leading >= 1, run.holdsAll(of: n), entries.count >= n, suffix >= 0 else { return false }
        let middle = entries[run.leading..<(entries.count - run.rest(of: n))]
        let first = entries[0]
        for entry in middle {
            guard entry.prefixCount == shared + suffix, first.sharedPrefixLength(with: entry, limit: shared) == shared else { return false }
        }
        let keys = middle.map(\.key)
        guard block.keys.holds(keys) else { return false }

        w.u32(UInt32(shared))
        w.u32(UInt32(suffix))
        w.raw(block.shared)
        w.padToAlignment()
        block.keys.writeInserting(keys, at: run.leading, to: &w)
        let (leading, trailing, bytes) = (run.leading, run.rest(of: n), block.bytes)
        w.reserve(entries.count * suffix) { out in
            out.copyMemory(from: bytes, byteCount: leading * suffix)
            var at = out + leading * suffix
            for entry in middle {
                entry.withPrefixBytes { prefix in
                    if suffix > 0 { at.copyMemory(from: prefix.baseAddress! + shared, byteCount: suffix) }
                }
                at += suffix
            }
            at.copyMemory(from: bytes + (n - trailing) * suffix, byteCount: trailing * suffix)
        }
        w.padToAlignment()
        return true
    }
}
