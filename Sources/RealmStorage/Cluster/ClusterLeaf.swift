// Cluster leaves: up to a few hundred objects of one table, column by column.
//
//   offset  size  field
//   0       16    node header (kind clusterLeaf)
//   16      4     object count n
//   20      4     column count c (columns added later are absent from older leaves)
//   24      4×c   offset of each column block from the node start; 0 = absent (default
//                 value for every object: the column was added after this leaf was written,
//                 or it was removed), padded to 8
//   ...     ...   PackedInts object keys, ascending
//   ...     ...   column blocks (ColumnCodec); list columns hold a block of list refs
//
// Header flag 1 ("consecutive keys"): the keys are base, base+1, …, base+n-1, so the row of a
// key is found from the keys block's header alone, without reading (and waiting for) its data.
// `verify` checks the flag against the keys.
//
// List node (kind list): header, u32 element type, u32 0, then one column block of elements.

/// The elements of one object's list in a changed leaf.
package enum ListCell {
    /// Unchanged since the last commit; `.none` for an empty list.
    case clean(Ref)
    case dirty([Value])
}

/// A changed cluster leaf.
///
/// Its arrays change only through the methods below, so that the leaf knows which of its rows
/// still equal those of the node it was decoded from or last encoded to (`source`): encoding
/// then copies what did not change from that node instead of encoding it again
/// (ClusterLeaf+Reuse.swift).
package final class ClusterLeaf: TreeLeafBuffer {
    // @exclusivity(unchecked): buffers are confined to their write transaction's thread, and
    // the dynamic checks cost more than the edits on the insert path (measured with callgrind).
    @exclusivity(unchecked) package private(set) var keys: [Int64]
    /// Per column, the values of scalar columns (empty for list columns).
    @exclusivity(unchecked) package private(set) var columns: [[Value]]
    /// Per column, the lists of list columns (empty for scalar columns).
    @exclusivity(unchecked) package private(set) var lists: [[ListCell]]
    @exclusivity(unchecked) package var byteEstimate: Int
    @exclusivity(unchecked) package var appendedAtEnd = false
    @exclusivity(unchecked) package var leftBehindByAppends = false
    /// Where the latest insert went, and how many inserts in a row went each just after the
    /// one before: memory only, kept while the buffer is (DecodedLeaves.swift); -1 when unknown.
    @exclusivity(unchecked) private var lastInsert = -1
    @exclusivity(unchecked) private var runLength = 0
    /// The inserts in a row that make a run (`ascendingRunEnd`): a few ascending keys by
    /// chance (a tenant's first two or three objects) would leave small leaves behind.
    static let runThreshold = 4
    /// The committed node whose rows this buffer still partly holds, if any.
    @exclusivity(unchecked) package private(set) var source: SourceRows?
    /// The node's bytes, encoded ahead of the commit's placing them (LeafPreEncoding.swift).
    /// Set only once the transaction's edits are over, so no edit can outdate it.
    @exclusivity(unchecked) var preEncoded: PreEncodedLeaf?

    /// A committed node and how much of it a buffer still holds unchanged: the keys and, per
    /// column, the values of its first `leading` rows begin the buffer's and those of its
    /// last `trailing` rows end them.
    package struct SourceRows {
        package let ref: Ref
        /// Objects in the node.
        package let count: Int
        package fileprivate(set) var keys: SourceRun
        package fileprivate(set) var columns: [SourceRun]
    }

    package init(keys: [Int64], columns: [[Value]], lists: [[ListCell]], byteEstimate: Int) {
        self.keys = keys
        self.columns = columns
        self.lists = lists
        self.byteEstimate = byteEstimate
    }

    package convenience init(specs: [ColumnSpec]) {
        self.init(keys: [], columns: Array(repeating: [], count: specs.count),
                  lists: Array(repeating: [], count: specs.count), byteEstimate: 64)
    }

    package var count: Int { keys.count }
    package var firstKey: Int64? { keys.first }

    /// Records that this buffer holds exactly the rows of the node at `ref` (just decoded
    /// from it, or just encoded to it), except the columns in `absent` (the node has no block
    /// for them: they were added after it was written).
    package func matchSource(_ ref: Ref, absent: [Int] = []) {
        var columns = Array(repeating: SourceRun.all(keys.count), count: self.columns.count)
        for c in absent { columns[c] = .none }
        source = SourceRows(ref: ref, count: keys.count, keys: .all(keys.count), columns: columns)
    }

    /// Inserts or removes rows: every row before `first` and from `last` on (positions before
    /// the edit) stays, in every column; the keys, values and lists arrays are `body`'s to edit.
    @inline(__always)
    package func editRows<R, E: Error>(keepingBefore first: Int, from last: Int,
                                       _ body: (inout [Int64], inout [[Value]], inout [[ListCell]]) throws(E) -> R) throws(E) -> R {
        assertNotEncoded()
        if source != nil { sourceKeeps(before: first, from: last, column: nil) }
        return try body(&keys, &columns, &lists)
    }

    /// Sets the value of scalar column `c` at `row`.
    package func setValue(_ value: Value, column c: Int, row: Int) {
        assertNotEncoded()
        if source != nil { sourceKeeps(before: row, from: row + 1, column: c) }
        columns[c][row] = value
    }

    /// Sets the list of list column `c` at `row`.
    package func setList(_ cell: ListCell, column c: Int, row: Int) {
        assertNotEncoded()
        if source != nil { sourceKeeps(before: row, from: row + 1, column: c) }
        lists[c][row] = cell
    }

    /// A column added to the table: every object gets `values` (scalar) or `cells` (list).
    package func addColumn(values: [Value], cells: [ListCell]) {
        assertNotEncoded()
        columns.append(values)
        lists.append(cells)
        source?.columns.append(.none)
    }

    /// A column removed from the table: its values go.
    package func dropColumn(_ c: Int) {
        assertNotEncoded()
        columns[c] = []
        lists[c] = []
        source?.columns[c] = .none
    }

    /// Edits come before the commit encodes ahead (LeafPreEncoding.swift), never after.
    @inline(__always)
    private func assertNotEncoded() {
        assert(preEncoded == nil, "a cluster leaf was edited after it was encoded")
    }

    /// Changed in place: a copy of `source` would copy its array of runs at every insert.
    private func sourceKeeps(before first: Int, from last: Int, column: Int?) {
        let count = keys.count
        if let column {
            source?.columns[column].keep(before: first, from: last, of: count)
        } else {
            source?.keys.keep(before: first, from: last, of: count)
            for c in 0..<(source?.columns.count ?? 0) { source?.columns[c].keep(before: first, from: last, of: count) }
        }
    }

    /// Records an insert at row `i`, for the choice of split point (BTree.splitPoint).
    package func noteInsert(at i: Int) {
        runLength = lastInsert >= 0 && i == lastInsert + 1 ? runLength + 1 : 0
        lastInsert = i
    }

    /// Forgets the inserts before an edit that moves rows otherwise (a delete).
    package func forgetInserts() {
        lastInsert = -1
        runLength = 0
    }

    package var ascendingRunEnd: Int? {
        runLength >= Self.runThreshold && lastInsert < keys.count ? lastInsert + 1 : nil
    }

    /// The index of `key`, or where it would be inserted.
    package func position(of key: Int64) -> (index: Int, found: Bool) {
        var low = 0, high = keys.count
        while low < high {
            let mid = (low + high) >> 1
            if keys[mid] < key { low = mid + 1 } else { high = mid }
        }
        return (low, low < keys.count && keys[low] == key)
    }

    static func estimate(_ v: Value) -> Int { estimate(payload: v.payloadSize) }
    static func estimate(payload: Int) -> Int { 9 + payload }

    package func splitOff(at index: Int) -> ClusterLeaf {
        let right = ClusterLeaf(keys: Array(keys[index...]),
                                columns: columns.map { $0.isEmpty ? [] : Array($0[index...]) },
                                lists: lists.map { $0.isEmpty ? [] : Array($0[index...]) },
                                byteEstimate: 64)
        editRows(keepingBefore: index, from: keys.count) { keys, columns, lists in
            keys.removeSubrange(index...)
            for c in columns.indices where !columns[c].isEmpty { columns[c].removeSubrange(index...) }
            for c in lists.indices where !lists[c].isEmpty { lists[c].removeSubrange(index...) }
        }
        // The smaller piece is summed and the other keeps the rest: an append splits off one
        // row, and summing the 256 left behind cost 1% of a bulk load.
        let whole = byteEstimate
        if keys.count >= right.keys.count {
            right.recomputeEstimate()
            byteEstimate = max(64, whole - (right.byteEstimate - 64))
        } else {
            recomputeEstimate()
            right.byteEstimate = max(64, whole - (byteEstimate - 64))
        }
        if lastInsert >= index {
            right.lastInsert = lastInsert - index
            right.runLength = runLength
            forgetInserts()
        }
        return right
    }

    package func reserveCapacity(_ count: Int) {
        keys.reserveCapacity(count)
        for c in columns.indices where !columns[c].isEmpty { columns[c].reserveCapacity(count) }
        for c in lists.indices where !lists[c].isEmpty { lists[c].reserveCapacity(count) }
    }

    package func absorb(_ other: ClusterLeaf) {
        assertNotEncoded()
        // Appends: the rows this leaf holds stay where they were, but no longer end it.
        if source != nil { sourceKeeps(before: keys.count, from: keys.count, column: nil) }
        keys += other.keys
        for c in columns.indices { columns[c] += other.columns[c] }
        for c in lists.indices { lists[c] += other.lists[c] }
        byteEstimate += other.byteEstimate
    }

    func recomputeEstimate() {
        var total = 64 + keys.count * 8
        for column in columns { for v in column { total += Self.estimate(v) } }
        for column in lists { total += column.count * 8 }
        byteEstimate = total
    }
}

/// A committed cluster leaf, read in place.
package struct ClusterLeafView {
    package let node: NodeView
    package let count: Int
    package let columnCount: Int
    package let keys: PackedInts

    package init(_ node: NodeView) throws(StorageError) {
        self.node = node
        count = Int(try node.u32(16))
        columnCount = Int(try node.u32(20))
        guard columnCount <= (node.length - 24) / 4 else {
            throw StorageError(.fileCorrupted, "cluster leaf \(node.ref) claims \(columnCount) columns")
        }
        keys = try node.packedInts(at: 24 + NodeLayout.aligned(columnCount * 4))
        guard keys.count == count else {
            throw StorageError(.fileCorrupted, "cluster leaf \(node.ref): key count \(keys.count) != object count \(count)")
        }
    }

    static let consecutiveKeysFlag: UInt8 = 1

    /// Whether the leaf says its keys are consecutive (header flag 1).
    package var hasConsecutiveKeys: Bool { node.flags & Self.consecutiveKeysFlag != 0 }

    /// The row holding `key`, if any.
    @inline(__always)
    package func row(of key: Int64) -> Int? {
        if hasConsecutiveKeys {
            // Wrapping: a key far below the base wraps to a huge unsigned distance, refused.
            let distance = UInt64(bitPattern: key &- keys.base)
            return distance < UInt64(count) ? Int(distance) : nil
        }
        let i = keys.lowerBound(key)
        return i < count && keys[i] == key ? i : nil
    }

    /// The offset of column `c`'s block, or nil when the leaf has none.
    @inline(__always)
    package func columnOffset(_ c: Int) -> Int? {
        guard c < columnCount else { return nil }
        let offset = Int(UInt32(littleEndian: node.base.loadUnaligned(fromByteOffset: 24 + c * 4, as: UInt32.self)))
        return offset == 0 ? nil : offset
    }

    package func column(_ c: Int, _ type: ColumnType) throws(StorageError) -> ColumnView? {
        guard let offset = columnOffset(c) else { return nil }
        let view = try ColumnView(node: node, offset: offset, expecting: type)
        guard view.count == count else { throw StorageError(.fileCorrupted, "cluster leaf \(node.ref): column \(c) length mismatch") }
        return view
    }

    package func listRefs(_ c: Int) throws(StorageError) -> ListRefsView? {
        guard let offset = columnOffset(c) else { return nil }
        let view = try ListRefsView(node: node, offset: offset)
        guard view.count == count else { throw StorageError(.fileCorrupted, "cluster leaf \(node.ref): column \(c) length mismatch") }
        return view
    }
}

/// The cluster tree: object key → the object's values.
package enum ClusterFormat: TreeFormat {
    package typealias Key = Int64
    package typealias Leaf = ClusterLeaf
    package static var leafKind: NodeKind { .clusterLeaf }
    package static var innerKind: NodeKind { .clusterInner }

    package static func emptyLeaf(_ context: TreeContext) -> ClusterLeaf { ClusterLeaf(specs: context.columns) }

    package static func leafCount(_ node: NodeView) throws(StorageError) -> Int { try ClusterLeafView(node).count }

    package static func decodeLeaf(_ node: NodeView, _ context: TreeContext) throws(StorageError) -> ClusterLeaf {
        let view = try ClusterLeafView(node)
        let specs = context.columns
        var columns = [[Value]](repeating: [], count: specs.count)
        var lists = [[ListCell]](repeating: [], count: specs.count)
        var absent: [Int] = []
        var estimate = 64 + view.count * 8
        for (c, spec) in specs.enumerated() {
            if spec.removed {
                // The leaf is about to be rewritten without this column: its lists go now.
                if spec.isList, let refs = try view.listRefs(c) {
                    for i in 0..<refs.count { try context.free(refs.ref(i), .list) }
                }
                continue
            }
            if spec.isList {
                if let refs = try view.listRefs(c) {
                    lists[c] = (0..<view.count).map { .clean(refs.ref($0)) }
                } else {
                    lists[c] = Array(repeating: .clean(.none), count: view.count)
                    absent.append(c)
                }
                estimate += view.count * 8
            } else if let column = try view.column(c, spec.type) {
                let values = try column.values()
                for v in values { estimate += ClusterLeaf.estimate(v) }
                columns[c] = values
            } else {
                columns[c] = Array(repeating: Value.defaultValue(for: spec.type, nullable: spec.nullable), count: view.count)
                absent.append(c)
                estimate += view.count * 9
            }
        }
        let leaf = ClusterLeaf(keys: view.keys.toArray(), columns: columns, lists: lists, byteEstimate: estimate)
        leaf.matchSource(node.ref, absent: absent)
        return leaf
    }

    package static func encodeLeaf(_ leaf: ClusterLeaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        try encodeLeaf(leaf, context, sink, reusingSource: true)
    }

    package static func encodeLeafInFull(_ leaf: ClusterLeaf, _ context: TreeContext, _ sink: NodeSink) throws(StorageError) -> Ref {
        try encodeLeaf(leaf, context, sink, reusingSource: false)
    }

    private static func encodeLeaf(_ leaf: ClusterLeaf, _ context: TreeContext, _ sink: NodeSink,
                                   reusingSource: Bool) throws(StorageError) -> Ref {
        if let encoded = leaf.takeEncoded(for: sink.version, reusingSource: reusingSource) {
            context.written?.reusedBlocks += encoded.reusedBlocks
            return try sink.place(encoded.bytes)
        }
        let specs = context.columns
        // Lists first: the leaf refers to them.
        var listRefs = [[Ref]](repeating: [], count: specs.count)
        for (c, spec) in specs.enumerated() where spec.isList && !spec.removed {
            listRefs[c] = try leaf.lists[c].map { cell throws(StorageError) in
                switch cell {
                case .clean(let ref): return ref
                case .dirty(let values): return try writeList(values, spec.type, sink)
                }
            }
        }
        let encoded = try encodeNode(leaf, context, listRefs, version: sink.version, sealed: sink.storesSeals, reusingSource: reusingSource)
        context.written?.reusedBlocks += encoded.reusedBlocks
        return try sink.place(encoded.bytes)
    }

    /// The leaf's node ahead of the commit, for another thread (LeafPreEncoding.swift): nil
    /// when it has lists to write first (their refs go into it) or cannot be encoded.
    static func preEncode(_ leaf: ClusterLeaf, _ context: TreeContext, version: VersionID) -> PreEncodedLeaf? {
        let specs = context.columns
        var listRefs = [[Ref]](repeating: [], count: specs.count)
        for (c, spec) in specs.enumerated() where spec.isList && !spec.removed {
            var refs: [Ref] = []
            refs.reserveCapacity(leaf.lists[c].count)
            for cell in leaf.lists[c] {
                guard case .clean(let ref) = cell else { return nil }
                refs.append(ref)
            }
            listRefs[c] = refs
        }
        return try? encodeNode(leaf, context, listRefs, version: version, sealed: context.check.sealing.storesSeals, reusingSource: true)
    }

    /// The node of `leaf` whose lists were written to `listRefs`.
    /// `sealed`: list refs carry seals (the file written stores them).
    private static func encodeNode(_ leaf: ClusterLeaf, _ context: TreeContext, _ listRefs: [[Ref]], version: VersionID, sealed: Bool,
                                   reusingSource: Bool) throws(StorageError) -> PreEncodedLeaf {
        let specs = context.columns
        let source = reusingSource ? leaf.source.flatMap { LeafSource($0, context) } : nil
        var w = NodeWriter(capacity: leaf.byteEstimate + specs.count * 32)
        let reused = writeBody(leaf, specs, listRefs, sealed: sealed, reusing: source, to: &w)
        #if DEBUG
        if source != nil {
            var full = NodeWriter(capacity: leaf.byteEstimate + specs.count * 32)
            writeBody(leaf, specs, listRefs, sealed: sealed, reusing: nil, to: &full)
            precondition(full.bytes == w.bytes, "a cluster leaf encoded from its source node \(source!.rows.ref) differs from its full encoding")
        }
        #endif
        guard w.count <= NodeLayout.maxLength else {
            throw StorageError(.valueTooLarge, "a cluster leaf would exceed 4 GiB")
        }
        let consecutive = !leaf.keys.isEmpty && leaf.keys[leaf.keys.count - 1] &- leaf.keys[0] == Int64(leaf.keys.count - 1)
        let bytes = w.finish(kind: .clusterLeaf, version: version, flags: consecutive ? ClusterLeafView.consecutiveKeysFlag : 0)
        return PreEncodedLeaf(bytes: bytes, version: version, reusedBlocks: reused)
    }

    /// Everything of the leaf node after its header: blocks whose rows did not change since
    /// `source` are copied from it or extended (ClusterLeaf+Reuse.swift), the rest encoded.
    /// Returns how many blocks (keys included) came from the source.
    @discardableResult
    private static func writeBody(_ leaf: ClusterLeaf, _ specs: [ColumnSpec], _ listRefs: [[Ref]], sealed: Bool,
                                  reusing source: LeafSource?, to w: inout NodeWriter) -> Int {
        var reused = 0
        w.u32(UInt32(leaf.count))
        w.u32(UInt32(specs.count))
        let offsetsAt = w.count
        w.zeros(NodeLayout.aligned(specs.count * 4))
        if source?.writeKeys(leaf, to: &w) == true {
            reused += 1
        } else {
            PackedInts.write(leaf.keys, to: &w)
        }
        for (c, spec) in specs.enumerated() where !spec.removed {
            w.patchU32(at: offsetsAt + c * 4, UInt32(w.count))
            if spec.isList {
                if source?.writeListRefs(c, listRefs[c], sealed: sealed, to: &w) == true {
                    reused += 1
                } else {
                    ColumnCodec.writeListRefs(listRefs[c], sealed: sealed, to: &w)
                }
            } else if source?.writeColumn(c, spec.type, leaf.columns[c], to: &w) == true {
                reused += 1
            } else {
                ColumnCodec.write(leaf.columns[c], type: spec.type, to: &w)
            }
        }
        return reused
    }

    package static func writeList(_ values: [Value], _ type: ColumnType, _ sink: NodeSink) throws(StorageError) -> Ref {
        guard !values.isEmpty else { return .none }
        var w = NodeWriter(capacity: 64 + values.count * 9)
        w.u32(UInt32(type.rawValue))
        w.u32(0)
        ColumnCodec.write(values, type: type, to: &w)
        return try sink.place(w.finish(kind: .list, version: sink.version))
    }

    package static func readList(_ ref: Ref, _ type: ColumnType, _ context: TreeContext) throws(StorageError) -> [Value] {
        guard !ref.isNone else { return [] }
        let node = try context.node(ref, .list)
        return try ColumnView(node: node, offset: 24, expecting: type).values()
    }

    package static func writeKeys(_ keys: [Int64], to writer: inout NodeWriter) {
        PackedInts.write(keys, to: &writer)
    }

    package static func readKeys(_ node: NodeView, at offset: Int, count: Int) throws(StorageError) -> [Int64] {
        let keys = try node.packedInts(at: offset)
        guard keys.count == count else { throw StorageError(.fileCorrupted, "inner node \(node.ref): key count mismatch") }
        return keys.toArray()
    }

    package static func childIndex(_ node: NodeView, keysAt offset: Int, count: Int, for key: Int64) throws(StorageError) -> Int {
        let keys = try node.packedInts(at: offset)
        guard keys.count == count else { throw StorageError(.fileCorrupted, "inner node \(node.ref): key count mismatch") }
        // The last child whose first key is <= key.
        return keys.lastNotAbove(key)
    }
}
