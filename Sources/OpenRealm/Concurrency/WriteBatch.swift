import RealmStorage

// Merged writes: the writes queued on a RealmActor together share one transaction and one
// commit.
//
// Why: a small commit costs far more than its change. The changed leaves of every tree it
// touches are encoded and written again, with the inner nodes above them, the free list, the
// commit record and the slot, before the sync. Group commit shares the sync; merging shares
// all of it.
//
// How: the first writer to reach the actor opens a batch: it waits for the write lane, begins
// the transaction and runs its block. Writers reaching the actor meanwhile wait for the batch
// to open, then run their blocks in it one after another, in the order the actor runs them,
// each under a savepoint, so that a block that throws is undone alone
// (WriteTransaction+Savepoint.swift).
// The opener commits once no writer is on its way to the actor (`arriving`) or the batch is
// full, and everybody is answered when the commit is durable. Writers that arrive after the
// batch closed start the next one, whose commit group commit may sync with this one's.
//
// Writers wait for durability off the actor (`CommitTicket`): the store's sync thread answers
// them all at once (the actor does when the commit fails before anything is written), and
// each goes on where it came from. Waiting on the actor cost two jobs on its queue per writer,
// one to resume and one to leave, on the queue every write of the file goes through, and a
// job holding the actor held every answer. The writer realm learns the outcome on the actor,
// in commit order (`InFlightCommit`): the sync thread records it before anyone is answered,
// and the actor settles what is recorded before anything else it does, so a writer that
// heard and comes back (to write again, read, or close the file) finds it settled.
//
// What the callers see is what they would see if each had committed alone, in the order their
// blocks ran: a block sees the writes before it. What differs: the writes of a batch become
// durable, or fail, together (as those of one group commit's sync do), and a block that
// throws after a schema change (which a savepoint cannot undo: a table renamed or removed, a
// column added to an existing table, an index a class asks for when it is first used) fails
// the whole batch with `mergedWriteFailed`.

/// One merged write in the making. Lives on its RealmActor.
final class WriteBatch {
    /// The most writes a batch runs, kept or not. A smaller batch lets the next one be
    /// gathered while this one syncs, and bounds how long the batch holds the write lane and
    /// its first writer waits for the last.
    static let capacity = 32

    enum Phase { case opening, open, closed }
    var phase = Phase.opening
    /// Writes whose block ran and whose changes stay in the transaction.
    var count = 0
    /// Writes that ran here, kept, undone or cancelled.
    var attempts = 0
    /// Writers waiting for the batch to open, and those told it has that have not run yet.
    var joining = 0
    /// Set when a block failed and could not be undone alone: the batch is discarded.
    var poisoned: Realm.Error?
    /// Answers the writers whose blocks ran, once the commit is durable or failed.
    let ticket = CommitTicket()
    private var waitingToOpen: [CheckedContinuation<Void, Never>] = []
    private var waitingForEnd: [CheckedContinuation<Void, Never>] = []
    private var committer: CheckedContinuation<Void, Never>?

    /// Suspends until the opener began the transaction or failed to.
    func waitForOpen(isolation: isolated (any Actor)? = #isolation) async {
        await withCheckedContinuation { waitingToOpen.append($0) }
    }

    func announceOpen() { Self.resumeAll(&waitingToOpen, with: .success(())) }

    /// Suspends until the batch's transaction ended on the realm (committed or cancelled).
    func waitForEnd(isolation: isolated (any Actor)? = #isolation) async {
        await withCheckedContinuation { waitingForEnd.append($0) }
    }

    func announceEnd() { Self.resumeAll(&waitingForEnd, with: .success(())) }

    func answer(_ failure: Swift.Error?) {
        ticket.resolve(failure.map { .failure($0) } ?? .success(()))
    }

    /// Empties `waiting` first (a resumed writer may wait again) and resumes each with `result`.
    private static func resumeAll<Failure: Swift.Error>(_ waiting: inout [CheckedContinuation<Void, Failure>],
                                                       with result: Result<Void, Failure>) {
        let resumed = waiting
        waiting = []
        for continuation in resumed { continuation.resume(with: result) }
    }

    /// For the opener: suspends until `wakeCommitter`.
    func waitUntilGathered(isolation: isolated (any Actor)? = #isolation) async {
        await withCheckedContinuation { committer = $0 }
    }

    func wakeCommitter() {
        committer?.resume()
        committer = nil
    }
}

/// A batch's commit between its write and the actor learning how it ended: the outcome, set
/// once from the store's sync thread (or on the actor when nothing was written).
final class CommitOutcome: @unchecked Sendable {
    // @unchecked: `outcome` is guarded by `lock` (the engine's pthread mutex, which the
    // thread sanitizer sees; Synchronization's Mutex it does not).
    private let lock = Mutex()
    private var outcome: Swift.Result<VersionID, StorageError>?

    func record(_ result: Swift.Result<VersionID, StorageError>) { lock.withLock { outcome = result } }
    var recorded: Swift.Result<VersionID, StorageError>? { lock.withLock { outcome } }
}

/// A commit the actor's realm has not yet been told the outcome of (in commit order).
struct InFlightCommit {
    let realm: Realm
    let ending: Realm.EndingWrite
    let outcome: CommitOutcome
}

/// The outcome of a merged write's commit, which its writers wait for outside the actor.
final class CommitTicket: @unchecked Sendable {
    // @unchecked: `state` is guarded by `lock`, as in CommitOutcome.
    private enum State {
        case pending([CheckedContinuation<Void, Swift.Error>])
        case resolved(Result<Void, Swift.Error>)
    }
    private let lock = Mutex()
    private var state = State.pending([])

    /// Suspends until the commit is durable, or throws its failure.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
            let outcome: Result<Void, Swift.Error>? = lock.withLock {
                switch state {
                case .pending(var waiting):
                    waiting.append(continuation)
                    state = .pending(waiting)
                    return nil
                case .resolved(let outcome):
                    return outcome
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Answers every writer waiting and those to come; only the first call counts.
    func resolve(_ outcome: Result<Void, Swift.Error>) {
        let waiting: [CheckedContinuation<Void, Swift.Error>] = lock.withLock {
            guard case .pending(let waiting) = state else { return [] }
            state = .resolved(outcome)
            return waiting
        }
        for continuation in waiting { continuation.resume(with: outcome) }
    }
}

extension RealmActor {
    /// `write` once on the actor: joins the batch being gathered or opens one. Returns the
    /// block's result and the ticket of the commit it is part of.
    func performWrite<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) async throws -> (Result, CommitTicket) {
        arriving.subtract(1, ordering: .sequentiallyConsistent)
        settleCommits()
        while let current = batch {
            switch current.phase {
            case .closed:
                await current.waitForEnd()
            case .opening:
                current.joining += 1
                await current.waitForOpen()
                current.joining -= 1
                // Looks again: the batch may be open, or already full and closed, or gone
                // because its opener could not begin (cancelled, or the file failed), and
                // then this writer opens the next one.
            case .open:
                return try join(current, block)
            }
        }
        return try await open(block)
    }

    /// For tests: the writers waiting for the batch being opened (its opener included).
    var writersWaitingForTheLane: Int {
        guard let batch, batch.phase == .opening else { return 0 }
        return 1 + batch.joining
    }

    private func writerRealm() throws -> Realm {
        if let writer { return writer }
        let realm = try Realm(configuration: configuration)
        writer = realm
        return realm
    }

    /// Opens a batch: begins the transaction, runs `block` in it, lets the writers that queued
    /// meanwhile run theirs, and starts the commit.
    private func open<Result: Sendable>(_ block: @Sendable (Realm) throws -> Result) async throws -> (Result, CommitTicket) {
        let realm = try writerRealm()
        let batch = WriteBatch()
        self.batch = batch
        do {
            try await realm.beginWriteAsync()
        } catch {
            self.batch = nil
            batch.announceOpen()
            closeIfRequested()
            throw error
        }
        batch.phase = .open
        let own = Swift.Result { () throws -> Result in try runPart(of: batch, in: realm, block) }
        batch.announceOpen()
        if batch.phase == .open && !isGathered(batch) { await batch.waitUntilGathered() }
        batch.phase = .closed
        return try commit(batch, in: realm, own)
    }

    /// Runs `block` in the open batch.
    private func join<Result: Sendable>(_ batch: WriteBatch, _ block: @Sendable (Realm) throws -> Result) throws -> (Result, CommitTicket) {
        let result: Result
        do {
            result = try runPart(of: batch, in: writer!, block)
        } catch {
            wakeCommitterIfGathered(batch)
            throw error
        }
        wakeCommitterIfGathered(batch)
        return (result, batch.ticket)
    }

    /// Runs one write's block under a savepoint; the batch keeps its changes if it returns and
    /// the task is not cancelled, and is rid of them otherwise.
    private func runPart<Result>(of batch: WriteBatch, in realm: Realm, _ block: @Sendable (Realm) throws -> Result) throws -> Result {
        batch.attempts += 1
        defer { if batch.attempts >= WriteBatch.capacity { batch.phase = .closed } }
        try Task.checkCancellation()
        guard batch.poisoned == nil else { throw batch.poisoned! }
        let savepoint = try realm.savepoint()
        do {
            let result = try block(realm)
            ensure(realm.isInWriteTransaction,
                   "A block passed to RealmActor.write must not commit or cancel its write transaction: writes queued together share it. Throw to roll the block's changes back")
            // A data error of this block fails this write alone (Realm+WriteFailure.swift).
            if let failure = realm.takeWriteFailure() { throw failure }
            try Task.checkCancellation()
            realm.releaseSavepoint(savepoint)
            batch.count += 1
            return result
        } catch {
            do {
                try realm.rollback(to: savepoint)
            } catch let undo {
                batch.poisoned = Realm.Error(.mergedWriteFailed,
                                             "a write merged into this commit failed and could not be undone on its own (\(undo.message)); "
                                             + "no write of the commit was made: retry", path: configuration.path)
                batch.phase = .closed
            }
            throw error
        }
    }

    /// Whether every writer on its way has had its turn: nobody is still to reach the actor,
    /// and nobody told the batch opened is still to run.
    private func isGathered(_ batch: WriteBatch) -> Bool {
        batch.joining == 0 && arriving.load(ordering: .sequentiallyConsistent) == 0
    }

    private func wakeCommitterIfGathered(_ batch: WriteBatch) {
        if batch.phase == .closed || isGathered(batch) { batch.wakeCommitter() }
    }

    /// Commits the batch (or discards it); returns the opener's own result with the ticket
    /// its writers wait on, or throws the opener's own failure.
    private func commit<Result>(_ batch: WriteBatch, in realm: Realm, _ own: Swift.Result<Result, Swift.Error>) throws -> (Result, CommitTicket) {
        if batch.poisoned != nil || batch.count == 0 {
            realm.cancelWrite()
            end(batch)
            batch.answer(batch.poisoned)
            closeIfRequested()
            if let poisoned = batch.poisoned, case .success = own { throw poisoned }
            return (try own.get(), batch.ticket)
        }
        let ending: Realm.EndingWrite
        do {
            ending = try realm.endWrite()
        } catch {
            end(batch)
            batch.answer(error)
            closeIfRequested()
            throw error
        }
        // The realm is out of the transaction: the next batch may begin while this one syncs.
        end(batch)
        let ticket = batch.ticket, outcome = CommitOutcome()
        inFlight.append(InFlightCommit(realm: realm, ending: ending, outcome: outcome))
        do throws(StorageError) {
            // The callback holds nothing of the realm's: a writer that closes the file after
            // its answer must find it closed.
            try ending.transaction.commit(groupable: true, writeHere: true) { result in
                outcome.record(result)
                ticket.resolve(result.map { _ in () }.mapError { Realm.Error($0) })
                Task { await self.settleCommits() }
            }
        } catch {
            outcome.record(.failure(error))
            settleCommits()
            batch.answer(Realm.Error(error))
            _ = try own.get()
            throw Realm.Error(error)
        }
        return (try own.get(), ticket)
    }

    /// Tells the writer realm how its commits ended, in commit order, as far as their outcomes
    /// are recorded. Runs before anything else the actor does with its realms.
    func settleCommits() {
        var settled = false
        while let next = inFlight.first, let outcome = next.outcome.recorded {
            inFlight.removeFirst()
            switch outcome {
            case .success(let committed): next.realm.didCommit(committed)
            case .failure(let error): next.realm.commitFailed(next.ending, Realm.Error(error))
            }
            settled = true
        }
        if settled { closeIfRequested() }
    }

    private func end(_ batch: WriteBatch) {
        if self.batch === batch { self.batch = nil }
        batch.announceEnd()
    }

    private func closeIfRequested() {
        guard closeRequested, batch == nil else { return }
        closeRequested = false
        writer?.invalidate()
        writer = nil
    }
}
