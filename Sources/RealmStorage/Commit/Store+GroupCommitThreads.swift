// Group commit for committing threads: `Store.commitWaiting`, what `realm.write {}` on a plain
// thread ends in.
//
// A thread that commits waits on its thread until its version is durable, so it syncs itself
// rather than through the sync queue: the two thread switches of a hop to the queue and back
// cost more than a fast sync (BENCHMARKS.md, 2026-11-22). Threads that commit at the same
// time take turns at syncing for each other (leader and followers):
//
//   1. A thread whose commit is written leads when no thread leads: it syncs, at once, every
//      version written so far, its own and any others. A lone committer never waits for
//      company.
//   2. A thread that finds another leading follows: it sleeps until its version is durable
//      (or failed) or until it is its turn to lead.
//   3. A leader whose sync is done hands the lead to the oldest follower whose version no sync
//      has settled yet, before it answers anybody, so that the next sync starts at once with
//      every version written during this one. With no such follower nobody leads, and the
//      next thread to commit leads (1).
//
// So the threads that write while a sync runs share the next sync, as tasks' commits on the
// sync queue do (Store+GroupCommit.swift). Before this (issue 23), each committing thread ran a
// sync step of its own after its write, one at a time on `syncing`, even when a step taken
// while it waited for `syncing` had already made its version durable: so it was answered only
// after syncing what had been written since, and as threads left one per sync, only one or
// two had written again by the next: 16 threads shared 1.6 to 2 commits per sync.
//
// Why every waiting thread is answered:
//   - `threadLeads`, `followers`, and each follower's `settled` and `leadsNext` change under
//     `stateLock` only; a sync step settles (marks) the versions it makes durable or fails
//     under the same lock, in the same critical section that takes them off `unsynced`, and
//     answers them afterwards.
//   - A thread's version is in `unsynced` before the thread leads or follows. A leader runs a
//     sync step after that, which settles its version or finds it taken by an earlier step
//     (which answers it).
//   - A follower joins while a leader leads, and every leader hands over (3) under
//     `stateLock` after its step: it finds the follower in the list until the follower's
//     version is settled. Each hand-over passes the lead down the list in order, dropping
//     settled followers, so an unsettled follower is promoted in the end, and then leads.
//   - A follower leaves the list itself only once answered (so settled). A follower both
//     promoted and answered still leads (its step may find nothing to do): dropping the lead
//     would strand the followers after it.
// Sync steps on the sync queue (tasks' commits) and thread leaders' steps are kept one at a
// time by `syncing`, as before; either settles whatever versions it takes, whoever wrote them.

extension Store {
    /// What the engine counts of group commit: how many commits share a sync. Cheap: counted
    /// under `stateLock`, in critical sections a commit and a sync take anyway.
    package struct GroupCommitCounts: Sendable, Equatable {
        /// Sync steps that made versions durable (one `fsync` each with durability `.full`).
        package var syncs = 0
        /// The versions (commits) they made durable.
        package var versions = 0
        /// Threads that wait in a synchronous commit, their version written, for it to be
        /// durable (leading or following), or whose part of a write another thread's commit
        /// carries (WriteTransaction+Relay.swift), now.
        package var waitingThreads = 0
    }

    /// Group commit's counts since this store opened (see `GroupCommitCounts`).
    package var groupCommitCounts: GroupCommitCounts { stateLock.withLock { $0.group.counts } }

    /// For a thread whose commit is written (`waiter`'s): leads a sync or follows one until its
    /// version is durable (see above), and returns it.
    ///
    /// - Throws: the sync's error when the version's group failed to reach the disk.
    func awaitDurable(_ waiter: DurabilityWaiter) throws(StorageError) -> VersionID {
        let leads: Bool = stateLock.withLock { state in
            state.group.counts.waitingThreads += 1
            guard state.group.threadLeads else {
                state.group.threadLeads = true
                return true
            }
            state.group.followers.append(waiter)
            return false
        }
        defer { stateLock.withLock { $0.group.counts.waitingThreads -= 1 } }
        if leads || follow(waiter) {
            let answers = syncGroup(fromQueue: false)
            handOverLead()
            answers.give()
        }
        return try waiter.wait()
    }

    /// For a thread that passed its part of a write on (WriteTransaction+Relay.swift): waits until the
    /// commit that carries it is durable, counted among the waiting threads.
    func ride(_ rider: DurabilityWaiter) throws(StorageError) -> VersionID {
        stateLock.withLock { $0.group.counts.waitingThreads += 1 }
        defer { stateLock.withLock { $0.group.counts.waitingThreads -= 1 } }
        return try rider.wait()
    }

    /// For a lane holder with nobody in line to pass its transaction to: waits while a sync is
    /// under way for a thread that accepts a relay to join the line (true), or until nothing
    /// written is waiting for a sync any more (false: the holder then commits). Counted among
    /// the waiting threads, as it waits for a sync to end. The syncs need no lane, so they end.
    func awaitRelayRecipient() -> Bool {
        stateLock.withLock { $0.group.counts.waitingThreads += 1 }
        defer { stateLock.withLock { $0.group.counts.waitingThreads -= 1 } }
        return lane.awaitRelayRecipient { stateLock.withLock { !$0.group.unsynced.isEmpty } }
    }

    /// Sleeps until `waiter` is answered (false) or promoted to lead (true).
    private func follow(_ waiter: DurabilityWaiter) -> Bool {
        while true {
            waiter.sleep()
            let leads: Bool? = stateLock.withLock { state in
                if waiter.takeLead() { return true }
                // Woken by something else than its answer: a wake-up no check consumed yet.
                guard waiter.isAnswered else { return nil }
                state.group.followers.removeAll { $0 === waiter }
                return false
            }
            if let leads { return leads }
        }
    }

    /// For a leader whose sync step is done: passes the lead to the oldest follower whose
    /// version is not settled, or ends it.
    private func handOverLead() {
        let next: DurabilityWaiter? = stateLock.withLock { state in
            while !state.group.followers.isEmpty {
                let follower = state.group.followers.removeFirst()
                if follower.leadUnlessSettled() { return follower }
            }
            state.group.threadLeads = false
            return nil
        }
        next?.wake()
    }
}
