// Sorting pending index entries (see WriteTransaction+PendingIndex). Most indexed values
// encode in at most 24 bytes, kept inline in the entry; as plain numbers they sort without
// touching the entries. Entries arrive in object-key order when objects are appended, and
// then only the prefixes need sorting, stably: a radix sort on just the bytes in which the
// prefixes differ (an index of ages differs in one byte: one pass).

/// An inline index entry as plain numbers that order like the entry.
struct InlineSortKey: Comparable {
    var w0: UInt64, w1: UInt64, w2: UInt64
    var count: UInt8
    var key: Int64
    var position: Int32

    /// The keys of `entries`, or nil when a prefix is not inline.
    static func keys(_ entries: [IndexEntry]) -> [InlineSortKey]? {
        var keys: [InlineSortKey] = []
        keys.reserveCapacity(entries.count)
        for (i, entry) in entries.enumerated() {
            guard let (w0, w1, w2, count) = entry.inlineOrderWords else { return nil }
            keys.append(InlineSortKey(w0: w0, w1: w1, w2: w2, count: count, key: entry.key, position: Int32(i)))
        }
        return keys
    }

    static func < (a: InlineSortKey, b: InlineSortKey) -> Bool {
        if a.w0 != b.w0 { return a.w0 < b.w0 }
        if a.w1 != b.w1 { return a.w1 < b.w1 }
        if a.w2 != b.w2 { return a.w2 < b.w2 }
        if a.count != b.count { return a.count < b.count }
        return a.key < b.key
    }
}

extension InlineSortKey {
    /// `keys` in order: by radix when their object keys ascend, else by comparison.
    static func sorted(_ keys: [InlineSortKey]) -> [InlineSortKey] {
        for i in keys.indices.dropFirst() where keys[i - 1].key >= keys[i].key { return keys.sorted() }
        return radixSorted(keys)
    }

    /// A stable LSD radix sort on (w0, w1, w2, count), skipping the bytes all keys share.
    static func radixSorted(_ keys: [InlineSortKey]) -> [InlineSortKey] {
        guard let first = keys.first else { return keys }
        // Bits that differ somewhere: OR of each key's difference from the first.
        var varying: (UInt64, UInt64, UInt64, UInt8) = (0, 0, 0, 0)
        for k in keys {
            varying.0 |= k.w0 ^ first.w0
            varying.1 |= k.w1 ^ first.w1
            varying.2 |= k.w2 ^ first.w2
            varying.3 |= k.count ^ first.count
        }
        var source = keys
        var target = keys
        /// One stable counting pass on the byte `digit` picks out.
        func pass(_ digit: (InlineSortKey) -> Int) {
            var starts = [Int](repeating: 0, count: 257)
            for k in source { starts[digit(k) + 1] += 1 }
            for d in 0..<256 { starts[d + 1] += starts[d] }
            for k in source {
                let d = digit(k)
                target[starts[d]] = k
                starts[d] += 1
            }
            swap(&source, &target)
        }
        // Least significant first: the length, then w2, w1, w0 from their low bytes up.
        if varying.3 != 0 { pass { Int($0.count) } }
        for (word, bits) in [(2, varying.2), (1, varying.1), (0, varying.0)] where bits != 0 {
            for byte in 0..<8 where (bits >> (8 * byte)) & 0xFF != 0 {
                let shift = UInt64(8 * byte)
                switch word {
                case 2: pass { Int(($0.w2 >> shift) & 0xFF) }
                case 1: pass { Int(($0.w1 >> shift) & 0xFF) }
                default: pass { Int(($0.w0 >> shift) & 0xFF) }
                }
            }
        }
        return source
    }
}
