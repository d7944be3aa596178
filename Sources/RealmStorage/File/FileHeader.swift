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
//   48  8  reserved, 0
//   56  8  checksum of bytes 0..<56
//
// Durability invariants:
//   1. A commit writes only into space no durable version can reach (copy-on-write plus the
//      free list's version tags), then writes its slot into the slot *not* holding the newest
//      version, then syncs once.
//   2. Recovery trusts checksums, not write order: a slot counts only if its own checksum, its
//      commit record's checksum and the checksum of every extent the record lists verify.
//      So a slot that reached the disk before its nodes did is refused, and the other slot,
//      whose nodes invariant 1 left untouched, is used.
//   3. Of the slots that verify, the one with the higher version wins. The selector records
//      which slot was written last, for tools and humans; it is never needed for correctness.

package enum FileHeader {
    package static let size = 4096
    package static let magic: [UInt8] = Array("ORealm\0\u{1}".utf8)
    package static let formatVersion: UInt32 = 1
    package static let pageSize: UInt32 = 4096
    package static let selectorOffset = 16
    package static let slotOffsets = [512, 1024]
    package static let slotSize = 64

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
package struct RootSlot: Equatable, Sendable {
    package var version: VersionID
    package var topRef: Ref
    package var freeListRef: Ref
    package var logicalSize: UInt64
    package var commitRecordRef: Ref
    package var commitRecordChecksum: UInt64

    package init(version: VersionID, topRef: Ref, freeListRef: Ref, logicalSize: UInt64,
                 commitRecordRef: Ref, commitRecordChecksum: UInt64) {
        self.version = version
        self.topRef = topRef
        self.freeListRef = freeListRef
        self.logicalSize = logicalSize
        self.commitRecordRef = commitRecordRef
        self.commitRecordChecksum = commitRecordChecksum
    }

    package func encoded() -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(FileHeader.slotSize)
        for field in [version.value, topRef.offset, freeListRef.offset, logicalSize,
                      commitRecordRef.offset, commitRecordChecksum, 0] {
            withUnsafeBytes(of: field.littleEndian) { bytes.append(contentsOf: $0) }
        }
        let sum = Checksum.of(bytes)
        withUnsafeBytes(of: sum.littleEndian) { bytes.append(contentsOf: $0) }
        return bytes
    }

    /// Decodes a slot; nil when its checksum fails or it was never written.
    package static func decode(_ bytes: UnsafeRawBufferPointer) -> RootSlot? {
        guard bytes.count >= FileHeader.slotSize else { return nil }
        func field(_ i: Int) -> UInt64 { UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: i * 8, as: UInt64.self)) }
        guard field(0) != 0 else { return nil }
        guard Checksum.of(UnsafeRawBufferPointer(rebasing: bytes[0..<56])) == field(7) else { return nil }
        return RootSlot(version: VersionID(field(0)), topRef: Ref(field(1)), freeListRef: Ref(field(2)),
                        logicalSize: field(3), commitRecordRef: Ref(field(4)), commitRecordChecksum: field(5))
    }
}
