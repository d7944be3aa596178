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
// Having just taken the lock, the writer looks for a newer version: when another process
// committed since this one last wrote, the newest version (in a root slot or the chain of run
// headers after one, FileHeader.swift), its free list and its record's reach are loaded from
// the file before the transaction starts (`catchUpWithFile`). Kept leaves and the allocator of
// the older version are dropped.
//
// Reads. A reader begins on the newest durable version any process made: when the lock file's
// durable version is newer than this process's, the reader pins it (publishing its floor),
// checks that it is still the newest, and loads its root (`catchUpForReading`).

/// Why this process holds the write lock of its file. Guarded by the store's `stateLock`.
struct ProcessHold {
    /// Lane holders between `enterWrite` and `releaseLane` (0 or 1).
    var writers = 0
    var locked = false
}

extension Store {
    // MARK: Writing

    /// For the lane's new holder: makes sure this process holds the write lock, waiting on this
    /// thread for other processes, and catches up with what they committed.
    ///
    /// - Throws: `ioFailure` (locking failed), `fileCorrupted` (the newest version in the file
    ///   does not decode); the caller then still holds the lane and nothing else.
    func enterWrite() throws(StorageError) {
        guard let coordination, beginProcessHold() else { return }
        do throws(StorageError) {
            try coordination.lockWriter()
            try lockedForWriting()
        } catch {
            abandonProcessHold()
            throw error
        }
    }

    /// `enterWrite` for a task: while another process holds the write lock, the wait happens on
    /// a dispatch thread, never on the cooperative pool.
    func enterWriteAsync() async throws(StorageError) {
        guard let coordination, beginProcessHold() else { return }
        do throws(StorageError) {
            if !coordination.tryLockWriter() {
                let result: Result<Void, StorageError> = await withCheckedContinuation { continuation in
                    DispatchQueue.global().async {
                        do throws(StorageError) {
                            try coordination.lockWriter()
                            continuation.resume(returning: .success(()))
                        } catch {
                            continuation.resume(returning: .failure(error))
                        }
                    }
                }
                try result.get()
            }
            try lockedForWriting()
        } catch {
            abandonProcessHold()
            throw error
        }
    }

    /// After a failed `enterWrite`: the lock goes again if it was taken (the catch-up failed),
    /// so that the next writer takes it and catches up afresh.
    private func abandonProcessHold() {
        stateLock.withLock {
            processHold.writers -= 1
            unlockProcessIfIdle()
        }
    }

    /// Counts the lane holder in; true when the write lock must be taken first.
    private func beginProcessHold() -> Bool {
        stateLock.withLock {
            processHold.writers += 1
            return !processHold.locked
        }
    }

    private func lockedForWriting() throws(StorageError) {
        stateLock.withLock { processHold.locked = true }
        try catchUpWithFile()
    }

    /// Gives up the write lane: what every end of a write transaction calls.
    func releaseLane() {
        if coordination != nil {
            stateLock.withLock {
                processHold.writers -= 1
                unlockProcessIfIdle()
            }
        }
        lane.release()
    }

    /// Lets other processes write once nothing of this one is under way. Under `stateLock`.
    func unlockProcessIfIdle() {
        guard processHold.locked, processHold.writers == 0, group.unsynced.isEmpty else { return }
        coordination?.unlockWriter()
        processHold.locked = false
    }

    /// With the write lock just taken: loads the newest version from the file when another
    /// process wrote it, so that this process's next commit builds on it and allocates from
    /// its free list.
    private func catchUpWithFile() throws(StorageError) {
        let (current, known) = stateLock.withLock { (committed, group.durableFreeVersion) }
        // Only another process makes the file's newest version newer than this one's own: it
        // published it durable before letting the write lock go, and a newer head is in a slot.
        let published = coordination?.durableVersion ?? 0
        guard published > known || (Self.newestSlot(in: current.mapping)?.slot.version.value ?? 0) > known else { return }
        // Not read for every commit: a stat per commit made each sync write the inode too
        // (W2 -20%). Growth by another process without a commit is caught in `growFile`.
        physicalSize = try file.size()
        guard let newest = roots(in: current.mapping).first else {
            throw StorageError(.fileCorrupted, "neither root slot holds a valid version", path: path)
        }
        guard newest.root.version.value > known else { return }
        try adopt(newest, over: current.mapping)
    }

    /// For a store opened beside other processes: recovery takes the newest version that
    /// verifies, which may be a commit another process has written but not yet made durable
    /// (its sync may still fail). This process starts from the version the lock file names
    /// durable instead. Called at the end of `init`, while every version counts as pinned.
    func startFromPublishedDurable() throws(StorageError) {
        guard let durable = coordination?.durableVersion, durable != 0, durable != committed.slot.version.value,
              let found = root(holding: VersionID(durable), in: committed.mapping) else { return }
        physicalSize = try file.size()
        try adopt(found, over: committed.mapping)
    }

    /// Makes the version `found` names the newest committed one and the allocator's base.
    private func adopt(_ found: FoundRoot, over mapping: Mapping) throws(StorageError) {
        let slot = found.root
        let loaded = try load(slot, index: found.slotIndex, over: mapping)
        let free: FreeSpace
        let depth: UInt32
        do throws(StorageError) {
            free = try Recovery.decodeFreeSpace(of: slot, mapping: loaded.mapping)
            depth = try Recovery.recordDepth(slot, mapping: loaded.mapping)
        } catch {
            throw StorageError(.fileCorrupted, "version \(slot.version), written by another process: \(error.message)", path: path)
        }
        stateLock.withLock {
            committed = loaded
            committedFreeBytes = free.freeBytes
            group.durableFree = free
            group.durableFreeVersion = slot.version.value
            group.durableCoveredFrom = slot.version.value - min(UInt64(depth), slot.version.value)
            group.head = found.head
            group.allocatorStale = false
            // Leaves kept by this process's last commit describe an older version.
            group.lineage &+= 1
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
        let current = stateLock.withLock { committed }
        guard coordination.durableVersion == durable else {
            registry.unpin(version)
            return nil
        }
        if current.slot.version == version { return current }
        guard let found = root(holding: version, in: current.mapping),
              let loaded = try? load(found.root, index: found.slotIndex, over: current.mapping) else {
            registry.unpin(version)
            return nil
        }
        return installForReading(loaded)
    }

    /// `catchUpForReading` with the file's newest version in place of the lock file's durable
    /// version: pinned, then found still the newest, then loaded.
    func catchUpToNewestSlot() -> Committed? {
        let current = stateLock.withLock { committed }
        guard let newest = roots(in: current.mapping).first else { return nil }
        registry.pin(newest.root.version)
        guard let again = roots(in: current.mapping).first, again.root.version == newest.root.version,
              let loaded = try? load(newest.root, index: newest.slotIndex, over: current.mapping) else {
            registry.unpin(newest.root.version)
            return nil
        }
        return installForReading(loaded)
    }

    /// Makes a version a reader loaded (and pinned) the newest committed one, unless a newer
    /// one got there first.
    private func installForReading(_ loaded: Committed) -> Committed {
        stateLock.withLock {
            if committed.slot.version < loaded.slot.version { committed = loaded }
        }
        return loaded
    }

    // MARK: The root slots

    /// Decodes the version a root slot names, mapping more of the file when it has grown.
    private func load(_ slot: RootSlot, index: Int, over mapping: Mapping) throws(StorageError) -> Committed {
        let mapping = try self.mapping(mapping, covering: slot.logicalSize)
        do throws(StorageError) {
            return Committed(slot: slot, slotIndex: index, top: try Recovery.decodeTop(of: slot, mapping: mapping), mapping: mapping)
        } catch {
            throw StorageError(.fileCorrupted, "version \(slot.version), written by another process: \(error.message)", path: path)
        }
    }

    /// The root slots as the header holds them now (through the mapping, which shows other
    /// processes' writes); a slot being rewritten fails its checksum and is left out.
    private static func slots(in mapping: Mapping) -> [(slot: RootSlot, index: Int)] {
        (0..<2).compactMap { index in
            let bytes = UnsafeRawBufferPointer(start: mapping.base + FileHeader.slotOffsets[index], count: FileHeader.slotSize)
            return RootSlot.decode(bytes).map { ($0, index) }
        }
    }

    private static func newestSlot(in mapping: Mapping) -> (slot: RootSlot, index: Int)? {
        slots(in: mapping).max { $0.slot.version < $1.slot.version }
    }

    /// A version's root as the file names it: in a slot (`slotIndex`) or a run header (-1),
    /// and the slot its chain starts from.
    struct FoundRoot {
        var root: RootSlot
        var slotIndex: Int
        var head: (version: UInt64, slotIndex: Int)
    }

    /// Every root the slots and the chains after them name now, newest first (a version in a
    /// slot before the same version in the other slot's chain). Reads the file's size: the
    /// chains are read through the mapping, which must not be touched past the end of the file.
    private func roots(in mapping: Mapping) -> [FoundRoot] {
        guard let size = try? file.size() else { return [] }
        var found: [FoundRoot] = []
        for (slot, index) in Self.slots(in: mapping) {
            found.append(FoundRoot(root: slot, slotIndex: index, head: (slot.version.value, index)))
            for root in Recovery.chain(after: slot, base: mapping.base, limit: min(size, UInt64(mapping.length))) {
                found.append(FoundRoot(root: root, slotIndex: -1, head: (slot.version.value, index)))
            }
        }
        return found.sorted { ($0.root.version, $0.slotIndex) > ($1.root.version, $1.slotIndex) }
    }

    private func root(holding version: VersionID, in mapping: Mapping) -> FoundRoot? {
        roots(in: mapping).first { $0.root.version == version }
    }

    // MARK: Other processes

    /// Whether another process has this file open now.
    package var otherProcessesHaveTheFile: Bool { coordination?.othersPresent ?? false }

    /// Keeps other processes from opening the realm at `path` (they wait) until the returned
    /// value goes: with a store of this process open and `otherProcessesHaveTheFile` false,
    /// nobody else can reach the file meanwhile, so it may be replaced (compaction).
    package static func holdOffOpeners(path: String) throws(StorageError) -> OpeningHold {
        try ProcessCoordination.holdOpening(path: path)
    }

    /// Whether any process, this one included, has the realm at `path` open.
    package static func isOpenByAnyProcess(path: String) -> Bool {
        ProcessCoordination.isOpenByAnyProcess(path: path)
    }
}
