/// The one write transaction of a store: builds the next version copy-on-write, in memory,
/// until `commit` writes it. `rollback` (or dropping the transaction) discards everything.
///
/// Reads inside the transaction see its own changes. Not thread-safe: use it from one thread
/// or task at a time. Any error from `commit` ends the transaction; the store stays at the
/// version it had, and the next write transaction works normally.
package final class WriteTransaction {
    package let store: Store
    let base: Store.Committed
    package let version: VersionID
    let freed = FreedNodes()
    let context: TreeContext
    // @exclusivity(unchecked): a write transaction is used from one thread at a time (its
    // documented contract), and these are touched on every operation.
    @exclusivity(unchecked) var top: TopState
    /// What this transaction changed, per table it touched.
    @exclusivity(unchecked) var states: [TableKey: TableState] = [:]
    /// The state used last: consecutive operations on one table skip the dictionary.
    @exclusivity(unchecked) private var lastState: TableState?
    @exclusivity(unchecked) private var lastTableIndex = 0
    /// Objects deleted from tables that links can point at, per table: links to them are
    /// cleared before the commit (WriteTransaction+Links.swift).
    @exclusivity(unchecked) var deletedLinkTargets: [TableKey: Set<Int64>] = [:]
    var newSchemaBlob: [UInt8]?
    /// False once the transaction committed or rolled back (WriteTransaction+Commit.swift).
    @exclusivity(unchecked) var isActive = true
    /// This transaction's turn on the write lane, until it ends: handed to the commit it
    /// finishes, or let go by a rollback or the transaction's end (WriteTransaction+Commit.swift).
    var lane: LaneHold?
    /// The inverses of the changes since the oldest open savepoint; nil when none is open
    /// (WriteTransaction+Savepoint.swift).
    @exclusivity(unchecked) var undo: UndoLog?
    /// The threads whose parts ride on this transaction (WriteTransaction+Relay.swift).
    var relay = Relay()
    /// Set while a savepoint's changes are undone: links may then name objects that the
    /// next inverses bring back.
    var isUndoing = false

    /// A touched table's trees (buffers over committed nodes) and its changes so far.
    final class TableState {
        let key: TableKey
        // @exclusivity(unchecked): confined to the transaction, see above.
        @exclusivity(unchecked) var cluster: BTree<ClusterFormat>
        /// Per column, the index tree of indexed columns.
        @exclusivity(unchecked) var indexes: [BTree<IndexFormat>?]
        /// Per column, entries of non-unique indexes not yet in their tree: inserts are
        /// batched and merged before anything reads or reshapes the table's indexes
        /// (`flushIndexEntries`). Empty, or one array per column.
        @exclusivity(unchecked) var pendingIndexEntries: [[IndexEntry]] = []
        /// Per column, pending entries of integers while no others are pending there (see
        /// `PendingInt`). Empty, or one array per column.
        @exclusivity(unchecked) var pendingIndexInts: [[PendingInt]] = []
        @exclusivity(unchecked) var hasPendingIndexEntries = false
        /// Where the search for an unused object key resumes once keys ran out at the top.
        @exclusivity(unchecked) var freeKeyCursor: Int64 = 0
        @exclusivity(unchecked) var changes = TableChanges()
        /// The table's columns as the hot paths read them; kept in step with schema changes.
        @exclusivity(unchecked) var layouts: [ColumnLayout] {
            didSet { summarize() }
        }
        @exclusivity(unchecked) var hasIndexes = false
        /// The column whose value is the object key, if any.
        @exclusivity(unchecked) var objectKeyColumn: Int?

        private func summarize() {
            hasIndexes = layouts.contains { $0.indexed && !$0.removed }
            objectKeyColumn = layouts.firstIndex { $0.isObjectKey && !$0.removed }
        }

        init(_ info: TableInfo, _ context: TreeContext) {
            key = info.key
            layouts = info.layouts
            cluster = BTree(root: info.clusterRoot, context: context.with(columns: info.columns))
            indexes = info.columns.indices.map { c in
                info.columns[c].indexed && !info.columns[c].removed ? BTree(root: info.indexRoots[c], context: context) : nil
            }
            summarize()
        }
    }

    /// Which run of unbroken commits the base belongs to: a failed group sync starts a new
    /// one, and a transaction built on the failed versions cannot commit (Store+GroupCommit.swift).
    let lineage: UInt64

    /// `reuse`: the leaf buffers kept by the commit that wrote `base` (DecodedLeaves.swift).
    init(store: Store, base: Store.Committed, lineage: UInt64, reuse: DecodedLeaves?, lane: consuming LaneHold) {
        self.store = store
        self.lane = consume lane
        self.base = base
        self.lineage = lineage
        self.version = base.slot.version.next
        self.top = base.top
        self.top.version = version
        self.context = TreeContext(base: base.mapping.base, limit: base.slot.logicalSize, limits: store.options.limits, freed: freed,
                                   check: store.nodeCheck(base.mapping), columns: [], reuse: reuse, written: DecodedLeaves(version: version.value, lineage: lineage),
                                   retired: RetiredBuffers())
    }

    deinit {
        guard isActive else { return }
        // The riders first: the lane goes after this, with the stored hold.
        relay.answer(.failure(StorageError(.transactionEnded, "the write transaction that carried this write was dropped before its commit",
                                           path: store.path)))
    }

    /// How many leaf buffers this transaction took from the commit it builds on instead of
    /// decoding their nodes (DecodedLeaves.swift).
    package var reusedLeafCount: Int { context.reuse?.taken ?? 0 }

    /// How many inner nodes this transaction took from the commit it builds on instead of
    /// decoding them (DecodedLeaves.swift).
    package var reusedInnerCount: Int { context.reuse?.takenInners ?? 0 }

    /// After the commit: how many blocks of the cluster leaves it encoded were copied or
    /// extended from the nodes those leaves came from (ClusterLeaf+Reuse.swift).
    package var reusedBlockCount: Int { context.written?.reusedBlocks ?? 0 }

    /// After the commit: how many index leaves it wrote from the nodes they came from
    /// (IndexLeaf+Reuse.swift).
    package var reusedIndexLeafCount: Int { context.written?.reusedIndexLeaves ?? 0 }

    /// The version this transaction started from.
    package var baseVersion: VersionID { base.slot.version }
    package var tables: [TableInfo] { top.tables }

    /// Counts the calls that may change the data (every change calls `ensureActive` first),
    /// so that a reader can tell cheaply whether what it computed is still current (live
    /// query results inside a write transaction). Unchecked like `top`: every change counts,
    /// and the dynamic check cost more than the count (callgrind, W1).
    @exclusivity(unchecked) package private(set) var changeCount = 0

    func ensureActive() throws(StorageError) {
        guard isActive else {
            throw StorageError(.transactionEnded, "the write transaction has already been committed or rolled back")
        }
        changeCount &+= 1
    }

    // MARK: Reading

    package func table(_ key: TableKey) throws(StorageError) -> TableView {
        try table(key, flushingIndexes: true)
    }

    /// A view of a table. Without `flushingIndexes`, pending index entries stay pending
    /// (reading objects then costs no merge) and the view leaves out the index trees that
    /// lack them: lookups through unique indexes and object keys work, the others are refused
    /// (`invalidArgument`) rather than answered wrongly.
    package func table(_ key: TableKey, flushingIndexes: Bool) throws(StorageError) -> TableView {
        // After the commit the edited trees are gone (`finish`), and the nodes they
        // named may be reused by later commits: read the committed version instead.
        guard isActive else {
            throw StorageError(.transactionEnded, "the write transaction has already been committed or rolled back; read through a read transaction")
        }
        let info = try tableInfo(key)
        let state = state(info)
        if flushingIndexes { try flushIndexEntries(state) }
        var indexes = state.indexes
        if !flushingIndexes, state.hasPendingIndexEntries {
            for c in state.pendingIndexEntries.indices where state.hasPending(in: c) { indexes[c] = nil }
        }
        return TableView(info: info, context: state.cluster.context, cluster: state.cluster, indexes: indexes, layouts: state.layouts)
    }

    /// Whether this transaction inserted object `key` into `table` (and has not deleted it).
    package func inserted(_ table: TableKey, _ key: ObjectKey) -> Bool {
        states[table]?.changes.inserted.contains(key.value) ?? false
    }

    /// The state of a table, created on first use.
    func state(_ info: TableInfo) -> TableState {
        if let last = lastState, last.key == info.key { return last }
        let state = states[info.key] ?? {
            let created = TableState(info, context)
            states[info.key] = created
            return created
        }()
        lastState = state
        return state
    }

    /// Forgets the cached table state and position (after the catalogue or states changed).
    func forgetLastState() {
        lastState = nil
        lastTableIndex = 0
    }

    /// `state(at:)` without a retain: `states` holds it until a schema change, a savepoint's
    /// rollback or the end of the transaction, which the caller must not cause while it uses it.
    func unretainedState(at t: Int) -> Unmanaged<TableState> {
        if let last = lastState.map({ Unmanaged.passUnretained($0) }), last._withUnsafeGuaranteedRef({ $0.key == top.tables[t].key }) {
            return last
        }
        return Unmanaged.passUnretained(state(top.tables[t]))
    }

    /// The state of the table at position `t` of the catalogue (no copy of its info unless
    /// the state is new).
    func state(at t: Int) -> TableState {
        if let last = lastState, last.key == top.tables[t].key { return last }
        return state(top.tables[t])
    }

    /// Forgets a table's trees (after they were freed), keeping its changes unless `dropChanges`.
    func resetState(_ key: TableKey, dropChanges: Bool) {
        let changes = states[key]?.changes
        states[key] = nil
        lastState = nil
        if !dropChanges, let changes, let info = top.table(key) {
            state(info).changes = changes
        }
    }

    /// The number of columns of a table (removed ones included: `insert` takes a value for
    /// each).
    package func columnCount(_ key: TableKey) throws(StorageError) -> Int {
        try ensureActive()
        return top.tables[try tableIndex(key)].columns.count
    }

    package func table(named name: String) throws(StorageError) -> TableView? {
        guard let info = top.table(named: name) else { return nil }
        return try table(info.key)
    }

    package func schemaBlob() throws(StorageError) -> [UInt8]? {
        if let newSchemaBlob { return newSchemaBlob }
        guard !top.schemaBlob.isNone else { return nil }
        return try BlobNode.decode(try context.node(top.schemaBlob, .blob))
    }

    /// The changes made so far in this transaction.
    package var pendingChanges: ChangeSet {
        var result = ChangeSet()
        for (key, state) in states where !state.changes.isEmpty { result.tables[key] = state.changes }
        return result
    }

    func tableInfo(_ key: TableKey) throws(StorageError) -> TableInfo {
        guard let info = top.table(key) else { throw StorageError(.invalidArgument, "no table \(key)") }
        return info
    }

    /// The position of a table in the catalogue. Remembers the last answer: consecutive
    /// operations on one table then cost one comparison instead of a scan.
    func tableIndex(_ key: TableKey) throws(StorageError) -> Int {
        if lastTableIndex < top.tables.count, top.tables[lastTableIndex].key == key { return lastTableIndex }
        var i = 0
        while i < top.tables.count {
            if top.tables[i].key == key {
                lastTableIndex = i
                return i
            }
            i += 1
        }
        throw StorageError(.invalidArgument, "no table \(key)")
    }

    // MARK: Objects

    /// Inserts an object with `values` for the value columns (list columns take `.null` here
    /// and their elements from `lists`). Without `key`, the next unused key is taken.
    ///
    /// - Throws: `invalidArgument` (wrong count or type, unknown link target),
    ///   `valueTooLarge`, `duplicateKey` (the key, or a unique column's value, exists).
    @discardableResult
    package func insert(_ table: TableKey, key: ObjectKey? = nil, values: [Value], lists: [Int: [Value]] = [:]) throws(StorageError) -> ObjectKey {
        try values.withUnsafeBufferPointer { (values) throws(StorageError) -> ObjectKey in
            try insertRow(table, key: key, values: values, moving: false, lists: lists)
        }
    }

    /// `insert(_:key:values:lists:)` that moves the values into the table instead of copying
    /// them: afterwards `values` holds as many `.null`s, ready to be filled again (`add` keeps
    /// one such array). Each string copied and dropped would cost an atomic retain and
    /// release. When it throws, `values` is as it was, unless the object went in (a failure
    /// of its index entries, which leaves the transaction to be rolled back).
    @discardableResult
    package func insert(_ table: TableKey, key: ObjectKey? = nil, taking values: inout [Value]) throws(StorageError) -> ObjectKey {
        try values.withUnsafeMutableBufferPointer { (values) throws(StorageError) -> ObjectKey in
            try insertRow(table, key: key, values: UnsafeBufferPointer(values), moving: true, lists: [:])
        }
    }

    /// Both inserts. `moving`: `values` is the caller's mutable buffer, and each value is
    /// moved out (replaced with `.null`) once the object is certain to go in.
    private func insertRow(_ table: TableKey, key: ObjectKey?, values: UnsafeBufferPointer<Value>, moving: Bool,
                           lists: [Int: [Value]]) throws(StorageError) -> ObjectKey {
        try ensureActive()
        let t = try tableIndex(table)
        // Borrowed (an insert changes no schema): each retain is an atomic operation.
        return try unretainedState(at: t).withBorrowed { (state) throws(StorageError) -> ObjectKey in
            try insertRow(table, t, state, key: key, values: values, moving: moving, lists: lists)
        }
    }

    private func insertRow(_ table: TableKey, _ t: Int, _ state: TableState, key: ObjectKey?, values: UnsafeBufferPointer<Value>,
                           moving: Bool, lists: [Int: [Value]]) throws(StorageError) -> ObjectKey {
        let layouts = state.layouts
        guard values.count == layouts.count else {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) has \(layouts.count) columns; \(values.count) values given")
        }
        // One pass checks the values and sums the leaf bytes they take.
        var bytes = 8
        for c in layouts.indices {
            if layouts[c].isValue {
                bytes += ClusterLeaf.estimate(payload: try validate(values[c], layouts[c], t, c))
            } else if !values[c].isNull {
                throw StorageError(.invalidArgument, "column \(top.tables[t].columns[c].name) takes no single value")
            } else if layouts[c].isList && !layouts[c].removed {
                bytes += 8
            }
        }
        let estimate = bytes
        for (c, elements) in lists {
            guard c >= 0, c < layouts.count, layouts[c].isList, !layouts[c].removed else {
                throw StorageError(.invalidArgument, "column \(c) of \(top.tables[t].name) is not a list column")
            }
            try validateList(elements, layouts[c], t, c)
        }
        let nextKey = top.tables[t].nextObjectKey
        // Lets, not vars: the closures below capture them, and a captured var costs a
        // dynamic exclusivity check on every use.
        let objectKey: ObjectKey
        if let c = state.objectKeyColumn {
            guard case .int(let value) = values[c], key == nil || key!.value == value else {
                throw StorageError(.invalidArgument, "\(columnName(t, c)) is the object key: insert with key \(values[c]) or no explicit key")
            }
            objectKey = ObjectKey(value)
        } else if let key {
            objectKey = key
        } else if nextKey == Int64.max {
            objectKey = try freeObjectKey(table, state)
        } else {
            objectKey = ObjectKey(nextKey)
        }
        // A key deleted earlier in this transaction comes back (a primary key reused): clear
        // the links to the deleted object now, or the commit would clear links to the new one.
        if !deletedLinkTargets.isEmpty, deletedLinkTargets[table]?.contains(objectKey.value) == true {
            try clearLinksToDeletedObjects()
        }
        let isAppend = objectKey.value >= nextKey
        // Unique columns are checked before anything changes; their entries are encoded once,
        // for the check and the insert.
        var uniqueEntries: [(column: Int, entry: IndexEntry)] = []
        for c in layouts.indices where layouts[c].unique && !layouts[c].removed {
            let entry = IndexEntry(value: values[c], key: objectKey.value)
            if try isDuplicate(entry, in: state, c, values[c], table) {
                throw StorageError(.duplicateKey, "table \(top.tables[t].name) already has an object with \(top.tables[t].columns[c].name) = \(values[c])")
            }
            uniqueEntries.append((c, entry))
        }

        /// Puts the object at position `i` of `leaf`.
        func place(in leaf: ClusterLeaf, at i: Int) {
            let atEnd = i == leaf.keys.count
            leaf.editRows(keepingBefore: i, from: i) { keys, columnArrays, listArrays in
                if atEnd { keys.append(objectKey.value) } else { keys.insert(objectKey.value, at: i) }
                // The column arrays through one mutable buffer: `columns[c].append` checks
                // that the outer array is unshared on every call.
                columnArrays.withUnsafeMutableBufferPointer { columns in
                    for c in layouts.indices where !layouts[c].removed {
                        if layouts[c].isList {
                            let cell: ListCell = lists[c].map { $0.isEmpty ? .clean(.none) : .dirty($0) } ?? .clean(.none)
                            if atEnd { listArrays[c].append(cell) } else { listArrays[c].insert(cell, at: i) }
                        } else {
                            // Indexed columns' values are copied: their entries are made
                            // from `values` after this.
                            let value: Value
                            if moving && !layouts[c].indexed {
                                let slot = UnsafeMutablePointer(mutating: values.baseAddress! + c)
                                value = slot.move()
                                slot.initialize(to: .null)
                            } else {
                                value = values[c]
                            }
                            if atEnd { columns[c].append(value) } else { columns[c].insert(value, at: i) }
                        }
                    }
                }
            }
            leaf.byteEstimate += estimate
            leaf.appendedAtEnd = isAppend && atEnd
            leaf.noteInsert(at: i)
        }
        // Bulk inserts append: skip the descent while the last leaf has room.
        let limits = context.limits
        let appended: Bool = isAppend && state.cluster.appendToLastLeaf(fits: { leaf in
            leaf.count < limits.leafCapacity && leaf.byteEstimate + estimate <= limits.leafBytes && leaf.keys[leaf.keys.count - 1] < objectKey.value
        }, { leaf in place(in: leaf, at: leaf.keys.count) }) != nil
        var inserted = appended
        if !appended {
            inserted = try state.cluster.modifyLeaf(for: objectKey.value) { (leaf) throws(StorageError) -> Bool in
                let (i, found) = leaf.position(of: objectKey.value)
                if found { return false }
                place(in: leaf, at: i)
                return true
            }
        }
        guard inserted else {
            let what = state.objectKeyColumn.map { "\(top.tables[t].columns[$0].name) = \(objectKey.value)" } ?? "key \(objectKey.value)"
            throw StorageError(.duplicateKey, "table \(top.tables[t].name) already has an object with \(what)")
        }
        if isAppend {
            top.tables[t].nextObjectKey = objectKey.value == Int64.max ? Int64.max : objectKey.value + 1
        }
        for (c, entry) in uniqueEntries { try indexInsert(state, c, entry) }
        for c in layouts.indices where layouts[c].indexed && !layouts[c].unique && !layouts[c].removed {
            try indexInsert(state, c, values[c], objectKey)
        }
        state.changes.recordInsert(objectKey.value)
        undo?.entries.append(.inserted(table, objectKey))
        return objectKey
    }

    /// An unused key for a keyless insert when the keys reached `Int64.max` (a table whose
    /// integer primary keys were its object keys, until a migration made them a plain
    /// column): the first gap from where the last search stopped, wrapping around once.
    func freeObjectKey(_ table: TableKey, _ state: TableState) throws(StorageError) -> ObjectKey {
        let view = try self.table(table, flushingIndexes: false)
        if try view.row(ObjectKey(Int64.max)) == nil { return ObjectKey(Int64.max) }
        let cursor = state.freeKeyCursor
        if try view.row(ObjectKey(cursor)) == nil {
            state.freeKeyCursor = cursor &+ 1
            return ObjectKey(cursor)
        }
        let keys = try view.keys().map(\.value)
        func firstGap(from start: Int64, below end: Int64) -> Int64? {
            var candidate = start
            var i = keys.firstIndex { $0 >= start } ?? keys.count
            while candidate < end {
                guard i < keys.count, keys[i] == candidate else { return candidate }
                candidate += 1
                i += 1
            }
            return nil
        }
        guard let free = firstGap(from: cursor, below: Int64.max) ?? firstGap(from: Int64.min, below: cursor) else {
            throw StorageError(.invalidArgument, "table \(top.table(table)?.name ?? "\(table)") has no unused object key left")
        }
        state.freeKeyCursor = free &+ 1
        return ObjectKey(free)
    }

    /// Sets one value column of an existing object.
    package func set(_ table: TableKey, _ key: ObjectKey, _ column: ColumnKey, _ value: Value) throws(StorageError) {
        try ensureActive()
        let t = try tableIndex(table)
        let state = state(at: t)
        let c = column.index
        guard c >= 0, c < state.layouts.count, state.layouts[c].isValue else {
            throw StorageError(.invalidArgument, "column \(column) of \(top.tables[t].name) is not a value column")
        }
        let spec = state.layouts[c]
        try validate(value, spec, t, c)
        let old = try self.table(table, flushingIndexes: false).value(key, column)
        // Floating-point values compare equal across signs of zero (and never for NaN): only
        // skip a write when nothing could differ.
        if old == value && !(spec.type == .double || spec.type == .float || spec.type == .mixed) { return }
        if spec.isObjectKey {
            throw StorageError(.invalidArgument, "\(columnName(t, c)) is the object's key and cannot change (from \(old) to \(value))")
        }
        if spec.unique, Value.compare(old, value) != 0,
           try TableView.indexContains(state.indexes[c]!, value, verifyingWith: self.table(table), column) {
            throw StorageError(.duplicateKey, "table \(top.tables[t].name) already has an object with \(top.tables[t].columns[c].name) = \(value)")
        }
        try state.cluster.modifyLeaf(for: key.value) { (leaf) throws(StorageError) in
            let i = leaf.position(of: key.value).index
            leaf.byteEstimate += ClusterLeaf.estimate(value) - ClusterLeaf.estimate(leaf.columns[c][i])
            leaf.setValue(value, column: c, row: i)
        }
        if spec.indexed {
            try indexRemove(state, c, old, key)
            try indexInsert(state, c, value, key)
        }
        state.changes.recordModify(key.value, column: c)
        undo?.entries.append(.set(table, key, column, old: old))
    }

    /// Replaces the elements of one list column of an existing object.
    package func setList(_ table: TableKey, _ key: ObjectKey, _ column: ColumnKey, _ elements: [Value]) throws(StorageError) {
        try ensureActive()
        let t = try tableIndex(table)
        let state = state(at: t)
        let c = column.index
        guard c >= 0, c < state.layouts.count, state.layouts[c].isList, !state.layouts[c].removed else {
            throw StorageError(.invalidArgument, "column \(column) of \(top.tables[t].name) is not a list column")
        }
        try validateList(elements, state.layouts[c], t, c)
        guard try self.table(table).contains(key) else {
            throw StorageError(.invalidArgument, "table \(top.tables[t].name) has no object \(key)")
        }
        let old = undo == nil ? [] : try self.table(table).list(key, column)
        let context = self.context
        try state.cluster.modifyLeaf(for: key.value) { (leaf) throws(StorageError) in
            let i = leaf.position(of: key.value).index
            if case .clean(let old) = leaf.lists[c][i] { try context.free(old, .list) }
            leaf.setList(elements.isEmpty ? .clean(.none) : .dirty(elements), column: c, row: i)
        }
        state.changes.recordModify(key.value, column: c)
        undo?.entries.append(.setList(table, key, column, old: old))
    }

    /// Deletes an object (its lists go with it). Returns false when it did not exist.
    ///
    /// Links to the object from other objects are cleared (single links become null, list
    /// entries are removed) when the transaction commits; until then they still hold its key.
    @discardableResult
    package func delete(_ table: TableKey, _ key: ObjectKey) throws(StorageError) -> Bool {
        try ensureActive()
        let t = try tableIndex(table)
        let state = state(at: t)
        let layouts = state.layouts
        guard let row = try self.table(table, flushingIndexes: false).row(key) else { return false }
        let inverse = undo == nil ? nil : try undoEntryForDelete(table, row, layouts)
        var indexed: [(Int, Value)] = []
        for c in layouts.indices where layouts[c].indexed && !layouts[c].removed {
            indexed.append((c, try row.value(ColumnKey(c))))
        }
        let context = self.context
        try state.cluster.modifyLeaf(for: key.value) { (leaf) throws(StorageError) in
            let i = leaf.position(of: key.value).index
            var estimate = 8
            try leaf.editRows(keepingBefore: i, from: i + 1) { (keys, columns, lists) throws(StorageError) in
                keys.remove(at: i)
                for c in layouts.indices where !layouts[c].removed {
                    if layouts[c].isList {
                        if case .clean(let ref) = lists[c][i] { try context.free(ref, .list) }
                        lists[c].remove(at: i)
                        estimate += 8
                    } else if !columns[c].isEmpty {
                        estimate += ClusterLeaf.estimate(columns[c][i])
                        columns[c].remove(at: i)
                    }
                }
            }
            leaf.byteEstimate -= estimate
            leaf.forgetInserts()
        }
        for (c, value) in indexed { try indexRemove(state, c, value, key) }
        state.changes.recordDelete(key.value)
        noteDeleted(table, key)
        if let inverse { undo?.entries.append(inverse) }
        return true
    }

    /// Stores the layer above's schema description with this version.
    package func setSchemaBlob(_ bytes: [UInt8]) throws(StorageError) {
        try ensureActive()
        newSchemaBlob = bytes
    }

    // MARK: Validation

    /// Checks a value for column `c` of the table at position `t`.
    // Inlined, with its errors made out of line: called with an element of an array, a call
    // copied the value (a retain and a release for strings) on every insert of every column.
    /// Checks `value` for column `c` of table `t`; returns its payload's size (for the leaf
    /// estimate: computed once, as reading a string's size out of a value copies the string,
    /// an atomic retain and release when it is long).
    @inline(__always) @discardableResult
    func validate(_ value: Value, _ layout: ColumnLayout, _ t: Int, _ c: Int) throws(StorageError) -> Int {
        guard value.fits(layout.type, nullable: layout.nullable) else { throw misfit(value, layout, t, c) }
        let payload = value.payloadSize
        switch value {
        case .string, .binary:
            if payload > ValueLimits.maxPayloadSize { throw tooLarge(value, t, c) }
        case .link, .typedLink:
            if !isUndoing { try validateLink(value, layout, t, c) }
        default:
            break
        }
        return payload
    }

    /// Checks that a link's target exists.
    @inline(never)
    private func validateLink(_ value: Value, _ layout: ColumnLayout, _ t: Int, _ c: Int) throws(StorageError) {
        switch value {
        case .link(let target):
            guard let targetTable = layout.linkTarget, try self.table(targetTable).contains(target) else {
                throw StorageError(.invalidArgument, "\(columnName(t, c)) links to \(target), which does not exist")
            }
        case .typedLink(let targetTable, let target):
            guard top.table(targetTable) != nil, try self.table(targetTable).contains(target) else {
                throw StorageError(.invalidArgument, "\(columnName(t, c)) links to \(target) of table \(targetTable), which does not exist")
            }
        default:
            break
        }
    }

    @inline(never)
    private func misfit(_ value: Value, _ layout: ColumnLayout, _ t: Int, _ c: Int) -> StorageError {
        StorageError(.invalidArgument, "column \(columnName(t, c)) holds \(layout.nullable ? "optional " : "")\(layout.type) values, not \(value)")
    }

    @inline(never)
    private func tooLarge(_ value: Value, _ t: Int, _ c: Int) -> StorageError {
        StorageError(.valueTooLarge, "a value of \(value.payloadSize) bytes for \(columnName(t, c)) exceeds the 16 MiB limit")
    }

    func validateList(_ elements: [Value], _ layout: ColumnLayout, _ t: Int, _ c: Int) throws(StorageError) {
        guard elements.count <= ValueLimits.maxListCount else {
            throw StorageError(.valueTooLarge, "a list of \(elements.count) elements exceeds the limit of \(ValueLimits.maxListCount)")
        }
        var total = 0
        for element in elements {
            try validate(element, layout, t, c)
            total += element.payloadSize
        }
        if total > 256 << 20 {
            throw StorageError(.valueTooLarge, "a list holding \(total) bytes exceeds the 256 MiB limit")
        }
    }

    /// "Table.column", for messages.
    func columnName(_ t: Int, _ c: Int) -> String { "\(top.tables[t].name).\(top.tables[t].columns[c].name)" }

    // MARK: Index maintenance

    func indexInsert(_ state: TableState, _ c: Int, _ value: Value, _ key: ObjectKey) throws(StorageError) {
        if case .int(let i) = value, !state.layouts[c].unique {
            try deferIndexInsert(state, c, int: i, key: key.value)
            return
        }
        try indexInsert(state, c, IndexEntry(value: value, key: key.value))
    }

    /// Whether a unique column already holds the value of `entry`. An entry above the last
    /// one (ascending primary keys) is decided by the last entry alone: entries are sorted by
    /// value, then key, so an equal value would have to be that last entry.
    func isDuplicate(_ entry: IndexEntry, in state: TableState, _ c: Int, _ value: Value, _ table: TableKey) throws(StorageError) -> Bool {
        if entry.prefixCount < IndexEntry.prefixLimit, let last = state.indexes[c]!.lastEntryOfBufferedEdge(), last < entry {
            return last.comparePrefix(entry) == 0
        }
        return try TableView.indexContains(state.indexes[c]!, value, verifyingWith: self.table(table), ColumnKey(c))
    }

    func indexInsert(_ state: TableState, _ c: Int, _ entry: IndexEntry) throws(StorageError) {
        if !state.layouts[c].unique {
            try deferIndexInsert(state, c, entry)
            return
        }
        try insertIntoIndexTree(state, c, entry)
    }

    private func insertIntoIndexTree(_ state: TableState, _ c: Int, _ entry: IndexEntry) throws(StorageError) {
        let limits = context.limits
        let appended: Void? = state.indexes[c]!.appendToLastLeaf(fits: { leaf in
            leaf.entries.count < limits.leafCapacity && leaf.entries[leaf.entries.count - 1] < entry
        }, { leaf in
            leaf.append(contentsOf: CollectionOfOne(entry))
            leaf.appendedAtEnd = true
        })
        if appended != nil { return }
        try state.indexes[c]!.modifyLeaf(for: entry) { (leaf) throws(StorageError) in
            let (i, found) = leaf.position(of: entry)
            guard !found else { return }
            leaf.insert(entry, at: i)
            leaf.appendedAtEnd = i == leaf.entries.count - 1
        }
    }

    func indexRemove(_ state: TableState, _ c: Int, _ value: Value, _ key: ObjectKey) throws(StorageError) {
        let entry = IndexEntry(value: value, key: key.value)
        if try removePendingIndexEntry(state, c, entry) { return }
        let removed = try state.indexes[c]!.modifyLeaf(for: entry) { (leaf) throws(StorageError) -> Bool in
            let (i, found) = leaf.position(of: entry)
            if found { leaf.remove(at: i) }
            return found
        }
        guard removed else {
            let name = top.table(state.key).map { "\($0.name).\($0.columns[c].name)" } ?? "column \(c)"
            throw StorageError(.fileCorrupted, "the index of \(name) lacks the entry for \(key)")
        }
    }
}
