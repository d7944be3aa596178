import Foundation
import Testing
@testable import RealmStorage

/// Integer primary keys held as the object key: unique without an index, found by descent.
@Suite struct ObjectKeyColumnTests {
    static let columns = [ColumnSpec.objectKey(name: "id"), ColumnSpec(name: "name", type: .string)]

    @Test func valuesBecomeKeysAndDuplicatesAreRefused() throws {
        let dir = TemporaryDirectory()
        var table = TableKey(0)
        do {
            let store = try Store.open(path: dir.path())
            let tx = try store.beginWrite()
            table = try tx.createTable("Person", columns: Self.columns)
            for id in [5, -7, Int64.min, Int64.max, 0, 6] {
                #expect(try tx.insert(table, values: [.int(id), .string("p\(id)")]) == ObjectKey(id))
            }
            #expect(throws: StorageError.self) { try tx.insert(table, values: [.int(5), .string("again")]) }
            #expect(throws: StorageError.self) { try tx.insert(table, key: ObjectKey(1), values: [.int(2), .string("mismatch")]) }
            #expect(throws: StorageError.self) { try tx.set(table, ObjectKey(5), ColumnKey(0), .int(9)) }
            try tx.set(table, ObjectKey(5), ColumnKey(1), .string("renamed"))
            try tx.commit()
        }
        let store = try Store.open(path: dir.path())
        let view = try store.beginRead().table(table)
        #expect(try view.count() == 6)
        #expect(try view.indexFirst(ColumnKey(0), .int(-7)) == ObjectKey(-7))
        #expect(try view.indexFirst(ColumnKey(0), .int(8)) == nil)
        #expect(try view.indexLookup(ColumnKey(0), .int(Int64.min)) == [ObjectKey(Int64.min)])
        #expect(try view.indexContains(ColumnKey(0), .int(6)))
        #expect(try view.indexRange(ColumnKey(0), from: .init(.int(0), inclusive: false), to: .init(.int(6), inclusive: true)) == [ObjectKey(5), ObjectKey(6)])
        #expect(try view.value(ObjectKey(5), ColumnKey(1)) == .string("renamed"))
        #expect(try view.value(ObjectKey(Int64.max), ColumnKey(0)) == .int(Int64.max))
        try store.verify()
    }

    @Test func objectKeyColumnsOnlyInNewTablesAndNeverIndexed() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: Self.columns)
        #expect(throws: StorageError.self) { try tx.addColumn(table, .objectKey(name: "other")) }
        #expect(throws: StorageError.self) { try tx.createTable("U", columns: [.objectKey(name: "a"), .objectKey(name: "b")]) }
        try tx.commit()
        try store.verify()
    }

    @Test func anObjectKeyColumnThatStopsBeingUniqueBecomesAPlainColumn() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        var tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: Self.columns)
        for id in [3, 1, 2] { try tx.insert(table, values: [.int(Int64(id)), .string("n")]) }
        try tx.setIndex(table, ColumnKey(0), indexed: false, unique: true)
        try tx.commit()
        tx = try store.beginWrite()
        try tx.setIndex(table, ColumnKey(0), indexed: true, unique: false)
        try tx.set(table, ObjectKey(3), ColumnKey(0), .int(2))
        let other = try tx.insert(table, values: [.int(2), .string("n")])
        try tx.commit()
        let view = try store.beginRead().table(table)
        #expect(!view.info.columns[0].isObjectKey)
        #expect(try view.indexLookup(ColumnKey(0), .int(2)) == [ObjectKey(2), ObjectKey(3), other])
        try store.verify()
    }

    /// Keys that reached `Int64.max` (as primary keys) do not stop keyless inserts once the
    /// column is a plain one: they take unused keys.
    @Test func keylessInsertsAfterTheLargestKeyFindFreeKeys() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        var tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: Self.columns)
        for id in [Int64.max, 0, 1, 3] { try tx.insert(table, values: [.int(id), .string("n")]) }
        try tx.setIndex(table, ColumnKey(0), indexed: false, unique: false)
        try tx.commit()
        var added: [ObjectKey] = []
        for round in 0..<2 {
            tx = try store.beginWrite()
            for i in 0..<4 { added.append(try tx.insert(table, values: [.int(Int64(100 * round + i)), .string("new")])) }
            try tx.commit()
        }
        #expect(Set(added).count == 8)
        #expect(Set(added).isDisjoint(with: [Int64.max, 0, 1, 3].map(ObjectKey.init)))
        let view = try store.beginRead().table(table)
        #expect(try view.count() == 12)
        for key in added { #expect(try view.value(key, ColumnKey(1)) == .string("new")) }
        try store.verify()
    }

    @Test func bulkAscendingInsertsStayOnTheAppendPath() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: Self.columns)
        for id in 0..<20_000 { try tx.insert(table, values: [.int(Int64(id) * 3), .string("n")]) }
        try tx.commit()
        let view = try store.beginRead().table(table)
        #expect(try view.count() == 20_000)
        #expect(try view.indexFirst(ColumnKey(0), .int(59_997)) == ObjectKey(59_997))
        #expect(try view.indexFirst(ColumnKey(0), .int(59_998)) == nil)
        try store.verify()
    }
}
