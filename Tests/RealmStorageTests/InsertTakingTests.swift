import Testing
@testable import RealmStorage

/// `insert(_:key:taking:)`: the values move into the table, and the caller's array is left
/// holding nulls, ready to be filled again.
@Suite struct InsertTakingTests {
    static let columns = [
        ColumnSpec.objectKey(name: "id"),
        ColumnSpec(name: "name", type: .string),
        ColumnSpec(name: "tag", type: .string, indexed: true),
        ColumnSpec(name: "score", type: .double),
    ]

    @Test func valuesMoveInAndTheArrayIsLeftWithNulls() throws {
        let dir = TemporaryDirectory()
        var table = TableKey(0)
        let long = String(repeating: "x", count: 40)
        do {
            let store = try Store.open(path: dir.path())
            let tx = try store.beginWrite()
            table = try tx.createTable("T", columns: Self.columns)
            var values: [Value] = []
            for id in 1...300 {
                values = [.int(Int64(id)), .string("\(long)\(id)"), .string("tag\(id % 3)"), .double(Double(id))]
                #expect(try tx.insert(table, taking: &values) == ObjectKey(Int64(id)))
                // Indexed columns are copied (their entries are made after the move).
                #expect(values == [.null, .null, .string("tag\(id % 3)"), .null])
            }
            try tx.commit()
        }
        let store = try Store.open(path: dir.path())
        let view = try store.beginRead().table(table)
        #expect(try view.count() == 300)
        #expect(try view.value(ObjectKey(7), ColumnKey(1)) == .string("\(long)7"))
        #expect(try view.value(ObjectKey(300), ColumnKey(3)) == .double(300))
        #expect(try view.indexLookup(ColumnKey(2), .string("tag1")).count == 100)
        try store.verify()
    }

    @Test func aRefusedInsertLeavesTheValuesAlone() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        let tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: Self.columns)
        var values: [Value] = [.int(1), .string("a"), .string("t"), .double(1)]
        try tx.insert(table, taking: &values)
        // A duplicate key (found in the leaf) and a value of the wrong type (found first).
        for refused in [[Value.int(1), .string("b"), .string("t"), .double(2)], [.int(2), .string("c"), .string("t"), .int(3)]] {
            values = refused
            #expect(throws: StorageError.self) { try tx.insert(table, taking: &values) }
            #expect(values == refused)
        }
        #expect(try tx.table(table).count() == 1)
        #expect(try tx.table(table).value(ObjectKey(1), ColumnKey(1)) == .string("a"))
    }
}
