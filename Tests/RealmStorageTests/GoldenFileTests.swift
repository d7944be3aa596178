import Foundation
import Testing
@testable import RealmStorage

/// Realm files written by each format version, committed to the repository: every later
/// build must open them, verify them and read the same contents. A failure here means the file
/// format changed; bump `FileHeader.formatVersion` and teach the reader the old format.
/// (Format 2's file holds chained roots: its two commits are run headers after the slot.)
///
/// To write the current format's file after an intended format change:
/// `GOLDEN_WRITE=1 swift test --filter Golden` (older formats' files stay as they are).
@Suite struct GoldenFileTests {
    static func path(format: Int) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("Golden/format-\(format).realm").path  // excluded from the target in Package.swift
    }

    /// The format version in the header of the file at `path`, as it is on disk.
    static func formatVersion(ofFileAt path: String) throws -> UInt32 {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self) }
    }

    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "name", type: .string, indexed: true),
        ColumnSpec(name: "note", type: .string, nullable: true),
        ColumnSpec(name: "flag", type: .bool),
        ColumnSpec(name: "ratio", type: .float, nullable: true),
        ColumnSpec(name: "score", type: .double),
        ColumnSpec(name: "when", type: .timestamp),
        ColumnSpec(name: "blob", type: .binary, nullable: true),
        ColumnSpec(name: "tags", type: .string, isList: true),
    ]

    static func row(_ i: Int64) -> [Value] {
        [.int(i * 10), .string("name-\(i)"), i % 3 == 0 ? .null : .string(String(repeating: "long note ", count: Int(i % 9))),
         .bool(i % 2 == 0), i % 4 == 0 ? .null : .float(Float(i) / 4), .double(Double(i) * 1.5 - 100),
         .timestamp(Timestamp(seconds: 1_700_000_000 + i, nanoseconds: Int32(i * 1000))),
         i % 5 == 0 ? .null : .binary((0..<Int(i % 70)).map { UInt8(truncatingIfNeeded: $0 &+ Int(i)) }), .null]
    }

    static func tags(_ i: Int64) -> [Value] { (0..<(i % 4)).map { .string("t\($0)") } }

    /// A table keyed by its integer primary key, with the 16-byte and mixed types.
    static let keyedColumns: [ColumnSpec] = [
        .objectKey(name: "id"),
        ColumnSpec(name: "amount", type: .decimal),
        ColumnSpec(name: "oid", type: .objectId, nullable: true),
        ColumnSpec(name: "uuid", type: .uuid),
        ColumnSpec(name: "any", type: .mixed, indexed: true),
        ColumnSpec(name: "anys", type: .mixed, isList: true),
    ]

    static func keyedRow(_ i: Int64, things: TableKey) -> [Value] {
        let mixed: [Value] = [.null, .int(i), .string("s\(i)"), .double(Double(i) / 3), .typedLink(things, ObjectKey(i * 2 + 1)),
                              .timestamp(Timestamp(seconds: i, nanoseconds: 5)), .bool(i % 2 == 0), .binary([UInt8(i & 0xFF)])]
        return [.int(i * 1000 - 20_000), .decimal(Bytes16(a: UInt64(i), b: 0x3040_0000_0000_0000)),
                i % 3 == 0 ? .null : .objectId(Bytes16((0..<12).map { UInt8(truncatingIfNeeded: Int64($0) &* i) })),
                .uuid(Bytes16((0..<16).map { UInt8(truncatingIfNeeded: Int64($0) &+ i) })), mixed[Int(i) % mixed.count], .null]
    }

    static func keyedList(_ i: Int64) -> [Value] { [.int(i), .string("x"), .null, .float(1.5)] }

    /// Builds the golden contents: 600 objects over three commits, some deleted and updated,
    /// a linked table, and a schema blob.
    static func write(to path: String) throws {
        let store = try Store.open(path: path, options: StoreOptions(limits: TreeLimits(leafCapacity: 64, innerCapacity: 8)))
        var tx = try store.beginWrite()
        let things = try tx.createTable("Thing", columns: columns)
        let owners = try tx.createTable("Owner", columns: [
            ColumnSpec(name: "thing", type: .link, linkTarget: things),
            ColumnSpec(name: "things", type: .link, isList: true, linkTarget: things),
        ])
        for i in Int64(0)..<600 { try tx.insert(things, values: row(i), lists: [8: tags(i)]) }
        for i in Int64(1)..<20 { try tx.insert(owners, values: [.link(ObjectKey(i)), .null], lists: [1: [.link(ObjectKey(i + 1)), .link(ObjectKey(i + 2))]]) }
        let keyed = try tx.createTable("Keyed", columns: keyedColumns)
        for i in Int64(0)..<40 { try tx.insert(keyed, values: keyedRow(i, things: things), lists: [5: keyedList(i)]) }
        try tx.setSchemaBlob(Array("golden schema".utf8))
        try tx.commit()
        tx = try store.beginWrite()
        for i in stride(from: Int64(0), to: 600, by: 7) { try tx.delete(things, ObjectKey(i)) }
        for i in stride(from: Int64(1), to: 600, by: 11) where i % 7 != 0 { try tx.set(things, ObjectKey(i), ColumnKey(1), .string("renamed-\(i)")) }
        try tx.commit()
    }

    static func expectedName(_ i: Int64) -> Value { i % 11 == 1 ? .string("renamed-\(i)") : .string("name-\(i)") }

    @Test(arguments: 1...Int(FileHeader.formatVersion))
    func theCommittedFileStillReads(format: Int) throws {
        let path = Self.path(format: format)
        if ProcessInfo.processInfo.environment["GOLDEN_WRITE"] != nil && format == Int(FileHeader.formatVersion) {
            try? FileManager.default.removeItem(atPath: path)
            try Self.write(to: path)
            try? FileManager.default.removeItem(atPath: path + ".lock")
        }
        // Work on a copy: opening writes the lock file and may repair, the original stays put.
        let dir = TemporaryDirectory()
        let copy = dir.path("golden.realm")
        try FileManager.default.copyItem(atPath: path, toPath: copy)
        let store = try Store.open(path: copy, options: StoreOptions(create: false))
        let report = try store.verify()
        #expect(report.tables == 3)
        let read = store.beginRead()
        #expect(try read.schemaBlob() == Array("golden schema".utf8))
        let things = try #require(try read.table(named: "Thing"))
        #expect(try things.count() == 600 - 86)
        for i in Int64(0)..<600 {
            let row = try things.row(ObjectKey(i))
            guard i % 7 != 0 else {
                #expect(row == nil)
                continue
            }
            var expected = Self.row(i)
            expected[1] = Self.expectedName(i)
            #expect(try row?.values() == expected, "object \(i)")
            #expect(try row?.list(ColumnKey(8)) == Self.tags(i), "object \(i)")
        }
        #expect(try things.indexFirst(ColumnKey(0), .int(50)) == ObjectKey(5))
        #expect(try things.indexLookup(ColumnKey(1), .string("renamed-12")) == [ObjectKey(12)])
        let owners = try #require(try read.table(named: "Owner"))
        #expect(try owners.count() == 19)
        // Links to deleted objects were cleared by the commit that deleted them.
        #expect(try owners.value(ObjectKey(6), ColumnKey(0)) == .null)
        #expect(try owners.list(ObjectKey(5), ColumnKey(1)) == [.link(ObjectKey(8))])
        #expect(try owners.list(ObjectKey(0), ColumnKey(1)) == [.link(ObjectKey(2)), .link(ObjectKey(3))])
        let keyed = try #require(try read.table(named: "Keyed"))
        #expect(try keyed.count() == 40)
        for i in Int64(0)..<40 {
            var expected = Self.keyedRow(i, things: things.key)
            // Mixed links to objects deleted later (every 7th Thing) were cleared.
            if case .typedLink(_, let target) = expected[4], target.value % 7 == 0 { expected[4] = .null }
            let key = ObjectKey(i * 1000 - 20_000)
            #expect(try keyed.row(key)?.values() == expected, "keyed object \(i)")
            #expect(try keyed.list(key, ColumnKey(5)) == Self.keyedList(i))
            #expect(try keyed.indexFirst(ColumnKey(0), .int(key.value)) == key)
        }
        #expect(try keyed.indexLookup(ColumnKey(4), .string("s2")) == [ObjectKey(-18_000)])
    }
    /// The same files take small commits: changed leaves are encoded from the old format's
    /// nodes, their unchanged blocks copied (debug builds check each against a full encoding),
    /// and what was there reads back beside what was added.
    @Test(arguments: 1...Int(FileHeader.formatVersion))
    func theCommittedFileTakesSmallCommits(format: Int) throws {
        let dir = TemporaryDirectory()
        let copy = dir.path("golden.realm")
        try FileManager.default.copyItem(atPath: Self.path(format: format), toPath: copy)
        do {
            let store = try Store.open(path: copy, options: StoreOptions(create: false))
            let things = try #require(try store.beginRead().table(named: "Thing")).key
            for i in Int64(0)..<5 {
                let transaction = try store.beginWrite()
                try transaction.set(things, ObjectKey(100 + i), ColumnKey(5), .double(-1))      // an update
                try transaction.insert(things, values: Self.row(600 + i), lists: [8: Self.tags(600 + i)])  // an append
                try transaction.insert(things, key: ObjectKey(7), values: Self.row(7 + i * 1000))  // into a hole, then out again
                _ = try transaction.delete(things, ObjectKey(7))
                try transaction.commit()
            }
            try store.verify()
        }
        let reopened = try Store.open(path: copy, options: StoreOptions(create: false))
        try reopened.verify()
        let things = try #require(try reopened.beginRead().table(named: "Thing"))
        #expect(try things.count() == 600 - 86 + 5)
        for i in Int64(0)..<605 where i % 7 != 0 || i >= 600 {
            var expected = Self.row(i)
            if i < 600 { expected[1] = Self.expectedName(i) }
            if (100..<105).contains(i) { expected[5] = .double(-1) }
            #expect(try things.row(ObjectKey(i))?.values() == expected, "object \(i)")
            #expect(try things.row(ObjectKey(i))?.list(ColumnKey(8)) == Self.tags(i), "object \(i)")
        }
    }
}
