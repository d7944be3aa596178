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
    /// its memory bounded (an entry is 56 bytes, an integer's 16) and each merge still edits a
    /// leaf once for many entries.
    static let pendingIndexEntryLimit = 1 << 16

    /// An integer value's pending entry, as two numbers: while nothing else is pending in its
    /// column, a bulk insert's entries (ages, counts, seconds) cost no `IndexEntry` until they
    /// are merged, and sort as plain numbers.
    struct PendingInt: Equatable {
        var value: Int64
        var key: Int64
    }

    func deferIndexInsert(_ state: TableState, _ c: Int, _ entry: IndexEntry) throws(StorageError) {
        preparePending(state)
        if !state.pendingIndexInts[c].isEmpty {
            // Another kind of value (a null): the integers join the entries, in their order.
            state.pendingIndexEntries[c] = state.pendingIndexInts[c].map { IndexEntry(value: .int($0.value), key: $0.key) }
            state.pendingIndexInts[c] = []
        }
        state.pendingIndexEntries[c].append(entry)
        state.hasPendingIndexEntries = true
        if state.pendingIndexEntries[c].count >= Self.pendingIndexEntryLimit { try flushIndexEntries(state, c) }
    }

    func deferIndexInsert(_ state: TableState, _ c: Int, int value: Int64, key: Int64) throws(StorageError) {
        preparePending(state)
        guard state.pendingIndexEntries[c].isEmpty else {
            try deferIndexInsert(state, c, IndexEntry(value: .int(value), key: key))
            return
        }
        state.pendingIndexInts[c].append(PendingInt(value: value, key: key))
        state.hasPendingIndexEntries = true
        if state.pendingIndexInts[c].count >= Self.pendingIndexEntryLimit { try flushIndexEntries(state, c) }
    }

    /// One pending array of each kind per column.
    private func preparePending(_ state: TableState) {
        if state.pendingIndexEntries.count != state.indexes.count {
            // Columns were added since (schema changes flush first, so nothing is lost).
            state.pendingIndexEntries = Array(repeating: [], count: state.indexes.count)
            state.pendingIndexInts = Array(repeating: [], count: state.indexes.count)
        }
    }

    /// Merges every pending entry of `state` into its index trees.
    func flushIndexEntries(_ state: TableState) throws(StorageError) {
        guard state.hasPendingIndexEntries else { return }
        for c in state.pendingIndexEntries.indices where state.hasPending(in: c) {
            try flushIndexEntries(state, c)
        }
        state.hasPendingIndexEntries = false
    }

    private func flushIndexEntries(_ state: TableState, _ c: Int) throws(StorageError) {
        let entries = state.pendingIndexEntries[c]
        let ints = state.pendingIndexInts[c]
        state.pendingIndexEntries[c] = []
        state.pendingIndexInts[c] = []
        guard state.indexes[c] != nil else { return }
        // One kind at a time: integers join the entries when anything else comes.
        let sorted = ints.isEmpty ? Self.sortedDistinct(entries) : Self.sortedDistinct(ints)
        try state.indexes[c]!.insertSorted(sorted[...])
    }

    /// The entries of `pending` in order without repeats: by value, then key. Objects appended
    /// come with ascending keys, and then a stable sort by value alone does (a radix sort on
    /// the bytes in which the values differ: ages differ in one byte, one pass).
    static func sortedDistinct(_ pending: [PendingInt]) -> [IndexEntry] {
        var keysAscend = true
        for i in pending.indices.dropFirst() where pending[i - 1].key >= pending[i].key {
            keysAscend = false
            break
        }
        let pairs = keysAscend ? radixSortedByValue(pending) : pending.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        var sorted: [IndexEntry] = []
        sorted.reserveCapacity(pairs.count)
        var last: PendingInt?
        for pair in pairs where pair != last {
            sorted.append(IndexEntry(value: .int(pair.value), key: pair.key))
            last = pair
        }
        return sorted
    }

    /// A stable LSD radix sort of `pairs` by value (as the index orders integers), one
    /// counting pass per byte in which some values differ.
    static func radixSortedByValue(_ pairs: [PendingInt]) -> [PendingInt] {
        guard let first = pairs.first else { return pairs }
        var varying: UInt64 = 0
        for pair in pairs { varying |= IndexKey.orderedBits(pair.value) ^ IndexKey.orderedBits(first.value) }
        var source = pairs
        var target = pairs
        var starts = [Int](repeating: 0, count: 257)
        for byte in 0..<8 where (varying >> (8 * UInt64(byte))) & 0xFF != 0 {
            let shift = 8 * UInt64(byte)
            // Through the buffers: this runs once per pending entry and byte.
            source.withUnsafeBufferPointer { source in
                target.withUnsafeMutableBufferPointer { target in
                    starts.withUnsafeMutableBufferPointer { starts in
                        for d in starts.indices { starts[d] = 0 }
                        for pair in source { starts[Int((IndexKey.orderedBits(pair.value) >> shift) & 0xFF) + 1] += 1 }
                        for d in 0..<256 { starts[d + 1] += starts[d] }
                        for pair in source {
                            let d = Int((IndexKey.orderedBits(pair.value) >> shift) & 0xFF)
                            target[starts[d]] = pair
                            starts[d] += 1
                        }
                    }
                }
            }
            swap(&source, &target)
        }
        return source
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
        guard state.hasPendingIndexEntries, c < state.pendingIndexEntries.count, state.hasPending(in: c) else { return false }
        if let last = state.pendingIndexInts[c].last {
            if IndexEntry(value: .int(last.value), key: last.key) == entry {
                state.pendingIndexInts[c].removeLast()
                return true
            }
        } else if state.pendingIndexEntries[c].last == entry {
            state.pendingIndexEntries[c].removeLast()
            return true
        }
        try flushIndexEntries(state, c)
        return false
    }
}

extension WriteTransaction.TableState {
    /// Whether column `c` has entries not yet in its tree.
    func hasPending(in c: Int) -> Bool {
        c < pendingIndexEntries.count && (!pendingIndexEntries[c].isEmpty || !pendingIndexInts[c].isEmpty)
    }
}
