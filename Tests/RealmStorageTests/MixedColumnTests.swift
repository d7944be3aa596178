import Foundation
import Testing
@testable import RealmStorage

/// Decimal, object id, UUID and mixed columns: round trips, indexes, typed links, damage.
@Suite struct MixedColumnTests {
    static let decimalOne = Value.decimal(Bytes16(a: 1, b: 0x3040_0000_0000_0000))
    static let oid = Value.objectId(Bytes16([0x65, 0x12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0xFF]))
    static let uuid = Value.uuid(Bytes16((0..<16).map { UInt8($0 * 17) }))

    /// Every kind of value a mixed column holds, including long and empty strings.
    static let mixedValues: [Value] = [
        .null, .int(.min), .int(.max), .bool(true), .bool(false), .float(-1.5), .double(.infinity),
        .string(""), .string("short"), .string(String(repeating: "long ", count: 40)), .binary([0, 0, 1]),
        .timestamp(Timestamp(seconds: -1, nanoseconds: 999_999_999)), decimalOne, oid, uuid,
    ]

    static func same(_ a: Value, _ b: Value) -> Bool {
        if case .double(let x) = a, case .double(let y) = b { return x.bitPattern == y.bitPattern }
        return a == b
    }

    @Test func fixedWidthAndMixedValuesRoundTripThroughReopen() throws {
        let dir = TemporaryDirectory()
        let columns = [
            ColumnSpec(name: "decimal", type: .decimal), ColumnSpec(name: "oid", type: .objectId, nullable: true),
            ColumnSpec(name: "uuid", type: .uuid), ColumnSpec(name: "any", type: .mixed),
            ColumnSpec(name: "anyList", type: .mixed, isList: true), ColumnSpec(name: "oids", type: .objectId, isList: true),
        ]
        var table = TableKey(0)
        do {
            let store = try Store.open(path: dir.path())
            let tx = try store.beginWrite()
            table = try tx.createTable("Mixed", columns: columns)
            for (i, value) in Self.mixedValues.enumerated() {
                try tx.insert(table, values: [Self.decimalOne, i.isMultiple(of: 2) ? .null : Self.oid, Self.uuid, value, .null, .null],
                              lists: [4: Self.mixedValues, 5: [Self.oid, Self.oid]])
            }
            try tx.commit()
        }
        let store = try Store.open(path: dir.path())
        let view = try store.beginRead().table(table)
        for (i, expected) in Self.mixedValues.enumerated() {
            let row = try #require(try view.row(ObjectKey(Int64(i))))
            let values = try row.values()
            #expect(values[0] == Self.decimalOne)
            #expect(values[1] == (i.isMultiple(of: 2) ? .null : Self.oid))
            #expect(values[2] == Self.uuid)
            #expect(Self.same(values[3], expected), "row \(i): \(values[3]) != \(expected)")
            #expect(try row.list(ColumnKey(4)).elementsEqual(Self.mixedValues, by: Self.same))
            #expect(try row.list(ColumnKey(5)) == [Self.oid, Self.oid])
            #expect(Self.same(try view.value(ObjectKey(Int64(i)), ColumnKey(3)), expected))
        }
        try store.verify()
    }

    @Test func mixedColumnsRefuseUntypedLinksAndFixedColumnsRefuseOtherTypes() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: [ColumnSpec(name: "any", type: .mixed), ColumnSpec(name: "oid", type: .objectId)])
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.link(ObjectKey(0)), Self.oid]) }
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.null, .binary([1, 2])]) }
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.typedLink(table, ObjectKey(99)), Self.oid]) }
        try tx.insert(table, values: [.null, Self.oid])
        try tx.commit()
        try store.verify()
    }

    @Test func indexedMixedColumnFindsEachValueByType() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let table = try tx.createTable("T", columns: [ColumnSpec(name: "any", type: .mixed, indexed: true)])
        for value in Self.mixedValues { try tx.insert(table, values: [value]) }
        try tx.insert(table, values: [.string("short")])
        try tx.commit()
        let view = try store.beginRead().table(table)
        #expect(try view.indexLookup(ColumnKey(0), .string("short")) == [ObjectKey(8), ObjectKey(15)])
        #expect(try view.indexLookup(ColumnKey(0), Self.oid) == [ObjectKey(13)])
        #expect(try view.indexLookup(ColumnKey(0), Self.uuid) == [ObjectKey(14)])
        #expect(try view.indexLookup(ColumnKey(0), .int(.max)) == [ObjectKey(2)])
        // An int and a string of the same digits are different mixed values.
        #expect(try view.indexLookup(ColumnKey(0), .string("\(Int64.max)")).isEmpty)
        try store.verify()
    }

    @Test func typedLinksToDeletedObjectsAreClearedAtCommit() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        var tx = try store.beginWrite()
        let target = try tx.createTable("Target", columns: [ColumnSpec(name: "n", type: .int)])
        let origin = try tx.createTable("Origin", columns: [ColumnSpec(name: "any", type: .mixed), ColumnSpec(name: "many", type: .mixed, isList: true)])
        let a = try tx.insert(target, values: [.int(1)])
        let b = try tx.insert(target, values: [.int(2)])
        let o = try tx.insert(origin, values: [.typedLink(target, a), .null], lists: [1: [.typedLink(target, a), .int(7), .typedLink(target, b)]])
        try tx.commit()
        tx = try store.beginWrite()
        _ = try tx.delete(target, a)
        try tx.commit()
        let view = try store.beginRead().table(origin)
        #expect(try view.value(o, ColumnKey(0)) == .null)
        #expect(try view.list(o, ColumnKey(1)) == [.int(7), .typedLink(target, b)])
        try store.verify()
    }

    @Test func damagedMixedTagIsReportedNotTrusted() throws {
        for bytes: [UInt8] in [[], [99, 1], [ColumnType.int.rawValue, 1, 2], [ColumnType.bool.rawValue, 7], [ColumnType.link.rawValue, 0, 0, 0, 0, 0, 0, 0, 0]] {
            let result = bytes.withUnsafeBytes { raw in Result { () throws(StorageError) in try MixedCodec.decode(raw) } }
            guard case .failure(let error) = result else { Issue.record("decoded \(bytes) without complaint"); continue }
            #expect(error.code == .fileCorrupted)
        }
        for value in Self.mixedValues.dropFirst() + [.typedLink(TableKey(3), ObjectKey(-5))] {
            let bytes = MixedCodec.encode(value)
            #expect(try bytes.withUnsafeBytes { raw throws(StorageError) in try MixedCodec.decode(raw) } == value)
        }
    }

    @Test func removingATableClearsMixedLinksToItsObjects() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let target = try tx.createTable("Target", columns: [ColumnSpec(name: "n", type: .int)])
        let origin = try tx.createTable("Origin", columns: [ColumnSpec(name: "any", type: .mixed), ColumnSpec(name: "many", type: .mixed, isList: true)])
        let a = try tx.insert(target, values: [.int(1)])
        let o = try tx.insert(origin, values: [.typedLink(target, a), .null], lists: [1: [.typedLink(target, a), .int(2)]])
        try tx.removeTable(target)
        try tx.commit()
        let view = try store.beginRead().table(origin)
        #expect(try view.value(o, ColumnKey(0)) == .null)
        #expect(try view.list(o, ColumnKey(1)) == [.int(2)])
        try store.verify()
    }
}
