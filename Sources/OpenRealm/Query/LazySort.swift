import RealmStorage

// Sorting by one property of the objects themselves, done only as far as it is read.
//
// Each object gets a sort key of two words read straight from the column blocks: a rank (nil
// first, then NaN, then values) and the value's first eight bytes in an order that compares
// as an unsigned integer (integers and doubles exactly; strings by their first eight bytes
// and dates by their seconds, with the full values compared only when those are equal).
// Reading `results[i]` sorts just the first i + 1 objects, found by a heap pass over the
// keys; reading further sorts further (in doubling steps), and enumerating sorts the rest. So
// "the first 100 by name" of a million objects costs one pass, as SQLite's ORDER BY … LIMIT
// does. Order and ties are those of `ResultsQuery.sortOrder` (stable: equal values keep key
// order), which the query tests check against the per-object sort.

final class LazySort {
    private struct Entry {
        var rank: UInt64
        var prefix: UInt64
        var position: Int32
    }

    private let keys: [ObjectKey]
    private var entries: [Entry]
    private let ascending: Bool
    /// Whether equal prefixes may hide different values (strings, dates).
    private let exact: Bool
    /// The full value of the object at a position, for ties the prefixes leave.
    private let value: (Int) -> Value
    /// `entries[..<sorted]` are in order and before all the others.
    private var sorted = 0

    var count: Int { keys.count }

    private init(keys: [ObjectKey], entries: [Entry], ascending: Bool, exact: Bool, value: @escaping (Int) -> Value) {
        self.keys = keys
        self.entries = entries
        self.ascending = ascending
        self.exact = exact
        self.value = value
    }

    /// A lazy sort of `keys` (ascending keys of `table`'s objects) by scalar column
    /// `column`, or nil when the column's type has no sort key (then sort the usual way).
    static func make(_ keys: [ObjectKey], _ table: TableView, _ column: ColumnKey, ascending: Bool) throws(StorageError) -> LazySort? {
        let type = table.info.columns[column.index].type
        guard [.int, .bool, .float, .double, .string, .timestamp].contains(type) else { return nil }
        // The keys are read in a pass over the table: worth it for a good part of the table,
        // and only when they come in key order.
        guard keys.count * 16 >= (try table.count()), zip(keys, keys.dropFirst()).allSatisfy({ $0.value < $1.value }) else { return nil }
        var entries: [Entry] = []
        entries.reserveCapacity(keys.count)
        var next = 0
        try table.forEachLeaf { (leaf) throws(StorageError) -> Bool in
            guard next < keys.count else { return false }
            let block = try leaf.column(column)
            for row in 0..<leaf.count where next < keys.count && leaf.key(row) == keys[next] {
                let (rank, prefix) = try sortKey(block, row)
                entries.append(Entry(rank: rank, prefix: prefix, position: Int32(next)))
                next += 1
            }
            return true
        }
        guard next == keys.count else { return nil }
        if !ascending {
            for i in entries.indices {
                entries[i].rank = ~entries[i].rank
                entries[i].prefix = ~entries[i].prefix
            }
        }
        // Read once each, as ties among long equal strings may compare them many times.
        var cache: [Int: Value] = [:]
        let value: (Int) -> Value = { position in
            if let known = cache[position] { return known }
            let v = (try? table.row(keys[position])?.value(column)) ?? .null
            cache[position] = v
            return v
        }
        return LazySort(keys: keys, entries: entries, ascending: ascending, exact: type != .string && type != .timestamp, value: value)
    }

    private static func sortKey(_ block: ScanLeaf.Column, _ row: Int) throws(StorageError) -> (UInt64, UInt64) {
        switch block {
        case .block(let view): return try view.sortKey(row)
        case .values(let values): return valueKey(values[row])
        case .uniform(let value): return valueKey(value)
        }
    }

    private static func valueKey(_ value: Value) -> (UInt64, UInt64) {
        switch value {
        case .null: return (0, 0)
        case .int(let i): return (2, UInt64(bitPattern: i) ^ (1 << 63))
        case .bool(let b): return (2, b ? 1 : 0)
        case .float(let f): return ColumnView.sortKey(Double(f))
        case .double(let d): return ColumnView.sortKey(d)
        case .string(let s): return (2, ColumnView.sortKey(s.utf8))
        case .timestamp(let t): return (2, UInt64(bitPattern: t.seconds) ^ (1 << 63))
        default: return (2, 0)
        }
    }

    // MARK: Order

    /// Whether `a` goes before `b`.
    private func before(_ a: Entry, _ b: Entry) -> Bool {
        if a.rank != b.rank { return a.rank < b.rank }
        if a.prefix != b.prefix { return a.prefix < b.prefix }
        if !exact && a.rank == (ascending ? 2 : ~2) {
            let c = ResultsQuery.sortOrder(value(Int(a.position)), value(Int(b.position)))
            if c != 0 { return ascending ? c < 0 : c > 0 }
        }
        return a.position < b.position
    }

    /// The key of the object at `index` in sorted order.
    func key(at index: Int) -> ObjectKey {
        if index >= sorted { extend(to: index + 1) }
        return keys[Int(entries[index].position)]
    }

    /// Every key, sorted.
    var all: [ObjectKey] {
        extend(to: keys.count)
        return entries.map { keys[Int($0.position)] }
    }

    /// Sorts at least the first `needed` objects, in place.
    private func extend(to needed: Int) {
        let target = Swift.min(keys.count, Swift.max(needed, 2 * sorted, 128))
        let take = target - sorted
        guard take > 0 else { return }
        let start = sorted
        entries.withUnsafeMutableBufferPointer { all in
            if start == 0 && take * 4 >= all.count {
                // Most of it, and the entries are still in position order: sort them all by
                // their digits (stable), then only ties of prefixes by their full values.
                radixSort(all)
                if !exact { sortTies(all) }
                return
            }
            if take * 4 >= all.count - start {
                // Most of what is left: sort it all.
                var tail = UnsafeMutableBufferPointer(rebasing: all[start...])
                tail.sort(by: before)
                return
            }
            // The `take` smallest of the rest, gathered at its front as a max-heap in one
            // pass, then sorted. `before` breaks every tie by position, so the order the
            // others are left in does not matter.
            var heap = UnsafeMutableBufferPointer(rebasing: all[start..<start + take])
            for i in stride(from: take / 2 - 1, through: 0, by: -1) { siftDown(heap, i) }
            for i in (start + take)..<all.count where before(all[i], heap[0]) {
                swap(&all[i], &heap[0])
                siftDown(heap, 0)
            }
            heap.sort(by: before)
        }
        sorted = take * 4 >= keys.count - start ? keys.count : target
    }

    /// Sorts `entries`, which are in position order, by rank then prefix, keeping position
    /// order among equals: a least-significant-digit radix sort, a byte at a time (the
    /// prefix's eight, then the rank's low byte, which orders the three ranks and their
    /// complements alike), skipping the bytes all entries share. A million entries sort in a
    /// few passes over 24 MB instead of twenty million calls of `before`.
    private func radixSort(_ entries: UnsafeMutableBufferPointer<Entry>) {
        let n = entries.count
        guard n > 1 else { return }
        let digits = 9
        var counts = [Int](repeating: 0, count: digits * 256)
        counts.withUnsafeMutableBufferPointer { counts in
            for entry in entries {
                for d in 0..<8 { counts[d * 256 + Int(truncatingIfNeeded: (entry.prefix >> (8 * UInt64(d))) & 0xFF)] += 1 }
                counts[8 * 256 + Int(truncatingIfNeeded: entry.rank & 0xFF)] += 1
            }
        }
        let spare = UnsafeMutableBufferPointer<Entry>.allocate(capacity: n)
        defer { spare.deallocate() }
        var source = entries, target = spare
        for d in 0..<digits {
            let histogram = counts[(d * 256)..<(d * 256 + 256)]
            if histogram.contains(n) { continue }
            var offsets = [Int](repeating: 0, count: 256)
            var sum = 0
            for (i, count) in histogram.enumerated() {
                offsets[i] = sum
                sum += count
            }
            offsets.withUnsafeMutableBufferPointer { offsets in
                for entry in source {
                    let digit = d == 8 ? entry.rank : entry.prefix >> (8 * UInt64(d))
                    let bucket = Int(truncatingIfNeeded: digit & 0xFF)
                    (target.baseAddress! + offsets[bucket]).initialize(to: entry)
                    offsets[bucket] += 1
                }
            }
            swap(&source, &target)
        }
        if source.baseAddress != entries.baseAddress { _ = entries.update(fromContentsOf: source) }
    }

    /// After `radixSort`, sorts each run of values whose prefixes are equal (strings sharing
    /// their first eight bytes, dates their seconds) by `before`.
    private func sortTies(_ entries: UnsafeMutableBufferPointer<Entry>) {
        var start = 0
        while start < entries.count {
            var end = start + 1
            while end < entries.count && entries[end].rank == entries[start].rank && entries[end].prefix == entries[start].prefix { end += 1 }
            if end - start > 1 {
                var run = UnsafeMutableBufferPointer(rebasing: entries[start..<end])
                run.sort(by: before)
            }
            start = end
        }
    }

    private func siftDown(_ h: UnsafeMutableBufferPointer<Entry>, _ start: Int) {
        var i = start
        while true {
            let l = 2 * i + 1, r = l + 1
            var largest = i
            if l < h.count && before(h[largest], h[l]) { largest = l }
            if r < h.count && before(h[largest], h[r]) { largest = r }
            if largest == i { return }
            h.swapAt(i, largest)
            i = largest
        }
    }
}
