// Relayed writes: threads that write one after another share one transaction and one commit.
//
// Why: a small commit costs far more than its change. The changed leaves of every tree it
// touches are encoded again, with the inner nodes above them, the free list and the commit
// record, on the write lane. Threads that each commit a `realm.write {}` of their own were
// capped by that work: 16 threads made 0.27–0.31× the commits of the same writes sent through
// a RealmActor, which merges the writes queued on it into one commit (WriteBatch.swift), while
// their syncs were already shared (Store+GroupCommitThreads.swift).
//
// How: a thread ending its part of a write (`commitOrRelay`) while the first thread in line
// for the lane accepts a relay hands that thread the lane and the open transaction
// (`WriteLane.pass`) instead of committing, and waits as a rider. With nobody in line while
// a sync is under way (versions written and not yet durable), it waits for somebody, lane
// held (`Store.awaitRelayRecipient`): committing now would only join the next sync, and the
// threads that sync answers come back to write one at a time, each too late for the one
// before (two cores wake them in turn): without the wait they made 1.35 writes per commit. The receiving thread starts
// its part at a savepoint (`Store.beginWrite(joiningRelay:)`), runs its block, and passes on
// the same way; the last (nobody accepting in line, or the relay full) commits for all, and
// answers the riders with the outcome once it is durable or failed (`commit`). A part that
// throws is undone back to its savepoint and the relay goes on without it (`rollback`); a part
// that cannot be undone alone (a schema change, which savepoints do not log) fails the riders
// with `mergedWriteFailed`.
//
// What the writers see is what they would see had they committed one after another: a part
// sees the parts before it, and each `write` returns once its part is durable. What differs:
// the parts of a relay become durable, or fail, together; and a writer waits for the parts
// after its own (at most `relayCapacity - 1`), so a block must not wait for another thread's
// write to return.
//
// Only threads accept a relay, and only in `realm.write {}` without `withoutNotifying` tokens
// (the OpenRealm layer decides): a task waiting for the lane suspends rather than sleeps, and a
// write that skips notifications for some observers must commit alone, or they would miss
// others' changes with its own.

extension WriteTransaction {
    /// The most parts one commit carries: bounds how long the first writer waits for the last.
    static let relayCapacity = 32

    /// The riders of a relayed transaction and where the current part began.
    struct Relay {
        /// The threads whose parts are in the transaction, waiting for its commit.
        /// (A rider is answered and waits as a committing thread does: `DurabilityWaiter`.)
        var riders: [DurabilityWaiter] = []
        /// Where the current holder's part began, when the transaction was passed to it.
        var part: Savepoint?

        /// Answers every rider with `result`.
        func answer(_ result: Result<VersionID, StorageError>) {
            for rider in riders { rider.deliver(result) }
        }
    }

    /// Whether other threads' parts ride on this transaction (it was passed to its holder).
    package var carriesRiders: Bool { !relay.riders.isEmpty }

    /// For a thread handed this transaction with the lane: its part starts here.
    func beginRelayedPart() {
        relay.part = makeSavepoint()
    }

    /// Ends the holder's part: passes the transaction with the lane to the first thread in
    /// line when it accepts a relay, and waits until the commit that carries the part is
    /// durable; otherwise commits, for the riders too.
    ///
    /// - Throws: what the commit throws (to every part it carries), `mergedWriteFailed` when a
    ///   later part failed and could not be undone alone.
    package func commitOrRelay() throws(StorageError) -> VersionID {
        try ensureActive()
        if relay.riders.count + 1 < Self.relayCapacity {
            let rider = DurabilityWaiter()
            if let part = relay.part { releaseSavepoint(part) }
            relay.part = nil
            relay.riders.append(rider)
            // After a pass the transaction is the next holder's: not touched again here.
            let store = self.store
            if store.lane.pass(self) || (store.awaitRelayRecipient() && store.lane.pass(self)) { return try store.ride(rider) }
            relay.riders.removeLast()
        }
        return try commit()
    }

    /// Takes the riders off the transaction, for its commit or rollback to answer.
    func takeRiders() -> Relay {
        defer { relay = Relay() }
        return relay
    }

    /// `rollback()` of a transaction that carries riders: undoes the holder's part only, and
    /// carries the riders on (passes the transaction, or commits it for them).
    func rollbackRelayedPart() {
        let part = relay.part
        relay.part = nil
        do throws(StorageError) {
            // Never without one (a passed transaction's holder has its part's savepoint until
            // it ends the part): if it were, the riders must hear, not wait on a held lane.
            guard let part else { throw StorageError(.invalidArgument, "the part has no savepoint to roll back to") }
            try rollback(to: part)
            releaseSavepoint(part)
        } catch {
            let riders = takeRiders()
            discard()
            riders.answer(.failure(StorageError(.mergedWriteFailed,
                "a write committed with this one failed and could not be undone on its own (\(error.message)); "
                + "no write of the commit was made: retry", path: store.path)))
            return
        }
        if store.lane.pass(self) { return }
        // The riders hear the outcome; the holder's own write was undone.
        _ = try? commit()
    }
}
