/// A set of object keys stored as sorted, disjoint, non-adjacent closed ranges.
///
/// Bulk inserts hand out consecutive keys, so the inserted keys of a 10,000-object commit
/// are one range; random updates degrade gracefully to one range per key.
package struct KeyRanges: Equatable, Sendable, Sequence {
    package private(set) var ranges: [ClosedRange<Int64>] = []

    package init() {}
    package init<S: Sequence>(_ keys: S) where S.Element == Int64 { for k in keys { insert(k) } }

    package var isEmpty: Bool { ranges.isEmpty }
    package var count: Int { ranges.reduce(0) { $0 + Int($1.upperBound - $1.lowerBound) + 1 } }

    /// The index of the first range whose upper bound is >= key.
    private func search(_ key: Int64) -> Int {
        var low = 0, high = ranges.count
        while low < high {
            let mid = (low + high) >> 1
            if ranges[mid].upperBound < key { low = mid + 1 } else { high = mid }
        }
        return low
    }

    package func contains(_ key: Int64) -> Bool {
        let i = search(key)
        return i < ranges.count && ranges[i].lowerBound <= key
    }

    package mutating func insert(_ key: Int64) {
        // Fast path: appending the next key of the last range.
        if let last = ranges.last {
            if last.upperBound != Int64.max, key == last.upperBound + 1 {
                ranges[ranges.count - 1] = last.lowerBound...key
                return
            }
            if key > last.upperBound { ranges.append(key...key); return }
        }
        let i = search(key)
        if i < ranges.count, ranges[i].lowerBound <= key { return }
        let joinsLeft = i > 0 && ranges[i - 1].upperBound == key - 1
        let joinsRight = i < ranges.count && key != Int64.max && ranges[i].lowerBound == key + 1
        switch (joinsLeft, joinsRight) {
        case (true, true):
            ranges[i - 1] = ranges[i - 1].lowerBound...ranges[i].upperBound
            ranges.remove(at: i)
        case (true, false): ranges[i - 1] = ranges[i - 1].lowerBound...key
        case (false, true): ranges[i] = key...ranges[i].upperBound
        case (false, false): ranges.insert(key...key, at: i)
        }
    }

    /// Inserts every key of `range`, merged with the ranges it overlaps or touches.
    package mutating func insert(_ range: ClosedRange<Int64>) {
        // The first range that reaches `range` or ends right before it.
        let low = search(range.lowerBound == Int64.min ? range.lowerBound : range.lowerBound - 1)
        var merged = range, end = low
        while end < ranges.count, merged.upperBound == Int64.max || ranges[end].lowerBound <= merged.upperBound + 1 {
            merged = Swift.min(merged.lowerBound, ranges[end].lowerBound)...Swift.max(merged.upperBound, ranges[end].upperBound)
            end += 1
        }
        ranges.replaceSubrange(low..<end, with: CollectionOfOne(merged))
    }

    package mutating func remove(_ key: Int64) {
        let i = search(key)
        guard i < ranges.count, ranges[i].lowerBound <= key else { return }
        let r = ranges[i]
        if r.lowerBound == r.upperBound {
            ranges.remove(at: i)
        } else if key == r.lowerBound {
            ranges[i] = (key + 1)...r.upperBound
        } else if key == r.upperBound {
            ranges[i] = r.lowerBound...(key - 1)
        } else {
            ranges[i] = r.lowerBound...(key - 1)
            ranges.insert((key + 1)...r.upperBound, at: i + 1)
        }
    }

    package func makeIterator() -> FlattenSequence<[ClosedRange<Int64>]>.Iterator { ranges.joined().makeIterator() }

    func write(to w: inout NodeWriter) {
        w.u32(UInt32(ranges.count))
        for r in ranges { w.i64(r.lowerBound); w.i64(r.upperBound) }
    }

    static func read(_ r: inout ByteReader) throws(StorageError) -> KeyRanges {
        let n = try r.count(elementSize: 16)
        var result = KeyRanges()
        var previous: Int64? = nil
        for _ in 0..<n {
            let low = try r.i64(), high = try r.i64()
            guard low <= high, previous.map({ $0 < low }) ?? true else {
                throw StorageError(.fileCorrupted, "change set: key ranges out of order")
            }
            result.ranges.append(low...high)
            previous = high
        }
        return result
    }
}
