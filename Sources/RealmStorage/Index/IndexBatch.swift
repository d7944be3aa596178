// Inserting many index entries at once. A bulk insert adds one entry per object to each
// non-unique index, at positions spread over the whole tree (ages, names). One at a time, each
// entry pays a descent, a binary search and a shift of the leaf's tail; sorted and merged, each
// touched leaf is edited once per batch (see WriteTransaction's pending index entries).

extension IndexLeaf {
    /// Merges sorted `run` into the entries; entries already present are skipped.
    func merge(_ run: ArraySlice<IndexEntry>) {
        guard let first = run.first, let last = run.last else { return }
        if entries.isEmpty || entries[entries.count - 1] < first {
            append(contentsOf: run)
            appendedAtEnd = true
            return
        }
        appendedAtEnd = false
        // The usual batch (a bulk insert's entries of one value, with keys above the value's
        // earlier ones) goes in at one place: moved in there, the entries after it shift once,
        // instead of the whole leaf being copied into a merged array.
        let at = lowerBound(entries, from: 0, first)
        if at == entries.count || last < entries[at] {
            insert(contentsOf: run, at: at)
            return
        }
        if run.count <= 8 {
            // A few entries (a small commit's): each goes where it belongs, a shift of the
            // entries after it, instead of the whole leaf being copied into a new array.
            for entry in run {
                let (i, found) = position(of: entry)
                if !found { insert(entry, at: i) }
            }
            return
        }
        var merged: [IndexEntry] = []
        merged.reserveCapacity(entries.count + run.count)
        // Runs of either side between two elements of the other are copied whole: new
        // entries usually land in a few places (the end of each value's run of keys).
        var i = 0
        var j = run.startIndex
        while i < entries.count, j < run.endIndex {
            let p = lowerBound(entries, from: i, run[j])
            merged.append(contentsOf: entries[i..<p])
            i = p
            if i < entries.count, entries[i] == run[j] {
                j += 1  // already present
                continue
            }
            let q = i < entries.count ? lowerBound(run, from: j, entries[i]) : run.endIndex
            merged.append(contentsOf: run[j..<q])
            j = q
        }
        merged.append(contentsOf: entries[i...])
        merged.append(contentsOf: run[j...])
        replaceEntries(merged, keepingBefore: lowerBound(entries, from: 0, first), from: lowerBound(entries, from: 0, last))
    }
}

extension BTree where F == IndexFormat {
    /// Inserts `entries` (sorted ascending, no two equal) with one descent per leaf they
    /// reach; entries already in the tree are skipped.
    package mutating func insertSorted(_ entries: ArraySlice<IndexEntry>) throws(StorageError) {
        guard !entries.isEmpty else { return }
        rightEdge = nil
        try Self.makeDirty(&root, context)
        try Self.insert(entries, into: root, context)
        try fixRoot()
    }

    private static func insert(_ run: ArraySlice<IndexEntry>, into node: TreeNode<F>, _ context: TreeContext) throws(StorageError) {
        switch node {
        case .leaf(let leaf):
            leaf.merge(run)
        case .inner(let inner):
            // Children right to left: a split child's new pieces go in after it, and a merge
            // leaves a node covering both ranges at the lower position, so the children still
            // to visit keep their positions and separators.
            var end = run.endIndex
            var i = inner.children.count - 1
            while end > run.startIndex, i >= 0 {
                let start = i == 0 ? run.startIndex : lowerBound(run[..<end], from: run.startIndex, inner.keys[i])
                if start < end {
                    try makeDirty(&inner.children[i], context)
                    try insert(run[start..<end], into: inner.children[i], context)
                    try fixChild(inner, i, context)
                }
                end = start
                i -= 1
            }
        case .clean:
            preconditionFailure("insert reached a committed node: makeDirty must run first")
        }
    }
}

/// The first position at or after `start` whose entry is not below `entry`.
private func lowerBound<C: RandomAccessCollection>(_ sorted: C, from start: C.Index, _ entry: IndexEntry) -> C.Index
where C.Element == IndexEntry, C.Index == Int {
    var low = start, high = sorted.endIndex
    while low < high {
        let mid = (low + high) >> 1
        if sorted[mid] < entry { low = mid + 1 } else { high = mid }
    }
    return low
}
