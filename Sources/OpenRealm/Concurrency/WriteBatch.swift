import RealmStorage
import Synchronization

// Merged writes: the writes handed to a RealmActor together share one transaction and one
// commit.
//
// Why: a small commit costs far more than its change. The changed leaves of every tree it
// touches are encoded and written again, with the inner nodes above them, the free list, the
// commit record and the slot, before the sync. Group commit shares the sync; merging shares
// all of it.
//
// How: a writer does not go to the actor. It hands its block to the actor's intake (a queue
// under a lock, `WriteIntake`) and waits for its answer; the first writer to find the intake
// idle starts the actor's drain (`drain`), a task on the actor that runs batch after batch
// until the intake is empty. A batch waits for the write lane and begins the transaction,
// then takes the blocks handed in by then (those arriving meanwhile too), at most `capacity`,
// and runs them one after another in the order they were handed in, each under a savepoint,
// so that a block that throws is undone alone (WriteTransaction+Savepoint.swift). Then it
// commits, and while that commit syncs the next batch is gathered and begun. Writers that
// threw, or were cancelled before their turn, are answered at once; the others once the
// commit is durable, by the store's sync thread (or by the actor when the commit fails before
// anything is written).
//
// Handing blocks in, rather than each writer going to the actor and back, is what makes the
// merged write cheap for the actor: a batch of 32 was 32 jobs on the actor's queue, each with
// a hop on and a hop off, on the thread every write of the file goes through (issue 27: W2g,
// 64 tasks, was bound by that thread). A writer now suspends once, until its answer.
//
// The writer realm learns each commit's outcome on the actor, in commit order
// (`InFlightCommit`): the sync thread records it before anyone is answered, and the actor
// settles what is recorded before anything else it does, so a writer that heard and comes
// back (to write again, read, or close the file) finds it settled.
//
// What the callers see is what they would see if each had committed alone, in the order they
// handed their blocks in: a block sees the writes before it. What differs: the writes of a
// batch become durable, or fail, together (as those of one group commit's sync do); a block
// that throws after a schema change (which a savepoint cannot undo: a table renamed or
// removed, a column added to an existing table, an index a class asks for when it is first
// used) fails the whole batch with `mergedWriteFailed`; and a block runs in the actor's
// drain, not in the writer's task, so it sees the actor's isolation but not the writer's
// task-local values (a writer's cancellation is honoured before and after its block runs).

/// The writes handed to a RealmActor and not yet taken into a batch, in the order they came,
/// and whether the actor's drain is running.
final class WriteIntake: Sendable {
    private struct State {
        var queue: [WriteRequest] = []
        var head = 0
        var draining = false
        /// The task of the drain running now (set by whoever started it, just after).
        var drainTask: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// Records the task of the drain just started.
    func setDrain(_ task: Task<Void, Never>) { state.withLock { $0.drainTask = task } }

    /// The task of the drain running now, if known.
    var drain: Task<Void, Never>? { state.withLock { $0.drainTask } }

    /// Hands `request` in; true when no drain runs, and the caller must start one.
    func append(_ request: WriteRequest) -> Bool {
        state.withLock { state in
            state.queue.append(request)
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
    }

    /// The oldest request handed in, if any.
    func takeFirst() -> WriteRequest? {
        state.withLock { state in
            guard state.head < state.queue.count else { return nil }
            let request = state.queue[state.head]
            state.head += 1
            if state.head == state.queue.count {
                state.queue.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return request
        }
    }

    /// Requests handed in and not yet taken.
    var count: Int { state.withLock { $0.queue.count - $0.head } }

    /// For the drain: ends it when nothing is left (true); false when a request came meanwhile.
    func finishDraining() -> Bool {
        state.withLock { state in
            guard state.head == state.queue.count else { return false }
            state.draining = false
            return true
        }
    }
}

/// One write handed to the actor: its block until it has run, then its answer.
///
/// The block captures the writer's non-escaping closure, made escaping for the wait
/// (`withoutActuallyEscaping` in `RealmActor.write`): every path lets go of it, under the
/// lock, before the writer is answered.
final class WriteRequest: Sendable {
    private enum Phase { case queued, running, kept, answered }

    private struct State {
        var phase = Phase.queued
        /// `@Sendable`: the writer's block is (`RealmActor.write`), and the closure around it
        /// captures only that and the writer's `WriteResult`.
        var block: (@Sendable (Realm) throws -> Void)?
        var waiter: CheckedContinuation<Void, Swift.Error>?
        var answer: Result<Void, Swift.Error>?
        /// Set by `cancel`.
        var cancelled = false
        /// The drain's task while it runs the block: the writer's cancellation cancels it, so
        /// that the block sees it (`Task.isCancelled`).
        var runner: Task<Void, Never>?
    }

    private let state: Locked<State>

    /// `block` runs the writer's block and keeps its result where the writer reads it.
    init(_ block: @escaping @Sendable (Realm) throws -> Void) { state = Locked(State(block: block)) }

    /// For the drain, whose task is `runner`: takes the block to run; nil when the writer was
    /// cancelled (and answered).
    func start(runner: Task<Void, Never>?) -> (@Sendable (Realm) throws -> Void)? {
        state.withLock { state in
            guard state.phase == .queued else { return nil }
            state.phase = .running
            state.runner = runner
            return state.block
        }
    }

    /// For the drain, once the block returned: its changes stay in the batch (true; the answer
    /// comes with the commit) unless its writer was cancelled meanwhile.
    func keepUnlessCancelled() -> Bool {
        state.withLock { state in
            state.runner = nil
            guard !state.cancelled else { return false }
            state.phase = .kept
            return true
        }
    }

    /// Answers the writer (only the first answer counts) and lets go of the block.
    func resolve(_ result: Result<Void, Swift.Error>) {
        let waiting: CheckedContinuation<Void, Swift.Error>? = state.withLock { state in
            guard state.phase != .answered else { return nil }
            state.phase = .answered
            state.block = nil
            state.runner = nil
            state.answer = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiting?.resume(with: result)
    }

    /// From the writer's cancellation handler: a request not yet taken is answered now, with
    /// `CancellationError`; one running is undone by the drain, whose task is cancelled too so
    /// that the block sees it; one kept commits.
    func cancel() {
        let queued: Bool = state.withLock { state in
            state.cancelled = true
            if state.phase == .running { state.runner?.cancel() }
            return state.phase == .queued
        }
        if queued { resolve(.failure(CancellationError())) }
    }

    /// Suspends until the request is answered; throws its failure.
    func wait() async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, Swift.Error>) in
            let answered: Result<Void, Swift.Error>? = state.withLock { state in
                if let answer = state.answer { return answer }
                state.waiter = continuation
                return nil
            }
            if let answered { continuation.resume(with: answered) }
        }
    }
}

/// Where a writer's block leaves its result for the writer (written by the drain before the
/// answer, read by the writer after it).
final class WriteResult<Value: Sendable>: @unchecked Sendable {
    // @unchecked: written before the request's answer and read after it, which the request's
    // lock orders.
    var value: Value?
}

/// One merged write in the making. Lives on its RealmActor.
final class WriteBatch {
    /// The most writes a batch runs, kept or not. A smaller batch lets the next one be
    /// gathered while this one syncs, and bounds how long the batch holds the write lane and
    /// its first writer waits for the last.
    static let capacity = 32

    enum Phase { case opening, open, closed }
    var phase = Phase.opening
    /// Writes that ran here, kept, undone or cancelled.
    var attempts = 0
    /// The writes whose blocks ran and whose changes stay in the transaction.
    var kept: [WriteRequest] = []
    /// Set when a block failed and could not be undone alone: the batch is discarded.
    var poisoned: Realm.Error?
}

/// A batch's commit between its write and the actor learning how it ended: the outcome, set
/// once from the store's sync thread (or on the actor when nothing was written).
final class CommitOutcome: Sendable {
    private let outcome = Locked<Swift.Result<VersionID, StorageError>?>(nil)

    func record(_ result: Swift.Result<VersionID, StorageError>) { outcome.withLock { $0 = result } }
    var recorded: Swift.Result<VersionID, StorageError>? { outcome.withLock { $0 } }
}

/// A commit the actor's realm has not yet been told the outcome of (in commit order).
struct InFlightCommit {
    let realm: Realm
    let ending: Realm.EndingWrite
    let outcome: CommitOutcome
}

extension RealmActor {
    /// For tests: the writes handed in while a batch waits for the write lane (they all join
    /// it once it has the lane).
    var writersWaitingForTheLane: Int {
        guard let batch, batch.phase == .opening else { return 0 }
        return intake.count
    }

    private func writerRealm() throws -> Realm {
        if let writer { return writer }
        let realm = try Realm(configuration: configuration)
        writer = realm
        return realm
    }

    /// Runs the writes handed in, batch after batch, until none is left. Started by the writer
    /// that found the intake idle; one runs at a time.
    func drain() async {
        while true {
            settleCommits()
            guard intake.count > 0 else {
                if intake.finishDraining() { return }
                continue
            }
            await runBatch()
            if Task.isCancelled {
                // A writer's cancellation (or a block cancelling the task it ran in) reached
                // this task while a block ran: that block was undone, and a fresh task goes on.
                intake.setDrain(Task { await self.drain() })
                return
            }
            // Reads and other work queued on the actor get their turn between batches.
            await Task.yield()
        }
    }

    /// Begins the transaction, runs the blocks handed in by then in it, and starts the commit.
    private func runBatch() async {
        let batch = WriteBatch()
        self.batch = batch
        let realm: Realm
        do {
            realm = try writerRealm()
            try await realm.beginWriteAsync()
        } catch {
            // Those waiting for this batch hear why it did not begin; later ones try afresh.
            self.batch = nil
            while let request = intake.takeFirst() { request.resolve(.failure(error)) }
            closeIfRequested()
            return
        }
        batch.phase = .open
        let runner = intake.drain
        while batch.attempts < WriteBatch.capacity, batch.poisoned == nil, !Task.isCancelled, let request = intake.takeFirst() {
            // Answered only once the block is let go of, here: the writer's call ends with its
            // answer, and its block must not outlive it (`withoutActuallyEscaping`).
            func run() -> Swift.Error?? {
                guard let block = request.start(runner: runner) else { return nil }
                batch.attempts += 1
                return .some(runPart(request, block, of: batch, in: realm))
            }
            if case let failure?? = run() { request.resolve(.failure(failure)) }
        }
        batch.phase = .closed
        commit(batch, in: realm)
    }

    /// Runs one write's block under a savepoint; the batch keeps its changes if it returns and
    /// its writer was not cancelled meanwhile (nor the task it ran in), and is rid of them
    /// otherwise. Returns why it was not kept.
    private func runPart(_ request: WriteRequest, _ block: (Realm) throws -> Void, of batch: WriteBatch, in realm: Realm) -> Swift.Error? {
        let savepoint: Realm.WriteSavepoint
        do {
            savepoint = try realm.savepoint()
        } catch {
            return error
        }
        do {
            try block(realm)
            ensure(realm.isInWriteTransaction,
                   "A block passed to RealmActor.write must not commit or cancel its write transaction: writes queued together share it. Throw to roll the block's changes back")
            // A data error of this block fails this write alone (Realm+WriteFailure.swift).
            if let failure = realm.takeWriteFailure() { throw failure }
            guard !Task.isCancelled, request.keepUnlessCancelled() else { throw CancellationError() }
            realm.releaseSavepoint(savepoint)
            batch.kept.append(request)
            return nil
        } catch {
            do {
                try realm.rollback(to: savepoint)
            } catch let undo {
                batch.poisoned = Realm.Error(.mergedWriteFailed,
                                             "a write merged into this commit failed and could not be undone on its own (\(undo.message)); "
                                             + "no write of the commit was made: retry", path: configuration.path)
            }
            return error
        }
    }

    /// Commits the batch (or discards it) and answers its writers: at once when it fails here,
    /// from the sync thread once it is durable otherwise.
    private func commit(_ batch: WriteBatch, in realm: Realm) {
        let kept = batch.kept
        if batch.poisoned != nil || kept.isEmpty {
            realm.cancelWrite()
            end(batch)
            for request in kept { request.resolve(.failure(batch.poisoned!)) }
            closeIfRequested()
            return
        }
        let ending: Realm.EndingWrite
        do {
            ending = try realm.endWrite()
        } catch {
            end(batch)
            for request in kept { request.resolve(.failure(error)) }
            closeIfRequested()
            return
        }
        // The realm is out of the transaction: the next batch may begin while this one syncs.
        end(batch)
        let outcome = CommitOutcome()
        inFlight.append(InFlightCommit(realm: realm, ending: ending, outcome: outcome))
        do throws(StorageError) {
            // The callback holds nothing of the realm's: a writer that closes the file after
            // its answer must find it closed.
            try ending.transaction.commit(groupable: true, writeHere: true) { result in
                outcome.record(result)
                let answer = result.map { _ in () }.mapError { Realm.Error($0) as Swift.Error }
                for request in kept { request.resolve(answer) }
                Task { await self.settleCommits() }
            }
        } catch {
            outcome.record(.failure(error))
            settleCommits()
            for request in kept { request.resolve(.failure(Realm.Error(error))) }
        }
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
    }

    private func closeIfRequested() {
        guard closeRequested, batch == nil else { return }
        closeRequested = false
        writer?.invalidate()
        writer = nil
    }
}
