import Foundation
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#endif

/// Node checksums (format 4, NodeFormat.swift), and authentication tags in their place
/// (NodeSealing.swift, on a plain file): every node's bytes are verified before they are used,
/// once per node per process (VerifiedNodes.swift). The store-level tests run for both sealings.
@Suite struct NodeChecksumTests {
    /// Every node start of the newest version of the file `bytes`, with its length: the nodes (by
    /// their footprints) and the free list's extents tile the space from the header to the
    /// version's logical size, on the sealing's grid.
    static func nodes(of bytes: [UInt8], _ mode: SealingMode = .checksum) throws -> [(offset: Int, length: Int)] {
        let sealed = mode.sealing.storesSeals, slotSize = FileHeader.slotSize(sealed: sealed)
        let slots = bytes.withUnsafeBytes { raw in
            FileHeader.slotOffsets.compactMap { RootSlot.decode(UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + slotSize)]), sealed: sealed) }
        }
        let newest = try #require(slots.max { $0.version < $1.version })
        let free = try bytes.withUnsafeBytes { (raw) throws(StorageError) -> FreeSpace in
            try FreeSpace.decode(head: newest.freeListRef, mapping: raw.baseAddress!, logicalSize: newest.logicalSize, check: .always(mode.sealing))
        }
        let alignment = mode.sealing.alignment
        let freeStarts = Dictionary(free.extents.map { (Int($0.offset), Int($0.length)) }, uniquingKeysWith: { a, _ in a })
        var found: [(offset: Int, length: Int)] = []
        var position = FileHeader.size
        while position < Int(newest.logicalSize) {
            try #require(position % alignment == 0, "a node or free extent at \(position), off the \(alignment)-byte grid")
            if let length = freeStarts[position] {
                position += length
                continue
            }
            let length = Int(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self) })
            try #require(length >= NodeLayout.headerSize)
            found.append((position, length))
            position += mode.sealing.footprint(length)
        }
        #expect(position == Int(newest.logicalSize), "the nodes and free extents do not tile the version's space")
        return found
    }

    /// A file written by the crash workload, every commit's root in a slot.
    static func baseFile(in directory: TemporaryDirectory, _ mode: SealingMode = .checksum) throws -> [UInt8] {
        let path = directory.path("base.realm")
        do {
            let store = try Store.open(path: path, options: mode.applied(to: StoreOptions(limits: CrashWorkload.limits, chainLength: 1)))
            for step in CrashWorkload.steps.indices { try CrashWorkload.commit(step: step, on: store) }
            try store.verify()
        }
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test func aFlippedBitAnywhereInASmallNodeChangesItsChecksum() {
        var writer = NodeWriter(capacity: 64)
        for i in 0..<6 { writer.u64(UInt64(i) &* 0x0123_4567_89AB_CDEF) }
        var bytes = writer.finish(kind: .list, version: VersionID(0x1_2345_6789))
        #expect(bytes.count == 64)
        NodeChecksum.stamp(&bytes, offset: 8192)
        bytes.withUnsafeBytes { #expect(NodeChecksum.matches($0.baseAddress!, length: 64, offset: 8192)) }
        #expect(bytes.withUnsafeBytes { NodeLayout.version(of: $0.baseAddress!) } == 0x1_2345_6789)
        var missed: [Int] = []
        for bit in 0..<(64 * 8) where !(96..<128).contains(bit) {  // not the checksum field itself
            bytes[bit / 8] ^= 1 << (bit % 8)
            if bytes.withUnsafeBytes({ NodeChecksum.matches($0.baseAddress!, length: 64, offset: 8192) }) { missed.append(bit) }
            bytes[bit / 8] ^= 1 << (bit % 8)
        }
        #expect(missed.isEmpty, "flips of bits \(missed) went unnoticed")
        // The same bytes elsewhere in the file: a page written twice, a write at the wrong place.
        for offset: UInt64 in [8192 - 8, 8192 + 8, 8192 + 4096, 4096] {
            #expect(!bytes.withUnsafeBytes { NodeChecksum.matches($0.baseAddress!, length: 64, offset: offset) }, "at \(offset)")
        }
    }

    /// A whole page copied over another (nodes keep their place in the page): every node it
    /// brings is refused where it landed.
    @Test(arguments: SealingMode.allCases)
    func aPageCopiedOverAnotherIsReportedNeverRead(mode: SealingMode) throws {
        let directory = TemporaryDirectory()
        let base = try Self.baseFile(in: directory, mode)
        let pages = base.count / 4096
        var checked = 0
        for (n, (from, to)) in [(1, 2), (2, 3), (3, 1), (pages - 1, pages - 2), (pages - 2, 1), (2, pages - 1)].enumerated()
        where from != to && from >= 1 && to >= 1 && from < pages && to < pages {
            var bytes = base
            bytes.replaceSubrange((to * 4096)..<((to + 1) * 4096), with: base[(from * 4096)..<((from + 1) * 4096)])
            let path = directory.path("copied-\(n).realm")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            do {
                let store = try Store.open(path: path, options: mode.applied(to: StoreOptions(durability: .unsafe, create: false)))
                try store.verify()
                let dump = try DatabaseDump(store.beginRead())
                #expect(CrashWorkload.expected.contains(dump), "page \(from) over page \(to): the copy was read as data")
            } catch {
                #expect(error.code == .fileCorrupted, "page \(from) over page \(to): \(error)")
            }
            checked += 1
        }
        #expect(checked >= 4)
    }

    /// For each node of `base`, a copy of the file with `mask` flipped into one byte of it
    /// (the body's middle, and once in a while the header's version or length, or a tagged
    /// node's tag), opened: a refused open must be `fileCorrupted`; an open store goes to `body`
    /// with a description.
    static func forEachDamagedNode(of base: [UInt8], in directory: TemporaryDirectory, flipping mask: UInt8, _ mode: SealingMode = .checksum,
                                   _ body: (Store, String) throws(StorageError) -> Void) throws {
        for (n, node) in try nodes(of: base, mode).enumerated() {
            let tag = mode.sealing.footprint(node.length) - NodeSealing.tagSize
            let at = node.offset + (n % 5 == 4 ? 9
                : mode == .authenticated && n % 5 == 2 ? tag + n % NodeSealing.tagSize
                : NodeLayout.headerSize + (node.length - NodeLayout.headerSize) / 2)
            var bytes = base
            bytes[at] ^= mask
            let path = directory.path("damaged-\(mask)-\(n).realm")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let context = "node \(n) at \(node.offset) (\(node.length) bytes), byte \(at), kind \(base[node.offset])"
            do throws(StorageError) {
                try body(try Store.open(path: path, options: mode.applied(to: StoreOptions(durability: .unsafe, create: false))), context)
            } catch {
                #expect(error.code == .fileCorrupted, "\(context): \(error)")
            }
        }
    }

    /// A byte changed in any node of the newest version: the file is refused, or a read reports
    /// `fileCorrupted`, or it reads as a version it held (the damage hit the newest commit,
    /// whose record refuses it). Never other data.
    @Test(arguments: SealingMode.allCases)
    func aByteChangedInAnyNodeIsReportedNeverRead(mode: SealingMode) throws {
        let directory = TemporaryDirectory()
        let base = try Self.baseFile(in: directory, mode)
        #expect(try Self.nodes(of: base, mode).count > 20)
        try Self.forEachDamagedNode(of: base, in: directory, flipping: 0x20, mode) { (store, context) throws(StorageError) in
            do throws(StorageError) {
                try store.verify()
                let dump = try DatabaseDump(store.beginRead())
                #expect(CrashWorkload.expected.dropLast().contains(dump), "\(context): the damage was read as data")
            } catch {
                #expect(error.code == .fileCorrupted, "\(context): \(error)")
            }
        }
    }

    /// The walk `verifyIntegrityOnOpen` runs reads the same nodes as the full check, and finds
    /// a byte changed in any of them before anything reads it as data: after a walk that passes,
    /// reading the whole version throws nothing.
    @Test(arguments: SealingMode.allCases)
    func theNodeWalkFindsDamageInEveryNode(mode: SealingMode) throws {
        let directory = TemporaryDirectory()
        let base = try Self.baseFile(in: directory, mode)
        let clean = directory.path("clean.realm")
        try Data(base).write(to: URL(fileURLWithPath: clean))
        let whole = try Store.open(path: clean, options: mode.applied(to: StoreOptions(durability: .unsafe, create: false)))
        let walked = try whole.beginRead().walkNodes()
        let verified = try whole.verify()
        #expect(walked.nodes == verified.nodes && walked.bytes == verified.reachableBytes)
        try Self.forEachDamagedNode(of: base, in: directory, flipping: 0x04, mode) { (store, context) throws(StorageError) in
            let read = store.beginRead()
            do throws(StorageError) {
                _ = try read.walkNodes()
            } catch {
                #expect(error.code == .fileCorrupted, "\(context): \(error)")
                return
            }
            // The damage hit the newest commit, and the open recovered the version before it.
            do {
                let dump = try DatabaseDump(read)
                #expect(CrashWorkload.expected.dropLast().contains(dump), "\(context): the damage was read as data")
            } catch {
                Issue.record("\(context): a read after the walk met damage: \(error)")
            }
        }
    }

    @Test(arguments: SealingMode.allCases)
    func theErrorNamesTheFileTheOffsetAndTheKind(mode: SealingMode) throws {
        let directory = TemporaryDirectory()
        let base = try Self.baseFile(in: directory, mode)
        let sealed = mode.sealing.storesSeals, slotSize = FileHeader.slotSize(sealed: sealed)
        let newest = try #require(base.withUnsafeBytes { raw in
            FileHeader.slotOffsets.compactMap { RootSlot.decode(UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + slotSize)]), sealed: sealed) }
        }.map(\.version).max())
        // A cluster leaf outside the newest commit: the file opens at the newest version, and
        // the read finds it. (A leaf inside that commit has recovery refuse the commit instead,
        // which the tests above cover; where the commits' leaves lie varies from run to run.)
        var checked = false
        for (n, leaf) in try Self.nodes(of: base, mode).enumerated() where base[leaf.offset] == NodeKind.clusterLeaf.rawValue {
            var bytes = base
            bytes[leaf.offset + leaf.length - 1] ^= 1
            let path = directory.path("damaged-\(n).realm")
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            do {
                let store = try Store.open(path: path, options: mode.applied(to: StoreOptions(create: false)))
                guard store.beginRead().slot.version == newest else { continue }
                checked = true
                try store.verify()
                Issue.record("the damaged leaf at \(leaf.offset) was not found")
            } catch {
                #expect(error.code == .fileCorrupted)
                #expect(error.path == path, "\(error)")
                #expect(error.message.contains("clusterLeaf node at offset \(leaf.offset)"), "\(error)")
                #expect(error.message.contains(mode == .authenticated ? "authentication tag" : "checksum"), "\(error)")
            }
            break
        }
        #expect(checked, "no cluster leaf outside the newest commit")
    }

    /// Verified once per process: damage arriving later in a node already verified is found by
    /// an uncached check (and by every new process), not by the reads that trusted it.
    @Test(arguments: SealingMode.allCases)
    func aNodeIsVerifiedOncePerProcess(mode: SealingMode) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        // Every root in a slot: `nodes(of:)` reads the newest slot's version.
        let store = try Store.open(path: path, options: mode.applied(to: StoreOptions(limits: CrashWorkload.limits, chainLength: 1)))
        for step in CrashWorkload.steps.indices { try CrashWorkload.commit(step: step, on: store) }
        let before = try DatabaseDump(store.beginRead())
        try store.verify()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let leaf = try #require(try Self.nodes(of: bytes, mode).last { bytes[$0.offset] == NodeKind.list.rawValue || bytes[$0.offset] == NodeKind.indexLeaf.rawValue })
        // Behind the store's back (the mapping is shared: it shows the change): the checksum
        // field (0 under a tag, which covers it), so that what the node says stays the same.
        let fd = open(path, O_RDWR)
        #expect(fd >= 0)
        var flipped = bytes[leaf.offset + NodeLayout.checksumOffset] ^ 0xFF
        #expect(pwrite(fd, &flipped, 1, off_t(leaf.offset + NodeLayout.checksumOffset)) == 1)
        close(fd)
        #expect(try DatabaseDump(store.beginRead()) == before)
        try store.verify()
        #expect(throws: StorageError.self) { try store.verify(uncached: true) }
    }

    /// What a store writes carries checksums that verify from the disk, not only from its
    /// bitmap: after commits that reuse space, a fresh look verifies every node.
    @Test(arguments: SealingMode.allCases)
    func everyNodeACommitWritesVerifiesUncached(mode: SealingMode) throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: mode.applied(to: StoreOptions(limits: CrashWorkload.limits)))
        for step in CrashWorkload.steps.indices {
            try CrashWorkload.commit(step: step, on: store)
            try store.verify(uncached: true)
        }
    }
}
