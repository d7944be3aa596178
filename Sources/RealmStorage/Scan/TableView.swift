import CStorageSupport

/// Read access to one table: at a pinned version, or inside a write transaction (then it
/// sees the transaction's own changes, and is valid until the transaction's next change).
package struct TableView {
    package let info: TableInfo
    let context: TreeContext
    let tree: BTree<ClusterFormat>
    /// Per column, the index trees (the write transaction's buffers, or committed roots).
    let indexTrees: [BTree<IndexFormat>?]
    let layouts: [ColumnLayout]

    /// A table at a pinned version.
    init(info: TableInfo, context: TreeContext) {
        self.info = info
        self.context = context
        self.layouts = info.layouts
        self.tree = BTree(root: info.clusterRoot, context: context)
        self.indexTrees = info.columns.indices.map { c in
            info.columns[c].indexed && !info.columns[c].removed ? BTree(root: info.indexRoots[c], context: context) : nil
        }
    }

    /// A table inside a write transaction.
    init(info: TableInfo, context: TreeContext, cluster: BTree<ClusterFormat>, indexes: [BTree<IndexFormat>?], layouts: [ColumnLayout]) {
        self.info = info
        self.context = context
        self.layouts = layouts
        self.tree = cluster
        self.indexTrees = indexes
    }

    package var key: TableKey { info.key }

    /// Number of objects.
    package func count() throws(StorageError) -> Int { try tree.count() }

    package func contains(_ key: ObjectKey) throws(StorageError) -> Bool { try row(key) != nil }

    /// The object `key`, or nil when the table has none.
    package func row(_ key: ObjectKey) throws(StorageError) -> Row? {
        switch try tree.leaf(for: key.value) {
        case .clean(let node):
            let leaf = try ClusterLeafView(node)
            // The column blocks lie apart in the leaf: start loading all their headers now,
            // before searching the keys, so those cache misses overlap with the search's
            // instead of queueing behind it.
            for c in 0..<min(leaf.columnCount, layouts.count) {
                if let offset = leaf.columnOffset(c) { openrealm_prefetch(node.base + offset) }
            }
            guard let i = leaf.row(of: key.value) else { return nil }
            return Row(storage: .clean(leaf, i), key: key, layouts: layouts, context: context)
        case .dirty(let leaf):
            let (i, found) = leaf.position(of: key.value)
            return found ? Row(storage: .dirty(leaf, i), key: key, layouts: layouts, context: context) : nil
        }
    }

    /// The object `key`, or `invalidArgument` when it does not exist.
    package func existingRow(_ key: ObjectKey) throws(StorageError) -> Row {
        guard let row = try row(key) else {
            throw StorageError(.invalidArgument, "table \(info.name) has no object \(key)")
        }
        return row
    }

    package func value(_ key: ObjectKey, _ column: ColumnKey) throws(StorageError) -> Value {
        try existingRow(key).value(column)
    }

    package func list(_ key: ObjectKey, _ column: ColumnKey) throws(StorageError) -> [Value] {
        try existingRow(key).list(column)
    }

    /// Visits every object in key order until `body` returns false.
    package func forEachRow(_ body: (Row) throws(StorageError) -> Bool) throws(StorageError) {
        let layouts = self.layouts
        let context = self.context
        try tree.forEachLeaf { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node):
                let leaf = try ClusterLeafView(node)
                for i in 0..<leaf.count {
                    if !(try body(Row(storage: .clean(leaf, i), key: ObjectKey(leaf.keys[i]), layouts: layouts, context: context))) { return false }
                }
            case .dirty(let leaf):
                for i in 0..<leaf.count {
                    if !(try body(Row(storage: .dirty(leaf, i), key: ObjectKey(leaf.keys[i]), layouts: layouts, context: context))) { return false }
                }
            }
            return true
        }
    }

    /// The key of the object at position `index` in key order (0 ..< count), found through
    /// the subtree counts of the inner nodes.
    package func key(at index: Int) throws(StorageError) -> ObjectKey {
        var remaining = index
        var node = tree.root
        var depth = 0
        while depth <= 64 {
            depth += 1
            switch node {
            case .leaf(let leaf):
                guard remaining >= 0, remaining < leaf.keys.count else { break }
                return ObjectKey(leaf.keys[remaining])
            case .inner(let inner):
                var i = 0
                while i < inner.counts.count, remaining >= inner.counts[i] { remaining -= inner.counts[i]; i += 1 }
                guard i < inner.children.count else { break }
                node = inner.children[i]
                continue
            case .clean(let ref):
                let (view, kind) = try context.node(ref, .clusterInner, orLeaf: .clusterLeaf)
                if kind == .clusterLeaf {
                    let leaf = try ClusterLeafView(view)
                    guard remaining >= 0, remaining < leaf.count else { break }
                    return ObjectKey(leaf.keys[remaining])
                }
                let inner = try InnerView<ClusterFormat>(view)
                var i = 0
                while i < inner.childCount, remaining >= Int(inner.counts[i]) { remaining -= Int(inner.counts[i]); i += 1 }
                guard i < inner.childCount else { break }
                node = .clean(inner.child(i))
                continue
            }
            break
        }
        throw StorageError(.invalidArgument, "index \(index) is out of bounds for \(info.name)")
    }

    /// Every object key, ascending.
    package func keys() throws(StorageError) -> [ObjectKey] {
        var keys = [ObjectKey]()
        try tree.forEachLeaf { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node):
                let leaf = try ClusterLeafView(node)
                for i in 0..<leaf.count { keys.append(ObjectKey(leaf.keys[i])) }
            case .dirty(let leaf):
                keys.append(contentsOf: leaf.keys.map(ObjectKey.init))
            }
            return true
        }
        return keys
    }

    // MARK: Indexes

    func indexTree(_ column: ColumnKey) throws(StorageError) -> BTree<IndexFormat> {
        guard column.index < indexTrees.count, let tree = indexTrees[column.index] else {
            throw StorageError(.invalidArgument, "column \(column) of \(info.name) has no index")
        }
        return tree
    }

    /// Whether `column` holds each object's key: its "index" is the cluster tree itself.
    @inline(__always)
    func isObjectKey(_ column: ColumnKey) -> Bool { column.index < layouts.count && layouts[column.index].isObjectKey }

    /// The object whose key is `value`, for an object-key column.
    func objectKeyLookup(_ value: Value) throws(StorageError) -> ObjectKey? {
        guard case .int(let v) = value, try contains(ObjectKey(v)) else { return nil }
        return ObjectKey(v)
    }

    /// The objects whose `column` equals `value`, through the column's index, in key order.
    package func indexLookup(_ column: ColumnKey, _ value: Value) throws(StorageError) -> [ObjectKey] {
        if isObjectKey(column) { return try objectKeyLookup(value).map { [$0] } ?? [] }
        let tree = try indexTree(column)
        let (prefix, truncated) = IndexKey.prefix(value)
        var result = [ObjectKey]()
        try Self.scan(tree, from: IndexEntry(prefix: prefix, key: Int64.min)) { (entry, key) throws(StorageError) -> Bool in
            guard entry.compare(prefix) == 0 else { return false }
            if truncated {
                let actual = try self.value(ObjectKey(key), column)
                if Value.compare(actual, value) != 0 { return true }
            }
            result.append(ObjectKey(key))
            return true
        }
        return result
    }

    /// A bound of a range scan.
    package struct Bound {
        package var value: Value
        package var inclusive: Bool
        package init(_ value: Value, inclusive: Bool) { self.value = value; self.inclusive = inclusive }
    }

    /// The objects whose `column` lies between the bounds, in value order (then key order);
    /// nil when there are more than `limit` (the scan stops there).
    package func indexRange(_ column: ColumnKey, from lower: Bound?, to upper: Bound?, limit: Int) throws(StorageError) -> [ObjectKey]? {
        var result: [ObjectKey] = []
        var overflow = false
        try indexRange(column, from: lower, to: upper) { key in
            result.append(key)
            overflow = result.count > limit
            return !overflow
        }
        return overflow ? nil : result
    }

    /// The objects whose `column` lies between the bounds, in value order (then key order).
    package func indexRange(_ column: ColumnKey, from lower: Bound?, to upper: Bound?) throws(StorageError) -> [ObjectKey] {
        var result: [ObjectKey] = []
        try indexRange(column, from: lower, to: upper) { key in
            result.append(key)
            return true
        }
        return result
    }

    /// Visits the objects whose `column` lies between the bounds, in value order (then key
    /// order), until `body` returns false.
    func indexRange(_ column: ColumnKey, from lower: Bound?, to upper: Bound?, _ body: (ObjectKey) -> Bool) throws(StorageError) {
        if isObjectKey(column) {
            // The object keys are the values: walk the cluster tree from the lower bound.
            guard lower.map({ if case .int = $0.value { true } else { false } }) ?? true,
                  upper.map({ if case .int = $0.value { true } else { false } }) ?? true else { return }
            var start = Int64.min
            if let lower, case .int(let v) = lower.value {
                if lower.inclusive { start = v } else if v == Int64.max { return } else { start = v + 1 }
            }
            try tree.forEachLeaf(from: start) { (location) throws(StorageError) -> Bool in
                let keys: [Int64]
                switch location {
                case .clean(let node):
                    let leaf = try ClusterLeafView(node)
                    keys = (0..<leaf.count).map { leaf.keys[$0] }
                case .dirty(let leaf):
                    keys = leaf.keys
                }
                for key in keys where key >= start {
                    if let upper, case .int(let v) = upper.value, upper.inclusive ? key > v : key >= v { return false }
                    if !body(ObjectKey(key)) { return false }
                }
                return true
            }
            return
        }
        let tree = try indexTree(column)
        let low = lower.map { IndexKey.prefix($0.value) }
        let high = upper.map { IndexKey.prefix($0.value) }
        let start = IndexEntry(prefix: low?.bytes ?? [], key: Int64.min)
        try Self.scan(tree, from: start) { (entry, key) throws(StorageError) -> Bool in
            var uncertain = false
            if let lower, let low {
                let c = entry.compare(low.bytes)
                if c == 0 {
                    if low.truncated { uncertain = true } else if !lower.inclusive { return true }
                }
            }
            if let upper, let high {
                let c = entry.compare(high.bytes)
                if c > 0 { return false }
                if c == 0 {
                    if high.truncated { uncertain = true } else if !upper.inclusive { return false }
                }
            }
            if uncertain {
                let actual = try self.value(ObjectKey(key), column)
                if let lower {
                    let c = Value.compare(actual, lower.value)
                    if c < 0 || (c == 0 && !lower.inclusive) { return true }
                }
                if let upper {
                    let c = Value.compare(actual, upper.value)
                    if c > 0 || (c == 0 && !upper.inclusive) { return true }
                }
            }
            return body(ObjectKey(key))
        }
    }

    /// Whether any object's `column` equals `value` (for unique columns; reads no values
    /// unless the value is long enough to be cut in the index).
    package func indexContains(_ column: ColumnKey, _ value: Value) throws(StorageError) -> Bool {
        if isObjectKey(column) { return try objectKeyLookup(value) != nil }
        return try Self.indexContains(try indexTree(column), value, verifyingWith: self, column)
    }

    /// The first object (lowest key) whose `column` equals `value`, through the index: the
    /// lookup of a primary key. Cheaper than `indexLookup`, which collects every match.
    package func indexFirst(_ column: ColumnKey, _ value: Value) throws(StorageError) -> ObjectKey? {
        if isObjectKey(column) { return try objectKeyLookup(value) }
        let tree = try indexTree(column)
        let (prefix, truncated) = IndexKey.prefix(value)
        if truncated { return try indexLookup(column, value).first }
        return try Self.firstKey(tree, withPrefix: prefix)
    }

    static func indexContains(_ tree: BTree<IndexFormat>, _ value: Value, verifyingWith table: @autoclosure () throws(StorageError) -> TableView,
                              _ column: ColumnKey) throws(StorageError) -> Bool {
        let (prefix, truncated) = IndexKey.prefix(value)
        if truncated { return try !table().indexLookup(column, value).isEmpty }
        return try firstKey(tree, withPrefix: prefix) != nil
    }

    /// The key of the first entry whose prefix is `prefix`, if any.
    static func firstKey(_ tree: BTree<IndexFormat>, withPrefix prefix: [UInt8]) throws(StorageError) -> ObjectKey? {
        let start = IndexEntry(prefix: prefix, key: Int64.min)
        // Usually the answer is in the leaf the search lands on; only when every entry there is
        // smaller does the next leaf decide.
        switch try tree.leaf(for: start) {
        case .dirty(let leaf):
            let i = leaf.position(of: start).index
            if i < leaf.entries.count {
                return prefix.withUnsafeBytes { leaf.entries[i].comparePrefix($0) } == 0 ? ObjectKey(leaf.entries[i].key) : nil
            }
        case .clean(let node):
            let block = try IndexLeafView(node).entries
            let i = try block.lowerBound(start)
            if i < block.count {
                return try block.prefix(i).compare(prefix) == 0 ? ObjectKey(block.keys[i]) : nil
            }
        }
        var result: ObjectKey?
        try scan(tree, from: start) { (entry, key) throws(StorageError) -> Bool in
            if entry.compare(prefix) == 0 { result = ObjectKey(key) }
            return false
        }
        return result
    }

    /// Number of entries in the column's index (equals the object count).
    package func indexCount(_ column: ColumnKey) throws(StorageError) -> Int {
        isObjectKey(column) ? try count() : try indexTree(column).count()
    }

    /// Visits index entries from `start` on, until `body` returns false.
    static func scan(_ tree: BTree<IndexFormat>, from start: IndexEntry,
                     _ body: (IndexPrefixView, Int64) throws(StorageError) -> Bool) throws(StorageError) {
        var started = false
        try tree.forEachLeaf(from: start) { (location) throws(StorageError) -> Bool in
            switch location {
            case .clean(let node):
                let block = try IndexLeafView(node).entries
                var i = started ? 0 : try block.lowerBound(start)
                started = true
                while i < block.count {
                    if !(try body(try block.prefix(i), block.keys[i])) { return false }
                    i += 1
                }
            case .dirty(let leaf):
                var i = started ? 0 : leaf.position(of: start).index
                started = true
                while i < leaf.entries.count {
                    let entry = leaf.entries[i]
                    let more = entry.withPrefixBytes { bytes in
                        Result { () throws(StorageError) in try body(IndexPrefixView(shared: UnsafeRawBufferPointer(start: nil, count: 0), suffix: bytes), entry.key) }
                    }
                    if !(try more.get()) { return false }
                    i += 1
                }
            }
            return true
        }
    }
}

/// A row held by reference, for callers outside this module that read it many times: a call
/// on `handle.value(_:)` borrows the row, where a `Row` kept in a class property would be
/// copied (retaining its leaf, layouts and context) for every read.
package final class RowHandle {
    package let row: Row
    package init(_ row: Row) { self.row = row }

    package func value(_ column: ColumnKey) throws(StorageError) -> Value { try row.value(column) }
}

/// One object's values, located once and read column by column.
package struct Row {
    enum Storage {
        case clean(ClusterLeafView, Int)
        case dirty(ClusterLeaf, Int)
    }
    let storage: Storage
    package let key: ObjectKey
    let layouts: [ColumnLayout]
    let context: TreeContext

    package func value(_ column: ColumnKey) throws(StorageError) -> Value {
        let c = column.index
        guard c >= 0, c < layouts.count, layouts[c].isValue else {
            throw StorageError(.invalidArgument, "column \(column) is not a readable value column")
        }
        switch storage {
        case .clean(let leaf, let i):
            guard let offset = leaf.columnOffset(c) else {
                return Value.defaultValue(for: layouts[c].type, nullable: layouts[c].nullable)
            }
            return try ColumnView.value(in: leaf.node, at: offset, row: i, expecting: layouts[c].type)
        case .dirty(let leaf, let i):
            return leaf.columns[c][i]
        }
    }

    package func list(_ column: ColumnKey) throws(StorageError) -> [Value] {
        let c = column.index
        guard c >= 0, c < layouts.count, layouts[c].isList, !layouts[c].removed else {
            throw StorageError(.invalidArgument, "column \(column) is not a list column")
        }
        switch storage {
        case .clean(let leaf, let i):
            guard let refs = try leaf.listRefs(c) else { return [] }
            return try ClusterFormat.readList(refs.ref(i), layouts[c].type, context)
        case .dirty(let leaf, let i):
            switch leaf.lists[c][i] {
            case .clean(let ref): return try ClusterFormat.readList(ref, layouts[c].type, context)
            case .dirty(let values): return values
            }
        }
    }

    /// Starts loading every value of the row (and the bytes of its strings), so that the
    /// reads that follow, one column at a time, find them in cache: their misses overlap
    /// instead of following one another. Costs a few instructions per column; reads nothing.
    package func prefetchValues() {
        guard case .clean(let leaf, let i) = storage else { return }
        let columns = min(layouts.count, leaf.columnCount)
        for c in 0..<columns where layouts[c].isValue {
            if let offset = leaf.columnOffset(c) { ColumnView.prefetchValue(in: leaf.node, at: offset, row: i, type: layouts[c].type) }
        }
        for c in 0..<columns where layouts[c].isValue {
            if let offset = leaf.columnOffset(c) { ColumnView.prefetchBytes(in: leaf.node, at: offset, row: i, type: layouts[c].type) }
        }
    }

    /// All value columns in order (list and removed columns read as `.null`).
    package func values() throws(StorageError) -> [Value] {
        var result = [Value]()
        try readValues(into: &result)
        return result
    }

    /// Reads every value column into `values` (replacing its contents; list and removed
    /// columns read as `.null`). Reuse one array across rows to read without allocating.
    ///
    /// Reading a whole row first starts loading every column's value, then decodes them: the
    /// cache misses of the columns overlap instead of following one another.
    package func readValues(into values: inout [Value]) throws(StorageError) {
        values.removeAll(keepingCapacity: true)
        prefetchValues()
        for c in layouts.indices {
            values.append(layouts[c].isValue ? try value(ColumnKey(c)) : .null)
        }
    }
}
