import Foundation
import Testing
@testable import RealmStorage

/// Chained roots (FileHeader.swift, format 2): a commit writes its root as a run header at the
/// start of its own run, where the version before reserved it, and a root slot only every
/// `chainLength` commits, so that a small commit's sync writes one place. Recovery follows the
/// chain from each slot. (The power-cut suites run over chains too: CrashInjectionTests and
/// the group and two-writer suites with short and default chain lengths.)
@Suite struct ChainedRootTests {
    static let columns = [ColumnSpec(name: "n", type: .int, indexed: true), ColumnSpec(name: "s", type: .string)]

    static func commitRow(_ store: Store, _ n: Int) throws {
        let transaction = try store.beginWrite()
        let table = try transaction.table(named: "Row")?.key ?? transaction.createTable("Row", columns: columns)
        try transaction.insert(table, values: [.int(Int64(n % 7)), .string("row \(n)")])
        try transaction.commit()
    }

    static func rowCount(_ store: Store) throws -> Int {
        try store.beginRead().table(named: "Row")?.count() ?? 0
    }

    @Test func aSmallCommitWritesOneRunAndSyncsOnceAndASlotOnlyEndsAChain() throws {
        let directory = TemporaryDirectory()
        let box = WrappedFileBox<RecordingFile>()
        let store = try Store.open(path: directory.path(), options: StoreOptions(fileWrapper: box.wrapper { RecordingFile(wrapping: $0) }, chainLength: 4))
        let file = try #require(box.file)
        try Self.commitRow(store, 0)
        var slotCommits: [Int] = []
        for n in 1...12 {
            file.clear()
            try Self.commitRow(store, n)
            let events = file.events
            let slotWrites = events.filter {
                if case .write(let offset, _) = $0 { return FileHeader.slotOffsets.contains(Int(offset)) } else { return false }
            }
            if !slotWrites.isEmpty { slotCommits.append(n) }
            // One write of the run (run header, nodes, free list, record), the hint to start
            // writing it back (WritebackTests), then the sync; a commit that starts a chain
            // writes its slot and the selector as well.
            #expect(events.filter { $0 == .sync }.count == 1, "commit \(n): \(events)")
            #expect(events.count == (slotWrites.isEmpty ? 3 : 5), "commit \(n): \(events)")
        }
        // The first commit follows genesis's slot; then a slot every fourth version.
        #expect(slotCommits == [3, 7, 11])
        try store.verify()
        #expect(try Self.rowCount(store) == 13)
    }

    @Test func reopeningFollowsTheChainToTheNewestVersion() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path, options: StoreOptions(chainLength: 64))
            for n in 0..<20 { try Self.commitRow(store, n) }
        }
        let reopened = try Store.open(path: path)
        #expect(reopened.latestVersion == VersionID(21))
        #expect(try Self.rowCount(reopened) == 20)
        try reopened.verify()
        // And goes on from there: the next commit continues the same chain.
        try Self.commitRow(reopened, 20)
        try reopened.verify()
        let again = try Store.open(path: path)
        #expect(try Self.rowCount(again) == 21)
    }

    /// The run headers of a closed file, by version, read the way recovery does.
    static func chain(of path: String) throws -> [RootSlot] {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return bytes.withUnsafeBytes { raw in
            let slots = FileHeader.slotOffsets.compactMap { RootSlot.decode(UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + FileHeader.slotSize)])) }
            let head = slots.max { $0.version < $1.version }!
            return Recovery.chain(after: head, base: raw.baseAddress!, limit: UInt64(raw.count))
        }
    }

    @Test func aDamagedRunHeaderEndsTheChainBeforeIt() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path)
            for n in 0..<10 { try Self.commitRow(store, n) }
        }
        let chain = try Self.chain(of: path)
        #expect(chain.map(\.version.value) == Array(2...11))
        // Damage the run header of version 7 (one flipped byte fails its checksum).
        let damaged = chain.first { $0.version.value == 7 }!
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[Int(damaged.runHeader.offset) + 20] ^= 0x40
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: path)
        #expect(store.latestVersion == VersionID(6))
        #expect(try Self.rowCount(store) == 5)
        try store.verify()
        // The next commit writes its run header over the damaged one and the chain goes on.
        try Self.commitRow(store, 5)
        try store.verify()
        #expect(try Self.rowCount(try Store.open(path: path)) == 6)
    }

    @Test func aRunHeaderFromAnotherHistoryIsNotFollowed() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            let store = try Store.open(path: path)
            for n in 0..<6 { try Self.commitRow(store, n) }
        }
        // Version 5's run header rewritten as if it followed another version 4: a whole,
        // checksummed header whose link names a record that is not version 4's.
        let header = try #require(try Self.chain(of: path).first { $0.version.value == 5 })
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let forged = RunHeader(root: header, link: header.commitRecordChecksum &+ 1).encoded()
        bytes.replaceSubrange(Int(header.runHeader.offset)..<(Int(header.runHeader.offset) + RunHeader.size), with: forged)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let store = try Store.open(path: path)
        #expect(store.latestVersion == VersionID(4))
        try store.verify()
    }

    @Test func aFailedSyncLeavesNoneOfItsChainedVersionsToTheNextOpen() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            // The sixth sync fails: versions up to 6 are durable, version 7's run header was
            // written and is cleared again.
            let store = try Store.open(path: path, options: StoreOptions(fileWrapper: { FaultInjectingFile(wrapping: $0, failing: .sync, at: 6, errno: EIO) }))
            for n in 0..<5 { try Self.commitRow(store, n) }
            #expect(throws: StorageError.self) { try Self.commitRow(store, 5) }
        }
        let store = try Store.open(path: path)
        #expect(try Self.rowCount(store) == 5)
        #expect(store.latestVersion == VersionID(6))
        try store.verify()
        try Self.commitRow(store, 5)
        #expect(try Self.rowCount(try Store.open(path: path)) == 6)
    }

    /// (Format 3, not the current format: formats 1-3 carry no node checksums, so a commit never
    /// makes them format 4; a compacting copy does, OpenRealm's upgrade at open.)
    @Test func aFormatOneFileBecomesFormatThreeAtItsFirstCommit() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("old.realm")
        try FileManager.default.copyItem(atPath: GoldenFileTests.path(format: 1), toPath: path)
        func format() throws -> UInt32 { try GoldenFileTests.formatVersion(ofFileAt: path) }
        #expect(try format() == 1)
        do {
            let store = try Store.open(path: path)
            let before = try #require(try store.beginRead().table(named: "Thing")).count()
            // Its slots name no next run: the first commit writes a slot, after the new format
            // version is synced; the second follows it through a run header.
            for n in 0..<2 {
                let transaction = try store.beginWrite()
                let things = try #require(try transaction.table(named: "Thing")).key
                try transaction.delete(things, ObjectKey(Int64(1 + n)))
                try transaction.commit()
            }
            #expect(try #require(try store.beginRead().table(named: "Thing")).count() == before - 2)
            try store.verify()
        }
        #expect(try format() == FileHeader.freeListDeltaFormat)
        #expect(try Self.chain(of: path).count == 1)
        let reopened = try Store.open(path: path)
        try reopened.verify()
        #expect(try reopened.beginRead().table(named: "Thing")?.row(ObjectKey(2)) == nil)
    }
    /// The upgrade under power cuts: the format version is synced before the first slot that
    /// names a next run is written, so no image is a format 1 file whose slot starts a chain
    /// (a format 1 reader would stop at the slot and lose the versions after it).
    @Test func noPowerCutLeavesAFormatOneFileWithAChain() throws {
        let directory = TemporaryDirectory()
        var images = 0
        for n in 1...5 {
            let path = directory.path("old-\(n).realm")
            try FileManager.default.copyItem(atPath: GoldenFileTests.path(format: 1), toPath: path)
            let box = WrappedFileBox<CrashSimulatingFile>()
            do {
                let store = try Store.open(path: path, options: StoreOptions(fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: n) }))
                for k in 0..<3 {
                    let transaction = try store.beginWrite()
                    let things = try #require(try transaction.table(named: "Thing")).key
                    try transaction.delete(things, ObjectKey(Int64(1 + k)))
                    try transaction.commit()
                }
            } catch {}
            guard let state = try #require(box.file).crashState else { continue }
            for (index, policy) in CrashInjectionTests.policies(for: state, seed: UInt64(n), randomCount: 4).enumerated() {
                let imagePath = directory.path("image-\(n)-\(index).realm")
                try state.image(policy).write(to: imagePath)
                let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: imagePath)))
                let format = bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self) }
                if format == 1 {
                    for offset in FileHeader.slotOffsets {
                        let slot = bytes.withUnsafeBytes { RootSlot.decode(UnsafeRawBufferPointer(rebasing: $0[offset..<(offset + FileHeader.slotSize)])) }
                        #expect((slot?.nextRun ?? 0) == 0, "crash at sync \(n), policy \(policy): a format 1 file whose slot names a next run")
                    }
                }
                let store = try Store.open(path: imagePath, options: StoreOptions(create: false))
                try store.verify()
                images += 1
            }
        }
        #expect(images > 20)
    }
}
