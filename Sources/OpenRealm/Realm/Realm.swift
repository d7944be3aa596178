import Foundation
import RealmStorage

/// A realm: one database file (or in-memory database) and the objects in it.
///
/// A `Realm` is not `Sendable`: it belongs to the actor that opened it, else to the task
/// (across its awaits), else to the thread, and using it from elsewhere traps with a message
/// naming the rule. It reads one version of the file until it moves to the newest (after its
/// own commit, at `refresh()` or the start of a write, or by itself on an actor or a dispatch
/// queue); objects it returns are live views of that version. To share data between tasks,
/// use a `RealmActor`, a `Frozen` snapshot or a `ThreadSafeReference`.
///
/// ```swift
/// let realm = try Realm(fileURL: URL(fileURLWithPath: "dogs.realm"))
/// try realm.write {
///     realm.add(Dog(value: ["name": "Rex", "age": 1]))
/// }
/// let puppies = realm.objects(Dog.self).where { $0.age < 2 }
/// ```
///
/// Opening throws `Realm.Error` for a file that cannot be used (`fileNotFound`,
/// `invalidDatabase`, `fileCorrupted`, `schemaMismatch`, …); writes throw it for what cannot
/// be stored or synced. Misuse that cannot throw (changing an object outside a write, using a
/// realm off its actor) traps.
public final class Realm {
    /// The configuration the realm was opened with.
    public let configuration: Configuration
    /// `package` so that the engine facade (`_OpenRealmEngine`) can read a compressed copy's
    /// cache counts.
    package let store: Store
    /// The version the realm reads, pinned; nil after `invalidate()` until the realm reads
    /// again (`readTransaction`).
    private var pinnedRead: ReadTransaction?
    private(set) var writeTransaction: WriteTransaction?
    private var bindings: [ObjectIdentifier: TableBinding] = [:] {
        didSet { lastBinding = nil }
    }
    /// Every binding this realm made, kept for as long as it lives: managed objects hold
    /// theirs without retaining it (ObjectBase.binding), and outlive `bindings` resets.
    var everyBinding: [TableBinding] = []
    /// The file's classes as its catalogue records them, and the bindings of dynamic objects
    /// to their tables (Realm+Dynamic.swift).
    var dynamicState = DynamicState()
    /// The binding found last (see `binding(for:)`); forgotten whenever `bindings` changes.
    private var lastBinding: TableBinding?
    /// Index additions (true) and removals (false) that bound classes ask of the file and
    /// that no committed write of this realm has made yet (see `scheduleIndexChanges`).
    private(set) var pendingIndexChanges: [(table: TableKey, column: String, indexed: Bool)] = []
    /// Table views of the current read version, by table (rebuilt when the version moves).
    private var views: [TableKey: TableView] = [:]
    /// Changes whenever what the realm reads may have changed (a refresh, a write beginning or
    /// ending), so that objects know their cached rows are stale.
    private(set) var generation = 0
    /// Changes at every `invalidate()`: objects from an earlier epoch are invalidated.
    private(set) var epoch = 0
    /// Whether this realm is a frozen snapshot of one version (Frozen.swift): it never moves
    /// to another version and cannot be written.
    public let isFrozen: Bool
    /// The thread, actor or dispatch queue this realm belongs to (Confinement.swift).
    let confinement: Confinement
    /// For a realm on an actor or a dispatch queue: how work reaches it from elsewhere
    /// (async write callbacks, autorefresh; RealmContext.swift). Set once, when opening is
    /// done (Realm+Open.swift).
    var context: RealmContext?
    /// The async writes of the callback family (Realm+AsyncWriteCallbacks.swift).
    var asyncWrites = AsyncWriteState()
    /// The observers of this realm's changes, once something observes it (RealmNotifier.swift).
    var notifier: RealmNotifier?
    /// Whether the realm moves to each new version by itself. It does on an actor or a
    /// dispatch queue (the refresh is posted there after each commit, in this process); a realm
    /// on a thread has no event loop to post to and moves only with `refresh()` or a write.
    /// Off, the realm stays on its version until refreshed or a write begins.
    public var autorefresh = true
    /// The frozen realm of the version this live realm reads, made by the first `freeze()`
    /// at that version and handed out again until the realm moves on.
    var frozenCache: Realm?
    /// For a frozen realm: the live realm `thaw()` gives when called on its thread (the realm
    /// that was frozen, or the last one thawing opened).
    weak var thawTarget: Realm?
    /// What the realm must undo of its objects when a write, or a part of one, does not
    /// commit (WriteUndoLedger.swift).
    let undoLedger = WriteUndoLedger()

    /// A live realm reading `read` of `store`'s file, as opening leaves it once the file and
    /// the schema are checked, before it migrates and binds the classes (Realm+Open.swift).
    init(store: Store, reading read: ReadTransaction, configuration: Configuration, confinement: Confinement) {
        self.configuration = configuration
        self.store = store
        pinnedRead = read
        isFrozen = false
        self.confinement = confinement
    }

    /// A frozen realm reading `version` of `store`'s file. The live realm that made it checked
    /// the schema, so nothing is checked or written here.
    init(frozenAt version: ReadTransaction, store: Store, configuration: Configuration) {
        self.configuration = configuration
        self.store = store
        pinnedRead = version
        isFrozen = true
        confinement = .none
    }

    deinit {
        context?.realmWillGo()
        writeTransaction?.rollback()
    }

    // MARK: Versions

    /// Moves the realm to the newest committed version and delivers the notifications of the
    /// changes (RealmNotifier.swift). Returns whether the version changed.
    @discardableResult
    public func refresh() -> Bool {
        guard !isFrozen else { return false }
        confinement.verify()
        guard writeTransaction == nil else { return false }
        let moved = moveToNewestVersion()
        notifier?.deliver()
        return moved
    }

    /// The version the realm reads. After `invalidate()` released it, the first read begins
    /// at the newest version (as in Realm, which begins a new read transaction then).
    var readTransaction: ReadTransaction {
        if let pinnedRead { return pinnedRead }
        return beginReadingAgain()
    }

    @inline(never)
    private func beginReadingAgain() -> ReadTransaction {
        let read = store.beginRead()
        pinnedRead = read
        return read
    }

    /// Moves the realm to the newest committed version, without notifications. Returns
    /// whether the version changed (true for a realm `invalidate()` released).
    ///
    /// When the newest is what the realm reads already, nothing changes: the read, its
    /// caches and `generation` stay (the notifier takes a changed `generation` for a move,
    /// RealmNotifier.swift, and objects for stale rows).
    @discardableResult
    func moveToNewestVersion() -> Bool {
        let newest = store.beginRead()
        guard newest.slot != pinnedRead?.slot else { return false }
        let before = pinnedRead?.version
        pinnedRead = newest
        // The frozen realm of the old version would keep it pinned.
        frozenCache = nil
        views = [:]
        generation += 1
        return newest.version != before
    }

    /// Releases the version this realm reads (so the file can reuse the space it pins, and it
    /// no longer counts against `maximumNumberOfActiveVersions`) and invalidates every object
    /// read so far; a write transaction in progress is cancelled. The realm itself stays
    /// usable: its next read begins at the newest version, and results read again.
    ///
    /// Until then the realm pins nothing: a realm kept for later use (by a thread of a pool,
    /// a long-lived service) costs no version while it is idle.
    public func invalidate() {
        // A frozen realm is its version: it has nothing to release but itself.
        guard !isFrozen else { return }
        cancelWrite()
        epoch += 1
        pinnedRead = nil
        frozenCache = nil
        views = [:]
        generation += 1
        // Nothing is announced: the realm moved to no version. Its observers hear of the
        // versions after the one they last saw at its next refresh, write or delivery.
    }

    /// Forgets every class binding (after a migration changed the tables).
    func bindingsReset() {
        bindings = [:]
        views = [:]
        generation += 1
    }

    /// Whether a write transaction is open on this realm (also one `beginWrite()` could not
    /// begin, until its `commitWrite()` throws why or `cancelWrite()` ends it).
    public var isInWriteTransaction: Bool { writeTransaction != nil || writeThatDidNotBegin != nil }

    /// Why the last `beginWrite()` could not begin its transaction: thrown by `commitWrite()`.
    /// (A condition found once it began, too many versions pinned or a pending index change
    /// that failed, is the write's first failure: `writeFailure`.)
    private var writeThatDidNotBegin: Realm.Error?

    // MARK: Tables

    /// The current view of a table: the write transaction's, or the pinned version's.
    /// Reading objects and primary-key lookups need no other index, so inside a write the
    /// view leaves the batched index inserts pending (see WriteTransaction+PendingIndex).
    func tableView(_ table: TableKey) throws(StorageError) -> TableView {
        confinement.verify()
        if let writeTransaction { return try writeTransaction.table(table, flushingIndexes: false) }
        if let view = views[table] { return view }
        let view = try readTransaction.table(table)
        views[table] = view
        return view
    }

    /// How `type` maps onto its table; creates the table (in a write transaction) when the
    /// file has none yet.
    func binding(for type: Object.Type) throws(Realm.Error) -> TableBinding? {
        // Lookups and adds usually repeat one class: skip the dictionary for it.
        if let last = lastBinding, last.schema.objectType == type { return last }
        if let existing = bindings[ObjectIdentifier(type)] {
            lastBinding = existing
            return existing
        }
        let schema = try ObjectSchema.of(type)
        let info = writeTransaction?.tables.first { $0.name == schema.className } ?? readTransaction.top.table(named: schema.className)
        guard let info else { return nil }
        let tables = writeTransaction?.tables ?? readTransaction.tables
        let binding = try TableBinding(schema: schema, info: info, path: configuration.path) { key in
            tables.first { $0.key == key }?.name
        }
        bindings[ObjectIdentifier(type)] = binding
        everyBinding.append(binding)
        if !binding.indexChanges.isEmpty && !configuration.readOnly { try scheduleIndexChanges(of: binding) }
        return binding
    }

    /// Queues a newly bound class's index changes. Inside a write transaction they are made
    /// at once; outside one they wait for the next (`beginWrite` makes every pending change).
    ///
    /// Waiting, rather than opening a write transaction here, keeps binding free of side
    /// effects: a write would move the realm to the newest version in the middle of a read,
    /// and would wait forever for the write lane if this thread holds it through another
    /// `Realm` of the same file. An index only speeds lookups, so the file is correct either
    /// way. A change in a write that is cancelled stays pending for the next one.
    private func scheduleIndexChanges(of binding: TableBinding) throws(Realm.Error) {
        for change in binding.indexChanges {
            pendingIndexChanges.removeAll { $0.table == binding.table && $0.column == change.column }
            pendingIndexChanges.append((binding.table, change.column, change.indexed))
        }
        try makePendingIndexChanges()
    }

    /// Adds and drops the pending indexes in the open write transaction (if any).
    private func makePendingIndexChanges() throws(Realm.Error) {
        guard let transaction = writeTransaction, !pendingIndexChanges.isEmpty else { return }
        try engine { () throws(StorageError) in
            for change in pendingIndexChanges {
                // Looked up again: the write began from the newest version, which another
                // realm may have changed since the class was bound.
                guard let info = transaction.tables.first(where: { $0.key == change.table }),
                      let column = info.column(named: change.column) else { continue }
                let spec = info.columns[column.index]
                // A primary key (object key or unique index) is the migration's business.
                guard !spec.isList, !spec.unique, !spec.isObjectKey, spec.indexed != change.indexed else { continue }
                try transaction.setIndex(change.table, column, indexed: change.indexed, unique: false)
            }
        }
    }

    /// The current view of a bound table, reused while the realm stays on one version.
    func view(of binding: TableBinding) throws(StorageError) -> TableViewBox {
        confinement.verify()
        if writeTransaction == nil, binding.cachedViewGeneration == generation, let box = binding.cachedView { return box }
        let box = TableViewBox(try tableView(binding.table))
        if writeTransaction == nil {
            binding.cachedView = box
            binding.cachedViewGeneration = generation
        }
        return box
    }

    /// The class this realm has bound to `table`, if any.
    func boundClass(of table: TableKey) -> Object.Type? {
        bindings.values.first { $0.table == table }?.schema.objectType
    }

    /// `bindingCreatingTable(for:)` without a retain: the realm keeps every binding it made
    /// (`everyBinding`).
    func unretainedBinding(creatingTableFor type: Object.Type) throws(Realm.Error) -> Unmanaged<TableBinding> {
        if let last = lastBinding.map({ Unmanaged.passUnretained($0) }), last._withUnsafeGuaranteedRef({ $0.schema.objectType == type }) {
            return last
        }
        return Unmanaged.passUnretained(try bindingCreatingTable(for: type))
    }

    /// The binding of `type`, creating its table now if needed (inside a write transaction).
    /// Link columns are added once their target tables exist, so classes may link to each
    /// other and to themselves.
    func bindingCreatingTable(for type: Object.Type) throws(Realm.Error) -> TableBinding {
        if let existing = try binding(for: type) { return existing }
        guard let writeTransaction else {
            throw Realm.Error(.notInWriteTransaction, "adding objects requires a write transaction: use realm.write { }")
        }
        let schema = try ObjectSchema.of(type)
        let plain = schema.allProperties.filter { $0.columnType != .link && $0.isStored }
        let key = try engine { () throws(StorageError) in
            try writeTransaction.createTable(schema.className, columns: plain.map { $0.newTableColumnSpec() })
        }
        var columns = [ColumnKey](repeating: ColumnKey(0), count: schema.allProperties.count)
        for (position, property) in plain.enumerated() { columns[property.index] = ColumnKey(position) }
        // Bound before the links are added, so that a link back to this class finds it.
        var binding = TableBinding(schema: schema, table: key, columns: columns)
        bindings[ObjectIdentifier(type)] = binding
        everyBinding.append(binding)
        for property in schema.allProperties where property.columnType == .link && property.isStored {
            let target = try bindingCreatingTable(for: property.linkTarget!)
            let column = try engine { () throws(StorageError) in
                try writeTransaction.addColumn(key, property.columnSpec(linkTarget: target.table))
            }
            columns[property.index] = column
            binding = TableBinding(schema: schema, table: key, columns: columns)
            bindings[ObjectIdentifier(type)] = binding
            everyBinding.append(binding)
        }
        return binding
    }

    // MARK: Transactions

    /// Runs `block` in a write transaction and commits it; rolls back and rethrows when
    /// `block` throws.
    ///
    /// Beginning moves the realm to the newest version, delivering the notifications of what
    /// changed (as `refresh()` would) before `block` runs. The observations of `tokens` (of
    /// this realm) are not told of this write's changes: for a caller that already showed them.
    ///
    /// ```swift
    /// try realm.write(withoutNotifying: [token]) {
    ///     realm.add(Dog(value: ["name": "Rex"]))
    /// }
    /// ```
    ///
    /// - Throws: `Realm.Error` from the commit (`outOfDiskSpace`, `fileAccess`, …), the first
    ///   data error recorded in `block` (`duplicatePrimaryKey`, `valueTooLarge`,
    ///   `invalidArgument`: see `commitWrite`), `alreadyInWriteTransaction`, `incompatibleLockFile` (the lock file was deleted or
    ///   replaced while the realm was open: nothing is written, reads go on), and whatever
    ///   `block` throws.
    @discardableResult
    public func write<Result>(withoutNotifying tokens: [NotificationToken] = [], _ block: () throws -> Result) throws -> Result {
        // Throws what `beginWrite()` keeps for `commitWrite()`: here `block` need not run.
        // A write that skips no observer may be carried by another thread's commit, or carry
        // others' (WriteTransaction+Relay.swift).
        let relaying = tokens.isEmpty
        try beginWriteOrThrow(joiningRelay: relaying)
        let result: Result
        do {
            result = try block()
        } catch {
            cancelWrite()
            throw error
        }
        if isInWriteTransaction { try commitWrite(withoutNotifying: tokens, relaying: relaying) }
        return result
    }

    /// Begins a write transaction, moving the realm to the newest version (and delivering the
    /// notifications of what changed, as `refresh()` would). End it with `commitWrite()` or
    /// `cancelWrite()`.
    ///
    /// As in Realm Swift it does not throw. Misuse traps with a message naming the rule: a
    /// write already open on this realm (writes do not nest), a frozen or read-only realm, the
    /// wrong thread. A condition of the file or its resources is kept and thrown by
    /// `commitWrite()`, which then writes nothing: more than `maximumNumberOfActiveVersions`
    /// versions pinned, the lock file deleted or replaced (`incompatibleLockFile`), an I/O
    /// error while catching up with another process's commits or making pending index
    /// changes. When the transaction itself could not begin, changing objects before that
    /// commit traps, naming the condition.
    ///
    /// ```swift
    /// realm.beginWrite()
    /// realm.add(Dog())
    /// try realm.commitWrite()
    /// ```
    public func beginWrite() {
        do throws(Realm.Error) {
            try checkWriteIsAllowed()
            try deliverBeforeWriting()
        } catch {
            misuse("Cannot begin a write transaction: \(error.message)")
        }
        let overLimit = activeVersionLimitError()
        let transaction: WriteTransaction
        do throws(Realm.Error) {
            transaction = try engine { () throws(StorageError) in try store.beginWrite() }
        } catch {
            writeThatDidNotBegin = error
            return
        }
        didBegin(transaction)
        do throws(Realm.Error) {
            try makePendingIndexChanges()
        } catch {
            failWrite(error)
        }
        if let overLimit { failWrite(overLimit) }
        notifier?.deliver(beginning: true)
    }

    /// `beginWrite()` as it was before it matched Realm Swift: every refusal thrown at once,
    /// for the callers that throw anyway (`write {}`, migrations).
    ///
    /// `joiningRelay`: the write may be added to the transaction of the thread before it in
    /// line for the lane (WriteTransaction+Relay.swift).
    func beginWriteOrThrow(joiningRelay: Bool = false) throws(Realm.Error) {
        try checkCanBeginWrite()
        try deliverBeforeWriting()
        didBegin(try engine { () throws(StorageError) in try store.beginWrite(joiningRelay: joiningRelay) })
        try afterBegin()
    }

    /// Before a write asks for the write lane: moves to the newest version and delivers what
    /// changed, so that observers run before the write holds the lane (other writers never
    /// wait for them). What is committed between this and the lane is delivered when the
    /// write begins (`afterBegin`): usually nothing.
    ///
    /// - Throws: `alreadyInWriteTransaction` when an observer began a write and left it open.
    func deliverBeforeWriting() throws(Realm.Error) {
        guard let notifier, notifier.hasObservers, writeTransaction == nil else { return }
        moveToNewestVersion()
        notifier.deliver()
        guard writeTransaction == nil else {
            throw Realm.Error(.alreadyInWriteTransaction, "a write transaction is already open on this realm", path: configuration.path)
        }
    }

    /// The checks before a write may begin: none open here, not read-only, versions in bounds.
    func checkCanBeginWrite() throws(Realm.Error) {
        try checkWriteIsAllowed()
        if let error = activeVersionLimitError() { throw error }
    }

    /// The checks of how the realm is used before a write begins: the right thread, a live
    /// realm open for writing, no write open here (misuse: `beginWrite()` traps on these).
    func checkWriteIsAllowed() throws(Realm.Error) {
        confinement.verify()
        guard !isFrozen else {
            throw Realm.Error(.frozen, "cannot write to a frozen realm: it is a read-only snapshot; write through a live realm (thaw())",
                              path: configuration.path)
        }
        guard writeTransaction == nil && writeThatDidNotBegin == nil else {
            throw Realm.Error(.alreadyInWriteTransaction, "a write transaction is already open on this realm; commit or cancel it first",
                              path: configuration.path)
        }
        guard !configuration.readOnly else {
            throw Realm.Error(.readOnly, "the realm was opened read-only", path: configuration.path)
        }
    }

    /// The error of a write beginning while more versions are pinned than the configuration
    /// allows, if they are.
    func activeVersionLimitError() -> Realm.Error? {
        guard let limit = configuration.maximumNumberOfActiveVersions, store.activeVersionCount > Int(limit) else { return nil }
        return Realm.Error(.maximumNumberOfActiveVersionsExceeded,
                           "\(store.activeVersionCount) versions are pinned, more than maximumNumberOfActiveVersions (\(limit)): "
                           + "release frozen objects and old snapshots, or raise the limit", path: configuration.path)
    }

    func didBegin(_ transaction: WriteTransaction) {
        writeTransaction = transaction
        writeFailure = nil
        undoLedger.writeBegan()
        frozenCache = nil
        views = [:]
        generation += 1
        // A commit of this realm that created tables may have failed after this transaction's
        // base was chosen (an async commit still syncing when the next write began): its
        // tables are not in this one.
        if !bindings.values.allSatisfy({ binding in transaction.tables.contains { $0.key == binding.table } }) {
            forgetMissingTables()
        }
    }

    func afterBegin() throws(Realm.Error) {
        do {
            try makePendingIndexChanges()
        } catch {
            cancelWrite()
            throw error
        }
        notifier?.deliver(beginning: true)
    }

    /// Commits the open write transaction; returns once it is durable.
    ///
    /// Realm notification blocks of this realm are called before it returns; collection and
    /// object observers are told asynchronously (RealmNotifier.swift). The observations of
    /// `tokens` (of this realm) are not told of this write's changes.
    ///
    /// - Throws: `Realm.Error` (`notInWriteTransaction`, the commit's I/O errors), or the
    ///   first data error `add`, `create` or a setter recorded in the write
    ///   (`duplicatePrimaryKey`, `valueTooLarge`, `invalidArgument`): then the write is
    ///   cancelled, nothing of it is kept, and the realm is ready for the next one.
    public func commitWrite(withoutNotifying tokens: [NotificationToken] = []) throws {
        try commitWrite(withoutNotifying: tokens, relaying: tokens.isEmpty)
    }

    /// `relaying`: the write may be passed on to a thread waiting to write, whose commit then
    /// carries it (WriteTransaction+Relay.swift); it returns once that commit is durable.
    func commitWrite(withoutNotifying tokens: [NotificationToken], relaying: Bool) throws {
        if !tokens.isEmpty, writeTransaction != nil { notifierForObserving().prepareSkip(tokens) }
        let ending = try endWrite()
        let committed: VersionID
        do {
            committed = try engine { () throws(StorageError) in
                try relaying ? ending.transaction.commitOrRelay() : ending.transaction.commit()
            }
        } catch {
            commitFailed(ending, error)
            throw error
        }
        didCommit(committed)
    }

    /// After this realm's commit: moves to the newest version and tells the observers.
    ///
    /// An async commit may finish while the realm's next write is open (on an actor, a write
    /// may begin while the one before syncs); that write builds on this commit, so the realm
    /// stays in it, and the write's own commit or cancel announces the version. Moving now
    /// would call realm blocks inside the write and forget what its `withoutNotifying`
    /// prepared.
    func didCommit(_ committed: VersionID) {
        undoLedger.commitSucceeded()
        guard writeTransaction == nil else { return }
        moveToNewestVersion()
        notifier?.didCommit(committed)
    }

    /// A write transaction taken off the realm for its commit, with what the realm must undo
    /// if the commit fails. Taken before the commit starts: an async commit suspends, and the
    /// realm may begin its next write meanwhile.
    struct EndingWrite {
        let transaction: WriteTransaction
        let undo: WriteUndoLedger.EndedWrite
        let indexChanges: [(table: TableKey, column: String, indexed: Bool)]
    }

    func endWrite() throws(Realm.Error) -> EndingWrite {
        confinement.verify()
        asyncWrites.current = nil
        // What `beginWrite()` kept for the commit: the write is undone, and nothing written.
        if let error = writeThatDidNotBegin {
            cancelWrite()
            throw error
        }
        guard let transaction = writeTransaction else {
            throw Realm.Error(.notInWriteTransaction, "no write transaction is open on this realm", path: configuration.path)
        }
        if let failure = writeFailure {
            cancelWrite()
            throw failure
        }
        // Every pending index change is made in this transaction (see `scheduleIndexChanges`).
        let ending = EndingWrite(transaction: transaction, undo: undoLedger.writeEnded(), indexChanges: pendingIndexChanges)
        writeTransaction = nil
        // The realm reads its read version again.
        generation += 1
        pendingIndexChanges.removeAll()
        return ending
    }

    /// After a failed commit: the deleted objects live again, the index changes stay pending.
    /// The failure is logged.
    func commitFailed(_ ending: EndingWrite, _ error: Swift.Error) {
        Self.logFailure(error, of: "committing to", configuration)
        undoLedger.commitFailed(ending.undo)
        pendingIndexChanges = ending.indexChanges + pendingIndexChanges
        // A write that began meanwhile (on a realm of an actor, while this commit synced)
        // takes them on; otherwise the next write does.
        if writeTransaction != nil { try? makePendingIndexChanges() }
        // A write open meanwhile keeps its notifier state: its own commit or cancel moves on.
        if writeTransaction == nil {
            moveToNewestVersion()
            notifier?.didMove()
        }
        // Tables the failed commit created do not exist.
        forgetMissingTables()
        reviewProvisionalObjects()
    }

    /// Drops the bindings of tables the realm's current transaction does not have (after a
    /// cancelled or failed write that created them).
    private func forgetMissingTables() {
        let tables = writeTransaction?.tables ?? readTransaction.top.tables
        bindings = bindings.filter { binding in tables.contains { $0.key == binding.value.table } }
    }

    /// Holds `object`, just made managed, until its row is surely kept, when an undo may
    /// still take it away (WriteUndoLedger.swift, provisional objects).
    func trackIfProvisional(_ object: ObjectBase) {
        guard let writeTransaction else { return }
        undoLedger.recordIfProvisional(object, insertedByOpenWrite: writeTransaction.inserted(object.table, object.key))
    }

    /// After an undo: marks deleted the provisional objects whose row is gone.
    private func reviewProvisionalObjects() {
        undoLedger.reviewProvisionalObjects { object in (try? tableView(object.table).contains(object.key)) == true }
    }

    /// How many objects the realm holds as provisional (for tests).
    var provisionalObjectCount: Int { undoLedger.provisionalObjectCount }

    /// The first data error of the open write (Realm+WriteFailure.swift): the write throws it
    /// instead of committing.
    var writeFailure: Realm.Error?

    /// Discards the open write transaction.
    public func cancelWrite() {
        confinement.verify()
        asyncWrites.current = nil
        writeThatDidNotBegin = nil
        guard let transaction = writeTransaction else { return }
        writeTransaction = nil
        writeFailure = nil
        generation += 1
        transaction.rollback()
        undoLedger.writeCancelled()
        moveToNewestVersion()
        notifier?.didMove()
        // Tables created in the cancelled transaction no longer exist.
        forgetMissingTables()
        reviewProvisionalObjects()
    }

    /// A point of the open write transaction to come back to: one caller's part of a write
    /// shared by several (RealmActor), see WriteTransaction+Savepoint.swift.
    struct WriteSavepoint {
        let engine: WriteTransaction.Savepoint
        let undo: WriteUndoLedger.Savepoint
        let bindings: [ObjectIdentifier: TableBinding]
    }

    func savepoint() throws(Realm.Error) -> WriteSavepoint {
        let transaction = requireWriteTransaction("take a savepoint")
        let engineSavepoint = try engine { () throws(StorageError) in try transaction.savepoint() }
        return WriteSavepoint(engine: engineSavepoint, undo: undoLedger.savepoint(), bindings: bindings)
    }

    func releaseSavepoint(_ savepoint: WriteSavepoint) {
        writeTransaction?.releaseSavepoint(savepoint.engine)
    }

    /// Undoes what was done since `savepoint`; the write transaction stays open.
    ///
    /// - Throws: when the changes cannot be undone alone (a schema change): the caller must
    ///   then cancel the whole write.
    func rollback(to savepoint: WriteSavepoint) throws(Realm.Error) {
        let transaction = requireWriteTransaction("roll back to a savepoint")
        try engine { () throws(StorageError) in try transaction.rollback(to: savepoint.engine) }
        transaction.releaseSavepoint(savepoint.engine)
        // A failure recorded since the savepoint is the undone part's (WriteBatch throws it to
        // its caller); one from before would have ended the parts before it.
        writeFailure = nil
        undoLedger.rollBack(to: savepoint.undo)
        bindings = savepoint.bindings
        views = [:]
        generation += 1
        reviewProvisionalObjects()
    }

    /// `requireWriteTransaction` without a retain, for hot paths that only borrow it while
    /// the realm surely keeps it (see `add`).
    func unretainedWriteTransaction(_ operation: String) -> Unmanaged<WriteTransaction> {
        guard let transaction = writeTransaction.map({ Unmanaged.passUnretained($0) }) else {
            // Traps with the rule that was broken.
            return Unmanaged.passUnretained(requireWriteTransaction(operation))
        }
        confinement.verify()
        return transaction
    }

    /// Traps unless a write transaction is open (the seeds' rule for every mutation).
    func requireWriteTransaction(_ operation: String) -> WriteTransaction {
        confinement.verify()
        guard let writeTransaction else {
            ensure(!isFrozen, "Cannot \(operation) in a frozen realm: frozen data is read-only; thaw() it and write in a write transaction")
            trapIfWriteDidNotBegin(operation)
            misuse("Cannot \(operation) outside of a write transaction: wrap it in realm.write { }")
        }
        return writeTransaction
    }

    /// For a change made with no write transaction: when `beginWrite()` could not begin one,
    /// traps naming why, rather than as if no write had been asked for.
    func trapIfWriteDidNotBegin(_ operation: String) {
        guard let error = writeThatDidNotBegin else { return }
        misuse("Cannot \(operation): the write transaction beginWrite() opened could not begin (\(error.message)); "
               + "commitWrite() throws this error, and write { } throws it before its block runs")
    }
}

/// A table view held by reference (see `Realm.view(of:)`).
final class TableViewBox {
    let view: TableView
    init(_ view: TableView) { self.view = view }

    // Primary-key lookups go through these rather than `box.view.…`: called from outside,
    // the optimiser copied the whole view (a dozen references retained and released) per call.
    func isObjectKey(_ column: ColumnKey) -> Bool { view.info.columns[column.index].isObjectKey }
    func row(_ key: ObjectKey) throws(StorageError) -> Row? { try view.row(key) }
    func indexFirst(_ column: ColumnKey, _ value: Value) throws(StorageError) -> ObjectKey? { try view.indexFirst(column, value) }
}

/// How a model class maps onto the table of one realm file.
final class TableBinding {
    let schema: ObjectSchema
    let table: TableKey
    /// Per property of the class, the table's column.
    let columns: [ColumnKey]
    /// Per property, how a read goes (precomputed: the read path touches no `PropertySchema`).
    let readKinds: [ReadKind]

    enum ReadKind {
        /// A value read from the object's row.
        case value
        /// A link or mixed value: read from the row, materialised with the realm.
        case link
        /// A list, set, map or linking objects: read through the owning object.
        case collection
    }

    /// The table's view at the realm's `generation` (outside write transactions), held by
    /// reference so that lookups borrow it instead of copying its arrays.
    var cachedView: TableViewBox?
    var cachedViewGeneration = -1

    /// A value array for `add`, kept between calls so that adding objects allocates none and
    /// resets nothing: each add overwrites every scalar column, and the others (links and
    /// lists, set after the insert; removed columns) are never written, so they stay null.
    private var scratchValues: [Value] = []

    /// The scratch array (a new one of nulls when it is taken or the columns changed).
    func takeScratchValues(count: Int) -> [Value] {
        guard scratchValues.count == count else { return Array(repeating: .null, count: count) }
        var values: [Value] = []
        swap(&values, &scratchValues)
        return values
    }

    func returnScratchValues(_ values: inout [Value]) {
        swap(&values, &scratchValues)
    }

    /// The primary key property's index, if the class has one.
    let primaryKeyIndex: Int?

    /// For a class read from the file (a dynamic binding): per property, the table its links
    /// lead to. A `DynamicObject` element type does not say which class a link reaches.
    var linkTargets: [TableKey?] = []

    /// Indexes the class declares and the file lacks (true), or the reverse (false), by
    /// column name. Realm adds and drops indexes without a migration (`Realm.scheduleIndexChanges`).
    let indexChanges: [(column: String, indexed: Bool)]

    init(schema: ObjectSchema, table: TableKey, columns: [ColumnKey], indexChanges: [(column: String, indexed: Bool)] = []) {
        self.schema = schema
        self.table = table
        self.columns = columns
        self.indexChanges = indexChanges
        self.primaryKeyIndex = schema.allProperties.firstIndex { $0.isPrimaryKey }
        self.readKinds = schema.allProperties.map { property in
            if property.isList || property.isComputed { return .collection }
            return property.columnType == .link || property.columnType == .mixed ? .link : .value
        }
    }

    /// Binds to an existing table, which must have every property as a column of the same
    /// type and primary key (else a migration is needed). Indexes may differ: the binding
    /// lists the changes, for the realm to apply.
    convenience init(schema: ObjectSchema, info: TableInfo, path: String, linkTargetName: (TableKey?) -> String?) throws(Realm.Error) {
        var columns: [ColumnKey] = []
        var differences: [String] = []
        var indexChanges: [(column: String, indexed: Bool)] = []
        for property in schema.allProperties {
            guard property.isStored else {
                columns.append(ColumnKey(-1))
                continue
            }
            guard let column = info.column(named: property.columnName) else {
                differences.append("property \(property.name) was added")
                continue
            }
            let spec = info.columns[column.index]
            if spec.type != property.columnType || spec.nullable != property.columnSpec().nullable || spec.isList != property.isList
                || (spec.type == .link && linkTargetName(spec.linkTarget) != property.objectClassName) {
                differences.append("property \(property.name) changed type")
            } else if (spec.unique || spec.isObjectKey) != property.isPrimaryKey {
                differences.append("primary key changed on \(property.name)")
            } else if (spec.indexed || spec.isObjectKey) != property.isIndexed {
                // Not a primary key (compared above): a plain index, which only speeds lookups.
                indexChanges.append((property.columnName, property.isIndexed))
            }
            columns.append(column)
        }
        let names = Set(schema.allProperties.filter(\.isStored).map(\.columnName))
        for spec in info.columns where !spec.removed && !names.contains(spec.name) {
            differences.append("property \(spec.name) was removed")
        }
        guard differences.isEmpty else {
            throw Realm.Error(.schemaMismatch, "the schema of \(schema.className) differs from the file: "
                              + differences.joined(separator: "; ") + ". Increase schemaVersion and migrate", path: path)
        }
        self.init(schema: schema, table: info.key, columns: columns, indexChanges: indexChanges)
    }
}
