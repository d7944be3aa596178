// The commit path.
//
//   1. The write transaction releases every node it replaced into the free list, tagged with
//      the versions that can reach it, and clears the tags no pinned version needs
//      (FreeSpace.swift). Nothing released by this commit is reusable by it.
//   2. Changed nodes are encoded bottom-up; each is `place`d: given space by the allocator
//      (its footprint: NodeSealing.swift) and queued. Then the top node. Node checksums or
//      tags, which cover a node's place in the file, are stamped in step 3 as the nodes are
//      gathered (NodeFormat.swift, NodeSealing.swift).
//   3. `finish` reserves the free list node (a delta of the base's list or a full list,
//      FreeList+Chain.swift, sized for the list as it stands plus what the allocations still to
//      come can change) and the commit record, then encodes both. Queued nodes are
//      merged into contiguous extents; the record lists each extent with its checksum.
//      The record: u32 extent count, u32 group depth (0, or for the last commit of a group
//      how many versions back the extents it lists reach), u64 history nonce (flag 2; see
//      below), then per extent u64 offset, u64 length, u64 checksum.
//   4. `write` grows the file if needed, writes the extents and the record, writes the new
//      root slot into the slot not holding the newest version, writes the selector, and syncs
//      once (FileHeader.swift, invariants 1-3).
//
// A failure anywhere leaves the store's in-memory state at the previous version: the writer
// works on a copy of the free list, and the store publishes the new version only after the
// sync succeeded.
//
// Grouped commits (Store+GroupCommit.swift) write several versions before one sync. Only the last
// one's slot is written, so its record must vouch for everything it may reach that is not yet
// durable: `finish` lists the extents of the earlier unsynced versions (`carrying`) before its
// own, whose checksums it returns for the versions after it to carry in turn.
//
// The history nonce. A run header links to the version before it by that version's record
// checksum (FileHeader.swift, invariant 4). A commit that failed and is retried can be the
// same bytes as the first attempt: same version, same allocator, same nodes, same record.
// The run headers the failed attempt's successors left would then link to the retry, and
// versions whose callers were told they failed would come back at the next open. So every
// record holds a random number drawn when the store opens and drawn again whenever a write
// or sync fails (`GroupState.nonce`): two attempts at a version never share a record checksum.

/// A run of bytes a commit wrote, with the version that wrote it and its checksum, as a
/// commit record lists it.
struct RecordedExtent {
    let version: UInt64
    let offset: UInt64
    let length: UInt64
    let checksum: UInt64
}

// @exclusivity(unchecked) properties: a writer belongs to the one committer that encodes with
// it, and the dynamic checks cost more than the allocations they guard (callgrind, W2).
final class CommitWriter: NodeSink {
    /// Commit record flag 1: its extents' checksums are `Checksum.lanes` (format 2); without
    /// it, `Checksum.of` (records of format 1 files).
    static let laneChecksumsFlag: UInt8 = 1
    /// Commit record flag 2: a u64 history nonce follows the group depth (see above).
    static let historyNonceFlag: UInt8 = 2

    let version: VersionID
    /// How the nodes are sealed, and so what each takes in the file (NodeSealing.swift).
    let sealing: NodeSealing
    @exclusivity(unchecked) var free: FreeSpace
    @exclusivity(unchecked) private var nodes: [PlacedNode] = []

    /// A queued node and where it goes. A struct, not a tuple: an array of tuples is destroyed
    /// through the runtime's generic tuple witness, element by element (this array and
    /// `finish`'s copy of it: 760 instructions more per one-object commit, callgrind on W2).
    private struct PlacedNode {
        var offset: UInt64
        var bytes: [UInt8]
    }
    /// Where this commit's run header goes, when it continues a chain (FileHeader.swift).
    @exclusivity(unchecked) private(set) var runHeaderOffset: UInt64?

    init(version: VersionID, free: FreeSpace, sealing: NodeSealing) {
        assert(free.alignment == UInt64(sealing.alignment), "an allocator whose granularity is not the sealing's")
        self.version = version
        self.sealing = sealing
        self.free = free
        self.free.beginDelta()
        // A small commit places about five nodes (leaf, index leaf, inner nodes, top): room
        // for them up front instead of growing the array three times.
        nodes.reserveCapacity(8)
    }

    /// Starts the commit's allocations: with its run header at `reserved` (where the version
    /// before reserved it) when given and free, else where `FreeSpace.beginRun` chooses.
    /// Returns whether the commit has a run header (else its root goes into a slot only).
    func beginRun(reserved: UInt64?) -> Bool {
        if let reserved, reserved != 0, free.beginRun(at: reserved, length: UInt64(RunHeader.footprint(sealing))) {
            runHeaderOffset = reserved
            return true
        }
        free.beginRun()
        return false
    }

    func place(_ bytes: [UInt8]) throws(StorageError) -> Ref {
        guard bytes.count <= NodeLayout.maxLength else {
            throw StorageError(.valueTooLarge, "a node of \(bytes.count) bytes exceeds the format's 4 GiB limit")
        }
        let offset = free.allocate(UInt64(sealing.footprint(bytes.count)))
        switch sealing {
        case .checksum:
            // Stamped in `finish`, as the extents are gathered.
            nodes.append(PlacedNode(offset: offset, bytes: bytes))
            return Ref(offset)
        case .authenticated:
            // Sealed now, where its place is known: the parent placed after it stores its seal
            // (NodeSealing.swift, S6). The queued bytes are the whole footprint.
            var footprint: [UInt8] = []
            footprint.reserveCapacity(sealing.footprint(bytes.count))
            let seal = sealing.append(bytes, to: &footprint, offset: offset).seal
            nodes.append(PlacedNode(offset: offset, bytes: footprint))
            return Ref(offset, seal: seal)
        }
    }

    var storesSeals: Bool { sealing.storesSeals }

    struct Prepared {
        var slot: RootSlot
        /// Every queued node and the free list, gathered by file offset; `extents` are the
        /// contiguous runs of the file they fill, as ranges of `data`.
        var data: [UInt8]
        var extents: [(offset: UInt64, range: Range<Int>)]
        var record: (offset: UInt64, bytes: [UInt8])
        /// This commit's own extents as its record lists them.
        var recorded: [RecordedExtent]
        /// Whether the record lies right after the last extent and follows it in `data`, to go
        /// out in the same write (the allocator usually puts it there).
        var recordFollowsData = false
        /// The run header, when the commit continues a chain; `before` is the extent it lies
        /// right before in the file and in `data` (it then goes out in the same write).
        var runHeader: (offset: UInt64, bytes: [UInt8], before: Int?)?
        /// Where every node it writes starts (the nodes, the free list, the record, the run
        /// header): checked already, since this process made their bytes (VerifiedNodes.swift).
        var nodeOffsets: [UInt64] = []

        /// Writes everything, then the slot and selector, then syncs (when `sync`). `sealed`:
        /// the file stores seals (its slots are of format 6).
        func write(to file: StorageFile, slotIndex: Int, sealed: Bool, sync: Bool = true) throws(StorageError) {
            try writeNodes(to: file)
            try Prepared.writeSlot(slot, to: file, slotIndex: slotIndex, sealed: sealed)
            if sync { try file.sync() }
        }

        /// Writes the nodes, the commit record and the run header: everything but the slot.
        /// `startWriteback`: the caller syncs right after (full durability, on its own thread),
        /// so the device starts on the written span now (`StorageFile.startWriteback`); not for
        /// commits the sync thread gathers, whose many scattered writes would each cost the
        /// device a separate request, nor without syncs, which would only add device work.
        func writeNodes(to file: StorageFile, startWriteback: Bool = false) throws(StorageError) {
            let header = runHeader
            var span = (low: UInt64.max, high: UInt64(0))
            func wrote(_ offset: UInt64, _ count: Int) {
                span = (min(span.low, offset), max(span.high, offset + UInt64(count)))
            }
            if let header, header.before == nil {
                try file.write(header.bytes, at: header.offset)
                wrote(header.offset, header.bytes.count)
            }
            let written = data.withUnsafeBytes { all in
                Result { () throws(StorageError) in
                    for (i, extent) in extents.enumerated() {
                        let end = recordFollowsData && i == extents.count - 1 ? all.count : extent.range.upperBound
                        var start = extent.range.lowerBound, offset = extent.offset
                        if let header, header.before == i {
                            start -= header.bytes.count
                            offset = header.offset
                        }
                        try file.write(UnsafeRawBufferPointer(rebasing: all[start..<end]), at: offset)
                        wrote(offset, end - start)
                    }
                }
            }
            try written.get()
            if !recordFollowsData {
                try file.write(record.bytes, at: record.offset)
                wrote(record.offset, record.bytes.count)
            }
            if startWriteback, span.low < span.high { file.startWriteback(at: span.low, length: Int(span.high - span.low)) }
        }

        /// Writes `slot` into root slot `slotIndex` and points the selector at it (no sync).
        static func writeSlot(_ slot: RootSlot, to file: StorageFile, slotIndex: Int, sealed: Bool) throws(StorageError) {
            try file.write(slot.encoded(sealed: sealed), at: UInt64(FileHeader.slotOffsets[slotIndex]))
            try file.write([UInt8(slotIndex)], at: UInt64(FileHeader.selectorOffset))
        }
    }

    /// Reserves and encodes the free list and the commit record; returns what to write,
    /// gathered in `buffer` (emptied first; pass one whose storage can be reused). The record
    /// lists `carrying` (extents of earlier versions not yet synced) before this commit's own.
    /// `link`: the commit record checksum of the version this one follows, for its run header.
    /// `nonce`: the writing history's (see above).
    func finish(topRef: Ref, reusing buffer: consuming [UInt8] = [], carrying: [RecordedExtent] = [], coveredFrom: UInt64? = nil,
                link: UInt64 = 0, nonce: UInt64 = .random(in: .min ... .max)) -> Prepared {
        // A delta on the base's list unless the chain was released (or there is none): then a
        // full list. Either is sized for the list as it stands plus what the allocations still
        // to come can change (FreeList+Chain.swift).
        let previous = free.chain.last?.ref
        let freeListSize = previous == nil
            ? NodeLayout.aligned(FreeSpace.nodeSize(entries: free.extents.count))
            : free.deltaNodeSize(spare: 2, sealed: sealing.storesSeals)
        let freeListOffset = free.allocate(UInt64(sealing.footprint(freeListSize)))

        // The queued nodes and the free list's reservation by offset: usually in order already,
        // since a commit's allocations follow each other (FreeSpace.beginRun).
        var pieces: [PlacedNode] = []
        pieces.reserveCapacity(nodes.count + 1)
        pieces += nodes
        pieces.append(PlacedNode(offset: freeListOffset, bytes: []))
        if !zip(pieces, pieces.dropFirst()).allSatisfy({ $0.offset < $1.offset }) {
            pieces.sort { $0.offset < $1.offset }
        }
        let freeListIndex = pieces.firstIndex { $0.offset == freeListOffset }!
        // Merged into contiguous runs.
        var runs: [(offset: UInt64, length: Int)] = []
        for (i, piece) in pieces.enumerated() {
            // Placed nodes are queued stamped later (checksums) or as their whole footprint (tags).
            let length = i == freeListIndex ? sealing.footprint(freeListSize) : piece.bytes.count
            if let last = runs.last, last.offset + UInt64(last.length) == piece.offset {
                runs[runs.count - 1].length += length
            } else {
                runs.append((piece.offset, length))
            }
        }

        let recordSize = NodeLayout.aligned(32 + (carrying.count + runs.count) * 24)
        let recordOffset = free.allocate(UInt64(sealing.footprint(recordSize)))
        let freeListBytes = previous.map { free.encodedDelta(version: version, previous: $0, size: freeListSize, sealed: sealing.storesSeals) }
            ?? free.encoded(version: version, size: freeListSize)
        var freeListRef = Ref(freeListOffset)
        switch sealing {
        case .checksum:
            pieces[freeListIndex].bytes = freeListBytes
        case .authenticated:
            // Sealed now, as `place` seals: the slot and the next delta store its seal.
            var footprint: [UInt8] = []
            footprint.reserveCapacity(sealing.footprint(freeListSize))
            freeListRef.seal = sealing.append(freeListBytes, to: &footprint, offset: freeListOffset).seal
            pieces[freeListIndex].bytes = footprint
        }
        free.wrote(FreeListNode(ref: freeListRef, length: UInt64(sealing.footprint(freeListSize)), version: version.value,
                                isFull: previous == nil))

        // Taken over, not copied: a borrowed buffer is shared with the caller's variable, so
        // emptying it allocated a new one of the same size at every commit (and a large
        // commit's fresh pages fault while it is filled: W2g, `perf stat -e page-faults`).
        var data = consume buffer
        data.removeAll(keepingCapacity: true)
        // Room for the record too: it usually follows the data (appending it to a buffer
        // reserved without it copied the whole buffer).
        let runHeaderFootprint = RunHeader.footprint(sealing)
        data.reserveCapacity(runs.reduce(0) { $0 + $1.length } + sealing.footprint(recordSize) + runHeaderFootprint)
        var extents: [(offset: UInt64, range: Range<Int>)] = []
        extents.reserveCapacity(runs.count)
        var record = NodeWriter(capacity: recordSize)
        record.u32(UInt32(carrying.count + runs.count))
        record.u32(carrying.isEmpty ? 0 : UInt32(clamping: version.value - (coveredFrom ?? version.value)))
        record.u64(nonce)
        for extent in carrying {
            record.u64(extent.offset)
            record.u64(extent.length)
            record.u64(extent.checksum)
        }
        var recorded: [RecordedExtent] = []
        recorded.reserveCapacity(runs.count)
        // The run header goes into the same write as the run it begins, when there is one
        // (its bytes are known only at the end: they name the record's checksum).
        let headerBefore = runHeaderOffset.flatMap { header in runs.firstIndex { $0.offset == header + UInt64(runHeaderFootprint) } }
        var pieceIndex = 0
        for (i, run) in runs.enumerated() {
            if i == headerBefore { data.append(contentsOf: repeatElement(0, count: runHeaderFootprint)) }
            let start = data.count
            while data.count - start < run.length {
                // Checksums are stamped here, where its place is known (NodeChecksum), before the
                // extent's sum; tagged nodes were sealed when placed.
                let offset = pieces[pieceIndex].offset
                switch sealing {
                case .checksum:
                    // As before sealing had a choice: no padding, stamped in place.
                    let at = data.count
                    data.append(contentsOf: pieces[pieceIndex].bytes)
                    data.withUnsafeMutableBytes { NodeChecksum.stamp(in: $0, at: at, offset: offset) }
                case .authenticated:
                    data.append(contentsOf: pieces[pieceIndex].bytes)
                }
                pieceIndex += 1
            }
            let range = start..<data.count
            let checksum = data.withUnsafeBytes { Checksum.lanes(UnsafeRawBufferPointer(rebasing: $0[range])) }
            record.u64(run.offset)
            record.u64(UInt64(run.length))
            record.u64(checksum)
            extents.append((run.offset, range))
            recorded.append(RecordedExtent(version: version.value, offset: run.offset, length: UInt64(run.length), checksum: checksum))
        }
        var recordBytes = record.finish(kind: .commitRecord, version: version, flags: CommitWriter.laneChecksumsFlag | CommitWriter.historyNonceFlag)
        // The slot names the checksum of the record's node bytes (not of its tag: Recovery.verifyCommit).
        let recordChecksum: UInt64
        var recordRef = Ref(recordOffset)
        switch sealing {
        case .checksum:
            NodeChecksum.stamp(&recordBytes, offset: recordOffset)
            recordChecksum = Checksum.of(recordBytes)
        case .authenticated:
            let length = recordBytes.count
            recordBytes = sealing.sealed(recordBytes, offset: recordOffset)
            recordChecksum = recordBytes.withUnsafeBytes { Checksum.of(UnsafeRawBufferPointer(rebasing: $0[..<length])) }
            recordRef.seal = NodeSealing.seal(ofSealed: recordBytes, length: length)
        }
        var slot = RootSlot(version: version, topRef: topRef, freeListRef: freeListRef, logicalSize: free.logicalSize,
                            commitRecordRef: recordRef, commitRecordChecksum: recordChecksum,
                            nextRun: free.reserveNextRun(), runHeader: runHeaderOffset.map(Ref.init) ?? .none)
        // The record and the run header into `data` before it moves into the result (appending
        // to it there copied the whole buffer: two owners).
        let recordFollowsData = runs.last.map { $0.offset + UInt64($0.length) == recordOffset } ?? false
        if recordFollowsData { data.append(contentsOf: recordBytes) }
        var runHeader: (offset: UInt64, bytes: [UInt8], before: Int?)?
        if let header = runHeaderOffset {
            let bytes = RunHeader(root: slot, link: link).encoded(sealing)
            if sealing.storesSeals { slot.runHeader.seal = NodeSealing.seal(ofSealed: bytes, length: RunHeader.size(sealing)) }
            if let before = headerBefore {
                let at = extents[before].range.lowerBound - runHeaderFootprint
                data.withUnsafeMutableBytes { out in
                    bytes.withUnsafeBytes { (out.baseAddress! + at).copyMemory(from: $0.baseAddress!, byteCount: runHeaderFootprint) }
                }
            }
            runHeader = (header, bytes, headerBefore)
        }
        var nodeOffsets = pieces.map(\.offset)
        nodeOffsets.append(recordOffset)
        if let header = runHeaderOffset { nodeOffsets.append(header) }
        return Prepared(slot: slot, data: data, extents: extents, record: (recordOffset, recordBytes), recorded: recorded,
                        recordFollowsData: recordFollowsData, runHeader: runHeader, nodeOffsets: nodeOffsets)
    }
}
