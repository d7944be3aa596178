import Foundation
import Testing
@testable import RealmStorage

/// Damaged compressed copies: flipped bits in the header, the table and the blocks,
/// truncations, blocks spliced from their neighbours or from another copy, foreign files.
/// Each gives a typed error, at open or when the damaged data is read, or reads exactly what
/// the source holds: never other data, never a crash.
@Suite struct CompressedCopyFuzzTests {
    static let damageCodes: Set<StorageError.Code> = [.fileCorrupted, .invalidDatabase, .unsupportedFormatVersion]

    /// A small source's compressed copy (a few blocks) and what the source holds.
    static func sample(_ dir: TemporaryDirectory, count: Int = 1500, name: String = "copy.realmz") throws -> (bytes: [UInt8], contents: DatabaseDump) {
        let source = try CompressedCopyTests.makeSource(dir.path(name + ".source"), count: count, sparse: true)
        let path = dir.path(name)
        try source.writeCompactedCopy(to: path, compression: .lz4)
        return (Array(try Data(contentsOf: URL(fileURLWithPath: path))), try CompressedCopyTests.contents(source.beginRead()))
    }

    /// Opens `bytes` as a compressed copy and reads everything; true when it read the source's
    /// contents, false when a typed damage error stopped it.
    @discardableResult
    static func expectDamageOrSame(_ bytes: [UInt8], _ contents: DatabaseDump, in dir: TemporaryDirectory, _ what: String,
                                   reading: CompressedReading = .onDemand) -> Bool {
        let path = dir.path("damaged-\(UUID().uuidString.prefix(8)).realmz")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { unlink(path) }
        do {
            let store = try CompressedCopyTests.openCompressed(path, reading: reading)
            let read = try CompressedCopyTests.contents(store.beginRead())
            #expect(read == contents, "\(what): read other data than the source holds")
            return true
        } catch let error as StorageError {
            #expect(damageCodes.contains(error.code), "\(what): \(error)")
            return false
        } catch {
            Issue.record("\(what): untyped \(error)")
            return false
        }
    }

    @Test func flippedBitsGiveTypedErrors() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents) = try Self.sample(dir)
        let layout = try Self.layout(of: bytes, in: dir)
        let tableEnd = CompressedFormat.headerSize + layout.tableSize
        // Every byte of the header and table, and bytes throughout the blocks.
        var positions = Array(0..<tableEnd)
        positions += stride(from: tableEnd, to: bytes.count, by: max(1, (bytes.count - tableEnd) / 150))
        for position in positions {
            var damaged = bytes
            damaged[position] ^= UInt8(1 << (position % 8))
            // Every byte is covered by a checksum: no flip goes unnoticed.
            #expect(!Self.expectDamageOrSame(damaged, contents, in: dir, "bit flipped at \(position)"), "flip at \(position) unnoticed")
        }
        // The fallback reads damaged blocks the same way.
        var damaged = bytes
        damaged[bytes.count - 10] ^= 0x10
        #expect(!Self.expectDamageOrSame(damaged, contents, in: dir, "inflated", reading: .inflate))
    }

    @Test func truncationsGiveTypedErrors() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents) = try Self.sample(dir)
        let layout = try Self.layout(of: bytes, in: dir)
        var lengths = [0, 1, 7, 8, 63, 64, 65, CompressedFormat.headerSize + layout.tableSize - 1, CompressedFormat.headerSize + layout.tableSize]
        for block in layout.blocks { lengths += [Int(block.offset) - 1, Int(block.offset), Int(block.offset) + 1, Int(block.offset) + Int(block.length) - 1] }
        lengths += stride(from: 0, to: bytes.count, by: max(1, bytes.count / 50))
        for length in Set(lengths) where length >= 0 && length < bytes.count {
            #expect(!Self.expectDamageOrSame(Array(bytes[0..<length]), contents, in: dir, "truncated to \(length)"))
        }
        // And bytes added at the end.
        #expect(!Self.expectDamageOrSame(bytes + [0, 0, 0, 0], contents, in: dir, "grown"))
    }

    /// Blocks moved or taken from another copy, with the table and header rewritten to match
    /// (only the blocks' own checksums can tell).
    @Test func splicedBlocksGiveTypedErrors() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents) = try Self.sample(dir)
        let layout = try Self.layout(of: bytes, in: dir)
        #expect(layout.blocks.count >= 3)
        let stored = layout.blocks.map { Array(bytes[Int($0.offset)..<Int($0.offset) + Int($0.length)]) }
        for (i, j) in [(0, 1), (1, 2), (0, layout.blocks.count - 1)] {
            var blocks = stored
            var entries = layout.blocks
            blocks.swapAt(i, j)
            entries.swapAt(i, j)
            #expect(!Self.expectDamageOrSame(Self.assemble(layout, entries, blocks), contents, in: dir, "blocks \(i) and \(j) swapped"))
        }
        // The same source written again: another nonce, so its blocks do not verify here.
        let (other, _) = try Self.sample(dir, name: "other.realmz")
        let otherLayout = try Self.layout(of: other, in: dir)
        for i in 0..<min(layout.blocks.count, otherLayout.blocks.count) {
            var blocks = stored
            var entries = layout.blocks
            let block = otherLayout.blocks[i]
            blocks[i] = Array(other[Int(block.offset)..<Int(block.offset) + Int(block.length)])
            entries[i] = block
            #expect(!Self.expectDamageOrSame(Self.assemble(layout, entries, blocks), contents, in: dir, "block \(i) from another copy"))
        }
        // Unchanged reassembly reads as the source (the helper itself is right).
        #expect(Self.expectDamageOrSame(Self.assemble(layout, layout.blocks, stored), contents, in: dir, "reassembled"))
    }

    @Test func foreignFilesAreRefused() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents) = try Self.sample(dir)
        var random = SystemRandomNumberGenerator()
        let noise = (0..<70_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(!Self.expectDamageOrSame(noise, contents, in: dir, "noise"))
        #expect(!Self.expectDamageOrSame(CompressedFormat.magic + noise, contents, in: dir, "magic and noise"))
        #expect(!Self.expectDamageOrSame(Array(bytes[0..<64]) + noise, contents, in: dir, "header and noise"))
        // A realm file is no compressed copy.
        let plain = dir.path("plain.realm")
        try CompressedCopyTests.makeSource(dir.path("plain.source"), count: 10).writeCompactedCopy(to: plain)
        let realm = Array(try Data(contentsOf: URL(fileURLWithPath: plain)))
        #expect(!CompressedFormat.isCompressed(realm))
        #expect(throws: StorageError.self) { try CompressedFile(path: plain, cacheSize: 1 << 20, reading: .onDemand, wrapper: nil) }
    }

    static func layout(of bytes: [UInt8], in dir: TemporaryDirectory) throws -> CompressedLayout {
        let path = dir.path("layout-\(UUID().uuidString.prefix(8)).realmz")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { unlink(path) }
        return try CompressedLayout.read(from: PosixFile(path: path, mode: .readOnly), path: path)
    }

    /// A compressed copy of `layout`'s header with `entries` (offsets laid out anew, back to
    /// back) and the stored `blocks`, checksums of table and header recomputed.
    static func assemble(_ layout: CompressedLayout, _ entries: [CompressedBlock], _ blocks: [[UInt8]]) -> [UInt8] {
        var out = layout
        var offset = UInt64(CompressedFormat.headerSize + layout.tableSize)
        out.blocks = zip(entries, blocks).map { entry, bytes in
            var entry = entry
            entry.offset = offset
            entry.length = UInt32(bytes.count)
            offset += UInt64(bytes.count)
            return entry
        }
        return out.encoded() + blocks.flatMap { $0 }
    }
}
