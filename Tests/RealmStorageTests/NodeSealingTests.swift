import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Node sealing (Nodes/NodeSealing.swift): authentication tags in place of checksums, with
/// 16-byte footprints and a 16-byte granular allocator, run on plain files (issue 29, step 3).
/// The store-level checks of damage are NodeChecksumTests, run for both sealings.
@Suite struct NodeSealingTests {
    static let sealing = SealingMode.authenticated.sealing

    /// A node of `kind` of `length` bytes (a multiple of 8), with varied body bytes, sealed for
    /// `offset`: its footprint.
    static func sealedNode(kind: NodeKind, length: Int, offset: UInt64) -> [UInt8] {
        var writer = NodeWriter(capacity: length)
        for i in 0..<((length - NodeLayout.headerSize) / 8) { writer.u64(UInt64(i + 1) &* 0x0123_4567_89AB_CDEF ^ UInt64(kind.rawValue)) }
        return sealing.sealed(writer.finish(kind: kind, version: VersionID(0x1_2345_6789)), offset: offset)
    }

    static func matches(_ bytes: [UInt8], length: Int, offset: UInt64, available: Int? = nil) -> Bool {
        bytes.withUnsafeBytes { sealing.matches($0.baseAddress!, length: length, offset: offset, available: UInt64(available ?? $0.count)) }
    }

    @Test func theFootprintIsTheNodeRoundedTo16BytesAndItsTag() {
        let sealing = Self.sealing
        for (length, footprint) in [(16, 32), (24, 48), (32, 48), (40, 64), (80, 96), (1 << 20, (1 << 20) + 16)] {
            #expect(sealing.footprint(length) == footprint, "\(length)")
            #expect(NodeSealing.checksum.footprint(length) == length)
        }
        #expect(sealing.alignment == 16 && NodeSealing.checksum.alignment == 8)
        // A run header of a sealed file holds three seals (104 bytes): 112 + 16.
        #expect(RunHeader.footprint(sealing) == 128 && RunHeader.footprint(.checksum) == RunHeader.size)
        // The header's checksum field is 0, the padding zero, the tag after it.
        let node = Self.sealedNode(kind: .list, length: 40, offset: 8192)
        #expect(node.count == 64)
        #expect(node[NodeLayout.checksumOffset..<(NodeLayout.checksumOffset + 4)].allSatisfy { $0 == 0 })
        #expect(node[40..<48].allSatisfy { $0 == 0 })
        #expect(!node[48..<64].allSatisfy { $0 == 0 })
    }

    /// Every bit of a node's footprint (its bytes, the padding, the tag), in a node of every
    /// kind, padded and not: a flip is caught.
    @Test(arguments: [32, 40, 136])
    func everyBitFlippedInEveryNodeKindIsCaught(length: Int) throws {
        for raw in UInt8(1)...12 {
            let kind = try #require(NodeKind(rawValue: raw))
            var bytes = Self.sealedNode(kind: kind, length: length, offset: 8192)
            #expect(Self.matches(bytes, length: length, offset: 8192), "\(kind)")
            var missed: [Int] = []
            for bit in 0..<(bytes.count * 8) {
                bytes[bit / 8] ^= 1 << (bit % 8)
                if Self.matches(bytes, length: length, offset: 8192) { missed.append(bit) }
                bytes[bit / 8] ^= 1 << (bit % 8)
            }
            #expect(missed.isEmpty, "\(kind), \(length) bytes: flips of bits \(missed) went unnoticed")
        }
    }

    /// The tag binds the offset: the same bytes anywhere else in the file (a page written twice,
    /// a write that landed elsewhere, a node moved by 16 bytes) do not verify; nor under another key.
    @Test func aNodeCopiedToAnotherOffsetIsCaught() {
        let bytes = Self.sealedNode(kind: .clusterLeaf, length: 72, offset: 8192)
        #expect(Self.matches(bytes, length: 72, offset: 8192))
        for offset: UInt64 in [8192 - 16, 8192 + 16, 8192 + 4096, 4096, 8192 + 8, 1 << 32 | 8192] {
            #expect(!Self.matches(bytes, length: 72, offset: offset), "at \(offset)")
        }
        let other = NodeSealing.authenticated(NodeAuthenticator(key: [UInt8](repeating: 7, count: 32)))
        #expect(!bytes.withUnsafeBytes { other.matches($0.baseAddress!, length: 72, offset: 8192, available: UInt64($0.count)) })
        #expect(!bytes.withUnsafeBytes { NodeSealing.checksum.matches($0.baseAddress!, length: 72, offset: 8192, available: UInt64($0.count)) })
    }

    /// A length whose tag would lie past the bytes the version reaches is refused without
    /// reading there; so is a node whose length was changed to one that still fits.
    @Test func aTagPastTheVersionIsRefusedNotRead() {
        var bytes = Self.sealedNode(kind: .blob, length: 48, offset: 8192)
        #expect(!Self.matches(bytes, length: 48, offset: 8192, available: 63))
        #expect(Self.matches(bytes, length: 48, offset: 8192, available: 64))
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(40).littleEndian, toByteOffset: 4, as: UInt32.self) }
        #expect(!Self.matches(bytes, length: 40, offset: 8192))
    }

    /// The node at `offset` of `file` opened through NodeView with a tag check, the version's
    /// bytes ending at `limit`: its length, or the error.
    static func openNode(_ file: [UInt8], at offset: Int, limit: Int) -> Result<Int, StorageError> {
        file.withUnsafeBytes { raw in
            Result { () throws(StorageError) -> Int in
                // With the seal a parent would hold: the tag's first 8 bytes (S5), read here
                // only where they lie inside the buffer.
                let tagAt = (offset + 40 + 15) & ~15
                let seal = tagAt + 8 <= raw.count ? UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: tagAt, as: UInt64.self)) : 0
                return try NodeView(ref: Ref(UInt64(offset), seal: seal), mapping: raw.baseAddress!, limit: UInt64(limit), expecting: .list,
                                    check: .always(sealing)).length
            }
        }
    }

    /// Through NodeView, as every read goes: a damaged tagged node is `fileCorrupted`, a whole
    /// one opens; a tag past the version's limit is `fileCorrupted`, never a read past it.
    @Test func aNodeViewRefusesADamagedTaggedNode() throws {
        let offset = 8192
        var file = [UInt8](repeating: 0, count: offset)
        file += Self.sealedNode(kind: .list, length: 40, offset: UInt64(offset))
        #expect(try Self.openNode(file, at: offset, limit: file.count).get() == 40)
        for limit in [offset + 48, offset + 63] {
            guard case .failure(let error) = Self.openNode(file, at: offset, limit: limit) else {
                Issue.record("a tag past the limit \(limit) was read")
                continue
            }
            #expect(error.code == .fileCorrupted)
        }
        file[offset + 20] ^= 1
        guard case .failure(let error) = Self.openNode(file, at: offset, limit: file.count) else {
            Issue.record("a damaged node was read")
            return
        }
        #expect(error.code == .fileCorrupted)
        #expect(error.message.contains("authentication tag"), "\(error)")
    }

    // MARK: The allocator's 16-byte mode

    /// Random commits' worth of footprints allocated and released (tagged and free for good,
    /// runs begun at reserved headers): every allocation is 16-aligned, no two live footprints
    /// overlap, nothing live is free, and released neighbours merge.
    @Test(arguments: [5, 29, 2026])
    func sixteenByteModeKeepsEveryAllocationAlignedAndApart(seed: Int) {
        var random = SeededRandom(seed: UInt64(seed))
        let sealing = Self.sealing
        var space = FreeSpace(extents: [], logicalSize: UInt64(FileHeader.size), alignment: 16)
        var live: [(offset: UInt64, length: UInt64, version: UInt64)] = []
        for version in UInt64(1)...500 {
            for _ in 0..<Int.random(in: 0...6, using: &random) where !live.isEmpty {
                let gone = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                let forGood = Int.random(in: 0..<8, using: &random) == 0
                space.release(offset: gone.offset, length: gone.length, firstVersion: forGood ? 0 : gone.version, endVersion: forGood ? 0 : version)
            }
            space.releaseUnreachable(pinned: [version - 1])
            if version % 3 == 0, let extent = space.extents.filter({ $0.isFreeForGood && $0.length >= 256 }).randomElement(using: &random) {
                let at = extent.offset + 16 * UInt64.random(in: 0...(extent.length - 128) / 16, using: &random)
                let footprint = UInt64(RunHeader.footprint(sealing))
                let began = space.beginRun(at: at, length: footprint)
                #expect(began)
                live.append((at, footprint, version))
            } else {
                space.beginRun()
            }
            // Off the grid, a reservation read from a file is refused, not taken.
            let offGrid = space.beginRun(at: UInt64(FileHeader.size) + 8, length: 96)
            #expect(!offGrid)
            for _ in 0..<Int.random(in: 1...10, using: &random) {
                let footprint = UInt64(sealing.footprint(Int.random(in: 2...200, using: &random) * 8))
                let offset = space.allocate(footprint)
                #expect(offset % 16 == 0 && footprint % 16 == 0, "version \(version): \(offset)+\(footprint)")
                live.append((offset, footprint, version))
            }
            #expect(space.logicalSize % 16 == 0)
            // Live footprints and free extents tile the space apart.
            let spans = (live.map { ($0.offset, $0.length) } + space.extents.map { ($0.offset, $0.length) }).sorted { $0.0 < $1.0 }
            var end = UInt64(FileHeader.size)
            for (offset, length) in spans {
                #expect(offset >= end, "version \(version): \(offset)+\(length) overlaps what ends at \(end)")
                #expect(offset % 16 == 0 && length % 16 == 0)
                end = offset + length
            }
            #expect(end <= space.logicalSize)
        }
        // Everything released, free for good: the file gives back all of it, merged.
        for node in live { space.release(offset: node.offset, length: node.length, firstVersion: 0, endVersion: 0) }
        space.releaseUnreachable(pinned: [])
        #expect(space.extents.isEmpty && space.logicalSize == UInt64(FileHeader.size), "\(space.extents.prefix(4))")
    }

    /// Released footprints next to each other become one extent, which holds a footprint the
    /// size of both.
    @Test func releasedFootprintsMerge() {
        let sealing = Self.sealing
        var space = FreeSpace(extents: [], logicalSize: UInt64(FileHeader.size), alignment: 16)
        space.beginRun()
        let lengths = [40, 16, 1000, 24].map { UInt64(sealing.footprint($0)) }
        let offsets = lengths.map { space.allocate($0) }
        #expect(offsets == [4096, 4160, 4192, 5216])
        for (offset, length) in zip(offsets, lengths).dropLast() { space.release(offset: offset, length: length, firstVersion: 0, endVersion: 0) }
        space.releaseUnreachable(pinned: [])
        #expect(space.extents == [FreeExtent(offset: 4096, length: 1120, firstVersion: 0, endVersion: 0)])
        // Best fit (no run begun): the merged extent holds a footprint of its whole size.
        #expect(space.allocate(1120) == 4096)
    }

    // MARK: Stores

    /// What a store in authenticated mode writes, it reads back after reopening, and after a
    /// compaction (whose copy keeps the sealing); every node lies on the 16-byte grid.
    @Test(arguments: [1, 16])
    func anAuthenticatedStoreReadsBackEverythingAfterReopening(chainLength: Int) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let options = SealingMode.authenticated.applied(to: StoreOptions(limits: CrashWorkload.limits, chainLength: chainLength))
        do {
            let store = try Store.open(path: path, options: options)
            for step in CrashWorkload.steps.indices { try CrashWorkload.commit(step: step, on: store) }
            #expect(try DatabaseDump(store.beginRead()) == CrashWorkload.expected.last)
            try store.verify(uncached: true)
        }
        do {
            let reopened = try Store.open(path: path, options: options)
            #expect(try DatabaseDump(reopened.beginRead()) == CrashWorkload.expected.last)
            try reopened.verify(uncached: true)
            #expect(try reopened.beginRead().walkNodes().nodes > 20)
        }
        if chainLength == 1 {
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
            let nodes = try NodeChecksumTests.nodes(of: bytes, .authenticated)
            #expect(nodes.allSatisfy { $0.offset % 16 == 0 && bytes[$0.offset + NodeLayout.checksumOffset] == 0 })
        }
        let result = try Store.compact(path: path, options: options)
        guard case .compacted = result else { Issue.record("not compacted: \(result)"); return }
        let compacted = try Store.open(path: path, options: options)
        // The same data as version 1 of the copy.
        #expect(CompactionCrashInjectionTests.content(try DatabaseDump(compacted.beginRead())) == CompactionCrashInjectionTests.content(CrashWorkload.expected.last!))
        try compacted.verify(uncached: true)
        // More commits on the compacted file.
        let tx = try compacted.beginWrite()
        let table = try tx.createTable("After", columns: [ColumnSpec(name: "n", type: .int)])
        for n in 0..<50 { _ = try tx.insert(table, values: [.int(Int64(n))]) }
        try tx.commit()
        try compacted.verify(uncached: true)
    }

    /// Opened with the other sealing, a file gives a typed error, not a crash and not data.
    @Test(arguments: SealingMode.allCases)
    func aFileOpenedWithTheOtherSealingIsRefused(written: SealingMode) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path, options: written.applied(to: StoreOptions(limits: CrashWorkload.limits)))
            for step in CrashWorkload.steps.indices.prefix(4) { try CrashWorkload.commit(step: step, on: store) }
        }
        let other: SealingMode = written == .checksum ? .authenticated : .checksum
        do {
            let store = try Store.open(path: path, options: other.applied(to: StoreOptions(create: false)))
            try store.verify()
            Issue.record("a \(written) file was read with \(other) sealing")
        } catch {
            #expect(error.code == .fileCorrupted, "\(error)")
        }
    }
}
