import Foundation
import Testing
@testable import RealmStorage

/// LZ4-compressed copies (Compressed/): written from a version, opened read-only in place,
/// read like the source, refused for writing, bounded in memory.
@Suite struct CompressedCopyTests {
    /// A store with `count` persons (every other one deleted when `sparse`) and a list column.
    static func makeSource(_ path: String, count: Int, sparse: Bool = false) throws -> Store {
        let store = try Store.open(path: path)
        let tx = try store.beginWrite()
        let table = try tx.createTable("Person", columns: Fixtures.personColumns + [ColumnSpec(name: "tags", type: .string, isList: true)])
        for id in 0..<count {
            try tx.insert(table, values: Fixtures.person(Int64(id)) + [.null])
            if id % 7 == 0 { try tx.setList(table, ObjectKey(Int64(id)), ColumnKey(5), [.string("t\(id)"), .string("u")]) }
        }
        if sparse { for id in stride(from: 0, to: count, by: 2) { _ = try tx.delete(table, ObjectKey(Int64(id))) } }
        try tx.commit()
        return store
    }

    /// What a version holds, without its version number (a copy is version 1).
    static func contents(_ read: ReadTransaction) throws -> DatabaseDump {
        var dump = try DatabaseDump(read)
        dump.version = 0
        return dump
    }

    static func openCompressed(_ path: String, key: [UInt8]? = nil, cacheSize: Int = 4 << 20, reading: CompressedReading = .onDemand) throws(StorageError) -> Store {
        var options = StoreOptions(create: false, readOnly: true)
        options.encryptionKey = key
        options.compressedCacheSize = cacheSize
        options.compressedReading = reading
        return try Store(path: path, options: options)
    }

    @Test(arguments: [CompressedReading.onDemand, .inflate])
    func compressedCopyReadsAsTheSource(reading: CompressedReading) throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path(), count: 5000, sparse: true)
        let copyPath = dir.path("copy.realmz")
        try source.writeCompactedCopy(to: copyPath, compression: .lz4)
        #expect(CompressedFormat.isCompressedFile(at: copyPath))
        let copy = try Self.openCompressed(copyPath, reading: reading)
        #expect(try Self.contents(copy.beginRead()) == Self.contents(source.beginRead()))
        let read = copy.beginRead()
        let view = try read.table(read.tables[0].key)
        #expect(try view.indexLookup(ColumnKey(0), .int(501)) == [ObjectKey(501)])
        #expect(try view.indexLookup(ColumnKey(0), .int(500)) == [])
        try copy.verify()
        let counts = try #require(copy.compressedCounts)
        #expect(counts.onDemand == (reading == .onDemand))
        #expect(counts.damaged == 0)
        // Smaller than the uncompressed copy.
        let plainPath = dir.path("copy.realm")
        try source.writeCompactedCopy(to: plainPath)
        let sizes = try [copyPath, plainPath].map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as! Int }
        #expect(sizes[0] < sizes[1])
    }
}

extension CompressedCopyTests {
    /// A file far larger than the cache answers lookups and a full scan, with no more blocks
    /// resident than the budget allows at any time.
    @Test func largeCopyIsReadWithinItsCacheBudget() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path(), count: 200_000)
        let copyPath = dir.path("copy.realmz")
        try source.writeCompactedCopy(to: copyPath, compression: .lz4)
        let copy = try Self.openCompressed(copyPath, cacheSize: 256 << 10)
        let read = copy.beginRead()
        let view = try read.table(read.tables[0].key)
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let id = Int64.random(in: 0..<200_000, using: &random)
            let keys = try view.indexLookup(ColumnKey(0), .int(id))
            #expect(keys.count == 1)
            let row = try #require(try view.row(keys[0]))
            #expect(Array(try row.values().prefix(5)) == Fixtures.person(id))
        }
        var seen = 0
        try view.forEachRow { (row) throws(StorageError) -> Bool in
            if try row.values()[0] != .int(row.key.value) { Issue.record("row \(row.key) holds another object") }
            seen += 1
            return true
        }
        #expect(seen == 200_000)
        let counts = try #require(copy.compressedCounts)
        guard counts.onDemand else {
            // A system that refuses userfaultfd (a container's seccomp profile) gets the
            // documented fallback, the image inflated at open: the reads above were checked,
            // the budget cannot be. The refusal must be the system's, not a failure of ours.
            let reason = counts.fallbackReason ?? ""
            #expect(reason.contains("userfaultfd"), "fell back for another reason: \(reason)")
            print("CompressedCopyTests: userfaultfd refused on this system (\(reason)); the cache budget was not checked")
            return
        }
        #expect(counts.budget == 16)
        #expect(counts.peakResident <= counts.budget)
        // The image is many times the budget: blocks were dropped and refilled.
        let blocks = Int(read.slot.logicalSize) / CompressedFormat.defaultBlockSize
        #expect(blocks > 10 * counts.budget)
        #expect(counts.installs > blocks)
        #expect(counts.damaged == 0)
    }

    /// Opened for writing, a compressed copy is refused with the way to a writable file; opened
    /// read-only, nothing is created beside it (no lock file).
    @Test func compressedCopyIsOnlyOpenedReadOnly() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path(), count: 100)
        let folder = TemporaryDirectory()
        let copyPath = folder.path("copy.realmz")
        try source.writeCompactedCopy(to: copyPath, compression: .lz4)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["copy.realmz"])
        do {
            _ = try Store(path: copyPath, options: StoreOptions())
            Issue.record("a compressed copy opened for writing")
        } catch {
            #expect(error.code == .readOnlyFile)
            #expect(error.message.contains("without --lz4"))
        }
        let copy = try Self.openCompressed(copyPath)
        #expect(try copy.beginRead().table(copy.beginRead().tables[0].key).count() == 100)
        #expect(throws: StorageError.self) { try copy.beginWrite() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.url.path) == ["copy.realmz"])
        // A copy of the compressed copy, uncompressed, is an ordinary writable realm.
        let writable = folder.path("writable.realm")
        try copy.writeCompactedCopy(to: writable)
        let reopened = try Store(path: writable, options: StoreOptions())
        let tx = try reopened.beginWrite()
        try tx.insert(reopened.beginRead().tables[0].key, values: Fixtures.person(100) + [.null])
        try tx.commit()
        try reopened.verify()
    }
}

extension CompressedCopyTests {
    /// A block touched between every other block's first touch (as a tree's upper nodes are
    /// by random lookups) stays resident once it has come back after a drop: the others stream
    /// through the cache without pushing it out (FaultRegion.swift, the 2Q cache). Dropping
    /// the oldest install instead refilled it every `budget` faults.
    @Test func aBlockTouchedAgainAndAgainStaysResident() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path(), count: 60_000)
        let copyPath = dir.path("copy.realmz")
        try source.writeCompactedCopy(to: copyPath, compression: .lz4)
        let file = try CompressedFile(path: copyPath, cacheSize: 8 * CompressedFormat.defaultBlockSize, reading: .onDemand, wrapper: nil)
        let mapping = try file.map(length: 0)
        guard file.counts.onDemand else {
            print("CompressedCopyTests: userfaultfd refused on this system; the cache policy was not checked")
            return
        }
        let blockSize = CompressedFormat.defaultBlockSize
        let blocks = file.blocks.layout.blocks.count
        #expect(blocks > 20 * 8)
        // Reads a byte of each block, as a reader of the mapping would.
        func touch(_ block: Int) -> UInt8 { mapping.base.load(fromByteOffset: block * blockSize + 100, as: UInt8.self) }
        var sum = 0
        for block in 1..<blocks {
            sum &+= Int(touch(0))
            sum &+= Int(touch(block))
        }
        let counts = file.counts
        // Every block once, block 0 at most twice more (dropped once from probation, then hot).
        #expect(counts.installs <= blocks + 2, "\(counts.installs) installs for \(blocks) blocks")
        #expect(counts.peakResident <= counts.budget)
        #expect(counts.damaged == 0)
        // The bytes read are the image's bytes.
        var expected = 0
        let image = UnsafeMutableRawBufferPointer.allocate(byteCount: 1, alignment: 1)
        defer { image.deallocate() }
        for block in 1..<blocks {
            for b in [0, block] {
                _ = try file.read(into: image, at: UInt64(b * blockSize + 100))
                expected &+= Int(image[0])
            }
        }
        #expect(sum == expected)
        withExtendedLifetime(mapping) {}
    }

    /// Closing a compressed copy stops its handler thread and frees its region, its mapping and
    /// its userfaultfd, whether the copy read well or was damaged: each open of a copy once left
    /// all of them behind (the thread held the region whose end was to stop it), a thread per
    /// open for a server that opens copies again and again.
    @Test func closingACompressedCopyStopsItsHandlerAndFreesItsRegion() throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path(), count: 2_000)
        let copyPath = dir.path("copy.realmz")
        try source.writeCompactedCopy(to: copyPath, compression: .lz4)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: copyPath))
        bytes[bytes.count / 2] ^= 0xFF
        let damagedPath = dir.path("damaged.realmz")
        try bytes.write(to: URL(fileURLWithPath: damagedPath))
        for path in [copyPath, damagedPath] {
            weak var region: FaultRegion?
            do {
                let copy = try Self.openCompressed(path)
                region = (copy.file as? CompressedFile)?.currentRegion
                #expect(region != nil, "\(path) is not read through a region: \(String(describing: copy.compressedCounts))")
                _ = try? copy.verify()
            }
            #expect(region == nil, "the region of \(path) outlived its store")
        }
    }
}
