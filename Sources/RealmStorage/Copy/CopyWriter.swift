// Streaming a compacted copy to its file.
//
// A copy is one version of a new file, packed from the header on (CompactCopy.swift). Its
// nodes are placed one after another in the order the walk makes them, so a node's place is
// known when it is made: the writer keeps the bytes since its last flush and hands them on
// every `flushSize` bytes, and memory stays bounded whatever the size of the realm (a copy
// used to be gathered whole in memory twice before it was written: 20 GiB for a 10 GiB realm).
//
// Where the bytes go is a `CopyImage`: the new realm file itself, or an LZ4-compressed copy
// that compresses the image block by block as it arrives (Compressed/CompressedCopyImage.swift).
// Either way the image is the same realm file byte for byte:
//
//   0      the file header, with the version in root slot 0: written last (`finish`), once
//          the top node's place is known; an encrypted copy's names format 6, its salt and
//          key check (File/EncryptionHeader.swift)
//   4096   the nodes, children before their parent, each sealed with its checksum or tag
//          (which covers its place; a tagged node takes its footprint: NodeSealing.swift); then
//          the top node, an empty free list and the commit record
//
// The commit record lists no extents. A commit's record vouches, at the next open, for bytes
// a crash may have torn; a copy's bytes are synced before the file gets its name (CopyFile.swift),
// so no open ever sees a torn copy, and each node's own checksum still guards every byte. So a
// copy of any size opens without reading it whole.
//
// An encrypted copy is this same image written through an `EncryptedFile` over the new file
// (CopyFile.swift): its nodes carry tags under the copy's keys, each a whole number of 16-byte
// blocks from offset 4096 on, so every append covers whole blocks (E1) and is encrypted as it
// goes; the file is then rounded up to whole pages (invariant I4 of EncryptedFile).

/// Where a copy's logical image goes (see the header).
protocol CopyImage: AnyObject {
    /// Takes the image's bytes at `offset`: consecutive calls continue where the last ended,
    /// the first at the end of the file header.
    func append(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError)
    /// The image is whole: `header` is its first `FileHeader.size` bytes and `size` its length.
    /// Writes what is left and syncs the file.
    func finish(header: [UInt8], size: UInt64) throws(StorageError)
}

/// A copy written as a realm file (see the header).
final class PlainCopyImage: CopyImage {
    private let file: StorageFile

    init(_ file: StorageFile) { self.file = file }

    func append(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        try file.write(bytes, at: offset)
    }

    func finish(header: [UInt8], size: UInt64) throws(StorageError) {
        // An encrypted file is a whole number of pages (EncryptedFile, I4): its last page is
        // completed with encrypted zeros.
        if file is EncryptedFile { try file.setSize(size) }
        try file.write(header, at: 0)
        // One sync for nodes and header: the file has no name a reader could open until it
        // is synced (CopyFile.swift, invariant 1).
        try file.sync()
    }
}

/// Places a copy's nodes one after another and streams them to a `CopyImage` (see the header).
final class CopyWriter: NodeSink {
    /// Bytes kept before they are handed to the image.
    static let flushSize = 1 << 20

    let version: VersionID
    /// How the copy's nodes are sealed: the source store's, or the copy's own keys' for an
    /// encrypted copy (NodeSealing.swift, CopySource.seal).
    let sealing: NodeSealing
    /// The header page the root slot is set into: a plain file's, or an encrypted one's.
    private let header: [UInt8]
    private let image: CopyImage
    private var buffer: [UInt8] = []
    /// Where `buffer` starts in the image.
    private var bufferOffset = UInt64(FileHeader.size)

    init(version: VersionID, to image: CopyImage, sealing: NodeSealing = .checksum, header: [UInt8] = FileHeader.initial()) {
        precondition(header.count == FileHeader.size, "a copy's header is one page")
        self.version = version
        self.sealing = sealing
        self.header = header
        self.image = image
        buffer.reserveCapacity(Self.flushSize + (64 << 10))
    }

    /// Where the next node goes.
    private var position: UInt64 { bufferOffset + UInt64(buffer.count) }

    func place(_ bytes: [UInt8]) throws(StorageError) -> Ref {
        guard bytes.count <= NodeLayout.maxLength else {
            throw StorageError(.valueTooLarge, "a node of \(bytes.count) bytes exceeds the format's 4 GiB limit")
        }
        precondition(bytes.count == NodeLayout.aligned(bytes.count), "a node that is not a whole number of words")
        let offset = position
        var seal: UInt64 = 0
        switch sealing {
        case .checksum:
            // As before sealing had a choice: stamped in place.
            let at = buffer.count
            buffer.append(contentsOf: bytes)
            buffer.withUnsafeMutableBytes { NodeChecksum.stamp(in: $0, at: at, offset: offset) }
        case .authenticated:
            seal = sealing.append(bytes, to: &buffer, offset: offset).seal
        }
        if buffer.count >= Self.flushSize { try flush() }
        return Ref(offset, seal: seal)
    }

    var storesSeals: Bool { sealing.storesSeals }

    private func flush() throws(StorageError) {
        guard !buffer.isEmpty else { return }
        let written = buffer.withUnsafeBytes { bytes in Result { () throws(StorageError) in try image.append(bytes, at: bufferOffset) } }
        try written.get()
        bufferOffset += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    /// Places the free list (empty: the copy has no free space) and the commit record after
    /// `topRef`'s node, hands the image its header and has it synced. Returns the copy's root.
    func finish(topRef: Ref) throws(StorageError) -> RootSlot {
        let freeListSize = NodeLayout.aligned(FreeSpace.nodeSize(entries: 0))
        let freeListRef = try place(FreeSpace(extents: [], logicalSize: 0).encoded(version: version, size: freeListSize))
        var record = NodeWriter(capacity: 32)
        record.u32(0)
        record.u32(0)
        record.u64(UInt64.random(in: .min ... .max))
        var recordBytes = record.finish(kind: .commitRecord, version: version, flags: CommitWriter.laneChecksumsFlag | CommitWriter.historyNonceFlag)
        // Sealed for its place here too: the slot names the checksum of the node's bytes in the
        // file (a tag, which follows them, is not part of them).
        sealing.stampHeader(&recordBytes, offset: position)
        let recordRef = try place(recordBytes)
        try flush()
        let slot = RootSlot(version: version, topRef: topRef, freeListRef: freeListRef, logicalSize: bufferOffset,
                            commitRecordRef: recordRef, commitRecordChecksum: Checksum.of(recordBytes), nextRun: 0, runHeader: .none)
        var header = header
        let slotOffset = FileHeader.slotOffsets[0]
        let slotBytes = slot.encoded(sealed: sealing.storesSeals)
        header.replaceSubrange(slotOffset..<(slotOffset + slotBytes.count), with: slotBytes)
        header[FileHeader.selectorOffset] = 0
        try image.finish(header: header, size: bufferOffset)
        return slot
    }
}
