import Foundation
import Testing
@testable import RealmStorage

/// Files of the formats before node checksums (1-3) carry nothing a walk of checksums could
/// read, so verifying one at open must run the full structural check, and the compacting copy
/// that upgrades one must decode its nodes rather than take their bytes as they are (which
/// would stamp damage with a valid checksum). Each test damages a live cluster leaf of the
/// committed golden file of that format so that only decoding it shows the damage.
@Suite struct OldFormatIntegrityTests {
    /// The golden file of `format` with the first byte of one block of a live cluster leaf
    /// (its keys or a column) made an impossible packed width (3), chosen so that decoding the
    /// leaf's values shows the damage and a walk of the nodes does not: the leaves are tried
    /// until the full check refuses the file and the walk passes it.
    static func damagedGolden(format: Int, in directory: TemporaryDirectory) throws -> String {
        let original = try [UInt8](Data(contentsOf: URL(fileURLWithPath: GoldenFileTests.path(format: format))))
        func u32(_ at: Int) -> Int { original.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian) } }
        var tried = 0
        for offset in stride(from: FileHeader.size, to: original.count - NodeLayout.headerSize, by: 8)
        where original[offset] == NodeKind.clusterLeaf.rawValue {
            let length = u32(offset + 4), columns = u32(offset + 20)
            guard length >= 64, length & 7 == 0, offset + length <= original.count, columns < 64 else { continue }
            let blocks = [NodeLayout.aligned(24 + 4 * columns)] + (0..<columns).map { u32(offset + 24 + 4 * $0) }.filter { $0 > 0 }
            for block in blocks where block < length && original[offset + block] != 3 {
                var bytes = original
                bytes[offset + block] = 3
                tried += 1
                let path = directory.path("damaged-\(format)-\(tried).realm")
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, create: false))
                // A leaf no longer reachable (free space) leaves the file whole; a block the
                // walk reads (the keys, lists) is found by the walk as well: the next one.
                if (try? store.verify()) == nil, (try? store.beginRead().walkNodes()) != nil { return path }
            }
        }
        Issue.record("no block of a live cluster leaf that only decoding reads, in the format \(format) file (\(tried) tried)")
        throw StorageError(.invalidArgument, "no such block")
    }

    @Test(arguments: 1...3)
    func verifyingAtOpenDecodesAnOldFormatsNodes(format: Int) throws {
        let directory = TemporaryDirectory()
        let path = try Self.damagedGolden(format: format, in: directory)
        let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, create: false))
        let read = store.beginRead()
        // The walk has no checksum to read in these nodes, so it finds nothing...
        _ = try read.walkNodes()
        // ...and verifying at open, which must not rely on it, reports the damage.
        #expect(throws: StorageError.self) { try store.verifyIntegrity(of: read) }
        do throws(StorageError) {
            try store.verifyIntegrity(of: read)
        } catch {
            #expect(error.code == .fileCorrupted)
        }
    }

    @Test(arguments: 1...3)
    func theUpgradingCopyRefusesADamagedOldFile(format: Int) throws {
        let directory = TemporaryDirectory()
        let path = try Self.damagedGolden(format: format, in: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        // A copy decodes the damaged leaf and stops: no copy with the damage stamped valid.
        let copy = directory.path("copy.realm")
        do {
            let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, create: false))
            do throws(StorageError) {
                try store.writeCompactedCopy(to: copy)
                Issue.record("a damaged format \(format) file was copied")
            } catch {
                #expect(error.code == .fileCorrupted, "\(error)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: copy))
        // The upgrade at open is the same copy in place: it fails and leaves the file as it was.
        do throws(StorageError) {
            _ = try Store.compact(path: path, options: StoreOptions(create: false))
            Issue.record("a damaged format \(format) file was compacted")
        } catch {
            #expect(error.code == .fileCorrupted, "\(error)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + ".compacting"))
    }
}
