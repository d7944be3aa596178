// Savepoints: undoing the latest part of a write transaction and keeping the rest.
//
// A write transaction can carry the work of several callers (RealmActor merges the writes
// queued on it into one commit). Each caller's part starts at a savepoint; a caller whose
// block throws is undone back to its savepoint while the parts before it stay.
//
// While a savepoint is open every data change appends its inverse to an undo log (an insert
// logs a delete of the key, a set logs the old value, a delete logs the whole object).
// Rolling back replays the inverses newest first, then restores what is cheap to copy whole:
// the catalogue (`top`, which also drops tables created since and resets `nextObjectKey`),
// the change sets, the objects whose links still have to be cleared, and the schema blob.
// The trees are not restored node for node: they end up holding the same objects, in buffers
// that the commit encodes anyway.
//
// Schema changes other than creating a table (and adding columns to a table created since the
// savepoint) are not logged: a savepoint they happened under can no longer be rolled back to,
// and `rollback(to:)` says so; the caller must then discard the whole transaction.

extension WriteTransaction {
    /// A point of a write transaction to come back to (`rollback(to:)`).
    package struct Savepoint {
        fileprivate let logCount: Int
        fileprivate let top: TopState
        fileprivate let changes: [TableKey: TableChanges]
        fileprivate let deletedLinkTargets: [TableKey: Set<Int64>]
        fileprivate let newSchemaBlob: [UInt8]?
    }

    /// The inverse of one data change.
    enum UndoEntry {
        case inserted(TableKey, ObjectKey)
        case set(TableKey, ObjectKey, ColumnKey, old: Value)
        case setList(TableKey, ObjectKey, ColumnKey, old: [Value])
        case deleted(TableKey, ObjectKey, values: [Value], lists: [Int: [Value]])
    }

    /// The inverses of the changes made since the oldest open savepoint.
    final class UndoLog {
        var entries: [UndoEntry] = []
        var openSavepoints = 0
        /// Tables created since the oldest open savepoint: adding columns to them is undone
        /// with them.
        var createdTables: Set<TableKey> = []
        /// Set by a change that is not logged: rolling back is no longer possible.
        var irreversible: String?
    }

    /// Marks the current state, to roll back to if what follows fails.
    package func savepoint() throws(StorageError) -> Savepoint {
        try ensureActive()
        return makeSavepoint()
    }

    /// `savepoint()` of a transaction known to be active.
    func makeSavepoint() -> Savepoint {
        let log = undo ?? UndoLog()
        undo = log
        log.openSavepoints += 1
        var changes: [TableKey: TableChanges] = [:]
        for (key, state) in states where !state.changes.isEmpty { changes[key] = state.changes }
        return Savepoint(logCount: log.entries.count, top: top, changes: changes,
                         deletedLinkTargets: deletedLinkTargets, newSchemaBlob: newSchemaBlob)
    }

    /// Keeps what was done since `savepoint`: it can no longer be rolled back to.
    package func releaseSavepoint(_ savepoint: Savepoint) {
        guard let log = undo else { return }
        log.openSavepoints -= 1
        if log.openSavepoints <= 0 { undo = nil }
    }

    /// Undoes every change made since `savepoint`; the transaction stays open, as it was there.
    ///
    /// - Throws: `invalidArgument` when a schema change since the savepoint cannot be undone
    ///   (the message names it), or an error from the trees; either way the caller must roll
    ///   back the whole transaction.
    package func rollback(to savepoint: Savepoint) throws(StorageError) {
        try ensureActive()
        guard let log = undo, savepoint.logCount <= log.entries.count else {
            throw StorageError(.invalidArgument, "the savepoint is not open in this transaction")
        }
        if let reason = log.irreversible {
            throw StorageError(.invalidArgument, "cannot roll back to the savepoint: \(reason) since it is not undoable on its own")
        }
        let entries = log.entries[savepoint.logCount...]
        // The inverses are not logged, and clear no links: the links to objects deleted since
        // the savepoint were cleared by logged sets, undone here like any other.
        undo = nil
        deletedLinkTargets = [:]
        isUndoing = true
        defer {
            isUndoing = false
            undo = log
        }
        for entry in entries.reversed() {
            switch entry {
            case .inserted(let table, let key):
                _ = try delete(table, key)
            case .set(let table, let key, let column, let old):
                try set(table, key, column, old)
            case .setList(let table, let key, let column, let old):
                try setList(table, key, column, old)
            case .deleted(let table, let key, let values, let lists):
                try insert(table, key: key, values: values, lists: lists)
            }
        }
        log.entries.removeSubrange(savepoint.logCount...)
        // Tables created since the savepoint go with the catalogue it saw.
        for key in states.keys where savepoint.top.table(key) == nil { states[key] = nil }
        top = savepoint.top
        forgetLastState()
        for (key, state) in states { state.changes = savepoint.changes[key] ?? TableChanges() }
        deletedLinkTargets = savepoint.deletedLinkTargets
        newSchemaBlob = savepoint.newSchemaBlob
    }

    /// For a schema change: under a savepoint it makes rolling back impossible.
    func noteIrreversible(_ change: @autoclosure () -> String) {
        guard let undo, undo.irreversible == nil else { return }
        undo.irreversible = change()
    }

    /// A delete's inverse: the whole object as `insert` takes it.
    func undoEntryForDelete(_ table: TableKey, _ row: Row, _ layouts: [ColumnLayout]) throws(StorageError) -> UndoEntry {
        var values = [Value](repeating: .null, count: layouts.count)
        var lists: [Int: [Value]] = [:]
        for c in layouts.indices where !layouts[c].removed {
            if layouts[c].isList {
                let elements = try row.list(ColumnKey(c))
                if !elements.isEmpty { lists[c] = elements }
            } else {
                values[c] = try row.value(ColumnKey(c))
            }
        }
        return .deleted(table, row.key, values: values, lists: lists)
    }
}
