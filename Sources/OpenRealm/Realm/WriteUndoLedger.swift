// The write undo ledger: what a realm remembers of its writes so that undoing one leaves
// its objects telling the truth.
//
// The engine undoes a write's rows by itself (a cancel or a failed commit drops the
// transaction, a rollback to a savepoint restores its tables). What it cannot undo are the
// managed objects the realm handed out meanwhile: an object deleted in the write reads as
// deleted at once and must read as live again; an object a write inserted must read as
// deleted once its row is gone, because its key is free again (a later insert takes the
// table's next key, and a cancelled write that created the table frees that key too), and it
// must not read whatever object gets the key next. The ledger keeps, per realm:
//
//   - add numbers: each insert through `add` takes the next number (`nextAddNumber`), and
//     the numbers of the adds of a write that was cancelled, failed to commit, or was rolled
//     back to a savepoint are kept as ranges (`undoneAdds`); an object asks whether its number
//     is in one (`ObjectBase.wasDeleted`). A number is a counter's step per add, where
//     remembering the objects would keep every object a bulk load adds alive until its commit.
//   - deletion marks: the objects deleted through the realm in the open write
//     (`deletedInWrite`), to unmark when the write, or the part of it since a savepoint, is
//     undone.
//   - provisional objects: objects that became managed for a row that may still go away: a
//     row the open write inserted, read back or updated through `add(_:update:)`, or any row
//     read inside a write while one of the realm's commits is not yet durable (that write
//     builds on it, and fails with it). They are not numbered like adds: a number cannot tell
//     whether the row was inserted before or after a savepoint. Instead, each undo (a cancel,
//     a rollback to a savepoint, a failed commit) looks at them once it is done and marks
//     deleted those whose row is gone (`reviewProvisionalObjects`). Each is held only until
//     the commits it depends on are durable, and never a bulk load's adds: a busy actor's
//     realm, always with a commit in flight, holds just the objects of its last few commits.
//   - savepoint snapshots (`Savepoint`): how many deletion marks and adds there were, so that
//     one caller's part of a write shared by several (RealmActor) is undone alone.
//
// The realm tells the ledger each step of a write's life: it began (`writeBegan`), it was
// cancelled (`writeCancelled`), it was taken off the realm for its commit (`writeEnded`, which
// clears the open write's state and returns what to undo should the commit fail), its commit
// was durable (`commitSucceeded`, which releases the objects that only depended on it) or
// failed (`commitFailed`).
//
// Invariants:
//   1. `addsBeforeWrite <= addCount`; the adds of the open write are numbered
//      `addsBeforeWrite + 1 ... addCount`, those of a savepoint `savepoint.addCount + 1 ...`.
//   2. A number in `undoneAdds` is never handed out again (`addCount` only grows), so an
//      undone object stays undone whatever later writes do.
//   3. `answeredWrites <= endedWrites`: a realm's commits are answered in order, one answer
//      per ended write, so a provisional object whose `safeAfter <= answeredWrites` depends on
//      no commit that may still fail, and is let go.
//   4. `deletedInWrite` holds only objects of the open write, in the order they were
//      deleted: a savepoint's `deletedCount` is a prefix of it until the savepoint is rolled
//      back to or the write ends.
//
// The ledger is a class of its own, not a struct inside the realm: reviewing the provisional
// objects asks each whether it was deleted (`ObjectBase.wasDeleted`), which reads the undone
// adds through the realm while the provisional list is being changed; as separate stored
// properties of one object, the two accesses do not overlap.

import RealmStorage

final class WriteUndoLedger {
    /// Adds inserted through the realm so far (`nextAddNumber`).
    private var addCount = 0
    /// `addCount` when the open write transaction began.
    private var addsBeforeWrite = 0
    /// The numbers of adds whose write did not commit.
    private var undoneAdds = KeyRanges()

    /// The objects deleted through the realm in the open write transaction: they read as
    /// deleted at once, and again as live if the transaction does not commit.
    private(set) var deletedInWrite: [ObjectBase] = []

    /// Objects that may lose their row to an undo, each with the count of the realm's commits
    /// that must be durable for it to be safe (see above).
    private var provisionalObjects: [(object: ObjectBase, safeAfter: Int)] = []
    /// Commits of the realm written (`writeEnded`), and answered (`commitSucceeded` or
    /// `commitFailed`), since it opened.
    private var endedWrites = 0
    private var answeredWrites = 0

    /// How many objects the ledger holds as provisional (for tests).
    var provisionalObjectCount: Int { provisionalObjects.count }

    // MARK: Recording

    /// The number of the add about to be made.
    func nextAddNumber() -> Int {
        addCount += 1
        return addCount
    }

    /// Whether the add numbered `number` was undone.
    func addWasUndone(_ number: Int) -> Bool {
        undoneAdds.contains(Int64(number))
    }

    /// Marks `object` deleted by the open write, until the write is undone.
    func recordDeletion(_ object: ObjectBase) {
        object.wasDeleted = true
        deletedInWrite.append(object)
    }

    /// Holds `object`, just made managed inside a write, until its row is surely kept, when an
    /// undo may still take it away: `insertedByOpenWrite` when the open write inserted its row.
    func recordIfProvisional(_ object: ObjectBase, insertedByOpenWrite: Bool) {
        if insertedByOpenWrite {
            // Safe once the open write's own commit is durable.
            provisionalObjects.append((object, endedWrites + 1))
        } else if answeredWrites < endedWrites {
            provisionalObjects.append((object, endedWrites))
        }
    }

    // MARK: The life of a write

    /// A write transaction began: its adds are numbered from here.
    func writeBegan() {
        addsBeforeWrite = addCount
    }

    /// The open write was cancelled: the objects it deleted live again, those it added are
    /// undone. Review the provisional objects once the realm reads what is left.
    func writeCancelled() {
        for object in deletedInWrite { object.wasDeleted = false }
        deletedInWrite.removeAll()
        undoAdds(adds(since: addsBeforeWrite))
    }

    /// What the ledger must undo if the commit of a write fails, taken when the write leaves
    /// the realm for its commit (`writeEnded`).
    struct EndedWrite {
        let deleted: [ObjectBase]
        /// The numbers of the adds the write made (`nextAddNumber`), if any.
        let adds: ClosedRange<Int>?
    }

    /// The open write was taken off the realm for its commit: the ledger forgets its deletion
    /// marks and returns what to undo should the commit fail.
    func writeEnded() -> EndedWrite {
        let ended = EndedWrite(deleted: deletedInWrite, adds: adds(since: addsBeforeWrite))
        endedWrites += 1
        deletedInWrite.removeAll()
        return ended
    }

    /// A commit of the realm is durable (commits are answered in order): lets go of the
    /// objects that only depended on it and those before it.
    func commitSucceeded() {
        answeredWrites += 1
        guard !provisionalObjects.isEmpty else { return }
        provisionalObjects.removeAll { $0.safeAfter <= answeredWrites }
    }

    /// A commit of the realm failed: the objects its write deleted live again, those it added
    /// are undone. Failed commits may be reported after later writes were undone: the undone
    /// ranges merge in order either way. Review the provisional objects once the realm reads
    /// what is left.
    func commitFailed(_ ended: EndedWrite) {
        answeredWrites += 1
        for object in ended.deleted { object.wasDeleted = false }
        undoAdds(ended.adds)
    }

    // MARK: Savepoints

    /// The ledger's part of a savepoint of the open write: the deletion marks and adds made
    /// before it.
    struct Savepoint {
        let deletedCount: Int
        let addCount: Int
    }

    func savepoint() -> Savepoint {
        Savepoint(deletedCount: deletedInWrite.count, addCount: addCount)
    }

    /// The open write was rolled back to `savepoint`: the objects deleted since live again,
    /// those added since are undone. Review the provisional objects once the realm reads what
    /// is left.
    func rollBack(to savepoint: Savepoint) {
        for object in deletedInWrite[savepoint.deletedCount...] { object.wasDeleted = false }
        deletedInWrite.removeSubrange(savepoint.deletedCount...)
        undoAdds(adds(since: savepoint.addCount))
    }

    // MARK: After an undo

    /// After an undo, once the realm reads what is left: marks deleted the provisional objects
    /// whose row is gone (`hasRow` tells), and lets go of them.
    func reviewProvisionalObjects(hasRow: (ObjectBase) -> Bool) {
        guard !provisionalObjects.isEmpty else { return }
        provisionalObjects.removeAll { entry in
            guard !entry.object.wasDeleted else { return true }
            if !hasRow(entry.object) {
                entry.object.wasDeleted = true
                return true
            }
            return false
        }
    }

    /// The numbers of the adds made since `addCount` was `count`; nil when none was.
    private func adds(since count: Int) -> ClosedRange<Int>? {
        addCount > count ? (count + 1)...addCount : nil
    }

    /// Records that the adds numbered `adds` were undone.
    private func undoAdds(_ adds: ClosedRange<Int>?) {
        guard let adds else { return }
        undoneAdds.insert(Int64(adds.lowerBound)...Int64(adds.upperBound))
    }
}
