import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Rolling a write transaction back to a savepoint leaves exactly what was there, for every
/// kind of data change, and the transaction commits normally afterwards.
@Suite struct SavepointTests {
    /// Item: an object-key primary key, a unique string, an indexed int, a nullable double, a
    /// list of ints, a link and a list of links to Item. Tag: plain objects with a link to Item.
    struct Tables {
        var item = TableKey(0)
        var tag = TableKey(0)
    }

    static func createTables(_ tx: WriteTransaction) throws -> Tables {
        var tables = Tables()
        tables.item = try tx.createTable("Item", columns: [
            .objectKey(name: "id"),
            ColumnSpec(name: "code", type: .string, unique: true),
            ColumnSpec(name: "rank", type: .int, indexed: true),
            ColumnSpec(name: "weight", type: .double, nullable: true),
            ColumnSpec(name: "numbers", type: .int, isList: true),
        ])
        try tx.addColumn(tables.item, ColumnSpec(name: "next", type: .link, linkTarget: tables.item))
        try tx.addColumn(tables.item, ColumnSpec(name: "related", type: .link, isList: true, linkTarget: tables.item))
        tables.tag = try tx.createTable("Tag", columns: [
            ColumnSpec(name: "label", type: .string),
            ColumnSpec(name: "item", type: .link, linkTarget: tables.item),
        ])
        return tables
    }

    /// A store whose Item table holds objects `ids` (code "c<id>", rank 1), after `more` ran
    /// in the same first transaction.
    static func storeWithItems(_ dir: TemporaryDirectory, _ ids: Range<Int64>,
                               _ more: (WriteTransaction, Tables) throws -> Void = { _, _ in }) throws -> (Store, Tables) {
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let tables = try createTables(tx)
        for id in ids { try tx.insert(tables.item, values: item(id, "c\(id)")) }
        try more(tx, tables)
        try tx.commit()
        return (store, tables)
    }

    static func item(_ id: Int64, _ code: String) -> [Value] {
        [.int(id), .string(code), .int(1), .null, .null, .null, .null]
    }

    /// Everything the transaction holds, as plain values.
    static func dump(_ tx: WriteTransaction) throws -> [String: TableDump] {
        var result: [String: TableDump] = [:]
        for info in tx.tables { result[info.name] = try TableDump(tx.table(info.key)) }
        return result
    }

    /// One random data change; failures (duplicates, missing objects) are part of the mix and
    /// change nothing.
    static func randomChange(_ tx: WriteTransaction, _ tables: Tables, _ random: inout SeededRandom) throws {
        let id = Int64(random.below(40))
        let link: Value = random.chance(30) ? .null : .link(ObjectKey(Int64(random.below(40))))
        switch random.below(9) {
        case 0, 1:
            let values: [Value] = [.int(id), .string("c\(random.below(60))"), .int(Int64(random.below(5))),
                                   random.chance(20) ? .null : .double(Double(random.below(100)) / 4), .null, .null, .null]
            let lists: [Int: [Value]] = random.chance(50) ? [4: (0..<random.below(4)).map { .int(Int64($0)) }] : [:]
            _ = try? tx.insert(tables.item, values: values, lists: lists)
        case 2:
            _ = try tx.delete(tables.item, ObjectKey(id))
        case 3:
            try? tx.set(tables.item, ObjectKey(id), ColumnKey(2), .int(Int64(random.below(5))))
            try? tx.set(tables.item, ObjectKey(id), ColumnKey(1), .string("c\(random.below(60))"))
        case 4:
            try? tx.set(tables.item, ObjectKey(id), ColumnKey(5), link)
            try? tx.set(tables.item, ObjectKey(id), ColumnKey(3), random.chance(50) ? .null : .double(-0.0))
        case 5:
            try? tx.setList(tables.item, ObjectKey(id), ColumnKey(6), (0..<random.below(3)).map { _ in .link(ObjectKey(Int64(random.below(40)))) })
            try? tx.setList(tables.item, ObjectKey(id), ColumnKey(4), (0..<random.below(5)).map { .int(Int64($0 * 7)) })
        case 6:
            _ = try? tx.insert(tables.tag, values: [.string("t\(random.below(9))"), link])
        case 7 where random.chance(10):
            try tx.clear(tables.tag)
        default:
            let keys = try tx.table(tables.tag).keys()
            if !keys.isEmpty { _ = try tx.delete(tables.tag, keys[random.below(keys.count)]) }
        }
    }

    @Test(arguments: 0..<12)
    func rollingBackLeavesWhatWasThere(round: Int) throws {
        let seed = ReplayableRandom.derive(SeededRandom.seed("OPENREALM_SAVEPOINT_SEED"), round)
        var random = SeededRandom(seed: seed)
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        var tables = Tables()
        do {
            let tx = try store.beginWrite()
            tables = try Self.createTables(tx)
            for _ in 0..<60 { try Self.randomChange(tx, tables, &random) }
            try tx.commit()
        }
        let tx = try store.beginWrite()
        for _ in 0..<random.below(30) { try Self.randomChange(tx, tables, &random) }
        let before = try Self.dump(tx)
        let changesBefore = tx.pendingChanges
        let savepoint = try tx.savepoint()
        for _ in 0..<(1 + random.below(40)) { try Self.randomChange(tx, tables, &random) }
        if random.chance(30) { _ = try tx.createTable("Scratch", columns: [ColumnSpec(name: "x", type: .int)]) }
        try tx.rollback(to: savepoint)
        tx.releaseSavepoint(savepoint)
        #expect(try Self.dump(tx) == before, "seed \(seed)")
        #expect(tx.pendingChanges == changesBefore, "seed \(seed)")
        #expect(tx.tables.map(\.name) == ["Item", "Tag"], "seed \(seed)")

        // The transaction goes on and commits as if the rolled-back part never happened.
        for _ in 0..<random.below(20) { try Self.randomChange(tx, tables, &random) }
        try tx.clearLinksToDeletedObjects()
        let expected = try Self.dump(tx)
        try tx.commit()
        let read = store.beginRead()
        for info in read.top.tables {
            #expect(try TableDump(read.table(info.key)) == expected[info.name], "seed \(seed)")
        }
        try store.verify()
    }

    @Test func aDeletedLinkTargetComesBackWithItsLinks() throws {
        let dir = TemporaryDirectory()
        let (store, tables) = try Self.storeWithItems(dir, 0..<3) { tx, tables in
            try tx.set(tables.item, ObjectKey(0), ColumnKey(5), .link(ObjectKey(2)))
            try tx.setList(tables.item, ObjectKey(1), ColumnKey(6), [.link(ObjectKey(2)), .link(ObjectKey(0))])
            try tx.insert(tables.tag, values: [.string("t"), .link(ObjectKey(2))])
        }
        let tx = try store.beginWrite()
        let savepoint = try tx.savepoint()
        #expect(try tx.delete(tables.item, ObjectKey(2)))
        // A new object under the deleted key clears the links to the old one at once.
        try tx.insert(tables.item, values: Self.item(2, "new"))
        try tx.rollback(to: savepoint)
        try tx.commit()

        let read = store.beginRead()
        let items = try read.table(tables.item)
        #expect(try items.value(ObjectKey(2), ColumnKey(1)) == .string("c2"))
        #expect(try items.value(ObjectKey(0), ColumnKey(5)) == .link(ObjectKey(2)))
        #expect(try items.list(ObjectKey(1), ColumnKey(6)) == [.link(ObjectKey(2)), .link(ObjectKey(0))])
        #expect(try read.table(tables.tag).value(ObjectKey(0), ColumnKey(1)) == .link(ObjectKey(2)))
        #expect(try items.indexFirst(ColumnKey(1), .string("new")) == nil)
        try store.verify()
    }

    @Test func linksToObjectsDeletedBeforeTheSavepointAreStillCleared() throws {
        let dir = TemporaryDirectory()
        let (store, tables) = try Self.storeWithItems(dir, 0..<2) { tx, tables in
            try tx.set(tables.item, ObjectKey(0), ColumnKey(5), .link(ObjectKey(1)))
        }
        let tx = try store.beginWrite()
        #expect(try tx.delete(tables.item, ObjectKey(1)))
        let savepoint = try tx.savepoint()
        try tx.insert(tables.item, values: Self.item(5, "c5"))
        try tx.rollback(to: savepoint)
        tx.releaseSavepoint(savepoint)
        try tx.commit()
        let items = try store.beginRead().table(tables.item)
        #expect(try items.keys() == [ObjectKey(0)])
        #expect(try items.value(ObjectKey(0), ColumnKey(5)) == .null)
    }

    @Test func aTableCreatedSinceTheSavepointGoes() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let tables = try Self.createTables(tx)
        let savepoint = try tx.savepoint()
        let scratch = try tx.createTable("Scratch", columns: [ColumnSpec(name: "x", type: .int)])
        try tx.addColumn(scratch, ColumnSpec(name: "item", type: .link, linkTarget: tables.item))
        try tx.insert(scratch, values: [.int(1), .null])
        try tx.setSchemaBlob([1, 2, 3])
        try tx.rollback(to: savepoint)
        #expect(tx.tables.map(\.name) == ["Item", "Tag"])
        #expect(try tx.schemaBlob() == nil)
        // The name and the table key are free again.
        #expect(try tx.createTable("Scratch", columns: [ColumnSpec(name: "y", type: .string)]) == scratch)
        try tx.commit()
        #expect(store.beginRead().top.tables.map(\.name) == ["Item", "Tag", "Scratch"])
        try store.verify()
    }

    @Test func aClearedTableComesBack() throws {
        let dir = TemporaryDirectory()
        let (store, tables) = try Self.storeWithItems(dir, 0..<300) { tx, tables in
            try tx.insert(tables.tag, values: [.string("t"), .link(ObjectKey(7))])
        }
        let tx = try store.beginWrite()
        let before = try Self.dump(tx)
        let savepoint = try tx.savepoint()
        try tx.clear(tables.item)
        try tx.clear(tables.tag)
        try tx.insert(tables.item, values: Self.item(1000, "after"))
        try tx.rollback(to: savepoint)
        tx.releaseSavepoint(savepoint)
        #expect(try Self.dump(tx) == before)
        try tx.commit()
        let read = store.beginRead()
        #expect(try read.table(tables.item).count() == 300)
        #expect(try read.table(tables.tag).value(ObjectKey(0), ColumnKey(1)) == .link(ObjectKey(7)))
        try store.verify()
    }

    @Test func aSchemaChangeOfAnExistingTableCannotBeRolledBackAlone() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let tables = try Self.createTables(tx)
        let savepoint = try tx.savepoint()
        try tx.addColumn(tables.tag, ColumnSpec(name: "extra", type: .int))
        let error = #expect(throws: StorageError.self) { try tx.rollback(to: savepoint) }
        #expect(error?.message.contains("a column was added to an existing table") == true)
        // The whole transaction can still be discarded.
        tx.rollback()
        #expect(store.beginRead().top.tables.isEmpty)
    }

    @Test func releasedSavepointsStopLogging() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let tables = try Self.createTables(tx)
        let savepoint = try tx.savepoint()
        try tx.insert(tables.tag, values: [.string("a"), .null])
        tx.releaseSavepoint(savepoint)
        #expect(tx.undo == nil)
        try tx.insert(tables.tag, values: [.string("b"), .null])
        #expect(throws: StorageError.self) { try tx.rollback(to: savepoint) }
    }
}
