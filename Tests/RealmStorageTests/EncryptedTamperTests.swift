import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Tampering with an encrypted file (issue 29, point 2): a flipped bit anywhere, in every kind
/// of node and in the header, a page swapped with another, a page copied in from another file
/// under the same key. Each must be refused with a typed error, or read back exactly what a
/// version held (the newest, or the one before when the damage hit the newest commit, which
/// recovery cannot tell from a torn write), never anything else, and never crash the process.
///
/// A node rolled back to an older copy of itself is caught by its parent's seal: RollbackTests.
@Suite(.childProcesses) struct EncryptedTamperTests {
    static let seed: UInt64 = 0xE4C2_7A3B_0001
    static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 5) }

    static var options: StoreOptions {
        var options = StoreOptions(durability: .unsafe, create: false)
        options.encryptionKey = key
        return options
    }

    /// The workload's file, encrypted: its ciphertext, and where its newest commit lies (from
    /// its plaintext).
    static func buildBase(in directory: TemporaryDirectory) throws -> (base: DamagedFileTests.BaseFile, nodes: [(ref: Ref, kind: NodeKind, length: Int)]) {
        let path = directory.path("base.realm")
        var nodes: [(ref: Ref, kind: NodeKind, length: Int)] = []
        do {
            var options = StoreOptions(limits: CrashWorkload.limits, chainLength: 1)
            options.encryptionKey = key
            let store = try Store.open(path: path, options: options)
            for step in CrashWorkload.steps.indices { try CrashWorkload.commit(step: step, on: store) }
            try store.verify()
            _ = try store.beginRead().walkNodes { nodes.append(($0, $1, $2)) }
        }
        let keys = try #require(try EncryptionHeader.keys(ofFileAt: path, key: key))
        let file = EncryptedFile(inner: try PosixFile(path: path, mode: .readOnly), cipher: keys.pages, path: path)
        let plain = try file.read(count: Int(try file.size()), at: 0)
        var base = try DamagedFileTests.analyse(plain, sealing: .authenticated(keys.nodes))
        base.bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        return (base, nodes)
    }

    static func exercise(_ bytes: [UInt8], at path: String) throws -> DamagedFileTests.Outcome {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return DamagedFileTests.exercise(path: path, options: options)
    }

    static let damageCodes: Set<StorageError.Code> = [.invalidDatabase, .fileCorrupted, .unsupportedFormatVersion, .decryptionFailed]

    /// What damage to the ciphertext at `range` may do: a changed byte garbles its whole
    /// 16-byte block (the header's first 128 bytes excepted, which are in the clear).
    static func check(_ outcome: DamagedFileTests.Outcome, damage range: Range<Int>, base: DamagedFileTests.BaseFile,
                      reached: Bool, context: String) {
        let newest = CrashWorkload.expected.last!
        let previous = CrashWorkload.expected[CrashWorkload.expected.count - 2]
        let clear = EncryptionHeader.plaintextLength
        let blocks = range.lowerBound < clear ? range : (range.lowerBound / 16 * 16)..<((range.upperBound + 15) / 16 * 16)
        func inside(_ outer: Range<Int>) -> Bool { blocks.lowerBound >= outer.lowerBound && blocks.upperBound <= outer.upperBound }
        if let code = outcome.refusalCode {
            #expect(damageCodes.contains(code), "refused with \(code); \(context)")
        }
        if let healthy = outcome.healthyContents {
            #expect(healthy == newest || healthy == previous, "opened something no version held: \(outcome); \(context)")
            if healthy == previous {
                #expect(inside(base.newestSlotRange) || base.newestWrites.contains(where: { blocks.overlaps($0) }),
                        "fell back to the version before, though the newest commit was not hit: \(context)")
            }
        }
        if range.upperBound <= 8 {
            #expect(outcome.refusalCode == .invalidDatabase, "damage to the magic: \(outcome); \(context)")
        } else if inside(24..<72) {
            #expect(outcome.refusalCode == .decryptionFailed, "damage to the salt or the key check: \(outcome); \(context)")
        } else if reached, !base.newestWrites.contains(where: { blocks.overlaps($0) }), !inside(base.newestSlotRange) {
            // A node the newest version reaches, outside its commit: found when it is read.
            #expect(outcome.healthyContents == nil, "damage to a node the newest version reaches went unnoticed: \(outcome); \(context)")
        }
    }

    /// Every node kind the newest version reaches, a few nodes of each, and random places.
    static func flipSweep(progress: String) throws {
        let directory = TemporaryDirectory()
        let (base, nodes) = try buildBase(in: directory)
        var random = ReplayableRandom(seed: Self.seed)
        var targets: [(offset: Int, reached: Bool, what: String)] = []
        let kinds = Dictionary(grouping: nodes, by: \.kind)
        for (kind, ofKind) in kinds.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
            for node in ofKind.shuffled(using: &random).prefix(4) {
                targets.append((Int(node.ref.offset) + random.below(node.length), true, "\(kind) node at \(node.ref.offset)"))
            }
        }
        #expect(kinds.count >= 8, "the workload reaches only \(kinds.keys.sorted { $0.rawValue < $1.rawValue })")
        targets += (0..<40).map { _ in (random.below(FileHeader.size), false, "header") }
        targets += (0..<60).map { _ in (FileHeader.size + random.below(Int(base.newest.logicalSize) - FileHeader.size), false, "anywhere") }
        for (index, target) in targets.enumerated() {
            var bytes = base.bytes
            let mask = UInt8(1) << UInt8(random.below(8))
            bytes[target.offset] ^= mask
            let context = "\(target.what): byte \(target.offset) xor \(mask), case \(index), seed \(Self.seed)"
            DamagedFileTests.announce(context, to: progress)
            let outcome = try exercise(bytes, at: directory.path("flipped-\(index).realm"))
            check(outcome, damage: target.offset..<(target.offset + 1), base: base, reached: target.reached, context: context)
        }
    }

    /// Two pages of the newest version swapped, and a page copied in from another file written
    /// with the same key (another salt, so other page keys).
    static func pageSweep(progress: String) throws {
        let directory = TemporaryDirectory()
        let (base, nodes) = try buildBase(in: directory)
        let other = try buildBase(in: TemporaryDirectory())
        var random = ReplayableRandom(seed: Self.seed ^ 1)
        let pages = Int(base.newest.logicalSize + 4095) / 4096
        // Pages that hold a node the newest version reaches.
        let reachedPages = Array(Set(nodes.map { Int($0.ref.offset) / 4096 })).sorted()
        for index in 0..<24 {
            let page = reachedPages[random.below(reachedPages.count)]
            var bytes = base.bytes
            let context: String
            if index % 2 == 0 {
                var partner = random.below(pages)
                if partner == page { partner = (page + 1) % pages }
                bytes.replaceSubrange((page * 4096)..<(page * 4096 + 4096), with: base.bytes[(partner * 4096)..<(partner * 4096 + 4096)])
                bytes.replaceSubrange((partner * 4096)..<(partner * 4096 + 4096), with: base.bytes[(page * 4096)..<(page * 4096 + 4096)])
                context = "pages \(page) and \(partner) swapped, case \(index)"
            } else {
                bytes.replaceSubrange((page * 4096)..<(page * 4096 + 4096), with: other.base.bytes[(page * 4096)..<(page * 4096 + 4096)])
                context = "page \(page) from another file under the same key, case \(index)"
            }
            DamagedFileTests.announce(context, to: progress)
            let outcome = try exercise(bytes, at: directory.path("pages-\(index).realm"))
            check(outcome, damage: (page * 4096)..<(page * 4096 + 4096), base: base, reached: page > 0, context: context)
            #expect(outcome.healthyContents != CrashWorkload.expected.last!, "\(context): went unnoticed")
        }
    }

    @Test func flippedBitsInEveryKindOfNodeAreCaught() async {
        let directory = TemporaryDirectory()
        let progress = DamagedFileTests.progressFile(in: directory)
        let result = await #expect(processExitsWith: .success) { [progress = progress as String] in
            try EncryptedTamperTests.flipSweep(progress: progress)
        }
        DamagedFileTests.reportCrash(result, progress: progress, sweep: "encrypted bit flip")
    }

    @Test func swappedPagesAndPagesFromAnotherFileAreCaught() async {
        let directory = TemporaryDirectory()
        let progress = DamagedFileTests.progressFile(in: directory)
        let result = await #expect(processExitsWith: .success) { [progress = progress as String] in
            try EncryptedTamperTests.pageSweep(progress: progress)
        }
        DamagedFileTests.reportCrash(result, progress: progress, sweep: "encrypted page")
    }
}

