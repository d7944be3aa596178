import Dispatch
import Testing
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite struct StoreBasicsTests {
    @Test func insertedObjectsSurviveReopen() throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        var table = TableKey(0)
        do {
            let store = try Store.open(path: path)
            let tx = try store.beginWrite()
            table = try tx.createTable("Person", columns: Fixtures.personColumns)
            for id in 0..<1000 { try tx.insert(table, values: Fixtures.person(Int64(id))) }
            try tx.commit()
            let read = store.beginRead()
            #expect(try read.table(table).count() == 1000)
        }
        let store = try Store.open(path: path)
        let read = store.beginRead()
        let view = try read.table(table)
        #expect(try view.count() == 1000)
        for id in [0, 1, 255, 256, 257, 999] {
            let row = try #require(try view.row(ObjectKey(Int64(id))))
            #expect(try row.values() == Fixtures.person(Int64(id)))
        }
        #expect(try view.indexLookup(ColumnKey(0), .int(500)) == [ObjectKey(500)])
        #expect(try view.indexLookup(ColumnKey(2), .int(42)).count == 10)
        try store.verify()
    }

    @Test func updatesAndDeletesAreVisibleAfterCommit() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        var tx = try store.beginWrite()
        let table = try tx.createTable("Person", columns: Fixtures.personColumns)
        for id in 0..<600 { try tx.insert(table, values: Fixtures.person(Int64(id))) }
        try tx.commit()
        let before = store.beginRead()
        tx = try store.beginWrite()
        try tx.set(table, ObjectKey(10), ColumnKey(1), .string("renamed"))
        try tx.set(table, ObjectKey(11), ColumnKey(2), .int(4242))
        #expect(try tx.delete(table, ObjectKey(12)))
        try tx.commit()
        let after = store.beginRead()
        #expect(try after.table(table).value(ObjectKey(10), ColumnKey(1)) == .string("renamed"))
        #expect(try after.table(table).indexLookup(ColumnKey(2), .int(4242)) == [ObjectKey(11)])
        #expect(try after.table(table).row(ObjectKey(12)) == nil)
        #expect(try after.table(table).count() == 599)
        // The older snapshot still sees its version.
        #expect(try before.table(table).value(ObjectKey(10), ColumnKey(1)) == .string("name10"))
        #expect(try before.table(table).count() == 600)
        let changes = try after.changes(since: before.version)
        #expect(changes.tables[table]?.deleted == KeyRanges([12]))
        #expect(changes.tables[table]?.modified == KeyRanges([10, 11]))
        try store.verify()
    }

    /// Each commit gathers its bytes in the buffer the commit before used (Store.commitBuffer):
    /// small commits after a larger one never allocate another. `handedOver`: the commits go
    /// through the store's write queue (`commit(then:)`), whose job must not keep the bytes
    /// once the next writer may begin.
    @Test(arguments: [false, true])
    func commitsGatherTheirBytesInOneReusedBuffer(handedOver: Bool) throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        let setup = try store.beginWrite()
        let table = try setup.createTable("Person", columns: Fixtures.personColumns)
        for id in 0..<2000 { try setup.insert(table, values: Fixtures.person(Int64(id))) }
        try setup.commit()
        let address = { store.commitBuffer.withUnsafeBufferPointer { UInt(bitPattern: $0.baseAddress) } }
        let first = address()
        #expect(first != 0)
        let answered = DispatchGroup()
        for id in 2000..<2020 {
            let transaction = try store.beginWrite()
            // Read with the lane held: the commit before has stored its buffer by now.
            #expect(address() == first, "the commit before \(id) gathered its bytes elsewhere")
            try transaction.insert(table, values: Fixtures.person(Int64(id)))
            if handedOver {
                // Not waited for: the next transaction begins as soon as the lane is back,
                // maybe while the write queue's job is still finishing.
                answered.enter()
                try transaction.commit(then: { _ in answered.leave() })
            } else {
                try transaction.commit()
            }
        }
        answered.wait()
        try store.beginWrite().rollback()
        #expect(address() == first, "the last commit gathered its bytes elsewhere")
        #expect(try store.beginRead().table(table).count() == 2020)
    }
}

/// File growth writes zeros (PosixFile.setSize), from one shared buffer of a mebibyte: a
/// growth of several buffers and a partial one must leave every new byte zero, on disk, with
/// blocks allocated rather than a hole, and the bytes before it untouched.
@Suite struct FileGrowthTests {
    @Test func growthPastTheZeroBufferWritesZerosEverywhere() throws {
        let directory = TemporaryDirectory()
        let file = try PosixFile(path: directory.path("grow"), mode: .createNew)
        try file.write([UInt8](repeating: 0xAB, count: 1000), at: 0)
        let size: UInt64 = 1000 + (5 << 20) / 2 + 123
        try file.setSize(size)
        #expect(try file.size() == size)
        #expect(try file.read(count: 1000, at: 0).allSatisfy { $0 == 0xAB })
        let grown = try file.read(count: Int(size) - 1000, at: 1000)
        #expect(grown.count == Int(size) - 1000 && grown.allSatisfy { $0 == 0 })
        var info = stat()
        #expect(stat(directory.path("grow"), &info) == 0)
        #expect(UInt64(info.st_blocks) * 512 >= size - 4096, "written, not a hole")
        try file.setSize(size + 10)
        #expect(try file.read(count: 10, at: size).allSatisfy { $0 == 0 })
    }
}
