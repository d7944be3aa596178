import Dispatch

// Group commit: write transactions that follow each other closely share one sync.
//
// A commit is written in two parts. The committer (holding the write lane) encodes its nodes
// and writes them, with its commit record, into free space; the version becomes the store's
// *tip*, the version the next writer builds on, and the committer hands the lane on at once.
// The sync queue then writes the root slot of the newest tip and syncs: one sync makes every
// version written since the last one durable. Only then are those committers answered and
// their versions published to readers (`committed`), so nobody sees data that is not durable.
// Committers that wait on their own threads (`commitWaiting`) sync on them instead, one
// leading for the others at a time (Store+GroupCommitThreads.swift); a sync step is the same
// wherever it runs (`syncGroup`).
//
// Why a crash cannot lose or tear anything (FileHeader.swift, invariants 1-3):
//   - Every version written since the durable one is pinned (`groupPins`), so no commit of a
//     group overwrites space the durable version or an earlier unsynced version can reach.
//   - Only the newest tip's slot is written. Its commit record lists every extent written
//     since the durable version (`carrying`), so the slot verifies only if all of them
//     reached the disk. Otherwise recovery takes the durable version in the other slot.
//   - A record lists extents of earlier versions. Those stay pinned while a record that lists
//     them may still be needed: the durable version's (recovery's fallback while the next
//     group syncs), or an unsynced version's (`coveredFrom`). The record stores how far back it
//     reaches, so that a reopened store knows it too.
//
// A failed sync fails every version of the group and every version written on top of it:
// their callers get the error, nothing of them is published, the store's allocator goes back
// to the durable version's (`allocatorStale`), and `lineage` changes, so that a transaction
// that began on a failed tip cannot commit. The failed versions may have reached the disk
// whole all the same, so they are made unreachable: the slot the sync wrote and every failed
// version's run header are zeroed and synced, and the history nonce changes (CommitWriter.swift),
// so that a retried version never links the failed ones' run headers again. Whatever of the
// zeroing fails waits in `pendingInvalidation`: the next write makes it durable before it
// writes anything (`invalidateFailedRoots`), or fails.

extension Store {
    /// What the store knows of versions written but not yet durable. In `stateLock`.
    struct GroupState {
        /// The newest version written, durable or not; nil when it is `committed`.
        var tip: Committed?
        /// Versions written and not yet durable, oldest first.
        var unsynced: [Unsynced] = []
        /// The extents of versions some unsynced record lists (ascending by version).
        var extents: [RecordedExtent] = []
        /// Changes when a group's sync fails (see above).
        var lineage: UInt64 = 0
        /// The allocator as of the durable version, to go back to after a failed sync.
        var durableFree: FreeSpace
        /// The version `durableFree` belongs to: what this process last made durable or read
        /// from the file as the writer (behind the file when another process wrote since).
        var durableFreeVersion: UInt64
        /// The durable version's record lists extents of the versions after this one.
        var durableCoveredFrom: UInt64
        /// Set by a failed sync; the next writer takes `durableFree` as its allocator.
        var allocatorStale = false
        /// Whether a sync job is queued and has not yet taken its group.
        var syncScheduled = false
        /// A committing thread leads: it syncs, or is about to, for the threads that wait
        /// (Store+GroupCommitThreads.swift).
        var threadLeads = false
        /// Threads whose versions are written, waiting while another leads, oldest first.
        var followers: [DurabilityWaiter] = []
        /// `Store.groupCommitCounts`.
        var counts = GroupCommitCounts()
        /// The newest durable version in a root slot, and that slot: the head the chain of
        /// run headers after it starts from (FileHeader.swift, invariants 4-6).
        var head: (version: UInt64, slotIndex: Int)
        /// Bytes the versions after the head wrote: their space is not reused until a newer
        /// head is durable, so a long chain of large commits writes a slot sooner.
        var chainBytes: UInt64 = 0
        /// The history nonce of the records this process writes (CommitWriter.swift).
        var nonce = UInt64.random(in: .min ... .max)
        /// Roots of failed versions (a slot, run headers) still to be zeroed, as (offset, length).
        var pendingInvalidation: [(offset: UInt64, length: Int)] = []
        /// The file is durably of a format whose free lists may hold deltas (FreeList+Chain.swift):
        /// commits may write them.
        var freeListDeltas = false

        init(durableFree: FreeSpace, durableFreeVersion: UInt64, durableCoveredFrom: UInt64, head: (version: UInt64, slotIndex: Int)) {
            self.durableFree = durableFree
            self.durableFreeVersion = durableFreeVersion
            self.durableCoveredFrom = durableCoveredFrom
            self.head = head
        }
    }

    struct Unsynced {
        let state: Committed
        let free: FreeSpace
        let coveredFrom: UInt64
        /// The version has no run header (it starts a new chain): the sync that makes it
        /// durable writes its root into a slot.
        let needsSlot: Bool
        /// Bytes its commit wrote (`GroupState.chainBytes`).
        let bytes: UInt64
        /// The thread that waits for it, when a thread does (`commitWaiting`): its sync step
        /// marks it settled. Then the version needs no sync queue job.
        let waiter: DurabilityWaiter?
        let done: @Sendable (Result<VersionID, StorageError>) -> Void
        /// `PreparedCommit.started`.
        let started: UInt64
    }

    /// For a commit about to be encoded: the versions this process's readers and unsynced
    /// records need (sorted), the versions its allocator must not overwrite (those, the chain
    /// after the head and the versions readers of other processes pin, sorted, with the ranges
    /// that summarise some of the latter), the unsynced extents its record must list, the
    /// durable version, and the head its chain follows.
    ///
    /// - Throws: `ioFailure` when the transaction began on versions whose sync failed.
    func groupPins(base: Committed, lineage: UInt64) throws(StorageError)
        -> (pins: [UInt64], spacePins: [UInt64], spaceRanges: [ClosedRange<UInt64>], carried: [RecordedExtent], durable: UInt64, head: UInt64,
            chainBytes: UInt64, nonce: UInt64) {
        try stateLock.withLock { (state) throws(StorageError) in
            try checkLineage(lineage, state)
            let durable = state.committed.slot.version.value
            // Loaded after the durable version they protect was published, under the lock that
            // publishing takes (the reader table's argument, ProcessCoordination.swift).
            let elsewhere = coordination?.othersPins() ?? PinnedElsewhere()
            let pinned = registry.pinned(including: state.committed.slot.version)
            let newest = base.slot.version.value
            // `pinned` and the range, merged in order (both are sorted; a set and a sort of the
            // range cost more than the rest of the function once chains made it long).
            func including(after lowest: UInt64) -> [UInt64] {
                guard newest > lowest else { return pinned }
                var all = pinned.filter { $0 <= lowest }
                all.reserveCapacity(all.count + Int(newest - lowest) + pinned.count)
                all += (lowest + 1)...newest
                all += pinned.filter { $0 > newest }
                return all
            }
            let lowest = min(state.group.unsynced.map(\.coveredFrom).min() ?? durable, state.group.durableCoveredFrom)
            // Every version after the head stays whole while the head is the newest durable one
            // (invariant 5): recovery walks their run headers and records from it. Only space
            // needs that; the change history follows the readers.
            let space = including(after: min(lowest, state.group.head.version))
            return (including(after: lowest), elsewhere.versions.isEmpty ? space : Self.merged(space, elsewhere.versions), elsewhere.ranges,
                    state.group.extents.filter { $0.version > durable }, durable, state.group.head.version, state.group.chainBytes,
                    state.group.nonce)
        }
    }

    /// Two sorted lists as one.
    static func merged(_ a: [UInt64], _ b: [UInt64]) -> [UInt64] {
        var all: [UInt64] = []
        all.reserveCapacity(a.count + b.count)
        var i = 0, j = 0
        while i < a.count || j < b.count {
            if j == b.count || (i < a.count && a[i] <= b[j]) {
                all.append(a[i])
                i += 1
            } else {
                all.append(b[j])
                j += 1
            }
        }
        return all
    }

    private func checkLineage(_ lineage: UInt64, _ state: State) throws(StorageError) {
        guard lineage == state.group.lineage else {
            throw StorageError(.ioFailure, "an earlier commit this transaction builds on failed to reach the disk, so this one cannot be kept either; retry it",
                               path: path)
        }
    }

    /// Makes a written version the tip and queues it for the next sync (unless a thread waits
    /// for it, `waiter`: then the waiting threads sync it, see `awaitDurable`).
    func enqueueUnsynced(_ written: Committed, _ prepared: PreparedCommit, waiter: DurabilityWaiter? = nil,
                         _ done: @escaping @Sendable (Result<VersionID, StorageError>) -> Void) throws(StorageError) {
        let schedule = try stateLock.withLock { (state) throws(StorageError) -> Bool in
            try checkLineage(prepared.lineage, state)
            state.group.tip = written
            let bytes = UInt64(prepared.commit.data.count)
            state.group.unsynced.append(Unsynced(state: written, free: prepared.free, coveredFrom: prepared.coveredFrom,
                                                 needsSlot: prepared.needsSlot, bytes: bytes, waiter: waiter, done: done,
                                                 started: prepared.started))
            state.group.chainBytes += bytes
            state.group.extents += prepared.commit.recorded
            guard waiter == nil else { return false }
            let schedule = !state.group.syncScheduled
            state.group.syncScheduled = true
            return schedule
        }
        if schedule {
            // Weakly: the store must be gone as soon as its last user lets go, and the job
            // answers the committers only after it has dropped the store (see `syncGroup`).
            syncQueue.async { [weak self] in
                let answers = self?.syncGroup()
                answers?.give()
            }
        }
    }

    /// Makes every version written so far durable with one slot write and one sync, and
    /// publishes the newest. Runs on the sync queue, or on a waiting committer's thread
    /// (`awaitDurable`); `syncing` keeps them one at a time. Returns the answers to give the
    /// committers, to be given once the caller no longer holds the store: a committer that
    /// closes the file right after its answer must find it closed.
    func syncGroup(fromQueue: Bool = true) -> SyncAnswers {
        syncing.withLock { syncGroupNow(fromQueue: fromQueue, fileFormat: &$0) }
    }

    private func syncGroupNow(fromQueue: Bool, fileFormat: inout UInt32) -> SyncAnswers {
        let (batch, target) = stateLock.withLock { state in
            if fromQueue { state.group.syncScheduled = false }
            // Never the slot of the newest durable head (invariant 6).
            return (state.group.unsynced, 1 - state.group.head.slotIndex)
        }
        guard let last = batch.last else { return SyncAnswers() }
        // The group's last version without a run header becomes the head: its root goes into a
        // slot, and the versions after it follow it through their run headers.
        let newHead = batch.lastIndex { $0.needsSlot }
        do throws(StorageError) {
            if let newHead { try writeSlot(batch[newHead].state.slot, slotIndex: target, fileFormat: &fileFormat) }
            if options.durability == .full { try file.sync() }
        } catch {
            // Zeroed here, before the lineage changes: until then no writer allocates where a
            // failed version's root is (they are all nodes of the tip's chain).
            let known = stateLock.withLock { $0.group.unsynced }
            var roots = Self.roots(of: known)
            if newHead != nil { roots.append((UInt64(FileHeader.slotOffsets[target]), FileHeader.slotSize)) }
            let zeroed = (try? writeZeros(roots)) != nil
            let (failed, told): ([Unsynced], PublishAnswers) = stateLock.withLock { state in
                let failed = state.group.unsynced
                // Left for the next writer: the roots of versions written since `known` was
                // taken, and the others too when zeroing them failed.
                let late = Self.roots(of: Array(failed.dropFirst(known.count)))
                state.group.pendingInvalidation += (zeroed ? [] : roots) + late
                state.group.chainBytes -= min(state.group.chainBytes, failed.reduce(0) { $0 + $1.bytes })
                for version in failed { version.waiter?.settle() }
                state.group.unsynced = []
                state.group.extents = []
                state.group.tip = nil
                state.group.lineage &+= 1
                state.group.nonce = .random(in: .min ... .max)
                state.group.allocatorStale = true
                unlockProcessIfIdle(&state)
                return (failed, takePublishAnswers(&state))
            }
            // A lane holder waiting for this sync to end commits now (WriteTransaction+Relay.swift).
            lane.nudge()
            return SyncAnswers(versions: failed, failure: error, published: told)
        }
        // Durable: reported before any committer is answered or the version is published, so
        // that a caller whose write returned finds its commit counted.
        if commitObservers.isActive { commitObservers.report(batch, activeVersions: registry.activeVersionCount) }
        let told: PublishAnswers = stateLock.withLock { state in
            var newest = last.state
            if let newHead {
                if newHead == batch.count - 1 { newest = newest.inSlot(target) }
                state.group.head = (batch[newHead].state.slot.version.value, target)
                state.group.chainBytes = batch[(newHead + 1)...].reduce(0) { $0 + $1.bytes }
            }
            state.committed = newest
            state.committedFreeBytes = last.free.freeBytes
            state.committedLogicalSize = last.free.logicalSize
            state.group.durableFree = last.free
            state.group.durableFreeVersion = newest.slot.version.value
            state.group.durableCoveredFrom = last.coveredFrom
            coordination?.publishDurable(newest.slot.version.value, synced: options.durability == .full)
            state.group.unsynced.removeFirst(batch.count)
            for version in batch { version.waiter?.settle() }
            state.group.counts.syncs += 1
            state.group.counts.versions += batch.count
            if state.group.unsynced.isEmpty { state.group.tip = nil }
            let stillListed = state.group.unsynced.map(\.coveredFrom).min() ?? newest.slot.version.value
            state.group.extents.removeAll { $0.version <= stillListed }
            unlockProcessIfIdle(&state)
            return takePublishAnswers(&state)
        }
        lane.nudge()
        return SyncAnswers(versions: batch, failure: nil, published: told)
    }
}

/// What a sync step owes, given once the caller no longer holds the store: each committer's
/// answer, then the waiters and observers of published versions. A value, not closures: a
/// sync used to allocate an array and a closure for each.
struct SyncAnswers {
    var versions: [Store.Unsynced] = []
    var failure: StorageError?
    var published: PublishAnswers?

    func give() {
        for version in versions {
            if let failure { version.done(.failure(failure)) } else { version.done(.success(version.state.slot.version)) }
        }
        published?.give()
    }
}

extension Store {
    /// The run headers of `versions`, as (offset, length).
    private static func roots(of versions: [Unsynced]) -> [(offset: UInt64, length: Int)] {
        versions.compactMap { $0.state.slot.runHeader.isNone ? nil : ($0.state.slot.runHeader.offset, RunHeader.size) }
    }

    /// Zeroes `roots` and syncs (when the store syncs at all).
    func writeZeros(_ roots: [(offset: UInt64, length: Int)]) throws(StorageError) {
        guard !roots.isEmpty else { return }
        for root in roots {
            try file.write([UInt8](repeating: 0, count: root.length), at: root.offset)
        }
        if options.durability == .full { try file.sync() }
    }

    /// For the lane's holder, before it writes anything: makes the zeroing a failed sync could
    /// not finish durable (see above). Nothing is written over those places before this: they
    /// belong to failed versions, and the first writer after the failure comes here first.
    ///
    /// - Throws: `ioFailure` when it fails again; the roots stay pending.
    func invalidateFailedRoots() throws(StorageError) {
        let pending = stateLock.withLock { $0.group.pendingInvalidation }
        guard !pending.isEmpty else { return }
        do throws(StorageError) {
            try writeZeros(pending)
        } catch {
            throw StorageError(.ioFailure, "commits that failed to reach the disk could not yet be made unreachable in the file, so nothing new can be written: \(error.message)",
                               path: path)
        }
        stateLock.withLock { $0.group.pendingInvalidation.removeFirst(pending.count) }
    }
}
