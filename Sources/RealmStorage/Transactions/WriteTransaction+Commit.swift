// Ending a write transaction: a rollback, or a commit that goes one way.
//
// A commit moves forward through three values and never back:
//
// 1. The transaction makes its last edits and gives them up, with its hold on the write lane
//    (`finish` → `FinishedWrite`). It is over from here: it keeps no tree and no hold.
// 2. The store encodes the edits as the next version (`Store.prepareCommit` →
//    `Store.PreparedCommit`, which carries the hold on).
// 3. The store writes, publishes, syncs and answers (`Store.writeAndPublish`), letting the
//    hold go once the commit is queued, or once it is durable when it must sync alone.
//
// The store never calls back into the transaction: what the commit needs travels in those
// values, and what it no longer needs goes with them (the edited trees are let go once the
// nodes are written, while the device writes them). `LaneHold` is non-copyable and releases
// the lane in its `deinit` only, so "released exactly once" holds on every path, a throw
// included, by construction (Store+Process.swift).

/// The edits of a finished write transaction: the next version, not yet encoded. Nothing here
/// changes after `finish`, but the trees' buffers, which the encoding commits.
final class WriteEdits {
    let base: Store.Committed
    let version: VersionID
    let lineage: UInt64
    /// The catalogue as the transaction left it; the encoding records the new roots in a copy.
    let top: TopState
    /// The touched tables' trees and changes.
    let states: [TableKey: WriteTransaction.TableState]
    let freed: FreedNodes
    let changes: ChangeSet
    let newSchemaBlob: [UInt8]?
    let context: TreeContext
    /// The savepoints' undo log: not needed any more, let go here rather than on the
    /// committer's path.
    private let undo: WriteTransaction.UndoLog?

    fileprivate init(_ transaction: WriteTransaction) {
        base = transaction.base
        version = transaction.version
        lineage = transaction.lineage
        top = transaction.top
        states = transaction.states
        freed = transaction.freed
        changes = transaction.pendingChanges
        newSchemaBlob = transaction.newSchemaBlob
        context = transaction.context
        undo = transaction.undo
    }

    deinit {
        // The buffers the encoding retired (TreeFormat.swift) go with the trees.
        context.retired?.releaseAll()
    }
}

/// A finished write transaction: its edits and its turn on the write lane, given together to
/// the store, which consumes both (Store+Commit.swift).
struct FinishedWrite: ~Copyable {
    let edits: WriteEdits
    let lane: LaneHold
}

extension WriteTransaction {
    /// Discards every change.
    package func rollback() {
        guard isActive else { return }
        // Only the holder's part goes: the riders' parts are committed (WriteTransaction+Relay.swift).
        if carriesRiders {
            rollbackRelayedPart()
            return
        }
        discard()
    }

    /// Ends the transaction without a commit and lets the lane go.
    func discard() {
        isActive = false
        lane = nil
    }

    /// Writes the new version and waits on this thread until it is durable (per the store's
    /// durability). Commits queued close together share one sync (Store+GroupCommit.swift).
    ///
    /// - Throws: `outOfDiskSpace`, `ioFailure` (also when an earlier commit of the same group
    ///   failed to sync), `valueTooLarge`; the store then stays at the version it had and the
    ///   transaction is over.
    @discardableResult
    package func commit() throws(StorageError) -> VersionID {
        // A relayed transaction's riders hear the outcome of the commit that carries them.
        let relay = takeRiders()
        do throws(StorageError) {
            let committed = try store.commitWaiting(finish())
            relay.answer(.success(committed))
            return committed
        } catch {
            relay.answer(.failure(error))
            throw error
        }
    }

    /// Writes the new version and suspends until it is durable; the file I/O runs on the
    /// store's queues, never on the task's thread. `groupable: false` keeps the write lane
    /// until this commit is durable, so that it syncs alone.
    @discardableResult
    package func commitAsync(groupable: Bool = true,
                             isolation: isolated (any Actor)? = #isolation) async throws(StorageError) -> VersionID {
        let finished = Handoff(try finish())
        let store = self.store
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<VersionID, StorageError>, Never>) in
            store.commit(finished.take(), groupable: groupable) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Writes the new version and calls `done` (from the store's sync queue) once it is durable
    /// or failed. Errors found before anything is written are thrown instead.
    ///
    /// `writeHere`: the caller runs on an executor of its own that may block (RealmActor's), so
    /// the nodes are written on it rather than on the store's write queue.
    package func commit(groupable: Bool = true, writeHere: Bool = false,
                        then done: @escaping @Sendable (Result<VersionID, StorageError>) -> Void) throws(StorageError) {
        store.commit(try finish(), groupable: groupable, writeHere: writeHere, then: done)
    }

    /// The last edits of a commit; then the transaction gives up its edits and its lane and is
    /// over. Reads through it are refused from here (`table(_:)`): the nodes its trees named
    /// may be reused by later commits.
    ///
    /// - Throws: what the last edits throw; the transaction is then still open, and its
    ///   rollback or end lets the lane go.
    private func finish() throws(StorageError) -> FinishedWrite {
        try ensureActive()
        try clearLinksToDeletedObjects()
        try evacuateForShrinking()
        // The cluster trees are final now: a second thread encodes their leaves while this one
        // merges the index entries, then both encode the index leaves (LeafPreEncoding.swift).
        // A commit that changed fewer rows than the threshold changed fewer leaves too (give or
        // take a split's neighbour): it skips counting them, 3% of a one-object commit.
        let minimumLeaves = store.options.parallelEncodingLeaves
        let parallel = states.values.reduce(0) { $0 + $1.changes.rowCount } >= minimumLeaves
        context.retired?.isCollecting = parallel
        let clusters = parallel ? LeafPreEncoding.start(states.values.lazy.map(\.cluster), version: version, minimumLeaves: minimumLeaves) : nil
        do {
            for state in states.values { try flushIndexEntries(state) }
        } catch {
            clusters?.finish(keeping: false)
            throw error
        }
        clusters?.finish(keeping: true)
        if parallel {
            let indexes = states.values.lazy.flatMap { $0.indexes.lazy.compactMap { $0 } }
            LeafPreEncoding.start(indexes, version: version, minimumLeaves: minimumLeaves)?.finish(keeping: true)
        }
        isActive = false
        let edits = WriteEdits(self)
        states = [:]
        forgetLastState()
        deletedLinkTargets = [:]
        undo = nil
        // Set by every path that leaves `isActive` true (a throw above), taken only here.
        guard let lane = lane.take() else { preconditionFailure("an active write transaction without its lane") }
        return FinishedWrite(edits: edits, lane: lane)
    }
}
