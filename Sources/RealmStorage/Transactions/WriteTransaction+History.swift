// What changed before a write transaction began, for the layer above's notifications.
//
// A write transaction builds on the newest version written, which may not be published yet
// (its group's sync is still running, Store+GroupCommit.swift), so no `ReadTransaction` can be
// begun on it. Observers that must be told, when a write begins, what changed up to the
// version it builds on read the change history from that version's top node here, exactly as
// `ReadTransaction.changes(since:)` reads it from a published one. Read-only: it touches
// nothing the commit writes.

extension WriteTransaction {
    /// What changed from `since` (an older version, pinned by its reader) to the version this
    /// transaction builds on (`baseVersion`).
    ///
    /// - Throws: `invalidArgument` when `since` is newer than the base or its history is no
    ///   longer kept (no reader pinned it).
    package func changesToBase(since: VersionID) throws(StorageError) -> ChangeSet {
        try ReadTransaction.changes(in: base.top, since: since, context: context)
    }
}
