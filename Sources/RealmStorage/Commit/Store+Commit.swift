import Dispatch

extension Store {
    /// A write transaction encoded for the file, not yet written (CommitWriter.swift), with
    /// the edits it came from (WriteTransaction+Commit.swift).
    struct PreparedCommit {
        /// Its `data` is emptied once written (see `writeAndPublish`).
        var commit: CommitWriter.Prepared
        let top: TopState
        /// The allocator after this commit; the store's once the commit is written.
        let free: FreeSpace
        let base: Committed
        let lineage: UInt64
        /// The durable version when it was prepared: its record lists every extent written
        /// after that one (Store+GroupCommit.swift).
        let coveredFrom: UInt64
        /// The leaf buffers encoded, kept for the next transaction once this is written.
        let written: DecodedLeaves?
        /// The leaves the transaction was handed and what it freed: those it did not touch join
        /// `written` once the commit is out (`DecodedLeaves.carryOver`, done after the write so
        /// that it overlaps the device's).
        let carried: (older: DecodedLeaves, freed: FreedNodes)?
        /// The version does not follow the chain of run headers (it has no run header): its sync
        /// writes its root into a slot.
        let needsSlot: Bool
        /// When its encoding began (`DispatchTime` nanoseconds), 0 when nobody observes
        /// commits (CommitObservers.swift).
        let started: UInt64
        /// Held until the nodes are written, and let go with this value: freeing the trees
        /// then overlaps the device's write.
        let edits: WriteEdits
    }


    /// What the versions of one chain may write before a version starts a new one.
    static let chainBytesLimit: UInt64 = 256 << 10

    /// Encodes a finished write's edits as the next version. Runs on the committer's thread or
    /// task, with the lane held; touches no file.
    func prepareCommit(_ edits: WriteEdits) throws(StorageError) -> PreparedCommit {
        let started = commitObservers.isActive ? DispatchTime.now().uptimeNanoseconds : 0
        let base = edits.base
        let version = edits.version
        var top = edits.top
        let (pins, spacePins, spaceRanges, carried, durable, head, chainBytes, nonce) = try groupPins(base: base, lineage: edits.lineage)
        let writer = CommitWriter(version: version, free: free, sealing: sealing)
        let context = edits.context
        var deltasAllowed = stateLock.withLock { $0.group.freeListDeltas }
        // While the file shrinks: allocations stay below the limit, and a free list chain with
        // a node past it is replaced by a full list (OnlineShrink.swift, points 2 and 3); not
        // while the shrink waits for room (point 7).
        var shrinkLimit = shrink?.bindingLimit
        if let limit = shrinkLimit, writer.free.chain.contains(where: { $0.ref.offset + $0.length > limit }) {
            if shrink!.replacedFreeList {
                // The full list the last commit wrote went past the limit too: no room below.
                shrink!.waitForRoom()
                shrinkLimit = nil
            } else {
                deltasAllowed = false
                shrink!.replacedFreeList = true
            }
        } else if shrinkLimit != nil {
            shrink!.replacedFreeList = false
        }
        writer.free.shrinkLimit = shrinkLimit

        func release(_ ref: Ref, _ kind: NodeKind) throws(StorageError) {
            guard !ref.isNone else { return }
            let node = try context.node(ref, kind)
            writer.free.release(offset: ref.offset, length: UInt64(sealing.footprint(node.length)), firstVersion: node.version,
                                endVersion: version.value)
        }

        // 1. Everything the new version no longer reaches.
        for entry in edits.freed.entries {
            writer.free.release(offset: entry.ref.offset, length: entry.length, firstVersion: entry.version, endVersion: version.value)
        }
        try release(base.slot.topRef, .top)
        // The base's free list stays reachable when this version writes a delta on top of it;
        // a full list releases the whole chain (FreeList+Chain.swift).
        assert(writer.free.chain.last?.ref ?? base.slot.freeListRef == base.slot.freeListRef,
               "the allocator's free list is not the base version's")
        if !deltasAllowed || writer.free.wantsFullList {
            if writer.free.chain.isEmpty {
                try release(base.slot.freeListRef, .freeList)
            } else {
                writer.free.releaseChain(endVersion: version.value)
            }
        }
        try release(base.slot.commitRecordRef, .commitRecord)
        try release(base.slot.runHeader, .runHeader)
        if edits.newSchemaBlob != nil { try release(top.schemaBlob, .blob) }
        writer.free.releaseUnreachable(pinned: spacePins, ranges: spaceRanges)
        // The run header first, where the base version reserved it (FileHeader.swift), unless
        // this version starts a new chain: when the chain is long, or its versions wrote (and
        // so keep from reuse) 256 KiB. Chains pay off for small commits, whose sync is mostly
        // the cost of each place written; a large commit's is its bytes, and chaining large
        // commits only grew the file (W1: 43 MiB → 66 MiB with 1 MiB chains). A version whose
        // root goes into a slot has no run header.
        let wantsSlot = options.chainLength <= 1 || version.value - head >= UInt64(options.chainLength)
            || chainBytes >= Self.chainBytesLimit
        let chained = writer.beginRun(reserved: wantsSlot ? nil : base.slot.nextRun)

        // 2. The changed trees, bottom-up.
        for (key, state) in edits.states {
            guard let t = top.tables.firstIndex(where: { $0.key == key }) else { continue }
            // Commit even trees without buffers: an edit can leave a committed subtree as the
            // new root (a root with one child collapses onto it), and its ref must be recorded.
            top.tables[t].clusterRoot = try state.cluster.commit(to: writer)
            for c in state.indexes.indices where state.indexes[c] != nil {
                top.tables[t].indexRoots[c] = try state.indexes[c]!.commit(to: writer)
            }
        }

        // 3. The change history, the schema blob, the top node.
        top.history = try History.advance(top.history, adding: edits.changes, from: base.slot.version, to: version,
                                          pinned: pins, context: context, release: release, place: writer.place, relocatingPast: shrinkLimit)
        if let blob = edits.newSchemaBlob {
            top.schemaBlob = try writer.place(BlobNode.encode(blob, version: version))
        }
        let topRef = try writer.place(top.encoded(sealed: writer.storesSeals))
        var reused: [UInt8] = []
        swap(&reused, &commitBuffer)
        let prepared = writer.finish(topRef: topRef, reusing: consume reused, carrying: carried, coveredFrom: durable,
                                     link: base.slot.commitRecordChecksum, nonce: nonce)
        return PreparedCommit(commit: prepared, top: top, free: writer.free, base: base, lineage: edits.lineage, coveredFrom: durable,
                              written: context.written, carried: context.reuse.map { ($0, edits.freed) }, needsSlot: !chained,
                              started: started, edits: edits)
    }

    /// Writes a prepared commit's nodes (not its slot) and makes it the version the next
    /// writer builds on; the sync queue makes it durable and then calls `done` (or, when a
    /// thread waits for it, `waiter`'s, the waiting threads do: `awaitDurable`). Lets the lane
    /// go once the commit is queued when `groupable`, else only once it is durable (so no
    /// other transaction shares its sync); a throw lets it go at once.
    func writeAndPublish(_ prepared: consuming PreparedCommit, lane: consuming LaneHold, groupable: Bool, waiter: DurabilityWaiter? = nil,
                         done: @escaping @Sendable (Result<VersionID, StorageError>) -> Void) throws(StorageError) {
        // Kept for the next commit unless it was huge; set first, while the lane is surely
        // held (after `lane.release()` the next writer may already be swapping it out).
        if prepared.commit.data.capacity <= 64 << 20 { commitBuffer = prepared.commit.data }
        try invalidateFailedRoots()
        try cutFreeTail(before: prepared.commit.slot)
        try growFile(to: prepared.commit.slot.logicalSize)
        let mapping: Mapping
        do throws(StorageError) {
            try prepared.commit.writeNodes(to: file, startWriteback: waiter != nil && options.durability == .full)
            mapping = try self.mapping(prepared.base.mapping, covering: prepared.commit.slot.logicalSize)
        } catch {
            // Its run header may be whole in the file: zeroed now (the lane and the write lock
            // are held, and the place is free in the base version) and, durably, before the
            // next write; a retry of this version gets another record checksum (Store+GroupCommit.swift).
            let runHeader = prepared.commit.runHeader
            if let header = runHeader { try? file.write([UInt8](repeating: 0, count: RunHeader.size), at: header.offset) }
            stateLock.withLock { state in
                if let header = runHeader { state.group.pendingInvalidation.append((header.offset, RunHeader.size)) }
                state.group.nonce = .random(in: .min ... .max)
            }
            throw error
        }
        // Before the version is published: readers of it trust these nodes' bits.
        if verifiesNodes { mapping.verified.wrote(prepared.commit.slot, base: prepared.base.slot, offsets: prepared.commit.nodeOffsets) }
        stateLock.withLock { $0.noteCommitted(prepared.commit.slot, base: prepared.base.slot) }
        if let written = prepared.written, let carried = prepared.carried { written.carryOver(carried.older, freed: carried.freed) }
        let state = Committed(slot: prepared.commit.slot, slotIndex: -1, top: prepared.top, mapping: mapping)
        let lane = Handoff(lane)
        let finish: @Sendable (Result<VersionID, StorageError>) -> Void
        if groupable {
            finish = done
        } else {
            // The hold keeps the store until the sync job has run; the job holds it anyway
            // meanwhile. Should the commit never be queued (a throw below), the handoff goes
            // with `finish`, and the lane with it.
            finish = { (result: Result<VersionID, StorageError>) in
                lane.take().release()
                done(result)
            }
        }
        // Taken over before the commit is queued: a commit that keeps the lane until it is
        // durable has it released by the sync job, which may run before this thread gets past
        // `enqueueUnsynced`. If that throws (the lineage failed meanwhile), the next writer
        // resets the allocator and, being on another lineage, ignores the leaves.
        free = prepared.free
        decodedLeaves = prepared.written
        try enqueueUnsynced(state, prepared, waiter: waiter, finish)
        // Written: `commitBuffer` becomes the only reference to the bytes before the next
        // writer can take the lane, so that its commit fills the same storage.
        prepared.commit.data = []
        if groupable { lane.take().release() }
    }

    /// Commits with the lane held and waits on this thread until the commit is durable: the
    /// thread syncs it, or another committing thread does (Store+GroupCommitThreads.swift).
    func commitWaiting(_ finished: consuming FinishedWrite, groupable: Bool = true) throws(StorageError) -> VersionID {
        let durable = DurabilityWaiter()
        // The device is writing the commit already when this returns (`startWriteback`, where
        // the system has it): the trees went with the prepared commit meanwhile, not after
        // the sync.
        try writeAndPublish(prepareCommit(finished.edits), lane: finished.lane, groupable: groupable, waiter: durable, done: durable.deliver)
        return try awaitDurable(durable)
    }

    /// Commits with the lane held: encodes on the caller, writes on the write queue, and
    /// calls `done` from the sync queue once durable (or failed).
    ///
    /// `writeHere`: the caller may block (its own serial queue, never the cooperative pool), so
    /// the nodes are written right here, saving a hop to the write queue per commit.
    func commit(_ finished: consuming FinishedWrite, groupable: Bool, writeHere: Bool = false,
                then done: @escaping @Sendable (Result<VersionID, StorageError>) -> Void) {
        // A throw has let the lane go by the time `done` hears of it.
        let prepared: PreparedCommit
        do throws(StorageError) {
            prepared = try prepareCommit(finished.edits)
        } catch {
            _ = consume finished
            done(.failure(error))
            return
        }
        if writeHere {
            do throws(StorageError) {
                try writeAndPublish(prepared, lane: finished.lane, groupable: groupable, done: done)
            } catch {
                done(.failure(error))
            }
            return
        }
        // Two handoffs, each taken as the job's argument: a prepared commit read out of a
        // value the job kept would be a second reference to its bytes while the next writer
        // fills `commitBuffer`, which would then copy them. Unowned: the hold in `lane` keeps
        // the store alive until the job takes it, and the job must not hold the store once it
        // has run (its block may be freed after the sync answered, and a committer that closes
        // the file right after its answer must find it closed, as in Store+GroupCommit.swift).
        let handoff = Handoff(prepared)
        let lane = Handoff(finished.lane)
        writeQueue.async { [unowned self] in
            do throws(StorageError) {
                try self.writeAndPublish(handoff.take(), lane: lane.take(), groupable: groupable, done: done)
            } catch {
                done(.failure(error))
            }
        }
    }

    /// `mapping`, or a larger one when it does not reach `size` (older mappings stay valid for
    /// the versions that read through them).
    func mapping(_ mapping: Mapping, covering size: UInt64) throws(StorageError) -> Mapping {
        size > UInt64(mapping.length) ? try file.map(length: Recovery.reservation(for: size, minimum: options.minimumMapping)) : mapping
    }

    /// Grows the file ahead of need, so that steady writes do not resize it every commit.
    /// A step of 1/16 of the file (64 KiB to 16 MiB) makes a growing file resize about every
    /// 6% of growth while leaving at most that much unused at its end.
    private func growFile(to needed: UInt64) throws(StorageError) {
        guard needed > physicalSize else { return }
        // Another process may have grown it since (a commit of its that failed), or cut it
        // (online shrinking, Store+Shrink.swift): its size now, never shrunk here.
        if coordination != nil {
            physicalSize = try file.size()
            guard needed > physicalSize else { return }
        }
        let step = min(max(physicalSize / 16, 64 << 10), 16 << 20)
        let size = (max(needed, physicalSize + step) + 4095) & ~4095
        try file.setSize(size)
        physicalSize = size
    }

    /// Writes `slot` into root slot `index` and points the selector at it (no sync). A file
    /// of format 1 becomes format 2 first, durably: a head's slot names the chain after it,
    /// which a format 1 reader would not follow, and the two fields lie in different sectors,
    /// so a power cut could keep the slot and lose the format. `fileFormat`: the file's, which
    /// `syncing` holds.
    func writeSlot(_ slot: RootSlot, slotIndex index: Int, fileFormat: inout UInt32) throws(StorageError) {
        // Never up to format 4: the nodes of an older file carry no checksums.
        if fileFormat < FileHeader.freeListDeltaFormat {
            try file.write(withUnsafeBytes(of: FileHeader.freeListDeltaFormat.littleEndian, Array.init), at: UInt64(FileHeader.formatVersionOffset))
            if options.durability == .full { try file.sync() }
            fileFormat = FileHeader.freeListDeltaFormat
            stateLock.withLock { $0.group.freeListDeltas = true }
        }
        try CommitWriter.Prepared.writeSlot(slot, to: file, slotIndex: index, sealed: sealing.storesSeals)
    }
}

/// Moves a value owned by the lane holder to the queue or closure that continues its work;
/// the value may be non-copyable (a `LaneHold`), and is taken once.
final class Handoff<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: the sender gives the value up; only the receiving job touches it.
    private var value: Value?
    init(_ value: consuming Value) { self.value = consume value }
    /// The value, given up by the handoff (which would otherwise hold it until it goes). A
    /// second take is a bug of the engine's, never of data.
    func take() -> Value {
        guard let value = value.take() else { preconditionFailure("a handoff's value was taken twice") }
        return value
    }
}
