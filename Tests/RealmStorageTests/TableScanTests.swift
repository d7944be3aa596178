import Testing
@testable import RealmStorage

/// Whole-column scans (`TableView.forEachBlock`), which start loading the leaves ahead of the
/// one they read (`BTree.forEachLeaf(lookahead:)`): at every tree shape they visit each
/// object's value once, in key order, whether its leaf is committed, changed in the write
/// transaction, or older than the column.
@Suite struct TableScanTests {
    /// The values `forEachBlock` visits, in order (nil for a leaf without the column).
    static func scanned(_ view: TableView, _ column: ColumnKey) throws -> [Double?] {
        var values: [Double?] = []
        try view.forEachBlock(of: column) { (block, count) throws(StorageError) in
            switch block {
            case .block(let v):
                #expect(v.count == count)
                for i in 0..<count { values.append(v.floatingPoint(i)) }
            case .values(let column):
                #expect(column.count == count)
                for value in column {
                    guard case .double(let d) = value else { Issue.record("\(value) in a double column"); continue }
                    values.append(d)
                }
            case .uniform:
                values += Array(repeating: nil, count: count)
            }
        }
        return values
    }

    @Test(arguments: TreeTests.cases)
    func aColumnScanVisitsEveryValueInKeyOrderAtEveryShape(leafCapacity: Int, innerCapacity: Int) throws {
        let limits = TreeLimits(leafCapacity: leafCapacity, innerCapacity: innerCapacity)
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: limits))
        var tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: [ColumnSpec(name: "v", type: .double)])
        try tx.commit()
        var expected: [Double?] = []
        // Keys in an order that splits leaves in the middle as well as at the end.
        for key in TreeTests.keys(40, .zigzag) {
            tx = try store.beginWrite()
            try tx.insert(table, key: ObjectKey(key), values: [.double(Double(key) * 1.5)])
            try tx.commit()
            expected = (expected + [Double(key) * 1.5]).sorted { $0! < $1! }
            #expect(try Self.scanned(store.beginRead().table(table), ColumnKey(0)) == expected)
        }

        // Changed leaves between committed ones, read by the write transaction.
        tx = try store.beginWrite()
        for key in [Int64(0), 26, 54] {
            try tx.set(table, ObjectKey(key), ColumnKey(0), .double(-1))
            expected[Int(key) / 2] = -1
        }
        #expect(try Self.scanned(tx.table(table), ColumnKey(0)) == expected)
        try tx.commit()
        #expect(try Self.scanned(store.beginRead().table(table), ColumnKey(0)) == expected)

        // A column added later: committed leaves written before it lack it.
        tx = try store.beginWrite()
        let added = try tx.addColumn(table, ColumnSpec(name: "w", type: .double))
        try tx.set(table, ObjectKey(78), added, .double(7))
        try tx.commit()
        let withAdded = try Self.scanned(store.beginRead().table(table), added)
        #expect(withAdded.count == expected.count)
        #expect(withAdded.last == 7)
        #expect(withAdded.dropLast().allSatisfy { $0 == nil || $0 == 0 })
        try store.verify()
    }
}
