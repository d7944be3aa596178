// Leaf-at-a-time access to a table, for the query engine: a condition on one column reads
// that column's block of each leaf (contiguous values) instead of locating every object and
// decoding it value by value.

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

    /// Whether `column` has a search index (or holds the object keys) that lookups can use.
    package func hasIndex(_ column: ColumnKey) -> Bool {
        isObjectKey(column) || (column.index < indexTrees.count && indexTrees[column.index] != nil)
    }
}

extension ColumnView {
    /// The integers of an int, bool or link block (0 where null), read in place.
    package var integers: PackedInts { ints }

    /// Whether any value of the block is null.
    package var hasNulls: Bool { nulls.width != 0 }

    /// Double `i` of a double block, or float `i` of a float block widened; the caller checks
    /// the type and `i < count`.
    @inline(__always)
    package func floatingPoint(_ i: Int) -> Double {
        if type == .float {
            return Double(Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: i << 2, as: UInt32.self))))
        }
        return Double(bitPattern: UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i << 3, as: UInt64.self)))
    }
}
