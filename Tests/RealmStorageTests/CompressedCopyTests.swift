import Foundation
import Testing
@testable import RealmStorage

/// LZ4-compressed copies (Compressed/): written from a version, opened read-only in place,
/// read like the source, refused for writing, bounded in memory.
@Suite struct CompressedCopyTests {
    /// A store with `count` persons (every other one deleted when `sparse`) and a list column.
    static func makeSource(_ path: String, count: Int, sparse: Bool = false) throws -> Store {
        let store = try Store.open(path: path)
        let tx = try store.beginWrite()
        let table = try tx.createTable("Person", columns: Fixtures.personColumns + [ColumnSpec(name: "tags", type: .string, isList: true)])
        for id in 0..<count {
            try tx.insert(table, values: Fixtures.person(Int64(id)) + [.null])
            if id % 7 == 0 { try tx.setList(table, ObjectKey(Int64(id)), ColumnKey(5), [.string("t\(id)"), .string("u")]) }
        }
        if sparse { for id in stride(from: 0, to: count, by: 2) { _ = try tx.delete(table, ObjectKey(Int64(id))) } }
        try tx.commit()
        return store
    }

    /// What a version holds, without its version number (a copy is version 1).
    static func contents(_ read: ReadTransaction) throws -> DatabaseDump {
        var dump = try DatabaseDump(read)
        dump.version = 0
        return dump
    }

    static func openCompressed(_ path: String, cacheSize: Int = 4 << 20, reading: CompressedReading = .onDemand) throws(StorageError) -> Store {
        var options = StoreOptions(create: false, readOnly: true)
        options.compressedCacheSize = cacheSize
        options.compressedReading = reading
        return try Store(path: path, options: options)
    }

    @Test(arguments: [CompressedReading.onDemand, .inflate])
    func compressedCopyReadsAsTheSource(reading: CompressedReading) throws {
        let dir = TemporaryDirectory()
        let source = try Self.makeSource(dir.path(), count: 5000, sparse: true)
        let copyPath = dir.path("copy.realmz")
        try source.writeCompactedCopy(to: copyPath, compression: .lz4)
        #expect(CompressedFormat.isCompressedFile(at: copyPath))
        let copy = try Self.openCompressed(copyPath, reading: reading)
        #expect(try Self.contents(copy.beginRead()) == Self.contents(source.beginRead()))
        let read = copy.beginRead()
        let view = try read.table(read.tables[0].key)
        #expect(try view.indexLookup(ColumnKey(0), .int(501)) == [ObjectKey(501)])
        #expect(try view.indexLookup(ColumnKey(0), .int(500)) == [])
        try copy.verify()
        let counts = try #require(copy.compressedCounts)
        #expect(counts.onDemand == (reading == .onDemand))
        #expect(counts.damaged == 0)
        // Smaller than the uncompressed copy.
        let plainPath = dir.path("copy.realm")
        try source.writeCompactedCopy(to: plainPath)
        let sizes = try [copyPath, plainPath].map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as! Int }
        #expect(sizes[0] < sizes[1])
    }
}
