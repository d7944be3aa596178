#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CStorageSupport

// Which nodes this process has verified: their checksums (NodeFormat.swift), or their tags
// (NodeSealing.swift), are checked once per node per process, not at every read.
//
// One bit per 16 bytes of the file, set once the node starting there has matched its checksum
// (no two nodes start within 16 bytes of each other: a node is at least its 16-byte header).
// The bitmap belongs to a `Mapping` (every version is read through exactly one mapping) and is
// an anonymous mapping of its own whose untouched pages cost nothing; bits are tested and set
// with relaxed atomics, so the hot path is one load and one test.
//
// A set bit must never vouch for bytes written after it was set. Invariants:
//   1. Bytes a pinned version reaches are never rewritten (copy-on-write and the free list's
//      version tags, across processes: FreeSpace.swift, ProcessCoordination.swift). So a bit a
//      reader sets for a node of the version it pins stays true while any version reaching
//      that node can be read, whatever other threads do meanwhile.
//   2. A node is rewritten only by a commit. Each mapping's bitmap records the version whose
//      writes it accounts for (`accounted`, a version and its commit record checksum, which no
//      retry or other history shares: CommitWriter.swift). This process's commit built on that
//      version sets the bits of the nodes it wrote (it made their bytes) and becomes the
//      accounted version; any other version made the newest through this mapping (another
//      process's commit, a retry after a failed sync, an older version) clears every bit first.
//      Both happen before any reader of the new version reads it through this mapping.
//   3. A bit at an offset where no node of the version being read starts is never consulted
//      by a correct read: refs come from nodes that were themselves verified (or from a root
//      slot or run header, which carry their own checksums), and point at node starts.
//
// Clearing every bit costs the next reads of other processes' commits their verification
// again (a few GB/s); commits of this process, the common case, keep what was verified.

/// How a `NodeView` verifies the seal (checksum or tag: NodeSealing.swift) of the node it opens.
package struct NodeCheck {
    @usableFromInline let words: UnsafeMutablePointer<UInt64>?
    @usableFromInline let bitCount: UInt64
    @usableFromInline let enabled: Bool
    /// The bitmap's owner, for the file's path in errors; unretained: whoever reads through the
    /// check retains the mapping, which retains it.
    @usableFromInline let owner: Unmanaged<VerifiedNodes>?
    /// How the file's nodes are sealed: what `verifyNow` checks, and what footprint a node
    /// read through this check takes (freeing it, walking the file). Read only off the hot
    /// path (a set bit returns before it), so the checksum path pays no dispatch per node.
    package let sealing: NodeSealing
    /// Whether a node opens only through a ref carrying its seal (NodeSealing.swift, S5): a
    /// stored flag, so the checksum path pays one test per open.
    @usableFromInline let comparesSeals: Bool

    @usableFromInline init(words: UnsafeMutablePointer<UInt64>?, bitCount: UInt64, enabled: Bool, owner: Unmanaged<VerifiedNodes>?,
                           sealing: NodeSealing) {
        self.words = words
        self.bitCount = bitCount
        self.enabled = enabled
        self.owner = owner
        self.sealing = sealing
        self.comparesSeals = enabled && sealing.storesSeals
    }

    /// Throws the error for a node whose tag does not begin with the seal of the ref that
    /// reached it: an older node, rolled back at its place, or a ref that lost its seal.
    @inline(never)
    func sealMismatch(_ ref: Ref, kind: NodeKind, length: Int) throws(StorageError) {
        throw StorageError(.fileCorrupted, "the \(kind) node at offset \(ref.offset) (\(length) bytes) does not match the seal its parent holds: "
                           + "it is not the node its parent was written with (a part of the file was rolled back to an older copy, or damaged)",
                           path: owner?.takeUnretainedValue().path)
    }

    /// Verifies every time (nodes read outside any store: tests, tools).
    package static var always: NodeCheck { .always(.checksum) }
    /// Verifies every time, for nodes sealed by `sealing`.
    package static func always(_ sealing: NodeSealing) -> NodeCheck {
        NodeCheck(words: nil, bitCount: 0, enabled: true, owner: nil, sealing: sealing)
    }
    /// Never verifies: files of formats 1-3, whose nodes carry no checksum.
    package static var never: NodeCheck { NodeCheck(words: nil, bitCount: 0, enabled: false, owner: nil, sealing: .checksum) }

    /// The same check without the bitmap: every node verified at every read.
    package var uncached: NodeCheck { NodeCheck(words: nil, bitCount: 0, enabled: enabled, owner: owner, sealing: sealing) }

    /// Throws `fileCorrupted` unless the node of `length` bytes at `node` (file offset
    /// `offset`) was verified before or matches its seal now; `limit` bounds the bytes of the
    /// version (a tag must lie inside them).
    @inline(__always)
    func verify(_ node: UnsafeRawPointer, offset: UInt64, length: Int, kind: NodeKind, limit: UInt64) throws(StorageError) {
        guard enabled else { return }
        let bit = offset >> 4
        guard let words, bit < bitCount else {
            try verifyNow(node, offset: offset, length: length, kind: kind, limit: limit)
            return
        }
        // The bitmap outlives the check: its mapping is retained by whoever reads through it.
        if openrealm_bit_test(words, bit) != 0 { return }
        try verifyNow(node, offset: offset, length: length, kind: kind, limit: limit)
        openrealm_bit_set(words, bit)
    }

    @inline(never)
    func verifyNow(_ node: UnsafeRawPointer, offset: UInt64, length: Int, kind: NodeKind, limit: UInt64) throws(StorageError) {
        // NodeView checked offset <= limit.
        guard sealing.matches(node, length: length, offset: offset, available: limit - offset) else {
            let seal = sealing.isAuthenticated ? "its authentication tag" : "its checksum"
            throw StorageError(.fileCorrupted, "the \(kind) node at offset \(offset) (\(length) bytes) does not match \(seal): the file is damaged there",
                               path: owner?.takeUnretainedValue().path)
        }
    }
}

/// The verified-node bitmap of one mapping (see above).
package final class VerifiedNodes: @unchecked Sendable {
    // @unchecked: the bitmap is only touched through atomic bit operations and by `clearAll`,
    // which swaps in zero pages atomically per page, under `accounted`'s lock.
    private let words: UnsafeMutablePointer<UInt64>?
    private let byteCount: Int
    private let bitCount: UInt64
    /// The version the set bits account for, as (version, commit record checksum).
    private let accounted = Locked<(version: UInt64, record: UInt64)?>(nil)
    /// The file's path, for errors.
    let path: String?

    /// A bitmap for a mapping of `length` bytes of the file at `path`. Without one (the address
    /// space could not be had), nodes are verified at every read.
    package init(covering length: Int, path: String?) {
        self.path = path
        let page = 4096
        let bytes = ((max(length, 16) / 128) + page - 1) / page * page
        let base = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
        if let base, base != MAP_FAILED {
            words = base.bindMemory(to: UInt64.self, capacity: bytes / 8)
            byteCount = bytes
            bitCount = UInt64(bytes) * 8
        } else {
            words = nil
            byteCount = 0
            bitCount = 0
        }
    }

    deinit {
        if let words { munmap(words, byteCount) }
    }

    /// The check for reads through this mapping; `enabled` false for files without checksums.
    package func check(enabled: Bool, sealing: NodeSealing) -> NodeCheck {
        NodeCheck(words: words, bitCount: bitCount, enabled: enabled, owner: Unmanaged.passUnretained(self), sealing: sealing)
    }

    /// For the version recovery chose in a mapping just made: the bits set so far are for the
    /// bytes the file holds now.
    package func begin(at slot: RootSlot) {
        accounted.withLock { $0 = (slot.version.value, slot.commitRecordChecksum) }
    }

    /// Before `slot`'s version, which this process did not write on top of the accounted
    /// version, is read through this mapping (invariant 2).
    package func adopt(_ slot: RootSlot) {
        accounted.withLock { accounted in
            if let accounted, accounted.version == slot.version.value, accounted.record == slot.commitRecordChecksum { return }
            clearAll()
            accounted = (slot.version.value, slot.commitRecordChecksum)
        }
    }

    /// For this process's commit of `slot`, built on `base`, which wrote nodes at `offsets`.
    package func wrote(_ slot: RootSlot, base: RootSlot, offsets: [UInt64]) {
        accounted.withLock { accounted in
            if accounted == nil || accounted!.version != base.version.value || accounted!.record != base.commitRecordChecksum {
                clearAll()
            }
            if let words {
                for offset in offsets where offset >> 4 < bitCount { openrealm_bit_set(words, offset >> 4) }
            }
            accounted = (slot.version.value, slot.commitRecordChecksum)
        }
    }

    /// Zero pages in place of the bitmap's: atomic per page for concurrent bit operations,
    /// which land either before (and are lost, costing a verification) or after.
    private func clearAll() {
        guard let words else { return }
        let fresh = mmap(words, byteCount, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0)
        // Should the system refuse (the pages stay as they were then), word by word.
        if fresh != UnsafeMutableRawPointer(words) { openrealm_bits_clear(words, UInt64(byteCount / 8)) }
    }
}
