import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One open realm file: its mapping, its newest committed version, the versions readers
/// pin, and the write lane. There is one `Store` per file per process; `open` returns the
/// existing one when the file is already open here.
///
/// Readers (`beginRead`) pin the newest version and read the mapping without locks. One
/// writer at a time (`beginWrite`) builds the next version copy-on-write and commits it with
/// one sync (FileHeader.swift has the argument for why that is crash-safe).
///
/// Other processes may have the file open at the same time: they meet in the lock file
/// beside it (ProcessCoordination.swift, Store+Process.swift). One of them writes at a time;
/// readers see what the others made durable when they begin.
package final class Store: @unchecked Sendable {
    // @unchecked: `free`, `physicalSize`, `commitBuffer`, `decodedLeaves` and `shrink` belong
    // to whoever holds the write lane, which the compiler cannot see; what locks guard is
    // inside them (`stateLock`, `syncing`); everything else is immutable after init.
    // @exclusivity(unchecked) on the lane's: the lane already excludes overlapping access, and
    // the dynamic checks were a few percent of a small commit's instructions (callgrind, W2).
    package let path: String
    package let options: StoreOptions
    let file: StorageFile
    /// What an encrypted file's decrypted pages have done (File/EncryptedFile.swift); nil for a
    /// plain file.
    package var decryptedPages: FaultRegionCounts? { (file as? EncryptedFile)?.counts }
    /// This process's part in the lock file; nil for in-memory realms.
    let coordination: ProcessCoordination?
    /// The newest published version and what is known with it, group commit's state and the
    /// process write lock's (`State`).
    let stateLock: Locked<State>
    package let registry: VersionRegistry
    package let lane = WriteLane()

    /// A published version as the store keeps it. A class: it is handed around whole (to
    /// every transaction that begins, to the sync queue), and copying the struct it was
    /// retained each of its references, 21 atomic operations per small commit (callgrind, W2).
    final class Committed: Sendable {
        let slot: RootSlot
        let slotIndex: Int
        let top: TopState
        let mapping: Mapping

        init(slot: RootSlot, slotIndex: Int, top: TopState, mapping: Mapping) {
            self.slot = slot
            self.slotIndex = slotIndex
            self.top = top
            self.mapping = mapping
        }

        /// The same version, with its root in slot `index`.
        func inSlot(_ index: Int) -> Committed {
            Committed(slot: slot, slotIndex: index, top: top, mapping: mapping)
        }
    }

    /// What `stateLock` guards; reached only through `stateLock.withLock`.
    struct State {
        /// The newest published (durable) version: what readers begin on.
        var committed: Committed
        /// Free bytes of the newest version, for `spaceUsage` (unlike `free`, which only the
        /// write lane's holder touches).
        var committedFreeBytes: UInt64
        /// The logical size of the newest version, beside its free bytes: what starts an
        /// online shrink (Store+Shrink.swift).
        var committedLogicalSize: UInt64
        /// Versions written but not yet durable, and what makes them so (Store+GroupCommit.swift).
        var group: GroupState
        /// Whether this process holds the write lock of the file, and why (Store+Process.swift).
        var processHold = ProcessHold()
        /// `shrinkCounts`.
        var shrinkStats = ShrinkCounts()
        /// The latest versions known whole: verified (`verifyIntegrity`) or committed here on
        /// top of one that was, as (version, commit record checksum).
        var wholeVersions: [(version: UInt64, record: UInt64)] = []
        /// `waitUntilPublished` callers, answered after the next sync.
        var publishWaiters: [CheckedContinuation<Bool, Never>] = []
    }

    /// The online shrink under way, if any (OnlineShrink.swift): the write lane's holder's.
    @exclusivity(unchecked) var shrink: ShrinkState?
    @exclusivity(unchecked) var free: FreeSpace
    @exclusivity(unchecked) var physicalSize: UInt64
    /// The buffer the last commit gathered its writes in, kept for the next: a fresh one of
    /// a few hundred KiB per commit cost a page fault per 4 KiB touched (see CommitWriter).
    @exclusivity(unchecked) var commitBuffer: [UInt8] = []
    /// The leaf buffers the last commit encoded, for the next write transaction if it builds
    /// on that commit (DecodedLeaves.swift). The write lane's holder's, like `free`.
    @exclusivity(unchecked) var decodedLeaves: DecodedLeaves?
    /// Whether the file's nodes carry checksums (format 4 on): files of older formats keep
    /// their format and are read unverified (NodeFormat.swift).
    let verifiesNodes: Bool
    /// How the file's nodes are sealed (Nodes/NodeSealing.swift): what every commit stamps,
    /// every read verifies, and what each node takes in the file. The one place the store keeps
    /// it: an encrypted file's tags under its key, else `options.sealing` (checksums, or tags on a
    /// plain file in tests).
    let sealing: NodeSealing
    /// Writes the nodes of async commits and grows the file: blocking I/O kept off the
    /// caller's executor (the cooperative pool, for a task).
    let writeQueue: DispatchQueue
    /// Writes root slots and syncs, one group of commits at a time.
    let syncQueue: DispatchQueue
    /// Held while a group is synced, on the sync queue or by a committer syncing itself. What
    /// it guards: the format version in the file's header (1 until the first slot write makes
    /// it 2, `writeSlot`), which only a sync changes.
    let syncing: Locked<UInt32>
    /// Told after every sync (PublishedVersions.swift).
    let observers = VersionObservers()
    /// Told how each commit went, when anyone asks (CommitObservers.swift).
    package let commitObservers = CommitObservers()

    /// How reads through `mapping` verify node checksums (VerifiedNodes.swift).
    @inline(__always)
    func nodeCheck(_ mapping: Mapping) -> NodeCheck {
        mapping.verified.check(enabled: verifiesNodes, sealing: sealing)
    }

    /// Verifying every time, for a version not yet accounted for in any bitmap.
    var uncachedCheck: NodeCheck { verifiesNodes ? .always(sealing) : .never }

    // MARK: Opening

    /// Opens (or creates) the realm file at `path`.
    ///
    /// - Throws: `invalidDatabase` for anything that is not a realm file (empty, truncated,
    ///   foreign, a directory), `unsupportedFormatVersion`, `fileCorrupted` when no root slot
    ///   verifies, `fileNotFound`, `permissionDenied`, `incompatibleLockFile` (a lock file another
    ///   process made with a different layout, or another process has the file open through a
    ///   lock file deleted or replaced since), `alreadyOpen` (the lock file has no free reader
    ///   slot: 127 processes have the file open).
    package static func open(path: String, options: StoreOptions = StoreOptions()) throws(StorageError) -> Store {
        try StoreRegistry.shared.open(path: path, options: options)
    }

    init(path: String, options: StoreOptions) throws(StorageError) {
        self.path = path
        self.options = options
        // An encrypted file's nodes carry tags under its key (EncryptionHeader.swift, E4).
        var sealing = options.sealing
        writeQueue = DispatchQueue(label: "openrealm.write")
        syncQueue = DispatchQueue(label: "openrealm.sync")
        let file: StorageFile
        let coordination: ProcessCoordination?
        var created = false
        if let key = options.encryptionKey { try EncryptionHeader.validate(key) }
        if options.durability == .memOnly {
            let memory = try MemoryFile(name: path)
            try Store.writeGenesis(memory, sealing: options.sealing)
            file = options.fileWrapper?(memory) ?? memory
            coordination = nil
        } else if CompressedFormat.isCompressedFile(at: path) {
            // Immutable: nothing to coordinate with other processes, and nothing created
            // beside it (no lock file).
            // An encrypted copy's key is checked against its header before any block is read
            // (CompressedFormat.swift, invariant 6); its image is a plain realm file.
            guard options.readOnly else { throw CompressedFile.readOnly(path) }
            file = try CompressedFile(path: path, key: options.encryptionKey, cacheSize: options.compressedCacheSize,
                                      reading: options.compressedReading, wrapper: options.fileWrapper)
            coordination = nil
        } else {
            // Joined before the realm file is created or read: the first process creates it
            // (atomically), and none reads it before it has a reader slot.
            coordination = try ProcessCoordination(path: path, readOnly: options.readOnly, createsLockFile: options.createsLockFile,
                                                   creationFailure: options.lockFileCreationFailure)
            if access(path, F_OK) != 0 {
                guard options.create, !options.readOnly else {
                    throw StorageError(.fileNotFound, "no realm file exists at this path", path: path, errno: ENOENT)
                }
                created = try Store.create(path: path, key: options.encryptionKey, sealing: options.sealing)
            }
            let posix = try PosixFile(path: path, mode: options.readOnly ? .readOnly : .openExisting)
            let disk = options.fileWrapper?(posix) ?? posix
            // The key is checked against the header before anything else is read (E8). A test's
            // layer goes under the cipher: its tears and losses hit the ciphertext.
            if let keys = try EncryptionHeader.keys(of: posix, key: options.encryptionKey, path: path) {
                file = EncryptedFile(inner: disk, cipher: keys.pages, path: path, reading: options.encryptedReading,
                                     cacheSize: options.encryptedCacheSize)
                sealing = .authenticated(keys.nodes)
            } else {
                file = disk
            }
            // Before anything reads or settles the file: a process that has it open through a
            // lock file deleted or replaced since is refused here (ProcessCoordination.swift).
            try coordination?.joinRealmFile()
        }
        self.coordination = coordination
        self.file = file
        self.sealing = sealing
        registry = VersionRegistry(coordination: coordination)
        let alone = coordination?.openedAlone ?? true
        // With other processes writing, every version counts as pinned while this one reads
        // the newest (the reader table's argument, ProcessCoordination.swift).
        if !alone { coordination?.pinEverything(from: 1) }
        defer { if !alone { coordination?.pinEverything(from: 0) } }
        // A compressed copy's blocks are verified as they are decompressed: checking the commit's
        // extents would decompress the whole image at open.
        let recovered = try Recovery.open(file: file, path: path, minimumMapping: options.minimumMapping,
                                          checkExtents: !(file is CompressedFile), sealing: sealing)
        // Known on the disk: created just now, or what the processes before named synced in
        // the lock file. Else synced here (`settle`), when this store syncs at all.
        var synced = created || coordination?.previousSynced == recovered.slot.version.value
        if alone, !options.readOnly, options.durability != .memOnly {
            let sync = options.durability == .full && !synced
            try Store.settle(recovered, of: file, sync: sync)
            synced = synced || sync
        }
        if alone { coordination?.publishDurable(recovered.slot.version.value, synced: synced) }
        coordination?.finishedOpening()
        let committed = Committed(slot: recovered.slot, slotIndex: recovered.slotIndex, top: recovered.top, mapping: recovered.mapping)
        free = recovered.free
        var group = GroupState(durableFree: recovered.free, durableFreeVersion: recovered.slot.version.value,
                               durableCoveredFrom: recovered.coveredFrom, head: recovered.head)
        syncing = Locked(recovered.format)
        verifiesNodes = recovered.format >= FileHeader.nodeChecksumFormat
        group.freeListDeltas = recovered.format >= FileHeader.freeListDeltaFormat
        stateLock = Locked(State(committed: committed, committedFreeBytes: recovered.free.freeBytes,
                                 committedLogicalSize: recovered.slot.logicalSize, group: group))
        physicalSize = recovered.physicalSize
        if !alone { try startFromPublishedDurable() }
    }

    /// Zeroing that a failed sync could not finish (Store+GroupCommit.swift) is still owed to the
    /// file: done here, as the store closes, when this process may still write to it, that is
    /// when no other process has had the write lock since (that one's catch-up then made those
    /// roots unreachable, and may have written over their places).
    deinit {
        // Under the lock: the sync job that last touched the group may have run on another thread.
        let pending = stateLock.withLock { $0.group.pendingInvalidation }
        guard !pending.isEmpty else { return }
        if let coordination {
            guard coordination.tryLockWriter() else { return }
            defer { coordination.unlockWriter() }
            guard !coordination.tookOverFromOther else { return }
        }
        try? writeZeros(pending)
    }

    /// Creates an empty realm atomically: written and synced under a temporary name, then
    /// linked into place, so a crash never leaves a half-written file at `path`.
    /// Returns false when another opener created it first (then that file is the one to open).
    private static func create(path: String, key: [UInt8]?, sealing: NodeSealing) throws(StorageError) -> Bool {
        // An encrypted file's salt is new with the file (EncryptionHeader.swift).
        let salt = try key.map { _ throws(StorageError) in try SecureRandom.bytes(EncryptionKeys.saltLength) }
        return try PosixFile.createAtomically(at: path, suffix: ".creating", allowExisting: true) { (file) throws(StorageError) in
            if let key, let salt {
                let keys = EncryptionKeys(userKey: key, salt: salt)
                try writeGenesis(EncryptedFile(inner: file, cipher: keys.pages, path: path),
                                 header: EncryptionHeader.initial(salt: salt, keys: keys), sealing: .authenticated(keys.nodes))
            } else {
                try writeGenesis(file, sealing: sealing)
            }
        }
    }

    /// Makes the version recovery chose the file's last, durably, before anything is built on
    /// it (`sync`: unless it is known durable). Zeroes the root slot and the run header
    /// recovery refused (a newer commit that never fully reached the disk): otherwise a later
    /// commit that rewrote the same bytes could make one verify again after another crash.
    /// And syncs even when there is nothing to zero: the chosen version may be one a killed
    /// process wrote and never synced, whole only in the page cache, and the next commit's
    /// record vouches for its own writes only (a crash before its sync could leave it whole on
    /// the disk and the version it builds on torn).
    private static func settle(_ recovered: Recovery.Result, of file: StorageFile, sync: Bool) throws(StorageError) {
        var zeroed = false
        if let refused = recovered.refusedSlot {
            try file.write([UInt8](repeating: 0, count: FileHeader.slotSize), at: UInt64(FileHeader.slotOffsets[refused]))
            zeroed = true
        }
        if let header = recovered.refusedRunHeader {
            try file.write([UInt8](repeating: 0, count: RunHeader.size), at: header)
            zeroed = true
        }
        if sync || zeroed { try file.sync() }
    }

    /// Writes the header and version 1 (no tables) into an empty file.
    static func writeGenesis(_ file: StorageFile, header: [UInt8] = FileHeader.initial(), sealing: NodeSealing) throws(StorageError) {
        let writer = CommitWriter(version: VersionID(1), free: FreeSpace(extents: [], logicalSize: UInt64(FileHeader.size), alignment: UInt64(sealing.alignment)),
                                  sealing: sealing)
        let topRef = try writer.place(TopState.empty(version: VersionID(1)).encoded(sealed: writer.storesSeals))
        let commit = writer.finish(topRef: topRef)
        try file.setSize(max(commit.slot.logicalSize, UInt64(FileHeader.size)))
        try file.write(header, at: 0)
        try commit.write(to: file, slotIndex: 0, sealed: writer.storesSeals)
    }

    // MARK: Reading

    /// Begins a read transaction on the newest committed version, made by this process or
    /// another.
    package func beginRead() -> ReadTransaction {
        var attempts = 0
        while true {
            let snapshot: Committed = stateLock.withLock { state in
                registry.pin(state.committed.slot.version)
                return state.committed
            }
            // Loaded after the pin was published (ProcessCoordination.swift).
            guard let durable = coordination?.durableVersion, durable > snapshot.slot.version.value else {
                return ReadTransaction(store: self, slot: snapshot.slot, top: snapshot.top, mapping: snapshot.mapping)
            }
            registry.unpin(snapshot.slot.version)
            attempts += 1
            // Commits in a tight stream can move the durable version on between pin and check
            // again and again; a lock file whose durable version names no root slot (left by a
            // process that replaced the file) never settles. Both end in the header's newest.
            if let newer = attempts > 1_000 ? catchUpToNewestSlot() : catchUpForReading(durable) {
                return ReadTransaction(store: self, slot: newer.slot, top: newer.top, mapping: newer.mapping)
            }
            if attempts > 100 { usleep(50) }
        }
    }

    /// Whether the file at `path` is open in this process.
    package static func isOpen(path: String) -> Bool { StoreRegistry.shared.isOpen(path: path) }

    /// What the region of an LZ4-compressed copy has done; nil for other files.
    package var compressedCounts: FaultRegionCounts? { (file as? CompressedFile)?.counts }

    /// The newest committed version.
    package var latestVersion: VersionID { stateLock.withLock { $0.committed.slot.version } }

    /// Distinct versions pinned by readers now.
    package var activeVersionCount: Int { registry.activeVersionCount }

    /// The file's size in bytes and the bytes free inside it at the newest version.
    package func spaceUsage() throws(StorageError) -> (fileSize: UInt64, freeBytes: UInt64) {
        let freeBytes = stateLock.withLock { $0.committedFreeBytes }
        return (try file.size(), freeBytes)
    }

    // MARK: Writing

    /// Begins the write transaction, waiting (this thread) for the write lane.
    ///
    /// - Throws: `permissionDenied` when the store was opened read-only;
    ///   `incompatibleLockFile` when the lock file was deleted or replaced while this process
    ///   had the file open (nothing is written; reads go on); what catching up with other
    ///   processes throws (`enterWrite`).
    /// `joiningRelay`: the caller's write may be added to the transaction of the thread before
    /// it in line, if that thread passes it (WriteTransaction+Relay.swift); its part then begins at a
    /// savepoint of that transaction.
    package func beginWrite(joiningRelay: Bool = false) throws(StorageError) -> WriteTransaction {
        guard !options.readOnly else {
            throw StorageError(.permissionDenied, "the realm was opened read-only", path: path)
        }
        if let relayed = lane.acquire(acceptingRelay: joiningRelay) {
            relayed.beginRelayedPart()
            return relayed
        }
        let hold: LaneHold
        do throws(StorageError) {
            hold = try enterWrite()
        } catch {
            lane.release()
            throw error
        }
        return startWrite(hold)
    }

    /// Begins the write transaction, suspending the task (not blocking its thread) until the
    /// write lane is free; writers are served in arrival order.
    ///
    /// - Throws: `permissionDenied` (read-only), `cancelled` (the task was cancelled while it
    ///   waited; it then holds nothing), `incompatibleLockFile` and the rest as `beginWrite`.
    package func beginWriteAsync() async throws(StorageError) -> sending WriteTransaction {
        guard !options.readOnly else {
            throw StorageError(.permissionDenied, "the realm was opened read-only", path: path)
        }
        try await lane.acquire()
        let hold: LaneHold
        do throws(StorageError) {
            hold = try await enterWriteAsync()
        } catch {
            lane.release()
            throw error
        }
        return startWrite(hold)
    }

    /// The write transaction of whoever just got the lane: it builds on the newest version
    /// written, durable or not (Store+GroupCommit.swift).
    private func startWrite(_ hold: consuming LaneHold) -> WriteTransaction {
        let (base, lineage, resetAllocator, space) = stateLock.withLock { state in
            let reset = state.group.allocatorStale
            state.group.allocatorStale = false
            return (state.group.tip ?? state.committed, state.group.lineage, reset ? state.group.durableFree : nil,
                    (state.committedLogicalSize, state.committedFreeBytes))
        }
        if let resetAllocator { free = resetAllocator }
        steerShrink(logicalSize: space.0, freeBytes: space.1)
        // The kept leaves are taken whole (the transaction edits them); they only fit a
        // transaction built on the commit that kept them (DecodedLeaves.swift).
        let kept = decodedLeaves
        decodedLeaves = nil
        let reuse = kept.flatMap { kept in
            kept.version == base.slot.version.value && kept.lineage == lineage && resetAllocator == nil ? kept : nil
        }
        return WriteTransaction(store: self, base: base, lineage: lineage, reuse: reuse, lane: hold)
    }
}
