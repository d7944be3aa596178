import Foundation
import Testing
import TestSupport
@testable import RealmStorage

@Suite struct ValueRoundTripTests {
    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "int", type: .int), ColumnSpec(name: "optInt", type: .int, nullable: true),
        ColumnSpec(name: "bool", type: .bool), ColumnSpec(name: "optBool", type: .bool, nullable: true),
        ColumnSpec(name: "float", type: .float), ColumnSpec(name: "optFloat", type: .float, nullable: true),
        ColumnSpec(name: "double", type: .double), ColumnSpec(name: "optDouble", type: .double, nullable: true),
        ColumnSpec(name: "string", type: .string), ColumnSpec(name: "optString", type: .string, nullable: true),
        ColumnSpec(name: "binary", type: .binary), ColumnSpec(name: "optBinary", type: .binary, nullable: true),
        ColumnSpec(name: "date", type: .timestamp), ColumnSpec(name: "optDate", type: .timestamp, nullable: true),
        ColumnSpec(name: "ints", type: .int, isList: true), ColumnSpec(name: "strings", type: .string, nullable: true, isList: true),
    ]

    static let rows: [[Value]] = [
        [.int(.min), .null, .bool(false), .null, .float(-.infinity), .null, .double(.nan), .null, .string(""), .null,
         .binary([]), .null, .timestamp(Timestamp(seconds: -62_135_596_800, nanoseconds: 1)), .null, .null, .null],
        [.int(.max), .int(0), .bool(true), .bool(false), .float(.greatestFiniteMagnitude), .float(-0.0), .double(-.infinity),
         .double(.leastNonzeroMagnitude), .string("héllo \0 wörld 日本"), .string(""), .binary([0, 255, 0]), .binary([]),
         .timestamp(Timestamp(seconds: 253_402_300_799, nanoseconds: 999_999_999)), .timestamp(Timestamp(seconds: 0, nanoseconds: 0)), .null, .null],
        [.int(-1), .int(.min), .bool(true), .bool(true), .float(.nan), .float(1.5), .double(1e308), .double(-1e-308),
         .string(String(repeating: "x", count: 100_000)), .string(String(repeating: "ü", count: 5000)),
         .binary(Array(repeating: 7, count: 70_000)), .binary([1]), .timestamp(Timestamp(seconds: 1_700_000_000, nanoseconds: 500)),
         .timestamp(Timestamp(seconds: -1, nanoseconds: 999_999_999)), .null, .null],
    ]

    static func same(_ a: Value, _ b: Value) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)) where x.isNaN && y.isNaN: return true
        case (.float(let x), .float(let y)) where x.isNaN && y.isNaN: return true
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
        default: return a == b
        }
    }

    @Test func everyTypeRoundTripsThroughReopen() throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        let lists: [[Int: [Value]]] = [[:], [14: [.int(.min), .int(0), .int(.max)], 15: [.null, .string("a"), .string("")]],
                                      [14: (0..<3000).map { .int(Int64($0) * 1_000_003) }]]
        var table = TableKey(0)
        do {
            let store = try Store.open(path: path)
            let tx = try store.beginWrite()
            table = try tx.createTable("All", columns: Self.columns)
            for (row, list) in zip(Self.rows, lists) { try tx.insert(table, values: row, lists: list) }
            try tx.commit()
        }
        let store = try Store.open(path: path)
        let view = try store.beginRead().table(table)
        for (i, expected) in Self.rows.enumerated() {
            let row = try #require(try view.row(ObjectKey(Int64(i))))
            let actual = try row.values()
            for c in expected.indices where !Self.columns[c].isList {
                #expect(Self.same(actual[c], expected[c]), "row \(i) column \(Self.columns[c].name): \(actual[c]) != \(expected[c])")
            }
            #expect(try row.list(ColumnKey(14)) == lists[i][14] ?? [])
            #expect(try row.list(ColumnKey(15)) == lists[i][15] ?? [])
        }
        try store.verify()
    }

    @Test func valuesOverTheLimitAreRefusedWithoutDamage() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        let tx = try store.beginWrite()
        let table = try tx.createTable("Blob", columns: [ColumnSpec(name: "data", type: .binary), ColumnSpec(name: "text", type: .string)])
        let limit = ValueLimits.maxPayloadSize
        try tx.insert(table, values: [.binary(Array(repeating: 1, count: limit)), .string(String(repeating: "a", count: limit))])
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.binary(Array(repeating: 1, count: limit + 1)), .string("")]) }
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.int(1), .string("")]) }
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.null, .string("")]) }
        try tx.insert(table, values: [.binary([2]), .string("small")])
        try tx.commit()
        let view = try store.beginRead().table(table)
        #expect(try view.count() == 2)
        #expect(try view.value(ObjectKey(0), ColumnKey(0)).payloadSize == limit)
        #expect(try view.value(ObjectKey(1), ColumnKey(1)) == .string("small"))
        try store.verify()
    }
}

@Suite struct SchemaChangeTests {
    @Test func columnsAndTablesComeAndGoWithTheirData() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 3)))
        var tx = try store.beginWrite()
        let people = try tx.createTable("Person", columns: Fixtures.personColumns)
        let dogs = try tx.createTable("Dog", columns: [
            ColumnSpec(name: "name", type: .string),
            ColumnSpec(name: "owner", type: .link, linkTarget: people),
            ColumnSpec(name: "friends", type: .link, isList: true, linkTarget: people),
        ])
        for id in 0..<40 { try tx.insert(people, values: Fixtures.person(Int64(id))) }
        try tx.commit()

        tx = try store.beginWrite()
        for id in 40..<50 { try tx.insert(people, values: Fixtures.person(Int64(id))) }
        // Added inside the transaction that also holds changed leaves.
        let nickname = try tx.addColumn(people, ColumnSpec(name: "nickname", type: .string, nullable: true, indexed: true))
        let tags = try tx.addColumn(people, ColumnSpec(name: "tags", type: .string, isList: true))
        try tx.set(people, ObjectKey(45), nickname, .string("Rex"))
        try tx.setList(people, ObjectKey(3), tags, [.string("a"), .string("b")])
        try tx.insert(dogs, values: [.string("Fido"), .link(ObjectKey(3)), .null], lists: [2: [.link(ObjectKey(1)), .link(ObjectKey(2))]])
        #expect(throws: StorageError.self) { try tx.insert(dogs, values: [.string("Ghost"), .link(ObjectKey(999)), .null]) }
        try tx.commit()
        try store.verify()

        var view = try store.beginRead().table(people)
        #expect(try view.value(ObjectKey(0), nickname) == .null)
        #expect(try view.value(ObjectKey(45), nickname) == .string("Rex"))
        #expect(try view.indexLookup(nickname, .null).count == 49)
        #expect(try view.list(ObjectKey(3), tags) == [.string("a"), .string("b")])

        tx = try store.beginWrite()
        try tx.removeColumn(people, tags)
        try tx.removeColumn(people, ColumnKey(2))
        try tx.set(people, ObjectKey(3), ColumnKey(1), .string("changed"))
        #expect(throws: StorageError.self) { try tx.removeTable(people) }
        try tx.renameTable(dogs, to: "Hound")
        try tx.commit()
        try store.verify()
        view = try store.beginRead().table(people)
        #expect(view.info.column(named: "age") == nil)
        #expect(try view.row(ObjectKey(3))?.value(ColumnKey(1)) == .string("changed"))
        #expect(try store.beginRead().table(named: "Hound") != nil)

        tx = try store.beginWrite()
        try tx.clear(people)
        #expect(try tx.table(people).count() == 0)
        try tx.removeTable(dogs)
        try tx.removeTable(people)
        try tx.commit()
        #expect(store.beginRead().tables.isEmpty)
        try store.verify()
    }

    @Test func clearingATableFreesTheListsOfObjectsChangedBeforeInTheTransaction() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path())
        var tx = try store.beginWrite()
        let table = try tx.createTable("Row", columns: [ColumnSpec(name: "n", type: .int), ColumnSpec(name: "l", type: .int, isList: true)])
        for n in 0..<3 { try tx.insert(table, values: [.int(Int64(n)), .null], lists: [1: [.int(1), .int(2)]]) }
        try tx.commit()
        tx = try store.beginWrite()
        // The leaf becomes a buffer whose list cells still name the committed lists.
        try tx.set(table, ObjectKey(1), ColumnKey(0), .int(10))
        try tx.clear(table)
        try tx.commit()
        try store.verify()   // found the lists neither reachable nor free before the fix
        #expect(try store.beginRead().table(table).count() == 0)
    }

    @Test func theSchemaBlobIsKeptWithTheVersion() throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        do {
            let store = try Store.open(path: path)
            let tx = try store.beginWrite()
            try tx.setSchemaBlob(Array("schema v1".utf8))
            try tx.commit()
            let tx2 = try store.beginWrite()
            try tx2.setSchemaBlob(Array("schema v2".utf8))
            try tx2.commit()
        }
        let store = try Store.open(path: path)
        #expect(try store.beginRead().schemaBlob() == Array("schema v2".utf8))
        try store.verify()
    }
}

@Suite struct StoreModeTests {
    @Test func inMemoryStoresLeaveNothingOnDisk() throws {
        let name = "memory-\(UUID().uuidString)"
        let table: TableKey
        do {
            let store = try Store.open(path: name, options: StoreOptions(durability: .memOnly))
            let tx = try store.beginWrite()
            table = try tx.createTable("Person", columns: Fixtures.personColumns)
            for id in 0..<5000 { try tx.insert(table, values: Fixtures.person(Int64(id))) }
            try tx.commit()
            let again = try Store.open(path: name, options: StoreOptions(durability: .memOnly))
            #expect(try again.beginRead().table(table).count() == 5000)
            try again.verify()
        }
        #expect(!FileManager.default.fileExists(atPath: name))
        // Once the last user is gone, the contents are gone.
        let fresh = try Store.open(path: name, options: StoreOptions(durability: .memOnly))
        #expect(fresh.beginRead().tables.isEmpty)
    }

    @Test func readOnlyStoresRefuseWrites() throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        do {
            let store = try Store.open(path: path)
            let tx = try store.beginWrite()
            try tx.createTable("T", columns: [ColumnSpec(name: "v", type: .int)])
            try tx.commit()
        }
        let store = try Store.open(path: path, options: StoreOptions(readOnly: true))
        #expect(store.beginRead().tables.count == 1)
        #expect(throws: StorageError.self) { try store.beginWrite() }
        #expect(throws: StorageError.self) {
            try Store.open(path: dir.path("missing.realm"), options: StoreOptions(readOnly: true))
        }
    }

    @Test func compactedCopiesHoldOnlyLiveData() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe))
        var tx = try store.beginWrite()
        let table = try tx.createTable("Person", columns: Fixtures.personColumns + [ColumnSpec(name: "tags", type: .int, isList: true)])
        for id in 0..<20_000 {
            try tx.insert(table, values: Fixtures.person(Int64(id)) + [.null], lists: id % 10 == 0 ? [5: [.int(1), .int(2)]] : [:])
        }
        try tx.commit()
        tx = try store.beginWrite()
        for id in stride(from: 0, to: 20_000, by: 2) { try tx.delete(table, ObjectKey(Int64(id))) }
        try tx.setSchemaBlob([1, 2, 3])
        try tx.commit()
        let copyPath = dir.path("copy.realm")
        try store.writeCompactedCopy(to: copyPath)
        #expect(throws: StorageError.self) { try store.writeCompactedCopy(to: copyPath) }
        let copy = try Store.open(path: copyPath)
        let report = try copy.verify()
        #expect(report.objects == 10_000)
        #expect(report.freeBytes == 0)
        #expect(try TableDump(copy.beginRead().table(table)) == TableDump(store.beginRead().table(table)))
        #expect(try copy.beginRead().schemaBlob() == [1, 2, 3])
        #expect(try copy.spaceUsage().fileSize < store.spaceUsage().fileSize)
        let copyView = try copy.beginRead().table(table)
        #expect(try copyView.indexLookup(ColumnKey(2), .int(1)).count == 200)
    }
}

/// Counts the calls a store makes on its file.
final class CountingFile: StorageFile, Sendable {
    let inner: StorageFile
    private struct Counts {
        var syncs = 0
        var writes = 0
        var largestWrite = 0
    }
    private let counts = Locked(Counts())

    init(_ inner: StorageFile) { self.inner = inner }

    var syncs: Int { counts.withLock { $0.syncs } }
    var writes: Int { counts.withLock { $0.writes } }
    /// The most bytes one write wrote.
    var largestWrite: Int { counts.withLock { $0.largestWrite } }
    var path: String { inner.path }
    func size() throws(StorageError) -> UInt64 { try inner.size() }
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(StorageError) -> Int { try inner.read(into: buffer, at: offset) }
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(StorageError) {
        counts.withLock { counts in
            counts.writes += 1
            counts.largestWrite = max(counts.largestWrite, bytes.count)
        }
        try inner.write(bytes, at: offset)
    }
    func setSize(_ size: UInt64) throws(StorageError) { try inner.setSize(size) }
    func sync() throws(StorageError) {
        counts.withLock { $0.syncs += 1 }
        try inner.sync()
    }
    func map(length: Int) throws(StorageError) -> Mapping { try inner.map(length: length) }
}

@Suite struct DurabilityTests {
    @Test func aSmallDurableCommitSyncsOnce() throws {
        let dir = TemporaryDirectory()
        let box = WrappedFileBox<CountingFile>()
        let store = try Store.open(path: dir.path(), options: StoreOptions(fileWrapper: box.wrapper { CountingFile($0) }))
        let file = try #require(box.file)
        var tx = try store.beginWrite()
        let table = try tx.createTable("Item", columns: [ColumnSpec(name: "n", type: .int)])
        try tx.commit()
        for n in 0..<20 {
            let before = file.syncs
            tx = try store.beginWrite()
            try tx.insert(table, values: [.int(Int64(n))])
            try tx.commit()
            #expect(file.syncs - before == 1, "commit \(n) synced \(file.syncs - before) times")
        }
        // Unsafe durability never syncs; a rolled-back transaction writes nothing.
        let writesBefore = file.writes
        tx = try store.beginWrite()
        try tx.insert(table, values: [.int(99)])
        tx.rollback()
        #expect(file.writes == writesBefore)
        try store.verify()
    }

    @Test func unsafeDurabilityNeverSyncs() throws {
        let dir = TemporaryDirectory()
        let box = WrappedFileBox<CountingFile>()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, fileWrapper: box.wrapper { CountingFile($0) }))
        let file = try #require(box.file)
        let tx = try store.beginWrite()
        let table = try tx.createTable("Item", columns: [ColumnSpec(name: "n", type: .int)])
        for n in 0..<1000 { try tx.insert(table, values: [.int(Int64(n))]) }
        try tx.commit()
        #expect(file.syncs == 0)
        #expect(try store.beginRead().table(table).count() == 1000)
    }
}

@Suite struct LinkTests {
    @Test func deletingAnObjectClearsTheLinksToIt() throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 3)))
        var tx = try store.beginWrite()
        let people = try tx.createTable("Person", columns: [ColumnSpec(name: "name", type: .string)])
        let dogs = try tx.createTable("Dog", columns: [
            ColumnSpec(name: "owner", type: .link, linkTarget: people),
            ColumnSpec(name: "walkers", type: .link, isList: true, linkTarget: people),
        ])
        for i in 0..<20 { try tx.insert(people, values: [.string("p\(i)")]) }
        for i in 0..<30 {
            try tx.insert(dogs, values: [.link(ObjectKey(Int64(i % 20))), .null],
                          lists: [1: [.link(ObjectKey(Int64(i % 7))), .link(ObjectKey(Int64((i + 3) % 20)))]])
        }
        try tx.commit()
        let before = store.beginRead()

        tx = try store.beginWrite()
        for k in [3, 4, 5] { try tx.delete(people, ObjectKey(Int64(k))) }
        try tx.commit()
        try store.verify()

        let view = try store.beginRead().table(dogs)
        try view.forEachRow { (row) throws(StorageError) -> Bool in
            let i = row.key.value
            let owner: Value = [3, 4, 5].contains(i % 20) ? .null : .link(ObjectKey(i % 20))
            #expect(try row.value(ColumnKey(0)) == owner, "dog \(i)")
            let walkers = [i % 7, (i + 3) % 20].filter { ![3, 4, 5].contains($0) }.map { Value.link(ObjectKey($0)) }
            #expect(try row.list(ColumnKey(1)) == walkers, "dog \(i)")
            return true
        }
        let changes = try store.beginRead().changes(since: before.version)
        #expect(changes.tables[people]?.deleted == KeyRanges([3, 4, 5]))
        #expect(changes.tables[dogs]?.modified.isEmpty == false)

        // Clearing a table clears every link to it.
        tx = try store.beginWrite()
        try tx.clear(people)
        try tx.commit()
        try store.verify()
        try store.beginRead().table(dogs).forEachRow { (row) throws(StorageError) -> Bool in
            #expect(try row.value(ColumnKey(0)) == .null)
            #expect(try row.list(ColumnKey(1)).isEmpty)
            return true
        }
    }
}

@Suite struct StringLayoutTests {
    /// Short values are stored in fixed slots, longer or uneven ones with end offsets; both
    /// must read back the same, through lookups, scans and a rewrite of the leaf.
    @Test(arguments: [0, 1, 3, 4, 15, 16, 62, 63, 64, 300])
    func shortAndLongValuesRoundTrip(longest: Int) throws {
        let dir = TemporaryDirectory()
        let path = dir.path()
        var random = SeededRandom(seed: UInt64(longest) + 11)
        let strings: [Value] = (0..<300).map { i in
            if i % 7 == 3 { return .null }
            let n = i == 0 ? longest : Int.random(in: 0...longest, using: &random)
            // n bytes of UTF-8: ASCII with NULs, and a two-byte "é" where it fits.
            var bytes: [UInt8] = (0..<n).map { _ in [0x61, 0x00, 0x7A].randomElement(using: &random)! }
            if n >= 2 { bytes[0] = 0xC3; bytes[1] = 0xA9 }
            return .string(String(decoding: bytes, as: UTF8.self))
        }
        let blobs: [Value] = (0..<300).map { i in .binary((0..<(i == 1 ? longest : Int.random(in: 0...longest, using: &random))).map { UInt8(truncatingIfNeeded: $0 * 31) }) }
        let table: TableKey
        do {
            let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 64, innerCapacity: 4)))
            let tx = try store.beginWrite()
            table = try tx.createTable("S", columns: [ColumnSpec(name: "s", type: .string, nullable: true, indexed: true),
                                                      ColumnSpec(name: "b", type: .binary)])
            for i in 0..<300 { try tx.insert(table, values: [strings[i], blobs[i]]) }
            try tx.commit()
        }
        let store = try Store.open(path: path)
        let view = try store.beginRead().table(table)
        for i in 0..<300 {
            var row: [Value] = []
            try #require(try view.row(ObjectKey(Int64(i)))).readValues(into: &row)
            #expect(row == [strings[i], blobs[i]], "row \(i)")
        }
        // Rewriting the leaves decodes every value and encodes it again.
        let tx = try store.beginWrite()
        for i in stride(from: 0, to: 300, by: 50) { try tx.set(table, ObjectKey(Int64(i)), ColumnKey(1), .binary([9])) }
        try tx.commit()
        let after = try TableDump(store.beginRead().table(table))
        for i in 0..<300 {
            #expect(after.rows[Int64(i)] == [strings[i], i % 50 == 0 ? .binary([9]) : blobs[i]], "row \(i) after rewrite")
        }
        try store.verify()
    }
}

@Suite struct UniqueIndexTests {
    @Test(arguments: [3, 256])
    func ascendingPrimaryKeysStillRefuseDuplicates(leafCapacity: Int) throws {
        let dir = TemporaryDirectory()
        let store = try Store.open(path: dir.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: leafCapacity, innerCapacity: 3)))
        var tx = try store.beginWrite()
        let table = try tx.createTable("P", columns: [ColumnSpec(name: "id", type: .int, unique: true), ColumnSpec(name: "s", type: .string, unique: true)])
        for id in Int64(0)..<50 {
            try tx.insert(table, values: [.int(id * 2), .string("s\(id)")])
            // The value just appended, the one before it and the first one are all taken.
            for taken in [id * 2, max(id - 1, 0) * 2, 0] {
                #expect(throws: StorageError.self) { try tx.insert(table, values: [.int(taken), .string("new\(id)")]) }
            }
            #expect(throws: StorageError.self) { try tx.insert(table, values: [.int(1_000 + id), .string("s\(id)")]) }
        }
        try tx.commit()
        tx = try store.beginWrite()
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.int(98), .string("x")]) }
        try tx.insert(table, values: [.int(99), .string("x")])
        #expect(throws: StorageError.self) { try tx.insert(table, values: [.int(99), .string("y")]) }
        try tx.commit()
        let view = try store.beginRead().table(table)
        #expect(try view.count() == 51)
        #expect(try view.indexFirst(ColumnKey(0), .int(98)) == ObjectKey(49))
        #expect(try view.indexFirst(ColumnKey(0), .int(97)) == nil)
        #expect(try view.indexFirst(ColumnKey(1), .string("x")) == ObjectKey(50))
        try store.verify()
    }
}
