import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Encrypted LZ4 copies (Compressed/CompressedFormat.swift, format 3): compressed, then
/// encrypted and tagged block by block under the copy's own keys. They read as the source with
/// their key, hold none of its plaintext, refuse a missing, wrong or needless key with
/// `decryptionFailed`, and every change to the header, the table or a block (flipped bits,
/// swapped blocks, blocks of another copy under the same key) is a typed error, never other data.
@Suite struct EncryptedCompressedCopyTests {
    static let key = EncryptedCopyTests.key
    static let otherKey = EncryptedCopyTests.otherKey
    static let damageCodes = CompressedCopyFuzzTests.damageCodes.union([.decryptionFailed])

    static func bytes(_ path: String) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path))) }

    /// A small source's encrypted compressed copy (a few blocks) and what the source holds.
    /// An encrypted LZ4 copy of a new source (or of `source`), its bytes and the source's
    /// contents.
    static func sample(_ dir: TemporaryDirectory, name: String = "copy.realmz", key: [UInt8] = key,
                       from source: Store? = nil) throws -> (bytes: [UInt8], contents: DatabaseDump, source: Store) {
        let source = try source ?? EncryptedCopyTests.makeSource(dir.path(name + ".source"), key: nil, count: 1500)
        let path = dir.path(name)
        try source.writeCompactedCopy(to: path, compression: .lz4, encryptionKey: key)
        return (try bytes(path), try CompressedCopyTests.contents(source.beginRead()), source)
    }

    /// The layout and keys of the encrypted copy `bytes`, opened with `key`.
    static func layout(of bytes: [UInt8], in dir: TemporaryDirectory, key: [UInt8] = key) throws -> (layout: CompressedLayout, keys: CompressedCopyKeys) {
        let path = dir.path("layout-\(UUID().uuidString.prefix(8)).realmz")
        _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
        defer { unlink(path) }
        let read = try CompressedLayout.read(from: PosixFile(path: path, mode: .readOnly), path: path, key: key)
        return (read.layout, try #require(read.keys))
    }

    /// The stored (padded, encrypted) bytes of each block of `bytes`.
    static func storedBlocks(_ bytes: [UInt8], _ layout: CompressedLayout) -> [[UInt8]] {
        layout.blocks.map { Array(bytes[Int($0.offset)..<Int($0.offset) + layout.fileLength(of: $0)]) }
    }

    /// An encrypted copy of `layout`'s header with `entries` and the stored `blocks` laid out
    /// anew (blocks 1 ... n-1, block 0, the table), its checksums and layout MAC recomputed
    /// with `keys`: only the blocks' own tags can tell what was changed.
    static func assemble(_ layout: CompressedLayout, _ keys: CompressedCopyKeys, _ entries: [CompressedBlock], _ blocks: [[UInt8]]) -> [UInt8] {
        var out = layout
        out.blocks = entries
        var offset = UInt64(CompressedFormat.encryptedHeaderSize)
        var stored: [UInt8] = []
        for i in Array(entries.indices.dropFirst()) + [0] {
            out.blocks[i].offset = offset
            offset += UInt64(blocks[i].count)
            stored += blocks[i]
        }
        return out.encodedHeader(tableOffset: offset, keys: keys) + stored + out.encodedTable()
    }

    /// Opens `bytes` with `key` and reads everything (CompressedCopyFuzzTests.expectDamageOrSame).
    @discardableResult
    static func expectDamageOrSame(_ bytes: [UInt8], _ contents: DatabaseDump, in dir: TemporaryDirectory, _ what: String,
                                   key: [UInt8]? = key, reading: CompressedReading = .onDemand) -> Bool {
        CompressedCopyFuzzTests.expectDamageOrSame(bytes, contents, in: dir, what, key: key, codes: damageCodes, reading: reading)
    }

    /// The compressed format version of the copy at `path`.
    static func version(_ path: String) throws -> UInt32 {
        try bytes(path).withUnsafeBytes { UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 8, as: UInt32.self)) }
    }

    @Test(arguments: [(nil, key), (key, key), (key, otherKey)] as [([UInt8]?, [UInt8])], [CompressedReading.onDemand, .inflate])
    func anEncryptedLZ4CopyReadsAsTheSourceWithItsKey(keys: ([UInt8]?, [UInt8]), reading: CompressedReading) throws {
        let (sourceKey, copyKey) = keys
        let dir = TemporaryDirectory()
        let source = try EncryptedCopyTests.makeSource(dir.path("source.realm"), key: sourceKey, count: 5000)
        let path = dir.path("copy.realmz")
        try source.writeCompactedCopy(to: path, compression: .lz4, encryptionKey: copyKey)
        #expect(CompressedFormat.isCompressedFile(at: path))
        #expect(try Self.version(path) == CompressedFormat.encryptedVersion)
        let copy = try CompressedCopyTests.openCompressed(path, key: copyKey, reading: reading)
        try copy.verify()
        #expect(try CompressedCopyTests.contents(copy.beginRead()) == CompressedCopyTests.contents(source.beginRead()))
        let read = copy.beginRead()
        let view = try read.table(read.tables[0].key)
        #expect(try view.indexLookup(ColumnKey(0), .int(4321)) == [ObjectKey(4321)])
        let counts = try #require(copy.compressedCounts)
        #expect(counts.onDemand == (reading == .onDemand))
        #expect(counts.damaged == 0)
        // Still compressed: smaller than the encrypted realm copy.
        let plain = dir.path("copy.realm")
        try source.writeCompactedCopy(to: plain, encryptionKey: copyKey)
        #expect(try Self.bytes(path).count < Self.bytes(plain).count)
    }

    @Test func theCopyHoldsNoneOfThePlaintext() throws {
        let dir = TemporaryDirectory()
        let source = try EncryptedCopyTests.makeSource(dir.path("source.realm"), key: Self.key, count: 3000)
        let encrypted = dir.path("copy.realmz"), plain = dir.path("plain.realmz")
        try source.writeCompactedCopy(to: encrypted, compression: .lz4, encryptionKey: Self.otherKey)
        try source.writeCompactedCopy(to: plain, compression: .lz4)
        let needles: [[UInt8]] = ["Person", "tags", "name1234", "p2999@x.org", "tag2996", "@x.org"].map { Array($0.utf8) }
            + [withUnsafeBytes(of: (1234.5).bitPattern.littleEndian, Array.init)]
        let raw = try Self.bytes(encrypted)
        for needle in needles {
            #expect(!containsRun(raw, needle), "found \(needle) in the encrypted copy")
        }
        // Without a key, an encrypted realm's LZ4 copy is plain, in the format earlier builds
        // read, and holds them (the search itself finds what is there).
        #expect(try Self.version(encrypted) == CompressedFormat.encryptedVersion)
        #expect(try Self.version(plain) == CompressedFormat.plainVersion)
        #expect(containsRun(try Self.bytes(plain), Array("Person".utf8)))
        #expect(containsRun(try Self.bytes(plain), Array("@x.org".utf8)))
    }

    @Test func aMissingWrongOrNeedlessKeyIsDecryptionFailedBeforeAnyBlockIsRead() throws {
        let dir = TemporaryDirectory()
        let source = try EncryptedCopyTests.makeSource(dir.path("source.realm"), key: nil, count: 100)
        let encrypted = dir.path("copy.realmz"), plain = dir.path("plain.realmz")
        try source.writeCompactedCopy(to: encrypted, compression: .lz4, encryptionKey: Self.key)
        try source.writeCompactedCopy(to: plain, compression: .lz4)
        func error(_ path: String, _ key: [UInt8]?) -> StorageError? {
            do {
                _ = try CompressedCopyTests.openCompressed(path, key: key)
                return nil
            } catch {
                return error
            }
        }
        #expect(error(encrypted, nil)?.code == .decryptionFailed)
        #expect(error(encrypted, nil)?.message.contains("encrypted LZ4-compressed copy") == true)
        #expect(error(encrypted, Self.otherKey)?.code == .decryptionFailed)
        #expect(error(encrypted, Self.otherKey)?.message.contains("does not match") == true)
        #expect(error(plain, Self.key)?.code == .decryptionFailed)
        #expect(error(plain, Self.key)?.message.contains("not encrypted") == true)
        #expect(error(encrypted, Array(Self.key[0..<32]))?.code == .invalidArgument)
        // The key of the encrypted realm file written from the same key is not the copy's either:
        // the labels differ, so even equal salts would give other keys.
        #expect(EncryptionKeys(userKey: Self.key, salt: [UInt8](repeating: 1, count: 32)).keyCheck
                != CompressedCopyKeys(userKey: Self.key, salt: [UInt8](repeating: 1, count: 32)).keys.keyCheck)
        // Not writable, with the key or without.
        var options = StoreOptions(create: false)
        options.encryptionKey = Self.key
        #expect(EncryptedCopyTests.code { _ = try Store(path: encrypted, options: options) } == .readOnlyFile)
    }

    @Test func flippedBitsAnywhereGiveTypedErrors() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents, _) = try Self.sample(dir)
        let layout = try Self.layout(of: bytes, in: dir).layout
        #expect(layout.blocks.count >= 3)
        let tableStart = bytes.count - layout.tableSize
        // Every byte of the header and table, and bytes in every block (its first and last too).
        var positions = Array(0..<CompressedFormat.encryptedHeaderSize) + Array(tableStart..<bytes.count)
        for block in layout.blocks {
            let start = Int(block.offset), length = layout.fileLength(of: block)
            positions += [start, start + length - 1] + Array(stride(from: start, to: start + length, by: max(1, length / 8)))
        }
        for position in positions {
            var damaged = bytes
            damaged[position] ^= UInt8(1 << (position % 8))
            #expect(!Self.expectDamageOrSame(damaged, contents, in: dir, "bit flipped at \(position)"), "flip at \(position) unnoticed")
        }
        // The fallback reads damaged blocks the same way.
        var damaged = bytes
        damaged[Int(layout.blocks[1].offset) + 3] ^= 0x10
        #expect(!Self.expectDamageOrSame(damaged, contents, in: dir, "inflated", reading: .inflate))
        // A damaged block is zeros in the region, and reads of it throw fileCorrupted.
        let path = dir.path("one-damaged.realmz")
        _ = FileManager.default.createFile(atPath: path, contents: Data(damaged))
        #expect(EncryptedCopyTests.code { _ = try CompressedCopyTests.contents(CompressedCopyTests.openCompressed(path, key: Self.key).beginRead()) } == .fileCorrupted)
    }

    /// Blocks swapped, or taken from another copy written under the same key, with the header
    /// and table made to match and their MAC recomputed (as only the key's holder could): the
    /// blocks' tags alone catch it.
    @Test func swappedAndSplicedBlocksGiveTypedErrors() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents, source) = try Self.sample(dir)
        let (layout, keys) = try Self.layout(of: bytes, in: dir)
        let stored = Self.storedBlocks(bytes, layout)
        // The helper itself is right: reassembled unchanged, the copy reads as the source.
        #expect(Self.expectDamageOrSame(Self.assemble(layout, keys, layout.blocks, stored), contents, in: dir, "reassembled"))
        for (i, j) in [(0, 1), (1, 2), (0, layout.blocks.count - 1)] {
            var blocks = stored, entries = layout.blocks
            blocks.swapAt(i, j)
            entries.swapAt(i, j)
            #expect(!Self.expectDamageOrSame(Self.assemble(layout, keys, entries, blocks), contents, in: dir, "blocks \(i) and \(j) swapped"))
            // Swapped in the file only, the table as it was: the layout no longer adds up, or
            // the tags fail.
            var moved = bytes
            let a = Int(layout.blocks[i].offset), b = Int(layout.blocks[j].offset)
            let n = min(layout.fileLength(of: layout.blocks[i]), layout.fileLength(of: layout.blocks[j]))
            for k in 0..<n { moved.swapAt(a + k, b + k) }
            #expect(!Self.expectDamageOrSame(moved, contents, in: dir, "bytes of blocks \(i) and \(j) swapped"))
        }
        // The same source written again under the same key: another salt, so other keys.
        let (other, _, _) = try Self.sample(dir, name: "other.realmz", from: source)
        let otherLayout = try Self.layout(of: other, in: dir).layout
        let otherStored = Self.storedBlocks(other, otherLayout)
        for i in 0..<min(layout.blocks.count, otherLayout.blocks.count) {
            var blocks = stored, entries = layout.blocks
            blocks[i] = otherStored[i]
            entries[i] = otherLayout.blocks[i]
            #expect(!Self.expectDamageOrSame(Self.assemble(layout, keys, entries, blocks), contents, in: dir, "block \(i) from another copy"))
        }
        // Another copy's header and table on this copy's blocks: its key check passes (same
        // key), its tags do not; and where the two copies' blocks differ in length (a copy's
        // layout is not the same twice: hash order), its table does not even fit them.
        let otherTableStart = other.count - otherLayout.tableSize
        let tableStart = bytes.count - layout.tableSize
        let mixed = Array(other[0..<CompressedFormat.encryptedHeaderSize]) + bytes[CompressedFormat.encryptedHeaderSize..<tableStart]
            + other[otherTableStart...]
        #expect(!Self.expectDamageOrSame(mixed, contents, in: dir, "another copy's header and table"))
        // A whole copy under another key opens only with that key.
        let (third, _, _) = try Self.sample(dir, name: "third.realmz", key: Self.otherKey, from: source)
        #expect(!Self.expectDamageOrSame(third, contents, in: dir, "another key's copy"))
    }

    @Test func truncationsAndForeignBytesGiveTypedErrors() throws {
        let dir = TemporaryDirectory()
        let (bytes, contents, _) = try Self.sample(dir)
        let layout = try Self.layout(of: bytes, in: dir).layout
        var lengths = [0, 8, 63, 64, 65, 100, 159, 160, 161, bytes.count - layout.tableSize, bytes.count - 1]
        for block in layout.blocks { lengths += [Int(block.offset) + Int(block.length), Int(block.offset) + layout.fileLength(of: block) - 1] }
        lengths += stride(from: 0, to: bytes.count, by: max(1, bytes.count / 40))
        for length in Set(lengths) where length >= 0 && length < bytes.count {
            #expect(!Self.expectDamageOrSame(Array(bytes[0..<length]), contents, in: dir, "truncated to \(length)"))
        }
        #expect(!Self.expectDamageOrSame(bytes + [UInt8](repeating: 0, count: 16), contents, in: dir, "grown"))
        // The plain format's header on the encrypted blocks: refused for the key.
        var relabelled = bytes
        relabelled[8] = UInt8(CompressedFormat.plainVersion)
        #expect(!Self.expectDamageOrSame(relabelled, contents, in: dir, "labelled plain"))
        #expect(!Self.expectDamageOrSame(relabelled, contents, in: dir, "labelled plain, no key", key: nil))
    }
}
