// Schema changes inside a write transaction: tables and columns come and go; the data of
// existing objects is kept (new columns read as their default value until set).

extension WriteTransaction {
    /// Creates an empty table.
    ///
    /// - Throws: `invalidArgument` when a table has that name, a column name repeats, or a
    ///   link column names no existing table.
    @discardableResult
    package func createTable(_ name: String, columns: [ColumnSpec]) throws(StorageError) -> TableKey {
        try ensureActive()
        guard top.table(named: name) == nil else {
            throw StorageError(.invalidArgument, "a table named \(name) already exists")
        }
        guard Set(columns.map(\.name)).count == columns.count else {
            throw StorageError(.invalidArgument, "table \(name) names a column twice")
        }
        let key = TableKey(top.nextTableKey)
        for spec in columns { try checkLinkTarget(spec, newTable: key) }
        try checkObjectKeyColumns(columns, tableName: name)
        top.nextTableKey += 1
        top.tables.append(TableInfo(key: key, name: name, columns: columns))
        undo?.createdTables.insert(key)
        return key
    }

    /// An object-key column is a plain non-null integer, at most one per table, and only in a
    /// new table (existing objects' keys are not their values).
    private func checkObjectKeyColumns(_ columns: [ColumnSpec], tableName: String) throws(StorageError) {
        let keyColumns = columns.filter { $0.isObjectKey && !$0.removed }
        guard keyColumns.count <= 1, keyColumns.allSatisfy({ $0.type == .int && !$0.nullable && !$0.isList && !$0.indexed }) else {
            throw StorageError(.invalidArgument, "table \(tableName): one non-null, unindexed integer column at most can hold the object keys")
        }
    }

    private func checkLinkTarget(_ spec: ColumnSpec, newTable: TableKey?) throws(StorageError) {
        guard spec.type == .link else { return }
        guard let target = spec.linkTarget, target == newTable || top.table(target) != nil else {
            throw StorageError(.invalidArgument, "link column \(spec.name) must name an existing target table")
        }
    }

    package func renameTable(_ key: TableKey, to name: String) throws(StorageError) {
        try ensureActive()
        let t = try tableIndex(key)
        noteIrreversible("a table was renamed")
        if let other = top.table(named: name), other.key != key {
            throw StorageError(.invalidArgument, "a table named \(name) already exists")
        }
        top.tables[t].name = name
    }

    /// Removes a table and all its objects.
    package func removeTable(_ key: TableKey) throws(StorageError) {
        try ensureActive()
        let t = try tableIndex(key)
        let info = top.tables[t]
        noteIrreversible("a table was removed")
        if let linking = top.tables.first(where: { $0.key != key && $0.columns.contains { !$0.removed && $0.linkTarget == key } }) {
            throw StorageError(.invalidArgument, "table \(linking.name) links to \(info.name); remove that column first")
        }
        // Mixed values elsewhere may link to its objects: clear those links now, while the
        // objects still exist to be named.
        if top.tables.contains(where: { $0.key != key && $0.columns.contains { !$0.removed && $0.type == .mixed } }) {
            for objectKey in try self.table(key).keys() { noteDeleted(key, objectKey) }
            try clearLinksToDeletedObjects()
        }
        try dropTrees(of: info)
        top.tables.remove(at: t)
        resetState(key, dropChanges: true)
    }

    /// Deletes every object of a table.
    package func clear(_ key: TableKey) throws(StorageError) {
        try ensureActive()
        let t = try tableIndex(key)
        let info = top.tables[t]
        let keys = try table(key).keys()
        if undo != nil {
            // Under a savepoint, object by object, so that each delete is logged and undoable.
            for objectKey in keys { _ = try delete(key, objectKey) }
            return
        }
        try dropTrees(of: info)
        top.tables[t].clusterRoot = .none
        top.tables[t].indexRoots = Array(repeating: .none, count: info.columns.count)
        resetState(key, dropChanges: false)
        let state = state(top.tables[t])
        for objectKey in keys {
            state.changes.recordDelete(objectKey.value)
            noteDeleted(key, objectKey)
        }
    }

    /// Frees every committed node of a table's trees (its buffers go with its state).
    private func dropTrees(of info: TableInfo) throws(StorageError) {
        let clusterContext = context.with(columns: info.columns)
        let state = state(info)
        try BTree<ClusterFormat>.freeAll(state.cluster.root, clusterContext) { (leaf) throws(StorageError) in
            let view = try ClusterLeafView(leaf)
            for (c, spec) in info.columns.enumerated() where spec.isList {
                guard let refs = try view.listRefs(c) else { continue }
                for i in 0..<refs.count { try clusterContext.free(refs.ref(i), .list) }
            }
        }
        // Leaves changed earlier in this transaction are buffers, skipped above; the lists
        // they still share with the last commit go too (else those nodes leak).
        try BTree<ClusterFormat>.forEachBufferThrowing(state.cluster.root) { (leaf) throws(StorageError) in
            for (c, spec) in info.columns.enumerated() where spec.isList && !spec.removed {
                for case .clean(let ref) in leaf.lists[c] { try clusterContext.free(ref, .list) }
            }
        }
        for case let index? in state.indexes {
            try BTree<IndexFormat>.freeAll(index.root, context) { _ throws(StorageError) in }
        }
    }

    /// Adds a column; existing objects read its default value (null when nullable).
    @discardableResult
    package func addColumn(_ table: TableKey, _ spec: ColumnSpec) throws(StorageError) -> ColumnKey {
        try ensureActive()
        let t = try tableIndex(table)
        guard top.tables[t].column(named: spec.name) == nil else {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) already has a column \(spec.name)")
        }
        try checkLinkTarget(spec, newTable: nil)
        if let undo, !undo.createdTables.contains(table) { noteIrreversible("a column was added to an existing table") }
        if spec.isObjectKey {
            throw StorageError(.invalidArgument, "\(top.tables[t].name).\(spec.name): only a new table can take its object keys from a column")
        }
        // The state (trees) as they are before the column exists; extended below.
        let state = state(top.tables[t])
        try flushIndexEntries(state)
        top.tables[t].columns.append(spec)
        top.tables[t].indexRoots.append(.none)
        let info = top.tables[t]
        let c = info.columns.count - 1
        let fill = Value.defaultValue(for: spec.type, nullable: spec.nullable)
        BTree<ClusterFormat>.forEachBuffer(state.cluster.root) { leaf in
            leaf.addColumn(values: spec.isList ? [] : Array(repeating: fill, count: leaf.count),
                           cells: spec.isList ? Array(repeating: .clean(.none), count: leaf.count) : [])
        }
        state.cluster.context = context.with(columns: info.columns)
        state.layouts = info.layouts
        state.indexes.append(spec.indexed && !spec.isList ? BTree(root: .none, context: context) : nil)
        if spec.indexed && !spec.isList {
            if spec.unique, try self.table(table).count() > 1 {
                throw StorageError(.duplicateKey, "column \(spec.name) must be unique but \(info.name) has several objects")
            }
            for key in try self.table(table).keys() { try indexInsert(state, c, fill, key) }
        }
        return ColumnKey(c)
    }

    /// Removes a column; its position stays reserved so older leaves remain readable.
    package func removeColumn(_ table: TableKey, _ column: ColumnKey) throws(StorageError) {
        try ensureActive()
        noteIrreversible("a column was removed")
        let t = try tableIndex(table)
        let c = column.index
        guard c < top.tables[t].columns.count, !top.tables[t].columns[c].removed else {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) has no column \(column)")
        }
        let info = top.tables[t]
        let state = state(info)
        try flushIndexEntries(state)
        if let index = state.indexes[c] {
            try BTree<IndexFormat>.freeAll(index.root, context) { _ throws(StorageError) in }
            state.indexes[c] = nil
        }
        top.tables[t].columns[c].removed = true
        top.tables[t].indexRoots[c] = .none
        let treeContext = context
        try BTree<ClusterFormat>.forEachBufferThrowing(state.cluster.root) { (leaf) throws(StorageError) in
            if info.columns[c].isList {
                for case .clean(let ref) in leaf.lists[c] { try treeContext.free(ref, .list) }
            }
            leaf.dropColumn(c)
        }
        state.cluster.context = context.with(columns: top.tables[t].columns)
        state.layouts = top.tables[t].layouts
    }
}

extension BTree {
    /// Frees every committed node below `node`; `leafHook` frees what a committed leaf owns.
    static func freeAll(_ node: TreeNode<F>, _ context: TreeContext,
                        _ leafHook: (NodeView) throws(StorageError) -> Void) throws(StorageError) {
        switch node {
        case .leaf: return
        case .inner(let inner):
            for child in inner.children { try freeAll(child, context, leafHook) }
        case .clean(let ref):
            let (view, kind) = try context.node(ref, F.innerKind, orLeaf: F.leafKind)
            if kind == F.leafKind {
                try leafHook(view)
            } else {
                let inner = try InnerView<F>(view)
                for i in 0..<inner.childCount { try freeAll(.clean(inner.child(i)), context, leafHook) }
            }
            context.free(view)
        }
    }

    /// Visits the leaf buffers of the tree (committed subtrees are skipped).
    static func forEachBuffer(_ node: TreeNode<F>, _ body: (F.Leaf) -> Void) {
        switch node {
        case .clean: return
        case .leaf(let leaf): body(leaf)
        case .inner(let inner): for child in inner.children { forEachBuffer(child, body) }
        }
    }

    static func forEachBufferThrowing(_ node: TreeNode<F>, _ body: (F.Leaf) throws(StorageError) -> Void) throws(StorageError) {
        switch node {
        case .clean: return
        case .leaf(let leaf): try body(leaf)
        case .inner(let inner): for child in inner.children { try forEachBufferThrowing(child, body) }
        }
    }
}

extension WriteTransaction {
    /// Renames a column (its data stays).
    package func renameColumn(_ table: TableKey, _ column: ColumnKey, to name: String) throws(StorageError) {
        try ensureActive()
        noteIrreversible("a column was renamed")
        let t = try tableIndex(table)
        guard column.index < top.tables[t].columns.count, !top.tables[t].columns[column.index].removed else {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) has no column \(column)")
        }
        if let other = top.tables[t].column(named: name), other != column {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) already has a column \(name)")
        }
        top.tables[t].columns[column.index].name = name
        if states[table] != nil { state(at: t).cluster.context = context.with(columns: top.tables[t].columns) }
    }

    /// Adds or drops a column's search index; `unique` also makes it refuse duplicates.
    ///
    /// - Throws: `duplicateKey` when `unique` and two objects share a value.
    package func setIndex(_ table: TableKey, _ column: ColumnKey, indexed: Bool, unique: Bool) throws(StorageError) {
        try ensureActive()
        noteIrreversible("an index was added or removed")
        let t = try tableIndex(table)
        let c = column.index
        guard c < top.tables[t].columns.count, !top.tables[t].columns[c].removed, !top.tables[t].columns[c].isList else {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) has no value column \(column)")
        }
        let wanted = indexed || unique
        let spec = top.tables[t].columns[c]
        let state = state(at: t)
        try flushIndexEntries(state)
        if spec.isObjectKey {
            // Already unique without an index; asked for anything else, it becomes a plain
            // column (its values stay the keys they were).
            if unique { return }
            top.tables[t].columns[c].isObjectKey = false
            state.layouts = top.tables[t].layouts
            guard wanted else { return }
        }
        guard spec.indexed != wanted || spec.unique != unique else { return }
        if spec.indexed, let index = state.indexes[c] {
            try BTree<IndexFormat>.freeAll(index.root, context) { _ throws(StorageError) in }
        }
        top.tables[t].columns[c].indexed = wanted
        top.tables[t].columns[c].unique = unique && wanted
        top.tables[t].indexRoots[c] = .none
        state.indexes[c] = wanted ? BTree(root: .none, context: context) : nil
        state.layouts = top.tables[t].layouts
        state.cluster.context = context.with(columns: top.tables[t].columns)
        guard wanted else { return }
        var seen = Set<[UInt8]>()
        var entries: [IndexEntry] = []
        try self.table(table).forEachRow { (row) throws(StorageError) -> Bool in
            let value = try row.value(column)
            let encoded = IndexKey.encode(value)
            if unique && !seen.insert(encoded).inserted {
                throw StorageError(.duplicateKey, "\(self.top.tables[t].name).\(spec.name) cannot be unique: two objects hold \(value)")
            }
            entries.append(IndexEntry(value: value, key: row.key.value))
            return true
        }
        try state.indexes[c]!.insertSorted(entries.sorted()[...])
    }
}
