import CStorageSupport

// Leaf-at-a-time access to a table, for the query engine: a condition on one column reads
// that column's block of each leaf (contiguous values) instead of locating every object and
// decoding it value by value.
//
// The query planner that chooses what runs here is in the API module, with the query types
// it needs: OpenRealm/Query/ScanPlan.swift. The filters over one column block are in
// ColumnFilter.swift, beside this file.

/// One cluster leaf of a table during a scan: its objects' keys and, per column, either the
/// committed column block or (inside a write transaction, for a changed leaf) the values.
package struct ScanLeaf {
    enum Storage {
        case clean(ClusterLeafView)
        case dirty(ClusterLeaf)
    }
    let storage: Storage
    let layouts: [ColumnLayout]
    let context: TreeContext

    /// Number of objects in the leaf.
    package var count: Int {
        switch storage {
        case .clean(let leaf): return leaf.count
        case .dirty(let leaf): return leaf.count
        }
    }

    @inline(__always)
    package func key(_ row: Int) -> ObjectKey {
        switch storage {
        case .clean(let leaf): return ObjectKey(leaf.keys[row])
        case .dirty(let leaf): return ObjectKey(leaf.keys[row])
        }
    }

    /// How a column of the leaf can be read.
    package enum Column {
        /// A committed block, read in place.
        case block(ColumnView)
        /// The values of a changed leaf.
        case values([Value])
        /// The column is not in the leaf (added after it was written): every object holds
        /// this value.
        case uniform(Value)
    }

    /// Column `column` of the leaf (a scalar column).
    package func column(_ column: ColumnKey) throws(StorageError) -> Column {
        let c = column.index
        guard c >= 0, c < layouts.count, layouts[c].isValue else {
            throw StorageError(.invalidArgument, "column \(column) is not a readable value column")
        }
        switch storage {
        case .clean(let leaf):
            guard let view = try leaf.column(c, layouts[c].type) else {
                return .uniform(Value.defaultValue(for: layouts[c].type, nullable: layouts[c].nullable))
            }
            return .block(view)
        case .dirty(let leaf):
            return .values(leaf.columns[c])
        }
    }

    /// The object at `row`, for reads of any column.
    package func row(_ row: Int) -> Row {
        switch storage {
        case .clean(let leaf): return Row(storage: .clean(leaf, row), key: ObjectKey(leaf.keys[row]), layouts: layouts, context: context)
        case .dirty(let leaf): return Row(storage: .dirty(leaf, row), key: ObjectKey(leaf.keys[row]), layouts: layouts, context: context)
        }
    }
}

extension TableView {
    /// Visits the table's leaves in key order until `body` returns false.
    package func forEachLeaf(_ body: (ScanLeaf) throws(StorageError) -> Bool) throws(StorageError) {
        let layouts = self.layouts
        let context = self.context
        try tree.forEachLeaf { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node): return try body(ScanLeaf(storage: .clean(try ClusterLeafView(node)), layouts: layouts, context: context))
            case .dirty(let leaf): return try body(ScanLeaf(storage: .dirty(leaf), layouts: layouts, context: context))
            }
        }
    }

    /// Visits the blocks of one scalar column, leaf by leaf in key order, with each leaf's
    /// object count: the whole-table aggregates read nothing else.
    package func forEachBlock(of column: ColumnKey, _ body: (ScanLeaf.Column, Int) throws(StorageError) -> Void) throws(StorageError) {
        let c = column.index
        guard c >= 0, c < layouts.count, layouts[c].isValue else {
            throw StorageError(.invalidArgument, "column \(column) is not a readable value column")
        }
        let layout = layouts[c]
        let context = self.context
        let width = layout.type == .float ? 4 : 8
        try tree.forEachLeaf(lookahead: { ref, distance in
            Self.prefetchColumn(c, width: width, of: ref, stage: distance, context)
        }) { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node):
                // Only the header fields this needs (the object count and the column's
                // offset), not the whole leaf view with its keys: a third of a whole-column
                // scan was spent per leaf.
                let count = Int(try node.u32(16))
                let columnCount = Int(try node.u32(20))
                let offset = c < columnCount ? Int(try node.u32(24 + c * 4)) : 0
                guard offset != 0 else {
                    try body(.uniform(Value.defaultValue(for: layout.type, nullable: layout.nullable)), count)
                    return true
                }
                let view = try ColumnView(node: node, offset: offset, expecting: layout.type)
                guard view.count == count else {
                    throw StorageError(.fileCorrupted, "cluster leaf \(node.ref): column \(c) length mismatch")
                }
                try body(.block(view), count)
            case .dirty(let leaf):
                try body(.values(leaf.columns[c]), leaf.count)
            }
            return true
        }
    }

    /// Starts loading column `c` of the committed cluster leaf at `ref`, a leaf the scan
    /// reaches `stage` leaves from now: at stage 3 the lines of its header that hold the
    /// object count and the column's offset; at stage 2, when those have arrived, the column
    /// block (about `width` bytes an object). Measured on W5 (a sum over 1M doubles in ~3,900
    /// leaves ~9 KB apart): without it each leaf waited on three misses in a row (its header,
    /// the column's header, the first lines of the values), which took more time than the
    /// additions; with stages 2 and 1 instead of 3 and 2, W5 ran ~10% slower (the profile had
    /// the column stage waiting on the header it reads). Reads only inside the version's
    /// bounds and never throws: a damaged leaf is reported by the read that follows, and a
    /// prefetch of a wrong address does no harm.
    @inline(__always)
    static func prefetchColumn(_ c: Int, width: Int, of ref: Ref, stage: Int, _ context: TreeContext) {
        let offset = ref.offset
        let headerEnd = UInt64(28 + c * 4)
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, context.limit >= headerEnd,
              offset <= context.limit - headerEnd else { return }
        let node = context.base + Int(offset)
        if stage > 2 {
            openrealm_prefetch(node)
            openrealm_prefetch(node + 24 + c * 4)
            return
        }
        guard node.load(as: UInt8.self) == NodeKind.clusterLeaf.rawValue else { return }
        let length = UInt64(UInt32(littleEndian: node.loadUnaligned(fromByteOffset: 4, as: UInt32.self)))
        let count = Int(UInt32(littleEndian: node.loadUnaligned(fromByteOffset: 16, as: UInt32.self)))
        let columns = Int(UInt32(littleEndian: node.loadUnaligned(fromByteOffset: 20, as: UInt32.self)))
        guard length <= context.limit - offset, c < columns else { return }
        let start = Int(UInt32(littleEndian: node.loadUnaligned(fromByteOffset: 24 + c * 4, as: UInt32.self)))
        guard start > 0, UInt64(start) < length else { return }
        // The block's headers (24 bytes when no value is null) and the values, within the node.
        let end = min(Int(length), start + 24 + count * width)
        var line = start
        while line < end {
            openrealm_prefetch(node + line)
            line += 64
        }
    }

    /// How many objects' `column` equals `value`, counted in the column's index without
    /// collecting their keys: leaves that match to their end are counted whole.
    package func indexMatchCount(_ column: ColumnKey, _ value: Value) throws(StorageError) -> Int {
        if isObjectKey(column) { return try objectKeyLookup(value) == nil ? 0 : 1 }
        let tree = try indexTree(column)
        let (prefix, truncated) = IndexKey.prefix(value)
        // A prefix cut short leaves the values to be compared one by one.
        if truncated { return try indexLookup(column, value).count }
        let start = IndexEntry(prefix: prefix, key: Int64.min)
        var total = 0
        var first = true
        try tree.forEachLeaf(from: start) { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node):
                let block = try IndexLeafView(node).entries
                let i = first ? try block.lowerBound(start) : 0
                first = false
                // The matches may begin in the next leaf.
                guard i < block.count else { return true }
                if try block.prefix(block.count - 1).compare(prefix) == 0 {
                    total += block.count - i
                    return true
                }
                // The last entry is past the matches: find where they end.
                var low = i, high = block.count - 1
                while low < high {
                    let mid = (low + high) >> 1
                    if try block.prefix(mid).compare(prefix) == 0 { low = mid + 1 } else { high = mid }
                }
                total += low - i
                return false
            case .dirty(let leaf):
                var i = first ? leaf.position(of: start).index : 0
                first = false
                while i < leaf.entries.count, prefix.withUnsafeBytes({ leaf.entries[i].comparePrefix($0) }) == 0 {
                    total += 1
                    i += 1
                }
                return i == leaf.entries.count
            }
        }
        return total
    }

    /// Whether `column` has a search index (or holds the object keys) that lookups can use.
    package func hasIndex(_ column: ColumnKey) -> Bool {
        isObjectKey(column) || (column.index < indexTrees.count && indexTrees[column.index] != nil)
    }
}

extension ColumnView {
    // Inlinable, like the element reads they lead to: scans call them per object.

    /// The integers of an int, bool or link block (0 where null), read in place.
    @inlinable package var integers: PackedInts { ints }

    /// Whether any value of the block is null.
    @inlinable package var hasNulls: Bool { nulls.width != 0 }

    /// Double `i` of a double block, or float `i` of a float block widened; the caller checks
    /// the type and `i < count`.
    @inlinable @inline(__always)
    package func floatingPoint(_ i: Int) -> Double {
        if type == .float {
            return Double(Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i << 2, as: UInt32.self))))
        }
        return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i << 3, as: UInt64.self)))
    }
}

/// A sum of doubles kept in four lanes: the n-th value added goes to lane n % 4, and the total
/// is (lane 0 + lane 1) + (lane 2 + lane 3). This is how queries define the sum of floating-
/// point values. One running total would make each addition wait for the one before; four
/// let a block be summed at the speed memory delivers it, and the result does not depend on
/// how the values were split into leaves.
package struct LaneSum {
    package var lanes: (Double, Double, Double, Double) = (0, 0, 0, 0)
    /// How many values were added.
    package var count = 0

    package init() {}

    @inlinable
    package mutating func add(_ x: Double) {
        switch count & 3 {
        case 0: lanes.0 += x
        case 1: lanes.1 += x
        case 2: lanes.2 += x
        default: lanes.3 += x
        }
        count += 1
    }

    package var total: Double { (lanes.0 + lanes.1) + (lanes.2 + lanes.3) }
}

extension ColumnView {
    /// Adds the non-null values of a double or float block at `rows` (every row when nil) to
    /// `sum`, in order. In this module so that the loop is compiled with the element reads
    /// inlined.
    package func addFloatingPoints(_ rows: [Int32]?, to sum: inout LaneSum) {
        if let rows {
            for row in rows where !isNull(Int(row)) { sum.add(floatingPoint(Int(row))) }
        } else if hasNulls || type != .double {
            for i in 0..<count where !isNull(i) { sum.add(floatingPoint(i)) }
        } else {
            // Every value: the lanes in registers, four values a step once aligned to lane 0.
            var i = 0
            while i < count && sum.count & 3 != 0 {
                sum.add(floatingPoint(i))
                i += 1
            }
            let start = i
            var (a, b, c, d) = sum.lanes
            while i + 4 <= count {
                a += floatingPoint(i)
                b += floatingPoint(i + 1)
                c += floatingPoint(i + 2)
                d += floatingPoint(i + 3)
                i += 4
            }
            sum.lanes = (a, b, c, d)
            sum.count += i - start
            while i < count {
                sum.add(floatingPoint(i))
                i += 1
            }
        }
    }
}

extension ColumnView {
    /// A key that sorts value `row` of an int, bool, float, double, string or timestamp block:
    /// a rank (0 nil, 1 NaN, 2 a value) and a prefix that orders values as an unsigned integer
    /// (exactly for numbers and booleans; strings by their first eight bytes, dates by their
    /// seconds). -0 and +0 get one key (they are equal).
    package func sortKey(_ row: Int) throws(StorageError) -> (rank: UInt64, prefix: UInt64) {
        if isNull(row) { return (0, 0) }
        switch type {
        case .int, .timestamp: return (2, UInt64(bitPattern: ints[row]) ^ (1 << 63))
        case .bool: return (2, ints[row] != 0 ? 1 : 0)
        case .float, .double: return Self.sortKey(floatingPoint(row))
        case .string: return (2, Self.sortKey(try bytes(row)))
        default: throw StorageError(.invalidArgument, "values of type \(type) have no sort key")
        }
    }

    package static func sortKey(_ d: Double) -> (rank: UInt64, prefix: UInt64) {
        if d.isNaN { return (1, 0) }
        let bits = (d == 0 ? 0.0 : d).bitPattern
        return (2, bits >> 63 == 1 ? ~bits : bits | (1 << 63))
    }

    /// The first eight bytes, big-endian, zero-padded.
    package static func sortKey<C: Collection>(_ bytes: C) -> UInt64 where C.Element == UInt8 {
        var key: UInt64 = 0
        var shift: UInt64 = 56
        for byte in bytes.prefix(8) {
            key |= UInt64(byte) << shift
            shift &-= 8
        }
        return key
    }
}
