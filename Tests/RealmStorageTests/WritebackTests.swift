import CStorageSupport
import Dispatch
import Foundation
import Testing
@testable import RealmStorage

/// A committer that syncs on its own thread asks the device to start on what it wrote before
/// it syncs (`StorageFile.startWriteback`), so that the rest of the commit overlaps the
/// device's write; commits the sync thread gathers do not. The hint never stands in for the
/// sync, and the crash suites' file layers model it as what it is: nothing made durable.
@Suite struct WritebackTests {
    static let columns = [ColumnSpec(name: "id", type: .int, unique: true), ColumnSpec(name: "name", type: .string, indexed: true)]

    /// A new store over a recording file, with a table "Row" committed and the record cleared.
    static func open(_ path: String) throws -> (store: Store, file: RecordingFile, table: TableKey) {
        let box = WrappedFileBox<RecordingFile>()
        let store = try Store.open(path: path, options: StoreOptions(fileWrapper: box.wrapper { RecordingFile(wrapping: $0) }))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: columns)
        try setup.commit()
        let file = try #require(box.file)
        file.clear()
        return (store, file, table)
    }

    @Test func aWaitingCommitHintsTheSpanItWroteOnceBeforeItsSync() throws {
        let dir = TemporaryDirectory()
        let (store, file, table) = try Self.open(dir.path("a.realm"))
        // Enough commits to cross a chain's end twice (a slot write every 16th commit).
        var slotWrites = 0
        for id in 0..<40 {
            file.clear()
            let transaction = try store.beginWrite()
            try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id) " + String(repeating: "x", count: id * 40))])
            try transaction.commit()
            let log = file.events
            let hints = log.indices.filter { if case .writeback = log[$0] { return true } else { return false } }
            try #require(hints.count == 1, "commit \(id): \(log)")
            let hint = hints[0]
            guard case .writeback(let start, let count) = log[hint] else { return }
            let writes = log[..<hint].compactMap { if case .write(let offset, let count) = $0 { return (offset, count) } else { return nil } }
            #expect(!writes.isEmpty)
            // The span is exactly what the commit's nodes, record and run header took.
            #expect(start == writes.map(\.0).min())
            #expect(start + UInt64(count) == writes.map { $0.0 + UInt64($0.1) }.max())
            // Then only the slot and the selector (when the chain ends there) and one sync.
            let after = Array(log[(hint + 1)...])
            if after.count > 1 { slotWrites += 1 }
            #expect(after.last == .sync)
            #expect(log.filter { $0 == .sync }.count == 1)
            #expect(after.dropLast().allSatisfy {
                guard case .write(let offset, _) = $0 else { return false }
                return FileHeader.slotOffsets.contains(Int(offset)) || offset == UInt64(FileHeader.selectorOffset)
            }, "commit \(id): \(log)")
        }
        #expect(slotWrites >= 2, "no commit ended a chain")
        let read = store.beginRead()
        #expect(try read.table(named: "Row")?.count() == 40)
    }

    @Test func commitsTheSyncThreadGathersStartNoWriteback() throws {
        let dir = TemporaryDirectory()
        let (store, file, table) = try Self.open(dir.path("a.realm"))
        let answered = DispatchGroup()
        for id in 0..<20 {
            answered.enter()
            let transaction = try store.beginWrite()
            try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
            try transaction.commit(then: { result in
                #expect((try? result.get()) != nil)
                answered.leave()
            })
        }
        answered.wait()
        let log = file.events
        #expect(log.contains(.sync))
        #expect(log.allSatisfy { if case .writeback = $0 { return false } else { return true } })
    }

    @Test func withoutSyncsNoWritebackIsStarted() throws {
        let dir = TemporaryDirectory()
        let box = WrappedFileBox<RecordingFile>()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, fileWrapper: box.wrapper { RecordingFile(wrapping: $0) }))
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("Row", columns: Self.columns)
        try transaction.insert(table, values: [.int(1), .string("one")])
        try transaction.commit()
        let log = try #require(box.file).events
        #expect(log.contains { if case .write = $0 { return true } else { return false } })
        #expect(log.allSatisfy { if case .writeback = $0 { return false } else { return true } })
    }

    @Test func readingThroughACommittedTransactionIsRefused() throws {
        let dir = TemporaryDirectory()
        let (store, _, table) = try Self.open(dir.path("a.realm"))
        let transaction = try store.beginWrite()
        try transaction.insert(table, values: [.int(1), .string("one")])
        try transaction.commit()
        #expect(throws: StorageError.self) { try transaction.table(table) }
        #expect(try store.beginRead().table(table).count() == 1)
    }

    @Test func theHintLeavesTheBytesAsTheyWere() throws {
        let dir = TemporaryDirectory()
        let path = dir.path("plain")
        let file = try PosixFile(path: path, mode: .createNew)
        let bytes = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try file.write(bytes, at: 100)
        file.startWriteback(at: 100, length: bytes.count)
        // A range past the end is no error: it is a hint. An empty one asks for nothing (to
        // sync_file_range a length of 0 would mean the rest of the file).
        file.startWriteback(at: 1 << 30, length: 4096)
        file.startWriteback(at: 0, length: 0)
        #if os(Linux)
        // The call itself works on this file system (the engine ignores its result).
        let fd = systemOpen(path, O_RDWR)
        #expect(fd >= 0)
        #expect(openrealm_start_writeback(fd, 100, Int64(bytes.count)) == 0)
        close(fd)
        #endif
        try file.sync()
        #expect(try file.read(count: bytes.count, at: 100) == bytes)
    }

    /// Growth writes zeros in pieces no larger than the growth (and at most 1 MiB each), and
    /// leaves what the file held before as it was.
    @Test(arguments: [1, 4096 + 17, 64 << 10, (1 << 20) + 8, (3 << 20) + 4095])
    func growthWritesZerosUpToTheNewSize(growth: Int) throws {
        let dir = TemporaryDirectory()
        let file = try PosixFile(path: dir.path("plain"), mode: .createNew)
        let head = [UInt8](repeating: 0xAB, count: 300)
        try file.write(head, at: 0)
        try file.setSize(UInt64(head.count + growth))
        #expect(try file.size() == UInt64(head.count + growth))
        #expect(try file.read(count: head.count, at: 0) == head)
        let tail = try file.read(count: growth, at: UInt64(head.count))
        #expect(tail.count == growth)
        #expect(tail.allSatisfy { $0 == 0 })
    }
}
