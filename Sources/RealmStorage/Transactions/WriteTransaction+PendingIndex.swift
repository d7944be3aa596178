// Batched index inserts. Entries for non-unique indexes wait in their table's state and go
// into the trees sorted, through `BTree.insertSorted`: a bulk insert then edits each index
// leaf once per batch instead of once per object. Unique indexes are checked on every insert
// and take their entries at once.
//
// Everything that reads or reshapes a table's index trees flushes first: `table(_:)` (every
// read inside the transaction), schema changes, removals that miss the pending entries, and
// the commit.

extension WriteTransaction {
    /// Pending entries per column before they are merged anyway: a huge transaction keeps
    /// its memory bounded (an entry is 48 bytes) and each merge still edits a leaf once for
    /// many entries.
    static let pendingIndexEntryLimit = 1 << 16

    func deferIndexInsert(_ state: TableState, _ c: Int, _ entry: IndexEntry) throws(StorageError) {
        if state.pendingIndexEntries.count != state.indexes.count {
            // Columns were added since (schema changes flush first, so nothing is lost).
            state.pendingIndexEntries = Array(repeating: [], count: state.indexes.count)
        }
        state.pendingIndexEntries[c].append(entry)
        state.hasPendingIndexEntries = true
        if state.pendingIndexEntries[c].count >= Self.pendingIndexEntryLimit { try flushIndexEntries(state, c) }
    }

    /// Merges every pending entry of `state` into its index trees.
    func flushIndexEntries(_ state: TableState) throws(StorageError) {
        guard state.hasPendingIndexEntries else { return }
        for c in state.pendingIndexEntries.indices where !state.pendingIndexEntries[c].isEmpty {
            try flushIndexEntries(state, c)
        }
        state.hasPendingIndexEntries = false
    }

    private func flushIndexEntries(_ state: TableState, _ c: Int) throws(StorageError) {
        let entries = state.pendingIndexEntries[c]
        state.pendingIndexEntries[c] = []
        guard state.indexes[c] != nil else { return }
        try state.indexes[c]!.insertSorted(Self.sortedDistinct(entries)[...])
    }

    /// `entries` in order without repeats. Skips the sort when they are in order already (an
    /// index on an ever-growing value such as a creation date). Sorts plain numbers when every
    /// prefix is inline (the usual case), else positions: moving the entries themselves (48
    /// bytes with a reference) costs more than comparing them.
    static func sortedDistinct(_ entries: [IndexEntry]) -> [IndexEntry] {
        var inOrder = true
        for i in entries.indices.dropFirst() where !(entries[i - 1] < entries[i]) {
            inOrder = false
            break
        }
        if inOrder { return entries }
        var order: [Int32]
        if let keys = InlineSortKey.keys(entries) {
            order = InlineSortKey.sorted(keys).map(\.position)
        } else {
            order = (0..<Int32(entries.count)).map { $0 }
            entries.withUnsafeBufferPointer { buffer in order.sort { buffer[Int($0)] < buffer[Int($1)] } }
        }
        var sorted: [IndexEntry] = []
        sorted.reserveCapacity(entries.count)
        for i in order where sorted.isEmpty || sorted[sorted.count - 1] != entries[Int(i)] {
            sorted.append(entries[Int(i)])
        }
        return sorted
    }

    /// Takes `entry` back out of the pending entries when it is the last one (an object
    /// changed or deleted right after it was inserted); otherwise flushes the column so that
    /// the caller finds the entry in the tree. Returns whether the entry was pending.
    func removePendingIndexEntry(_ state: TableState, _ c: Int, _ entry: IndexEntry) throws(StorageError) -> Bool {
        guard state.hasPendingIndexEntries, c < state.pendingIndexEntries.count,
              let last = state.pendingIndexEntries[c].last else { return false }
        if last == entry {
            state.pendingIndexEntries[c].removeLast()
            return true
        }
        try flushIndexEntries(state, c)
        return false
    }
}
