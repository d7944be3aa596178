// Batched index inserts. Entries for non-unique indexes wait in their table's state and go
// into the trees sorted, through `BTree.insertSorted`: a bulk insert then edits each index
// leaf once per batch instead of once per object. Unique indexes are checked on every insert
// and take their entries at once.
//
// Everything that reads or reshapes a table's index trees flushes first: `table(_:)` (every
// read inside the transaction), schema changes, removals that miss the pending entries, and
// the commit.

extension WriteTransaction {
    func deferIndexInsert(_ state: TableState, _ c: Int, _ entry: IndexEntry) {
        if state.pendingIndexEntries.count != state.indexes.count {
            // Columns were added since (schema changes flush first, so nothing is lost).
            state.pendingIndexEntries = Array(repeating: [], count: state.indexes.count)
        }
        state.pendingIndexEntries[c].append(entry)
        state.hasPendingIndexEntries = true
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
        var entries = state.pendingIndexEntries[c]
        state.pendingIndexEntries[c] = []
        guard state.indexes[c] != nil else { return }
        // Inserts arrive in object-key order; within one value they are already sorted.
        entries.sort()
        var distinct = 0
        for i in entries.indices where i == 0 || entries[i] != entries[distinct - 1] {
            entries[distinct] = entries[i]
            distinct += 1
        }
        try state.indexes[c]!.insertSorted(entries[..<distinct])
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
