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

    /// Opens `bytes` as a compressed copy (with `key`) and reads everything; true when it read
    /// the source's contents, false when a typed damage error (one of `codes`) stopped it.
    @discardableResult
    static func expectDamageOrSame(_ bytes: [UInt8], _ contents: DatabaseDump, in dir: TemporaryDirectory, _ what: String,
                                   key: [UInt8]? = nil, codes: Set<StorageError.Code> = damageCodes, reading: CompressedReading = .onDemand) -> Bool {
        let path = dir.path("damaged-\(UUID().uuidString.prefix(8)).realmz")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { unlink(path) }
        do {
            let store = try CompressedCopyTests.openCompressed(path, key: key, reading: reading)
            let read = try CompressedCopyTests.contents(store.beginRead())
            #expect(read == contents, "\(what): read other data than the source holds")
            return true
        } catch let error as StorageError {
            #expect(codes.contains(error.code), "\(what): \(error)")
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
        let tableStart = bytes.count - layout.tableSize
        // Every byte of the header and table, and bytes throughout the blocks.
        var positions = Array(0..<CompressedFormat.headerSize) + Array(tableStart..<bytes.count)
        positions += stride(from: CompressedFormat.headerSize, to: tableStart, by: max(1, (tableStart - CompressedFormat.headerSize) / 150))
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
        let tableStart = bytes.count - layout.tableSize
        var lengths = [0, 1, 7, 8, 63, 64, 65, tableStart - 1, tableStart, tableStart + 1, bytes.count - 1]
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
    /// back, in the order of the format: blocks 1 ... n-1, block 0, then the table) and the
    /// stored `blocks`, checksums of table and header recomputed. `formatOne`: the first
    /// format's layout instead (the table after the header, then blocks 0 ... n-1).
    static func assemble(_ layout: CompressedLayout, _ entries: [CompressedBlock], _ blocks: [[UInt8]], formatOne: Bool = false) -> [UInt8] {
        var out = layout
        out.blocks = entries
        let order = formatOne ? Array(entries.indices) : Array(entries.indices.dropFirst()) + [0]
        var offset = UInt64(CompressedFormat.headerSize + (formatOne ? layout.tableSize : 0))
        var stored: [UInt8] = []
        for i in order {
            out.blocks[i].offset = offset
            out.blocks[i].length = UInt32(blocks[i].count)
            offset += UInt64(blocks[i].count)
            stored += blocks[i]
        }
        if formatOne { return out.encodedHeader(tableOffset: 0, version: 1) + out.encodedTable() + stored }
        return out.encodedHeader(tableOffset: offset) + stored + out.encodedTable()
    }

    /// Copies of the first format (the table after the header) are still read, and checked as
    /// closely.
    @Test func copiesOfTheFirstFormatAreRead() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents) = try Self.sample(dir)
        let layout = try Self.layout(of: bytes, in: dir)
        let stored = layout.blocks.map { Array(bytes[Int($0.offset)..<Int($0.offset) + Int($0.length)]) }
        let first = Self.assemble(layout, layout.blocks, stored, formatOne: true)
        #expect(Self.expectDamageOrSame(first, contents, in: dir, "format 1"))
        #expect(try Self.layout(of: first, in: dir).blocks.map(\.checksum) == layout.blocks.map(\.checksum))
        // A copy of format 2 whose header (checksum and all) says format 1 does not pass.
        let second = Self.assemble(layout, layout.blocks, stored)
        let relabelled = try Self.layout(of: second, in: dir).encodedHeader(tableOffset: 0, version: 1) + second[CompressedFormat.headerSize...]
        #expect(!Self.expectDamageOrSame(relabelled, contents, in: dir, "format 2 labelled 1"))
        for length in stride(from: 0, to: first.count, by: max(1, first.count / 40)) {
            #expect(!Self.expectDamageOrSame(Array(first[0..<length]), contents, in: dir, "format 1 truncated to \(length)"))
        }
        for position in stride(from: 0, to: first.count, by: max(1, first.count / 60)) {
            var damaged = first
            damaged[position] ^= 0x04
            #expect(!Self.expectDamageOrSame(damaged, contents, in: dir, "format 1, bit flipped at \(position)"))
        }
    }
}
