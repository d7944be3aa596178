import Foundation
import Testing
@testable import RealmStorage

/// Copies stream to their file as they are made (Copy/CopyWriter.swift): no write is larger
/// than the writer's flush size (plus a node), so a copy's memory does not grow with the realm,
/// and what streams in reads back as the source, plain or compressed.
@Suite struct StreamedCopyTests {
    /// A copy of several times the flush size, written through a file that records its writes.
    static func copy(_ compression: CopyCompression, in dir: TemporaryDirectory) throws -> (file: CountingFile, copy: Store, source: Store) {
        let box = WrappedFileBox<CountingFile>()
        var options = StoreOptions()
        options.copyHooks = CopyHooks(fileWrapper: box.wrapper { CountingFile($0) })
        let source = try Store.open(path: dir.path(), options: options)
        let tx = try source.beginWrite()
        let table = try tx.createTable("Person", columns: Fixtures.personColumns + [ColumnSpec(name: "note", type: .string)])
        for id in 0..<60_000 {
            // Text that compresses poorly, so the copy stays several MiB compressed too.
            let note = (0..<4).map { _ in String(UInt64.random(in: .min ... .max), radix: 36) }.joined()
            try tx.insert(table, values: Fixtures.person(Int64(id)) + [.string(note)])
        }
        try tx.commit()
        let path = dir.path("copy")
        try source.writeCompactedCopy(to: path, compression: compression)
        let file = try #require(box.file)
        var copyOptions = StoreOptions(create: false, readOnly: compression == .lz4)
        copyOptions.compressedCacheSize = 1 << 20
        return (file, try Store(path: path, options: copyOptions), source)
    }

    @Test(arguments: [CopyCompression.none, .lz4])
    func aLargeCopyIsWrittenInBoundedPieces(compression: CopyCompression) throws {
        let dir = TemporaryDirectory()
        let (file, copy, source) = try Self.copy(compression, in: dir)
        let size = try copy.spaceUsage().fileSize
        #expect(size > 4 * UInt64(CopyWriter.flushSize), "the copy is too small to show streaming: \(size) bytes")
        #expect(file.largestWrite <= CopyWriter.flushSize + (64 << 10), "a write of \(file.largestWrite) bytes")
        #expect(file.writes >= 4)
        #expect(file.syncs == 1)
        try copy.verify()
        #expect(try CompressedCopyTests.contents(copy.beginRead()) == CompressedCopyTests.contents(source.beginRead()))
    }

    /// A plain copy opens for writing and takes commits, as a compacted file does.
    @Test func aStreamedCopyTakesCommits() throws {
        let dir = TemporaryDirectory()
        let (_, copy, _) = try Self.copy(.none, in: dir)
        let tx = try copy.beginWrite()
        let table = tx.tables[0].key
        try tx.insert(table, values: Fixtures.person(1_000_000) + [.string("new")])
        try tx.commit()
        try copy.verify()
        #expect(try copy.beginRead().table(table).count() == 60_001)
    }
}
