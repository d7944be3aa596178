// The file header: the first 4,096 bytes of every realm file.
//
//   offset  size  field
//   0       8     magic "ORealm\0\u{1}"
//   8       4     format version (FileHeader.formatVersion)
//   12      4     page size (4096)
//   16      1     selector: the slot written last (0 or 1); a hint, see below
//   17      495   reserved, 0
//   512     64    root slot 0
//   1024    64    root slot 1
//   1088    ...   reserved, 0
//
// Root slot (each in its own 512-byte sector so a torn write damages at most one):
//
//   0   8  version
//   8   8  top ref: the top node (catalogue, schema blob, change history)
//   16  8  free list ref
//   24  8  logical size: end of the space this version has allocated
//   32  8  commit record ref: the extents this commit wrote, each with a checksum
//   40  8  commit record checksum
//   48  8  next run: where the next version's run header goes (0: none; format 2)
//   56  8  checksum of bytes 0..<56
//
// Root slot of an encrypted file (format 6: it stores seals, NodeSealing.swift S5), 96 bytes
// (whole 16-byte blocks: EncryptionHeader.swift E1):
//
//   0   56 as above (version … next run)
//   56  8  top seal: the top node's tag bytes 0..<8
//   64  8  free list seal
//   72  8  commit record seal
//   80  8  reserved, 0
//   88  8  checksum of bytes 0..<88
//
// A slot is encrypted with the rest of the page (EncryptionHeader.swift) but not
// authenticated: its checksum finds torn writes, and a slot rolled back whole is the limit
// seals leave (a whole older version; EncryptionProposal.md §9). Zeroing a slot's first 64
// bytes (`slotSize`) invalidates either kind: its version reads 0.
//
// Run header (node kind runHeader, format 2; RunHeader below): the root of a version that is
// not in a slot, written at the start of its commit's run of bytes, where the version before
// it said the next run goes. It holds what a slot holds, the checksum of the version before's
// commit record (the link) and its own checksum.
//
// Durability invariants:
//   1. A commit writes only into space no durable version can reach (copy-on-write plus the
//      free list's version tags), then writes its root, then syncs once.
//   2. Recovery trusts checksums, not write order: a version counts only if its root's own
//      checksum, its commit record's checksum and the checksum of every extent the record
//      lists verify. So a root that reached the disk before its nodes did is refused, and an
//      older version, whose nodes invariant 1 left untouched, is used.
//   3. Of the versions that verify, the highest wins. The selector records which slot was
//      written last, for tools and humans; it is never needed for correctness.
//
// Chained roots (format 2). Writing a root slot makes a commit's sync write two places: its
// run and the header page; a sync costs about 10 µs more for each separate run it writes
// (FreeSpace.beginRun). So a commit usually writes its root as a run header at the start of
// its own run, at the place the version before it reserved (`next run`), and the slot is
// written only every `StoreOptions.chainLength` commits or when a commit cannot chain (it is
// then the chain's head):
//   4. Every version reserves where its successor's run header goes: space free for good in
//      it, or the end of the file. Its successor writes its run header there, so the versions
//      after a head form a chain: head slot → run header → run header → … Recovery follows it
//      from each slot: a run header counts when its checksum verifies, it names the next
//      version, and its link equals the record checksum of the version before it (so a
//      header left there by an older history does not count: every record holds its
//      history's nonce, CommitWriter.swift, so even a retry that writes the same version
//      byte for byte has another checksum); then invariants 2 and 3 pick the version, from
//      the newest back.
//   5. Nothing a version after the newest head wrote is reused until a newer head is durable
//      (every version after the head counts as pinned, Store+GroupCommit.swift): recovery must be
//      able to walk the chain from the head, so its run headers and records stay.
//   6. The slot written is never the one holding the newest durable head.
//   7. Nothing newer than the version a writer builds on stays reachable: a failed sync
//      zeroes its slot and its versions' run headers (Store+GroupCommit.swift); recovery, and a
//      process taking the write lock over from another, zero a slot naming a newer version
//      and the run header where the next version's goes when it names one (Store.swift,
//      Store+Process.swift). Otherwise a version whose callers were told it failed, or that
//      never fully arrived, could verify later, when a retry rewrote its bytes.

package enum FileHeader {
    package static let size = 4096
    package static let magic: [UInt8] = Array("ORealm\0\u{1}".utf8)
    /// 2: chained roots (run headers, a slot's next run). Files of format 1 are read as format 2
    /// files without chains, and become format 2 at their first commit.
    /// 3: free list deltas (FreeList+Chain.swift). Files of format 2 are read as they are, and
    /// become format 3 when a root slot is next written; their commits write full lists until then.
    /// 4: every node carries a checksum (NodeFormat.swift). Files of formats 1-3 have none:
    /// they are read unverified and keep their format (up to 3) when written; a compacted copy
    /// (`writeCopy`, `compact`, the upgrade at open in OpenRealm) is of format 4.
    package static let formatVersion: UInt32 = 4
    /// The first format whose free lists may hold deltas.
    package static let freeListDeltaFormat: UInt32 = 3
    /// The first format whose nodes carry checksums.
    package static let nodeChecksumFormat: UInt32 = 4
    package static let formatVersionOffset = 8
    package static let pageSize: UInt32 = 4096
    package static let selectorOffset = 16
    package static let slotOffsets = [512, 1024]
    package static let slotSize = 64
    /// A root slot that stores seals (format 6).
    package static let sealedSlotSize = 96
    /// Bytes of a root slot in a file that stores seals (`sealed`) or not.
    package static func slotSize(sealed: Bool) -> Int { sealed ? sealedSlotSize : slotSize }

    /// Bytes of a fresh header with both slots empty.
    package static func initial() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: size)
        bytes.replaceSubrange(0..<8, with: magic)
        withUnsafeBytes(of: formatVersion.littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        withUnsafeBytes(of: pageSize.littleEndian) { bytes.replaceSubrange(12..<16, with: $0) }
        return bytes
    }
}

/// One of the two root slots.
/// The root of a version: what a root slot or a run header holds.
package struct RootSlot: Equatable, Sendable {
    package var version: VersionID
    package var topRef: Ref
    package var freeListRef: Ref
    package var logicalSize: UInt64
    package var commitRecordRef: Ref
    package var commitRecordChecksum: UInt64
    /// Where the next version's run header goes (0: nowhere reserved; it writes a slot).
    package var nextRun: UInt64
    /// Where this version's own run header is (`.none` when its root is only in a slot). Not
    /// stored in a slot: the run header is the version's node, freed by the next commit like
    /// its record, and the integrity check claims it.
    package var runHeader: Ref = .none

    package init(version: VersionID, topRef: Ref, freeListRef: Ref, logicalSize: UInt64,
                 commitRecordRef: Ref, commitRecordChecksum: UInt64, nextRun: UInt64 = 0, runHeader: Ref = .none) {
        self.version = version
        self.topRef = topRef
        self.freeListRef = freeListRef
        self.logicalSize = logicalSize
        self.commitRecordRef = commitRecordRef
        self.commitRecordChecksum = commitRecordChecksum
        self.nextRun = nextRun
        self.runHeader = runHeader
    }

    /// The slot's bytes; `sealed`: the file stores seals (96 bytes, see FileHeader).
    package func encoded(sealed: Bool = false) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(FileHeader.slotSize(sealed: sealed))
        var fields = [version.value, topRef.offset, freeListRef.offset, logicalSize, commitRecordRef.offset, commitRecordChecksum, nextRun]
        if sealed { fields += [topRef.seal, freeListRef.seal, commitRecordRef.seal, 0] }
        for field in fields {
            withUnsafeBytes(of: field.littleEndian) { bytes.append(contentsOf: $0) }
        }
        let sum = Checksum.of(bytes)
        withUnsafeBytes(of: sum.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Decodes a slot; nil when its checksum fails or it was never written. `sealed`: the
    /// file stores seals.
    package static func decode(_ bytes: UnsafeRawBufferPointer, sealed: Bool = false) -> RootSlot? {
        let size = FileHeader.slotSize(sealed: sealed)
        guard bytes.count >= size else { return nil }
        func field(_ i: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
        guard field(0) != 0 else { return nil }
        let fieldCount = size / 8 - 1
        guard Checksum.of(UnsafeRawBufferPointer(rebasing: bytes[0..<(fieldCount * 8)])) == field(fieldCount) else { return nil }
        func ref(_ i: Int, sealAt s: Int) -> Ref { sealed ? Ref(field(i), seal: field(s)) : Ref(field(i)) }
        return RootSlot(version: VersionID(field(0)), topRef: ref(1, sealAt: 7), freeListRef: ref(2, sealAt: 8),
                        logicalSize: field(3), commitRecordRef: ref(4, sealAt: 9), commitRecordChecksum: field(5), nextRun: field(6))
    }
}

/// A version's root written at the start of its commit's run (invariant 4 above).
///
///   0   16  node header (kind runHeader, length 80, the version, the node checksum)
///   16  8   top ref
///   24  8   free list ref
///   32  8   logical size
///   40  8   commit record ref
///   48  8   commit record checksum
///   56  8   next run
///   64  8   link: the commit record checksum of the version before
///   72  8   checksum of bytes 0..<72, the node checksum (12..<16) taken as 0
///
/// In a file that stores seals (format 6, NodeSealing.swift S5) it is 104 bytes, the seals
/// under its tag:
///   80  8   top seal
///   88  8   free list seal
///   96  8   commit record seal
package struct RunHeader: Equatable, Sendable {
    package var root: RootSlot
    package var link: UInt64

    /// Bytes of a run header without seals; also what is zeroed to invalidate any run header
    /// (its kind byte and own checksum lie inside them).
    package static let size = 80
    /// Bytes of a run header in a file sealed by `sealing`.
    package static func size(_ sealing: NodeSealing) -> Int { sealing.storesSeals ? sealedSize : size }
    /// Bytes of a run header that stores seals.
    package static let sealedSize = 104

    /// What a run header takes in the file (NodeSealing.swift): its bytes, or with its tag.
    package static func footprint(_ sealing: NodeSealing) -> Int { sealing.footprint(size(sealing)) }

    package init(root: RootSlot, link: UInt64) {
        self.root = root
        self.link = link
    }

    /// The node's bytes, sealed for its place, `root.runHeader`: `footprint(sealing)` bytes.
    package func encoded(_ sealing: NodeSealing = .checksum) -> [UInt8] {
        var w = NodeWriter(capacity: Self.size(sealing))
        for field in [root.topRef.offset, root.freeListRef.offset, root.logicalSize, root.commitRecordRef.offset,
                      root.commitRecordChecksum, root.nextRun, link] {
            w.u64(field)
        }
        w.u64(0)
        if sealing.storesSeals {
            w.u64(root.topRef.seal)
            w.u64(root.freeListRef.seal)
            w.u64(root.commitRecordRef.seal)
        }
        var bytes = w.finish(kind: .runHeader, version: root.version)
        // Its own checksum leaves out the node's (which is stamped last, over the whole node).
        let sum = Self.ownChecksum(bytes)
        withUnsafeBytes(of: sum.littleEndian) { bytes.replaceSubrange(72..<80, with: $0) }
        return sealing.sealed(consume bytes, offset: root.runHeader.offset)
    }

    /// The checksum at 72: of bytes 0..<72 with the node checksum (12..<16) taken as zero, as
    /// it was in files of formats 2 and 3, whose nodes had none.
    private static func ownChecksum(_ bytes: some Collection<UInt8>) -> UInt64 {
        var head = Array(bytes.prefix(72))
        head.replaceSubrange(NodeLayout.checksumOffset..<(NodeLayout.checksumOffset + 4), with: repeatElement(0, count: 4))
        return Checksum.of(head)
    }

    /// Decodes the run header at `offset` of the mapped bytes `base` (`limit` bytes valid);
    /// nil when there is none there (wrong kind or length, checksum or tag fails, out of bounds).
    /// Authenticated run headers are decoded only once their tag verifies (NodeSealing.swift);
    /// a checksummed one's node checksum is left to whoever reads it as a node, as before.
    package static func decode(at offset: UInt64, base: UnsafeRawPointer, limit: UInt64, sealing: NodeSealing = .checksum) -> RunHeader? {
        let footprint = UInt64(footprint(sealing))
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, limit >= footprint, offset <= limit - footprint else { return nil }
        return decode(UnsafeRawBufferPointer(start: base + Int(offset), count: Int(footprint)), at: offset, sealing: sealing)
    }

    /// Reads and decodes the run header at `offset` of `file` with `read` (pread), never
    /// through a mapping: for walks of chains whose run headers no pinned version protects,
    /// which another process may cut off the end of the file meanwhile (online shrinking,
    /// OnlineShrink.swift). Past the end, a read comes back short and the walk ends; a mapped
    /// page there would be a SIGBUS.
    package static func read(at offset: UInt64, from file: StorageFile, limit: UInt64, sealing: NodeSealing = .checksum) -> RunHeader? {
        let footprint = footprint(sealing)
        guard offset >= UInt64(FileHeader.size), offset & 7 == 0, limit >= UInt64(footprint), offset <= limit - UInt64(footprint) else { return nil }
        var bytes = [UInt8](repeating: 0, count: footprint)
        let count = bytes.withUnsafeMutableBytes { buffer in (try? file.read(into: buffer, at: offset)) ?? 0 }
        guard count == footprint else { return nil }
        return bytes.withUnsafeBytes { decode($0, at: offset, sealing: sealing) }
    }

    /// The run header whose footprint is `bytes`, found at `offset` of the file.
    private static func decode(_ bytes: UnsafeRawBufferPointer, at offset: UInt64, sealing: NodeSealing) -> RunHeader? {
        let size = size(sealing)
        if sealing.isAuthenticated,
           !sealing.matches(bytes.baseAddress!, length: size, offset: offset, available: UInt64(bytes.count)) { return nil }
        func field(_ i: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self)) }
        let version = NodeLayout.version(of: bytes.baseAddress!)
        guard bytes[0] == NodeKind.runHeader.rawValue, UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 4, as: UInt32.self)) == UInt32(size),
              ownChecksum(bytes) == field(72), version != 0 else { return nil }
        let sealed = sealing.storesSeals
        func ref(_ at: Int, sealAt s: Int) -> Ref { sealed ? Ref(field(at), seal: field(s)) : Ref(field(at)) }
        // Its own ref carries the seal of the tag just verified: the chain vouches for it by its
        // link and checksums (FileHeader invariant 4), not by a parent.
        let own = sealed ? Ref(offset, seal: NodeSealing.storedSeal(bytes.baseAddress!, length: size)) : Ref(offset)
        let root = RootSlot(version: VersionID(version), topRef: ref(16, sealAt: 80), freeListRef: ref(24, sealAt: 88), logicalSize: field(32),
                            commitRecordRef: ref(40, sealAt: 96), commitRecordChecksum: field(48), nextRun: field(56), runHeader: own)
        return RunHeader(root: root, link: field(64))
    }
}
