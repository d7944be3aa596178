import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Damaged and foreign files: truncated, bytes flipped, random runs written, garbage. Opening
/// must throw a `StorageError` with a fitting code or succeed; after a successful open,
/// `verify`, reading every object and a write transaction each either succeed or throw a
/// `StorageError`. Nothing may crash the process. Where the damage is certain to miss (or to
/// hit only the newest commit), the recovered contents are checked exactly.
@Suite(.childProcesses) struct DamagedFileTests {
    static let seed: UInt64 = 0xDA3A_6ED0_0001

    /// A valid file written by the crash workload, and where its newest commit lies.
    struct BaseFile {
        var bytes: [UInt8]
        var newest: RootSlot
        var newestSlotIndex: Int
        var older: RootSlot
        /// The byte ranges the newest commit wrote: its extents and its commit record.
        var newestWrites: [Range<Int>]
        /// Bytes of a root slot: more in files that store seals.
        var slotSize = FileHeader.slotSize

        var newestSlotRange: Range<Int> { FileHeader.slotOffsets[newestSlotIndex]..<(FileHeader.slotOffsets[newestSlotIndex] + slotSize) }
        var olderSlotRange: Range<Int> { FileHeader.slotOffsets[1 - newestSlotIndex]..<(FileHeader.slotOffsets[1 - newestSlotIndex] + slotSize) }
    }

    /// What a damaged file did.
    enum Outcome: CustomStringConvertible {
        case refused(StorageError)
        case opened(contents: DatabaseDump?, verifyError: StorageError?, readError: StorageError?, writeError: StorageError?)

        var description: String {
            switch self {
            case .refused(let error): return "refused: \(error)"
            case .opened(let contents, let verifyError, let readError, let writeError):
                return "opened \(contents.map(\.description) ?? "unreadable"); verify: \(verifyError.map { "\($0)" } ?? "ok"); read: \(readError.map { "\($0)" } ?? "ok"); write: \(writeError.map { "\($0)" } ?? "ok")"
            }
        }

        var refusalCode: StorageError.Code? {
            if case .refused(let error) = self { return error.code }
            return nil
        }

        /// The contents, when the file opened, verified and read without error.
        var healthyContents: DatabaseDump? {
            if case .opened(let contents, nil, nil, _) = self { return contents }
            return nil
        }
    }

    static func buildBase(in directory: TemporaryDirectory) throws -> BaseFile {
        let path = directory.path("base.realm")
        do {
            // Every commit in a slot: the damage below targets the two slots and the newest
            // commit (ChainedRootTests damages run headers).
            let store = try Store.open(path: path, options: StoreOptions(limits: CrashWorkload.limits, chainLength: 1))
            for step in CrashWorkload.steps.indices { try CrashWorkload.commit(step: step, on: store) }
            try store.verify()
        }
        return try analyse([UInt8](try Data(contentsOf: URL(fileURLWithPath: path))))
    }

    /// Where the newest commit of the workload's file `bytes` (plaintext, its nodes sealed with
    /// `sealing`) lies.
    static func analyse(_ bytes: [UInt8], sealing: NodeSealing = .checksum) throws -> BaseFile {
        let sealed = sealing.storesSeals, slotSize = FileHeader.slotSize(sealed: sealed)
        let slots = bytes.withUnsafeBytes { raw in
            FileHeader.slotOffsets.map { RootSlot.decode(UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + slotSize)]), sealed: sealed) }
        }
        let first = try #require(slots[0]), second = try #require(slots[1])
        let newestIndex = first.version > second.version ? 0 : 1
        let newest = newestIndex == 0 ? first : second
        let older = newestIndex == 0 ? second : first
        #expect(newest.version.value == CrashWorkload.expected.last!.version)
        #expect(older.version.value == newest.version.value - 1)

        let writes = try bytes.withUnsafeBytes { (raw) throws(StorageError) -> [Range<Int>] in try Self.writes(of: newest, in: raw, sealing: sealing) }
        return BaseFile(bytes: bytes, newest: newest, newestSlotIndex: newestIndex, older: older, newestWrites: writes, slotSize: slotSize)
    }

    /// The byte ranges the commit of `root` wrote, in the plaintext file `raw` whose nodes are
    /// sealed with `sealing`: its extents and its commit record's footprint.
    static func writes(of root: RootSlot, in raw: UnsafeRawBufferPointer, sealing: NodeSealing) throws(StorageError) -> [Range<Int>] {
        let record = try NodeView(ref: root.commitRecordRef, mapping: raw.baseAddress!, limit: root.logicalSize, expecting: .commitRecord,
                                  check: .always(sealing))
        var ranges = [Int(record.ref.offset)..<(Int(record.ref.offset) + sealing.footprint(record.length))]
        var reader = record.reader()
        let count = try reader.count(elementSize: 24)
        _ = try reader.u32()
        if record.flags & CommitWriter.historyNonceFlag != 0 { _ = try reader.u64() }
        for _ in 0..<count {
            let offset = Int(try reader.u64()), length = Int(try reader.u64())
            _ = try reader.u64()
            ranges.append(offset..<(offset + length))
        }
        return ranges
    }

    /// Writes `bytes` to `path` and puts the file through open, verify, a full read and a
    /// write transaction.
    static func exercise(_ bytes: [UInt8], at path: String) throws -> Outcome {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return exercise(path: path)
    }

    static func exercise(path: String, options: StoreOptions = StoreOptions(durability: .unsafe, create: false)) -> Outcome {
        let store: Store
        do {
            store = try Store.open(path: path, options: options)
        } catch {
            return .refused(error)
        }
        var verifyError: StorageError?
        do { try store.verify() } catch { verifyError = error }
        var contents: DatabaseDump?
        var readError: StorageError?
        do {
            let read = store.beginRead()
            contents = try DatabaseDump(read)
            try DatabaseDump.checkIndexes(read)
            if read.version.value > 1 { _ = try read.changes(since: VersionID(read.version.value - 1)) }
        } catch {
            readError = error
        }
        var writeError: StorageError?
        do {
            let transaction = try store.beginWrite()
            if let item = transaction.tables.first(where: { $0.name == "Item" }) {
                if let key = try transaction.table(item.key).keys().first { try transaction.delete(item.key, key) }
            }
            let table = try transaction.createTable("Probe", columns: [ColumnSpec(name: "n", type: .int, indexed: true)])
            for n in 0..<20 { try transaction.insert(table, values: [.int(Int64(n))]) }
            try transaction.commit()
            _ = try? store.verify()
        } catch {
            writeError = error
        }
        return .opened(contents: contents, verifyError: verifyError, readError: readError, writeError: writeError)
    }

    static let damageCodes: Set<StorageError.Code> = [.invalidDatabase, .fileCorrupted, .unsupportedFormatVersion]

    /// Checks an outcome against what the damage at `range` must do to `base`.
    static func check(_ outcome: Outcome, damage range: Range<Int>, base: BaseFile, context: String) {
        let newest = CrashWorkload.expected.last!
        let previous = CrashWorkload.expected[CrashWorkload.expected.count - 2]
        let logicalSize = Int(base.newest.logicalSize)
        func inside(_ outer: Range<Int>) -> Bool { range.lowerBound >= outer.lowerBound && range.upperBound <= outer.upperBound }
        if let code = outcome.refusalCode {
            #expect(damageCodes.contains(code), "refused with \(code); \(context)")
        }
        if range.upperBound <= 8 {
            #expect(outcome.refusalCode == .invalidDatabase, "damage to the magic: \(outcome); \(context)")
        } else if inside(16..<512) || inside(576..<1024) || inside(1088..<FileHeader.size) || inside(base.olderSlotRange) || range.lowerBound >= logicalSize {
            // The selector, reserved header bytes, the older slot and space beyond the newest
            // version are never needed to open the newest version.
            #expect(outcome.healthyContents == newest, "damage nothing reads: \(outcome); \(context)")
        } else if inside(base.newestSlotRange) || base.newestWrites.contains(where: inside) {
            // The newest commit fails its checksums: recovery takes the one before.
            #expect(outcome.healthyContents == previous, "damage to the newest commit must fall back to the one before: \(outcome); \(context)")
        }
    }

    // MARK: Sweeps
    //
    // The sweeps run in a child process (an exit test), so that an engine crash on one damaged
    // file fails that test and leaves the rest of the test run going. The child appends each
    // case to a progress file before trying it; when it dies, the parent names the last one.

    /// Appends `context` to the progress file, unbuffered, so that a crash cannot lose it.
    static func announce(_ context: String, to progress: String) {
        guard let handle = FileHandle(forWritingAtPath: progress) else { return }
        handle.seekToEndOfFile()
        handle.write(Data((context + "\n").utf8))
        handle.closeFile()
    }

    /// A new, empty progress file in `directory`.
    static func progressFile(in directory: TemporaryDirectory) -> String {
        let path = directory.path("progress.txt")
        try? Data().write(to: URL(fileURLWithPath: path))
        return path
    }

    /// After a sweep's child exited: when it crashed, records the case it was trying.
    static func reportCrash(_ result: ExitTest.Result?, progress: String, sweep: String) {
        guard result == nil else { return }
        let text = (try? String(contentsOfFile: progress, encoding: .utf8)) ?? ""
        let last = text.split(separator: "\n").last.map(String.init) ?? "no case yet"
        Issue.record("the \(sweep) sweep's child process did not exit normally; the last case it tried: \(last)")
    }

    static func truncationSweep(progress: String) throws {
        let directory = TemporaryDirectory()
        let base = try Self.buildBase(in: directory)
        var random = ReplayableRandom(seed: Self.seed)
        var lengths = Array(stride(from: 0, through: 8192, by: 512))
        lengths += [1, 8, 16, 17, 511, 513, 1087, 1088, 4095, 4097]
        lengths += Array(stride(from: 8192, to: base.bytes.count, by: max(base.bytes.count / 48, 1)))
        lengths += (0..<24).map { _ in 4096 + random.below(base.bytes.count - 4096) }
        lengths += [Int(base.older.logicalSize) - 1, Int(base.older.logicalSize), Int(base.newest.logicalSize) - 1,
                    Int(base.newest.logicalSize), base.bytes.count - 1]
        for (index, length) in Set(lengths).sorted().enumerated() {
            let context = "truncated to \(length) of \(base.bytes.count) bytes (newest version ends at \(base.newest.logicalSize)), seed \(Self.seed)"
            announce(context, to: progress)
            let outcome = try Self.exercise(Array(base.bytes[0..<length]), at: directory.path("truncated-\(index).realm"))
            if length < FileHeader.size {
                #expect(outcome.refusalCode == .invalidDatabase, "\(outcome); \(context)")
            } else if length >= Int(base.newest.logicalSize) {
                #expect(outcome.healthyContents == CrashWorkload.expected.last!, "\(outcome); \(context)")
            } else if length >= Int(base.older.logicalSize) {
                #expect(outcome.healthyContents == CrashWorkload.expected[CrashWorkload.expected.count - 2], "\(outcome); \(context)")
            } else {
                #expect(outcome.refusalCode == .fileCorrupted, "\(outcome); \(context)")
            }
        }
    }

    static func flipSweep(progress: String) throws {
        let directory = TemporaryDirectory()
        let base = try Self.buildBase(in: directory)
        var random = ReplayableRandom(seed: Self.seed ^ 1)
        let logicalSize = Int(base.newest.logicalSize)
        var offsets: [Int] = []
        offsets += (0..<40).map { _ in random.below(FileHeader.size) }
        offsets += (0..<24).map { _ in FileHeader.slotOffsets[random.below(2)] + random.below(FileHeader.slotSize) }
        offsets += (0..<40).map { _ in
            let range = base.newestWrites[random.below(base.newestWrites.count)]
            return range.lowerBound + random.below(range.count)
        }
        offsets += (0..<300).map { _ in FileHeader.size + random.below(logicalSize - FileHeader.size) }
        offsets += (0..<16).map { _ in logicalSize + random.below(max(base.bytes.count - logicalSize, 1)) }
        for (index, offset) in offsets.enumerated() where offset < base.bytes.count {
            var bytes = base.bytes
            let mask = UInt8(1 + random.below(255))
            bytes[offset] ^= mask
            let context = "byte \(offset) xor \(mask), case \(index), seed \(Self.seed ^ 1)"
            announce(context, to: progress)
            let outcome = try Self.exercise(bytes, at: directory.path("flipped-\(index).realm"))
            Self.check(outcome, damage: offset..<(offset + 1), base: base, context: context)
        }
    }

    static func randomRunSweep(progress: String) throws {
        let directory = TemporaryDirectory()
        let base = try Self.buildBase(in: directory)
        var random = ReplayableRandom(seed: Self.seed ^ 2)
        for index in 0..<160 {
            var bytes = base.bytes
            let length = [1, 2, 4, 8, 16, 64, 512, 4096][random.below(8)]
            let offset = index < 16 ? random.below(FileHeader.size) : random.below(bytes.count - length)
            let run = random.chance(20) ? [UInt8](repeating: random.chance(50) ? 0 : 0xFF, count: length) : random.bytes(length)
            bytes.replaceSubrange(offset..<(offset + length), with: run)
            let context = "\(length) bytes at \(offset), case \(index), seed \(Self.seed ^ 2)"
            announce(context, to: progress)
            let outcome = try Self.exercise(bytes, at: directory.path("run-\(index).realm"))
            if bytes == base.bytes {
                // The run wrote what was there (zeros over padding, say): nothing is damaged.
                #expect(outcome.healthyContents == CrashWorkload.expected.last!, "\(outcome); \(context)")
            } else {
                Self.check(outcome, damage: offset..<(offset + length), base: base, context: context)
            }
        }
    }

    // MARK: Tests

    @Test func truncatedFilesAreRefusedOrOpenAnIntactVersion() async {
        let directory = TemporaryDirectory()
        let progress = Self.progressFile(in: directory)
        let result = await #expect(processExitsWith: .success) { [progress = progress as String] in
            try DamagedFileTests.truncationSweep(progress: progress)
        }
        Self.reportCrash(result, progress: progress, sweep: "truncation")
    }

    @Test func flippedBytesNeverCrashTheEngine() async {
        let directory = TemporaryDirectory()
        let progress = Self.progressFile(in: directory)
        let result = await #expect(processExitsWith: .success) { [progress = progress as String] in
            try DamagedFileTests.flipSweep(progress: progress)
        }
        Self.reportCrash(result, progress: progress, sweep: "byte flip")
    }

    @Test func randomRunsNeverCrashTheEngine() async {
        let directory = TemporaryDirectory()
        let progress = Self.progressFile(in: directory)
        let result = await #expect(processExitsWith: .success) { [progress = progress as String] in
            try DamagedFileTests.randomRunSweep(progress: progress)
        }
        Self.reportCrash(result, progress: progress, sweep: "random run")
    }

    /// An index leaf whose entry count (in an old node, which no commit record covers) is
    /// inflated must give `fileCorrupted`. The count is chosen so that trusting it reads half a
    /// gigabyte past the node: inside the mapping's reservation, past the end of the file, which
    /// is SIGBUS rather than garbage, so the test fails the same way every time.
    static func inflatedIndexLeafCount() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("base.realm")
        let leaf: Ref
        do {
            let store = try Store.open(path: path)
            var transaction = try store.beginWrite()
            let table = try transaction.createTable("T", columns: [ColumnSpec(name: "n", type: .int, indexed: true)])
            for n in 0..<10 { try transaction.insert(table, values: [.int(Int64(n))]) }
            try transaction.commit()
            leaf = store.beginRead().tables[0].indexRoots[0]
            // A later commit leaves the index alone, so its leaf is not in the newest commit record.
            transaction = try store.beginWrite()
            let other = try transaction.createTable("U", columns: [ColumnSpec(name: "s", type: .string)])
            try transaction.insert(other, values: [.string("x")])
            try transaction.commit()
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let offset = Int(leaf.offset)
        try #require(bytes[offset] == NodeKind.indexLeaf.rawValue)
        let width = Int(bytes[offset + 24])
        try #require(width > 0, "the ends of the entry prefixes vary, so they take some bits")
        let count = UInt32(min((512 << 20) * 8 / width + 1, Int(UInt32.max)))
        withUnsafeBytes(of: count.littleEndian) { bytes.replaceSubrange((offset + 16)..<(offset + 20), with: $0) }
        let damaged = directory.path("damaged.realm")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))

        let store = try Store.open(path: damaged, options: StoreOptions(create: false))
        let error = #expect(throws: StorageError.self) { try store.verify() }
        #expect(error?.code == .fileCorrupted)
        let read = store.beginRead()
        #expect(throws: StorageError.self) { try read.table(read.tables[0].key).indexLookup(ColumnKey(0), .int(3)) }
    }

    @Test func indexLeafWithAnInflatedCountIsRefused() async {
        await #expect(processExitsWith: .success, "the engine crashed reading an index leaf whose count exceeds its entries") {
            try DamagedFileTests.inflatedIndexLeafCount()
        }
    }

    /// A cluster inner node (old, so no commit record covers it) whose subtree counts are near
    /// Int64.max: verify must report it, and a write transaction that edits the tree must
    /// throw `fileCorrupted` rather than trap adding the counts up.
    static func impossibleInnerCounts() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("base.realm")
        let root: Ref
        let table: TableKey
        do {
            let store = try Store.open(path: path, options: StoreOptions(limits: TreeLimits(leafCapacity: 4, innerCapacity: 4)))
            var transaction = try store.beginWrite()
            table = try transaction.createTable("T", columns: [ColumnSpec(name: "n", type: .int)])
            for n in 0..<12 { try transaction.insert(table, values: [.int(Int64(n))]) }
            try transaction.commit()
            root = store.beginRead().tables[0].clusterRoot
            // A later commit leaves the tree alone, so its root is not in the newest commit record.
            transaction = try store.beginWrite()
            let other = try transaction.createTable("U", columns: [ColumnSpec(name: "s", type: .string)])
            try transaction.insert(other, values: [.string("x")])
            try transaction.commit()
        }
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        let offset = Int(root.offset)
        try #require(bytes[offset] == NodeKind.clusterInner.rawValue, "12 objects in leaves of 4 make an inner root")
        // The child refs block, then the counts block: set the counts' base near Int64.max.
        let refsWidth = Int(bytes[offset + 16])
        let refsCount = bytes[(offset + 20)..<(offset + 24)].reversed().reduce(0) { $0 << 8 | Int($1) }
        let counts = offset + 16 + PackedInts.headerSize + PackedInts.dataSize(count: refsCount, width: refsWidth)
        withUnsafeBytes(of: (Int64.max - 10).littleEndian) { bytes.replaceSubrange((counts + 8)..<(counts + 16), with: $0) }
        let damaged = directory.path("damaged.realm")
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))

        let store = try Store.open(path: damaged, options: StoreOptions(create: false, limits: TreeLimits(leafCapacity: 4, innerCapacity: 4)))
        let verifyError = #expect(throws: StorageError.self) { try store.verify() }
        #expect(verifyError?.code == .fileCorrupted)
        let transaction = try store.beginWrite()
        let deleteError = #expect(throws: StorageError.self) { try transaction.delete(table, ObjectKey(0)) }
        #expect(deleteError?.code == .fileCorrupted)
    }

    @Test func innerNodeWithImpossibleCountsIsRefused() async {
        await #expect(processExitsWith: .success, "the engine crashed editing a tree whose inner node records impossible counts") {
            try DamagedFileTests.impossibleInnerCounts()
        }
    }

    @Test func damagedRootSlotsFallBackOrRefuse() throws {
        let directory = TemporaryDirectory()
        let base = try Self.buildBase(in: directory)
        let previous = CrashWorkload.expected[CrashWorkload.expected.count - 2]
        func zeroed(_ ranges: [Range<Int>]) -> [UInt8] {
            var bytes = base.bytes
            for range in ranges { bytes.replaceSubrange(range, with: repeatElement(0, count: range.count)) }
            return bytes
        }
        #expect(try Self.exercise(zeroed([base.newestSlotRange]), at: directory.path("newest.realm")).healthyContents == previous)
        #expect(try Self.exercise(zeroed([base.olderSlotRange]), at: directory.path("older.realm")).healthyContents == CrashWorkload.expected.last!)
        #expect(try Self.exercise(zeroed([base.newestSlotRange, base.olderSlotRange]), at: directory.path("both.realm")).refusalCode == .fileCorrupted)
        // The header alone, without any node behind it.
        #expect(try Self.exercise(Array(base.bytes[0..<FileHeader.size]), at: directory.path("header.realm")).refusalCode == .fileCorrupted)
        // The newest commit record lost: the commit before it.
        let record = Int(base.newest.commitRecordRef.offset)
        #expect(try Self.exercise(zeroed([record..<(record + 24)]), at: directory.path("record.realm")).healthyContents == previous)
    }

    @Test func garbageIsRefusedWithTheFittingCode() throws {
        let directory = TemporaryDirectory()
        let base = try Self.buildBase(in: directory)
        var random = ReplayableRandom(seed: Self.seed ^ 3)
        func refusal(_ bytes: [UInt8], _ name: String) throws -> StorageError.Code? {
            let outcome = try Self.exercise(bytes, at: directory.path(name))
            return outcome.refusalCode
        }
        #expect(try refusal([], "empty.realm") == .invalidDatabase)
        #expect(try refusal([0x4F], "one-byte.realm") == .invalidDatabase)
        #expect(try refusal(Array(base.bytes[0..<4095]), "short-header.realm") == .invalidDatabase)
        #expect(try refusal(random.bytes(4095), "random-4095.realm") == .invalidDatabase)
        #expect(try refusal(random.bytes(64 << 10), "random-64k.realm") == .invalidDatabase, "seed \(Self.seed ^ 3)")
        #expect(try refusal([UInt8](repeating: 0, count: 64 << 10), "zeros-64k.realm") == .invalidDatabase)
        #expect(try refusal(Array("SQLite format 3\0".utf8) + [UInt8](repeating: 0, count: 8192), "sqlite.realm") == .invalidDatabase)

        // The right magic and random rest.
        for index in 0..<16 {
            let bytes = FileHeader.magic + random.bytes(64 << 10)
            let code = try refusal(bytes, "magic-\(index).realm")
            #expect(code.map { Self.damageCodes.contains($0) } == true, "\(String(describing: code)), case \(index), seed \(Self.seed ^ 3)")
        }
        // A valid header (magic, version, page size) and random rest: no slot verifies.
        for index in 0..<16 {
            var bytes = FileHeader.initial()
            bytes.replaceSubrange(16..<FileHeader.size, with: random.bytes(FileHeader.size - 16))
            bytes += random.bytes(64 << 10)
            #expect(try refusal(bytes, "header-\(index).realm") == .fileCorrupted, "case \(index), seed \(Self.seed ^ 3)")
        }

        // A newer format.
        var future = base.bytes
        withUnsafeBytes(of: UInt32(99).littleEndian) { future.replaceSubrange(8..<12, with: $0) }
        #expect(try refusal(future, "version-99.realm") == .unsupportedFormatVersion)
        var zero = base.bytes
        zero.replaceSubrange(8..<12, with: [0, 0, 0, 0])
        #expect(try refusal(zero, "version-0.realm") == .invalidDatabase)
        var pageSize = base.bytes
        withUnsafeBytes(of: UInt32(512).littleEndian) { pageSize.replaceSubrange(12..<16, with: $0) }
        #expect(try refusal(pageSize, "page-size.realm") == .fileCorrupted)
    }

    @Test func aDirectoryIsNotARealm() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("folder.realm")
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        let outcome = Self.exercise(path: path, options: StoreOptions())
        #expect(outcome.refusalCode == .invalidDatabase, "\(outcome)")
        let readOnly = Self.exercise(path: path, options: StoreOptions(readOnly: true))
        #expect(readOnly.refusalCode == .invalidDatabase, "read-only: \(readOnly)")
    }

    @Test func aMissingFileIsNotCreatedWhenCreateIsOff() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("missing.realm")
        #expect(Self.exercise(path: path, options: StoreOptions(create: false)).refusalCode == .fileNotFound)
        #expect(!FileManager.default.fileExists(atPath: path))
        let inMissingFolder = directory.path("no-such-folder/missing.realm")
        #expect(Self.exercise(path: inMissingFolder, options: StoreOptions()).refusalCode == .fileNotFound)
    }
}
