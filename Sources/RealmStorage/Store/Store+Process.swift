import Dispatch

// Writing and reading beside other processes (the lock file: ProcessCoordination.swift).
//
// Writes. Within the process the write lane orders writers; across processes the lock
// file's write lock does. This process takes it when a write transaction starts and it does not
// hold it already, and keeps it while its lane is busy or any of its commits is not yet durable
// (`ProcessHold`): another process must never build on a version that may still be lost, nor
// allocate over the nodes of one. Whoever finds the process idle lets it go (the lane's last
// holder, or the sync that made the last commit durable), so writers of different processes
// take turns between commits, and group commit still works within one.
//
// Having just taken the lock from another process, the writer catches up: when that one
// committed since this one last wrote, the version the lock file names durable (in a root slot
// or the chain of run headers after one, FileHeader.swift), its free list and its record's
// reach are loaded from the file before the transaction starts, and anything newer in the file
// (left by a writer that failed or died) is made unreachable (`catchUpWithFile`). Kept leaves
// and the allocator of the older version are dropped.
//
// Reads. A reader begins on the newest durable version any process made: when the lock file's
// durable version is newer than this process's, the reader pins it (publishing the pin),
// checks that it is still the newest, and loads its root (`catchUpForReading`).

/// Why this process holds the write lock of its file. In the store's `stateLock`.
struct ProcessHold {
    /// Lane holders between `enterWrite` and the end of their `LaneHold` (0 or 1).
    var writers = 0
    var locked = false
}

/// The write lane, held: this process's turn to write, from `enterWrite` until the write
/// transaction holding it ends.
///
/// Non-copyable, and let go by its `deinit` alone: whichever way a write ends (a commit, a
/// rollback, a throw anywhere on the commit path, a dropped transaction, a commit that keeps
/// the lane until it is durable) the hold is consumed once, and the lane with the process's
/// count of writers goes exactly once. The compiler rejects a copy, and a hold that goes out
/// of scope releases, so no path can forget it or release it twice. It moves one way: the
/// transaction owns it (`WriteTransaction.lane`), hands it to the commit it finishes
/// (`FinishedWrite`), and the store consumes it once the commit is queued, or once it is
/// durable when it must sync alone (Store+Commit.swift).
///
/// It keeps the store alive: a job that carries it to another queue needs no weak reference.
package struct LaneHold: ~Copyable {
    private let store: Store

    /// Only `enterWrite`, for the lane's new holder.
    fileprivate init(_ store: Store) { self.store = store }

    /// Lets the lane go now, rather than where the hold goes out of scope.
    consuming func release() {}

    deinit { store.releaseLane() }
}

extension Store {
    // MARK: Writing

    /// For the lane's new holder: makes sure this process holds the write lock, waiting on this
    /// thread for other processes, and catches up with what they committed. The hold it
    /// returns lets both go when it ends.
    ///
    /// - Throws: `ioFailure` (locking failed), `fileCorrupted` (the newest version in the file
    ///   does not decode), `incompatibleLockFile` (the lock file was deleted or replaced while
    ///   this process had the file open); the caller then still holds the lane and nothing else.
    func enterWrite() throws(StorageError) -> LaneHold {
        guard let coordination, beginProcessHold() else { return LaneHold(self) }
        do throws(StorageError) {
            try coordination.lockWriter()
            try lockedForWriting()
        } catch {
            abandonProcessHold()
            throw error
        }
        return LaneHold(self)
    }

    /// `enterWrite` for a task: while another process holds the write lock, the wait happens on
    /// a dispatch thread, never on the cooperative pool.
    func enterWriteAsync() async throws(StorageError) -> LaneHold {
        guard let coordination, beginProcessHold() else { return LaneHold(self) }
        do throws(StorageError) {
            let locked = coordination.tryLockWriter()
            if locked && !coordination.tookOverFromOther {
                try lockedForWriting()  // nothing to catch up with: no file work
            } else {
                // Waiting for the lock, and catching up (which may write and sync), on a
                // dispatch thread. Weakly, and let go before resuming: this caller holds the
                // store until then, and a hold the dispatch thread kept past its resume could
                // outlive the caller's last use, leaving the file open after the realm closed.
                let result: Result<Void, StorageError> = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async { [weak self] in
                        let result = self?.lockAndCatchUp(locked: locked)
                            ?? .failure(StorageError(.transactionEnded, "the store closed while its writer waited for the write lock"))
                        continuation.resume(returning: result)
                    }
                }
                try result.get()
            }
        } catch {
            abandonProcessHold()
            throw error
        }
        return LaneHold(self)
    }

    /// Takes the process write lock unless `locked`, then catches up (`enterWriteAsync`).
    private func lockAndCatchUp(locked: Bool) -> Result<Void, StorageError> {
        do throws(StorageError) {
            if !locked { try coordination?.lockWriter() }
            try lockedForWriting()
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    /// After a failed `enterWrite`: the lock goes again if it was taken (the catch-up failed),
    /// so that the next writer takes it and catches up afresh.
    private func abandonProcessHold() {
        coordination?.forgetTurn()
        stateLock.withLock { state in
            state.processHold.writers -= 1
            unlockProcessIfIdle(&state)
        }
    }

    /// Counts the lane holder in; true when the write lock must be taken first.
    private func beginProcessHold() -> Bool {
        stateLock.withLock { state in
            state.processHold.writers += 1
            return !state.processHold.locked
        }
    }

    private func lockedForWriting() throws(StorageError) {
        stateLock.withLock { $0.processHold.locked = true }
        // Only here, where the write lock is taken, not for each commit of a group that keeps
        // it: a stat of the lock file's path (ProcessCoordination.swift).
        try coordination?.checkLockFileIsAtItsPath()
        // When this process had the last turn, nobody wrote since, and nothing is to be done
        // (looking cost a stat and a walk of the chain at every commit).
        guard coordination?.tookOverFromOther ?? false else { return }
        try catchUpWithFile()
    }

    /// Gives up the write lane: a `LaneHold`'s end, and nothing else, calls it.
    fileprivate func releaseLane() {
        if coordination != nil {
            stateLock.withLock { state in
                state.processHold.writers -= 1
                unlockProcessIfIdle(&state)
            }
        }
        lane.release()
    }

    /// Lets other processes write once nothing of this one is under way. Under `stateLock`.
    func unlockProcessIfIdle(_ state: inout State) {
        guard state.processHold.locked, state.processHold.writers == 0, state.group.unsynced.isEmpty else { return }
        coordination?.unlockWriter()
        state.processHold.locked = false
    }

    /// With the write lock just taken: loads the newest durable version when another process
    /// made it, so that this process's next commit builds on it and allocates from its free
    /// list; and makes sure nothing newer than it can be taken for a committed version.
    ///
    /// The version built on is the one the lock file names durable, never simply the newest the
    /// file holds: a process killed while it wrote, or whose sync failed, leaves versions that
    /// were never acknowledged and may be half written (their run header whole, their nodes
    /// not). Those are made unreachable here (`endHistory`), as recovery does at open.
    private func catchUpWithFile() throws(StorageError) {
        let (current, known) = stateLock.withLock { ($0.committed, $0.group.durableFreeVersion) }
        // Only another process makes the lock file's durable version newer than this one's own:
        // it publishes each version it makes durable before it lets the write lock go.
        let published = coordination?.durableVersion ?? 0
        let target = max(published, known)
        // Not read for every commit: a stat per commit made each sync write the inode too
        // (W2 -20%). Growth by another process without a commit is caught in `growFile`.
        physicalSize = try file.size()
        try file.showOtherProcessesWrites()
        // The version found is loaded through the mapping: it must cover the file, which
        // another process may have grown past this one's reservation.
        let mapping = try self.mapping(current.mapping, covering: physicalSize)
        let all = roots(in: mapping, size: physicalSize)
        guard let found = all.first(where: { $0.root.version.value == target }) else {
            throw StorageError(.fileCorrupted, "the lock file names version \(target) durable, but no root slot or run header of the file holds it",
                               path: path)
        }
        try endHistory(at: found, mapping: mapping)
        // Also when a reader made another version the newest committed one (one never
        // published, `catchUpToNewestSlot`): the next commit must build on `target`.
        guard target > known || current.slot.version.value != target else { return }
        try adopt(found, over: mapping)
    }

    /// Zeroes (and syncs) every root slot naming a version newer than `base` and the run header
    /// where `base`'s successor's goes when it names a newer one: what a writer that failed or
    /// died left after the last durable version. Nothing is written when there is none.
    private func endHistory(at base: FoundRoot, mapping: Mapping) throws(StorageError) {
        let version = base.root.version.value
        var stale: [(offset: UInt64, length: Int)] = []
        for (slot, index) in Self.slots(in: mapping, sealed: sealing.storesSeals) where slot.version.value > version {
            stale.append((UInt64(FileHeader.slotOffsets[index]), FileHeader.slotSize))
        }
        let next = base.root.nextRun
        if next != 0, let header = RunHeader.decode(at: next, base: mapping.base, limit: min(physicalSize, UInt64(mapping.length)),
                                                        sealing: sealing),
           header.root.version.value > version {
            stale.append((next, RunHeader.size))
        }
        try writeZeros(stale)
    }

    /// For a store opened beside other processes: recovery takes the newest version that
    /// verifies, which may be a commit another process has written but not yet made durable
    /// (its sync may still fail). This process starts from the version the lock file names
    /// durable instead. Called at the end of `init`, while every version counts as pinned.
    func startFromPublishedDurable() throws(StorageError) {
        let current = stateLock.withLock { $0.committed }
        guard let durable = coordination?.durableVersion, durable != 0, durable != current.slot.version.value else { return }
        physicalSize = try file.size()
        try file.showOtherProcessesWrites()
        let mapping = try self.mapping(current.mapping, covering: physicalSize)
        guard let found = roots(in: mapping, size: physicalSize).first(where: { $0.root.version.value == durable }) else { return }
        try adopt(found, over: mapping)
    }

    /// Makes the version `found` names the newest committed one and the allocator's base.
    private func adopt(_ found: FoundRoot, over mapping: Mapping) throws(StorageError) {
        let slot = found.root
        let loaded = try load(slot, index: found.slotIndex, over: mapping)
        let free: FreeSpace
        let depth: UInt32
        do throws(StorageError) {
            free = try Recovery.decodeFreeSpace(of: slot, mapping: loaded.mapping, check: nodeCheck(loaded.mapping))
            depth = try Recovery.recordDepth(slot, mapping: loaded.mapping, check: nodeCheck(loaded.mapping))
        } catch {
            throw StorageError(.fileCorrupted, "version \(slot.version), written by another process: \(error.message)", path: path)
        }
        stateLock.withLock { state in
            state.committed = loaded
            state.committedFreeBytes = free.freeBytes
            state.committedLogicalSize = free.logicalSize
            state.group.durableFree = free
            state.group.durableFreeVersion = slot.version.value
            state.group.durableCoveredFrom = slot.version.value - min(UInt64(depth), slot.version.value)
            state.group.head = found.head
            // Unknown: the other process wrote the chain after the head. No reuse is lost by
            // counting none (chainBytes only decides when a commit writes a slot).
            state.group.chainBytes = 0
            state.group.allocatorStale = false
            // Roots of this process's failed versions: the other process may have written over
            // them since (and made them unreachable, `catchUpWithFile`).
            state.group.pendingInvalidation = []
            state.group.nonce = .random(in: .min ... .max)
            // Leaves kept by this process's last commit describe an older version.
            state.group.lineage &+= 1
        }
        self.free = free
        decodedLeaves = nil
    }

    // MARK: Reading

    /// Pins `durable` (the lock file's newest durable version), checks it is still the newest,
    /// and makes it this process's newest committed version. Returns it pinned, or nil when
    /// another version became durable meanwhile or it did not load (the caller tries again).
    func catchUpForReading(_ durable: UInt64) -> Committed? {
        guard let coordination else { return nil }
        let version = VersionID(durable)
        registry.pin(version)
        let current = stateLock.withLock { $0.committed }
        guard coordination.durableVersion == durable else {
            registry.unpin(version)
            return nil
        }
        if current.slot.version == version { return current }
        guard let size = try? file.size(), (try? file.showOtherProcessesWrites()) != nil,
              let mapping = try? self.mapping(current.mapping, covering: size),
              let found = roots(in: mapping, size: size).first(where: { $0.root.version == version }),
              let loaded = try? load(found.root, index: found.slotIndex, over: mapping) else {
            registry.unpin(version)
            return nil
        }
        return installForReading(loaded)
    }

    /// `catchUpForReading` with the file's newest version in place of the lock file's durable
    /// version: pinned, then found still the newest and whole (a writer may be writing it, or
    /// have died doing so), then loaded.
    func catchUpToNewestSlot() -> Committed? {
        let current = stateLock.withLock { $0.committed }
        guard let size = try? file.size(), (try? file.showOtherProcessesWrites()) != nil,
              let mapping = try? self.mapping(current.mapping, covering: size),
              let newest = roots(in: mapping, size: size).first else { return nil }
        registry.pin(newest.root.version)
        // Looked at again once pinned, as the file is now (an encrypted file's image as well).
        guard (try? file.showOtherProcessesWrites()) != nil,
              let again = roots(in: mapping, size: size).first, again.root.version == newest.root.version,
              (try? Recovery.verifyCommit(newest.root, mapping: mapping, physicalSize: size, check: uncachedCheck)) != nil,
              let loaded = try? load(newest.root, index: newest.slotIndex, over: mapping) else {
            registry.unpin(newest.root.version)
            return nil
        }
        // Read, but not made the store's newest unless published: a version another process
        // has written and not yet made durable may still fail, and writers build on `committed`.
        guard loaded.slot.version.value <= coordination?.durableVersion ?? 0 else { return loaded }
        return installForReading(loaded)
    }

    /// Makes a version a reader loaded (and pinned) the newest committed one, unless a newer
    /// one got there first.
    private func installForReading(_ loaded: Committed) -> Committed {
        stateLock.withLock { state in
            if state.committed.slot.version < loaded.slot.version { state.committed = loaded }
        }
        return loaded
    }

    // MARK: The root slots

    /// Decodes the version a root slot names, mapping more of the file when it has grown.
    private func load(_ slot: RootSlot, index: Int, over mapping: Mapping) throws(StorageError) -> Committed {
        let mapping = try self.mapping(mapping, covering: slot.logicalSize)
        // Before anything of the version is read through the mapping: it may have written where
        // nodes this process verified were (VerifiedNodes.swift, invariant 2).
        mapping.verified.adopt(slot)
        do throws(StorageError) {
            return Committed(slot: slot, slotIndex: index, top: try Recovery.decodeTop(of: slot, mapping: mapping, check: nodeCheck(mapping)),
                             mapping: mapping)
        } catch {
            throw StorageError(.fileCorrupted, "version \(slot.version), written by another process: \(error.message)", path: path)
        }
    }

    /// The root slots as the header holds them now (through the mapping, which shows other
    /// processes' writes); a slot being rewritten fails its checksum and is left out.
    private static func slots(in mapping: Mapping, sealed: Bool) -> [(slot: RootSlot, index: Int)] {
        (0..<2).compactMap { index in
            let bytes = UnsafeRawBufferPointer(start: mapping.base + FileHeader.slotOffsets[index], count: FileHeader.slotSize(sealed: sealed))
            return RootSlot.decode(bytes, sealed: sealed).map { ($0, index) }
        }
    }

    /// A version's root as the file names it: in a slot (`slotIndex`) or a run header (-1),
    /// and the slot its chain starts from.
    struct FoundRoot {
        var root: RootSlot
        var slotIndex: Int
        var head: (version: UInt64, slotIndex: Int)
    }

    /// Every root the slots and the chains after them name now, newest first (a version in a
    /// slot before the same version in the other slot's chain). `size`: the file's, read by the
    /// caller, who mapped at least that much. Chains are read with pread, not through the
    /// mapping: a writer in another process may cut the file's tail meanwhile, and a run header
    /// no pinned version needs may lie there (OnlineShrink.swift, point 5).
    private func roots(in mapping: Mapping, size: UInt64) -> [FoundRoot] {
        var found: [FoundRoot] = []
        for (slot, index) in Self.slots(in: mapping, sealed: sealing.storesSeals) {
            found.append(FoundRoot(root: slot, slotIndex: index, head: (slot.version.value, index)))
            for root in Recovery.chain(after: slot, file: file, limit: min(size, UInt64(mapping.length)), sealing: sealing) {
                found.append(FoundRoot(root: root, slotIndex: -1, head: (slot.version.value, index)))
            }
        }
        return found.sorted { ($0.root.version, $0.slotIndex) > ($1.root.version, $1.slotIndex) }
    }

    // MARK: Other processes

    /// Whether another process has this file open now.
    package var otherProcessesHaveTheFile: Bool { coordination?.othersPresent ?? false }

    /// What readers of other processes pin now (`openrealm info`): exact versions, sorted and
    /// distinct, and ranges that summarise more; nil when this process cannot see them (no
    /// table in a lock file: an in-memory or compressed realm, a read-only open without a lock
    /// file or without write access to it; ProcessCoordination.swift).
    package func versionsPinnedElsewhere() -> (versions: [UInt64], ranges: [ClosedRange<UInt64>])? {
        guard let coordination, coordination.hasTable else { return nil }
        let pinned = coordination.othersPins()
        // Sorted already: a version pinned in two processes is there twice.
        let versions = pinned.versions.enumerated().filter { $0.offset == 0 || pinned.versions[$0.offset - 1] != $0.element }.map(\.element)
        return (versions, pinned.ranges)
    }

    /// The file format version of the newest version's header (FileHeader.swift).
    package var formatVersion: UInt32 { syncing.withLock { $0 } }

    /// Keeps other openers (of this process too) from opening the realm at `path` (they wait)
    /// until the returned value goes: with a store open and `otherProcessesHaveTheFile` false,
    /// nobody else can reach the file meanwhile, so it may be replaced (compaction). Nil,
    /// without waiting, while someone is opening it.
    package static func holdOffOpeners(path: String) throws(StorageError) -> OpeningHold? {
        try ProcessCoordination.holdOpening(path: path)
    }

    /// Whether any process, this one included, has the realm at `path` open.
    package static func isOpenByAnyProcess(path: String) -> Bool {
        ProcessCoordination.isOpenByAnyProcess(path: path)
    }
}
