extension Store {
    /// Writes `transaction` as the next version (CommitWriter.swift describes the steps).
    func commit(_ transaction: WriteTransaction) throws(StorageError) {
        let base = transaction.base
        let version = transaction.version
        var top = transaction.top
        let pins = stateLock.withLock { registry.pinned(including: base.slot.version) }
        let writer = CommitWriter(version: version, free: free)
        let context = transaction.context

        func release(_ ref: Ref, _ kind: NodeKind) throws(StorageError) {
            guard !ref.isNone else { return }
            let node = try context.node(ref, kind)
            writer.free.release(offset: ref.offset, length: UInt64(node.length), firstVersion: node.version, endVersion: version.value)
        }

        // 1. Everything the new version no longer reaches.
        for entry in transaction.freed.entries {
            writer.free.release(offset: entry.ref.offset, length: entry.length, firstVersion: entry.version, endVersion: version.value)
        }
        try release(base.slot.topRef, .top)
        try release(base.slot.freeListRef, .freeList)
        try release(base.slot.commitRecordRef, .commitRecord)
        if transaction.newSchemaBlob != nil { try release(top.schemaBlob, .blob) }
        writer.free.releaseUnreachable(pinned: pins)

        // 2. The changed trees, bottom-up.
        for (key, state) in transaction.states {
            guard let t = top.tables.firstIndex(where: { $0.key == key }) else { continue }
            // Commit even trees without buffers: an edit can leave a committed subtree as the
            // new root (a root with one child collapses onto it), and its ref must be recorded.
            top.tables[t].clusterRoot = try state.cluster.commit(to: writer)
            for c in state.indexes.indices where state.indexes[c] != nil {
                top.tables[t].indexRoots[c] = try state.indexes[c]!.commit(to: writer)
            }
        }

        // 3. The change history, the schema blob, the top node.
        top.history = try History.advance(top.history, adding: transaction.pendingChanges, from: base.slot.version, to: version,
                                          pinned: pins, context: context, release: release, place: writer.place)
        if let blob = transaction.newSchemaBlob {
            top.schemaBlob = try writer.place(BlobNode.encode(blob, version: version))
        }
        let topRef = try writer.place(top.encoded())
        var reused: [UInt8] = []
        swap(&reused, &commitBuffer)
        let prepared = writer.finish(topRef: topRef, reusing: reused)
        // Kept for the next commit unless it was huge.
        defer { if prepared.data.capacity <= 64 << 20 { commitBuffer = prepared.data } }

        // 4. Out to the file, one sync.
        let targetSlot = 1 - base.slotIndex
        do throws(StorageError) {
            try growFile(to: prepared.slot.logicalSize)
            try prepared.write(to: file, slotIndex: targetSlot, sync: options.durability == .full)
        } catch {
            invalidateSlot(targetSlot)
            throw error
        }

        // 5. Publish.
        var mapping = base.mapping
        if prepared.slot.logicalSize > UInt64(mapping.length) {
            mapping = try file.map(length: Recovery.reservation(for: prepared.slot.logicalSize))
        }
        free = writer.free
        stateLock.withLock {
            committed = Committed(slot: prepared.slot, slotIndex: targetSlot, top: top, mapping: mapping)
            committedFreeBytes = writer.free.freeBytes
        }
    }

    /// Grows the file ahead of need, so that steady writes do not resize it every commit.
    /// A step of 1/16 of the file (64 KiB to 16 MiB) makes a growing file resize about every
    /// 6% of growth while leaving at most that much unused at its end.
    private func growFile(to needed: UInt64) throws(StorageError) {
        guard needed > physicalSize else { return }
        let step = min(max(physicalSize / 16, 64 << 10), 16 << 20)
        let size = (max(needed, physicalSize + step) + 4095) & ~4095
        try file.setSize(size)
        physicalSize = size
    }

    /// After a failed commit, makes sure the slot it may have written cannot be taken for a
    /// committed version at the next open (best effort: the next commit overwrites it anyway).
    private func invalidateSlot(_ index: Int) {
        let zeros = [UInt8](repeating: 0, count: FileHeader.slotSize)
        zeros.withUnsafeBytes { bytes in
            _ = try? file.write(bytes, at: UInt64(FileHeader.slotOffsets[index]))
        }
        if options.durability == .full { _ = try? file.sync() }
    }
}
