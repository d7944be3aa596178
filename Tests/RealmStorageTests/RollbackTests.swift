import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Nodes rolled back to an older copy of themselves (issue 29, point 2; docs/EncryptionProposal.md
/// §9). A node's tag binds its offset and kind, not its version, so an older node restored at
/// its own offset from an older copy of an encrypted file verifies: only the seal its parent
/// holds (NodeSealing.swift, S5) tells it from the node the parent was written with. Each case
/// snapshots the raw file, commits until a node of some kind sits where the snapshot held an
/// older node of that kind, writes the old ciphertext footprint back, and checks that opening,
/// verifying, reading and walking the file report `fileCorrupted`, never the old data, never a
/// crash (each sweep runs in a child process).
@Suite(.childProcesses) struct RollbackTests {
    static var options: StoreOptions {
        SealingMode.encrypted.applied(to: StoreOptions(durability: .unsafe, create: false))
    }

    /// A node the newest version reaches, as `walkNodes` reports it, with its footprint.
    struct Node {
        var offset: Int
        var kind: NodeKind
        var footprint: Int
        var range: Range<Int> { offset..<(offset + footprint) }
    }

    /// A node an older version reached, and the raw file of that version.
    struct OldNode {
        var node: Node
        var snapshot: Int
    }

    /// The workload's encrypted file, snapshot after every commit and at the end.
    struct History {
        /// The raw file after each round.
        var snapshots: [[UInt8]]
        /// The nodes each snapshot's newest version reached, by offset.
        var old: [Int: [OldNode]]
        var final: [UInt8]
        var newest: [Node]
        /// The byte ranges the final file's newest commit wrote: damage there falls back to the
        /// version before (it looks like a torn commit), so the cases avoid them.
        var newestWrites: [Range<Int>]
    }

    static func nodes(of store: Store) throws -> [Node] {
        var nodes: [Node] = []
        let tags = NodeSealing.authenticated(SealingMode.authenticator)
        _ = try store.beginRead().walkNodes { ref, kind, length in
            // Free-list nodes are reported by footprint already (FreeListNode).
            let footprint = kind == .freeList || kind == .freeListDelta ? length : tags.footprint(length)
            nodes.append(Node(offset: Int(ref.offset), kind: kind, footprint: footprint))
        }
        return nodes
    }

    static func raw(_ path: String) throws -> [UInt8] { [UInt8](try Data(contentsOf: URL(fileURLWithPath: path))) }

    static func plaintext(of bytes: [UInt8], in directory: TemporaryDirectory, name: String) throws -> (plain: [UInt8], sealing: NodeSealing) {
        let path = directory.path(name)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let keys = try #require(try EncryptionHeader.keys(ofFileAt: path, key: SealingMode.encryptionKey))
        let file = EncryptedFile(inner: try PosixFile(path: path, mode: .readOnly), cipher: keys.pages, path: path)
        return (try file.read(count: Int(try file.size()), at: 0), .authenticated(keys.nodes))
    }

    static let limits = TreeLimits(leafCapacity: 4, innerCapacity: 4)
    static let columns: [ColumnSpec] = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "name", type: .string),
        ColumnSpec(name: "n", type: .int, indexed: true),
        ColumnSpec(name: "tags", type: .string, isList: true),
    ]

    /// Creates the table "Item" of `columns` in `transaction`, with 60 objects.
    @discardableResult
    static func createItems(in transaction: WriteTransaction) throws -> TableKey {
        let table = try transaction.createTable("Item", columns: columns)
        for i in 0..<60 {
            _ = try transaction.insert(table, values: [.int(Int64(i)), .string("n\(1000 + i)"), .int(Int64(16 + i % 16)), .null],
                                       lists: [3: [.string("a\(i)")]])
        }
        return table
    }

    /// Small commits that rewrite a few objects, their index entries and lists, and now and
    /// then the schema blob: the allocator soon puts new nodes where older ones of the same
    /// kind were.
    /// `fixedWidth`: values of one width, so that rewritten nodes often take the sizes older ones
    /// had; else of varying widths. Each lets other kinds of node roll back.
    static func commitChanges(_ store: Store, round: Int, fixedWidth: Bool, random: inout ReplayableRandom) throws {
        let transaction = try store.beginWrite()
        let table = try #require(transaction.tables.first { $0.name == "Item" }).key
        let keys = try transaction.table(table).keys()
        for _ in 0..<4 {
            let key = keys[random.below(keys.count)]
            if fixedWidth {
                try transaction.set(table, key, ColumnKey(1), .string("n\(1000 + random.below(9000))"))
                try transaction.set(table, key, ColumnKey(2), .int(Int64(16 + random.below(16))))
                try transaction.setList(table, key, ColumnKey(3), (0..<(1 + random.below(2))).map { _ in .string("t\(10 + random.below(90))") })
            } else {
                try transaction.set(table, key, ColumnKey(1), .string("name \(round) \(random.below(1000))"))
                try transaction.set(table, key, ColumnKey(2), .int(Int64(random.below(50))))
                try transaction.setList(table, key, ColumnKey(3), (0..<random.below(4)).map { _ in .string("t\(random.below(30))") })
            }
        }
        if round % 7 == 0 { try transaction.setSchemaBlob(Array("schema \(round)".utf8)) }
        try transaction.commit()
    }

    /// The byte ranges the newest commit of the plaintext `plain` wrote: its extents and record.
    static func newestWrites(of plain: [UInt8], sealing: NodeSealing) throws -> [Range<Int>] {
        let slots = plain.withUnsafeBytes { raw in
            FileHeader.slotOffsets.compactMap {
                RootSlot.decode(UnsafeRawBufferPointer(rebasing: raw[$0..<($0 + FileHeader.sealedSlotSize)]), sealed: true)
            }
        }
        let newest = try #require(slots.max { $0.version < $1.version })
        return try plain.withUnsafeBytes { (raw) throws(StorageError) -> [Range<Int>] in try DamagedFileTests.writes(of: newest, in: raw, sealing: sealing) }
    }

    static func buildHistory(in directory: TemporaryDirectory, fixedWidth: Bool = true, rounds: Int = 400) throws -> History {
        let path = directory.path("history.realm")
        var snapshots: [[UInt8]] = [], old: [Int: [OldNode]] = [:], newest: [Node] = []
        var random = ReplayableRandom(seed: 0x5EA1_0001)
        do {
            // Every commit in a slot, so the newest commit is the slot's (its writes are avoided).
            let store = try Store.open(path: path, options: SealingMode.encrypted.applied(to: StoreOptions(limits: limits, chainLength: 1)))
            let transaction = try store.beginWrite()
            try createItems(in: transaction)
            try transaction.setSchemaBlob(Array("schema".utf8))
            try transaction.commit()
            for round in 0..<rounds {
                try commitChanges(store, round: round, fixedWidth: fixedWidth, random: &random)
                // The last rounds are not snapshot: what they wrote is mostly the newest commit's
                // or still live.
                if round < rounds - 20 {
                    snapshots.append(try raw(path))
                    for node in try nodes(of: store) { old[node.offset, default: []].append(OldNode(node: node, snapshot: snapshots.count - 1)) }
                }
            }
            try store.verify()
            newest = try nodes(of: store)
        }
        let final = try raw(path)
        let (plain, sealing) = try plaintext(of: final, in: directory, name: "final-plain.realm")
        return History(snapshots: snapshots, old: old, final: final, newest: newest, newestWrites: try newestWrites(of: plain, sealing: sealing))
    }

    /// Nodes of the final version at an offset where a snapshot held an older node of the same
    /// kind with other bytes, whose old footprint overlaps no other live node (so restoring it
    /// damages no neighbour: only the seal can catch it) and lies outside the newest commit.
    static func candidates(_ history: History) -> [(new: Node, old: OldNode)] {
        let live = history.newest.map(\.range)
        return history.newest.compactMap { node in
            // The old footprint may reach past the new one only into bytes no live node holds.
            func fits(_ old: Node) -> Bool {
                old.range.upperBound <= node.range.upperBound
                    || !live.contains { $0.overlaps(node.range.upperBound..<old.range.upperBound) }
            }
            guard let old = history.old[node.offset]?.first(where: { old in
                old.node.kind == node.kind && fits(old.node)
                    && history.snapshots[old.snapshot][old.node.range] != history.final[old.node.range]
            }), !history.newestWrites.contains(where: { $0.overlaps(old.node.range) }) else { return nil }
            return (node, old)
        }
    }

    /// `bytes` with `old`'s footprint as its snapshot held it.
    static func rolledBack(_ bytes: [UInt8], _ old: OldNode, _ history: History) -> [UInt8] {
        var bytes = bytes
        bytes.replaceSubrange(old.node.range, with: history.snapshots[old.snapshot][old.node.range])
        return bytes
    }

    /// Opens, verifies, reads and walks the file `bytes`: every way must report the rollback
    /// as `fileCorrupted` (or refuse to open), never read it as data. With `offset`, the walk's
    /// error must name the rolled-back node's offset.
    static func expectCaught(_ bytes: [UInt8], at path: String, sealMentioned: Bool, offset: Int? = nil, context: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        var walkError: StorageError?
        do {
            let store = try Store.open(path: path, options: options)
            do { _ = try store.beginRead().walkNodes() } catch { walkError = error }
            #expect(walkError?.code == .fileCorrupted, "walkNodes: \(walkError.map { "\($0)" } ?? "passed"); \(context)")
        } catch {
            walkError = error
            #expect(error.code == .fileCorrupted, "refused with \(error); \(context)")
        }
        if sealMentioned, let walkError {
            #expect(walkError.message.contains("seal"), "caught, but not by a seal: \(walkError); \(context)")
        }
        if let offset, let walkError {
            #expect(walkError.message.contains("offset \(offset) "), "caught, but not naming offset \(offset): \(walkError); \(context)")
        }
        let outcome = DamagedFileTests.exercise(path: path, options: options)
        #expect(outcome.healthyContents == nil, "a rolled-back node went unnoticed: \(outcome); \(context)")
        if case .opened(_, let verifyError, _, _) = outcome {
            #expect(verifyError?.code == .fileCorrupted, "verify: \(outcome); \(context)")
        }
    }

    /// One node of every kind the workload lets roll back, each restored alone.
    static func singleNodeSweep() throws {
        var kinds: Set<NodeKind> = []
        for fixedWidth in [true, false] {
            let directory = TemporaryDirectory()
            let history = try buildHistory(in: directory, fixedWidth: fixedWidth)
            let byKind = Dictionary(grouping: candidates(history), by: \.new.kind)
            kinds.formUnion(byKind.keys)
            for (kind, cases) in byKind.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                for (index, pair) in cases.prefix(2).enumerated() {
                    try expectCaught(rolledBack(history.final, pair.old, history), at: directory.path("rolled-\(kind)-\(index).realm"), sealMentioned: true,
                                     context: "\(kind) node at \(pair.new.offset) rolled back to snapshot \(pair.old.snapshot)'s "
                                        + "(\(pair.old.node.footprint) bytes), fixed width \(fixedWidth)")
                }
            }
        }
        // The top node, free-list nodes, the blob and change sets are rewritten by most commits,
        // each at a new place, or lie in the newest commit (whose extents' checksums catch them
        // first); what the workloads let roll back alone:
        let required: Set<NodeKind> = [.clusterLeaf, .clusterInner, .indexLeaf, .indexInner, .list]
        #expect(required.isSubset(of: kinds), "no rollback case for \(required.subtracting(kinds).map { "\($0)" }.sorted()); found \(kinds.map { "\($0)" }.sorted())")
    }

    /// An inner node rolled back together with one of its old children: the pair agrees with
    /// itself (the old parent holds the old child's seal), and is caught at the node above.
    static func subtreeSweep() throws {
        let directory = TemporaryDirectory()
        let history = try buildHistory(in: directory)
        let inners = candidates(history).filter { $0.new.kind == .clusterInner || $0.new.kind == .indexInner }
        #expect(!inners.isEmpty, "no inner node to roll back")
        var cases = 0
        for pair in inners.prefix(3) {
            let snapshotPlaintext = try plaintext(of: history.snapshots[pair.old.snapshot], in: directory, name: "snapshot-\(cases).realm").plain
            let children: [Ref] = try snapshotPlaintext.withUnsafeBytes { raw throws(StorageError) in
                let node = try NodeView(ref: Ref(UInt64(pair.old.node.offset)), mapping: raw.baseAddress!, limit: UInt64(raw.count),
                                        expecting: pair.old.node.kind, check: .never)
                if pair.old.node.kind == .clusterInner {
                    let inner = try InnerView<ClusterFormat>(node)
                    return (0..<inner.childCount).map { inner.child($0) }
                }
                let inner = try InnerView<IndexFormat>(node)
                return (0..<inner.childCount).map { inner.child($0) }
            }
            #expect(children.allSatisfy { $0.seal != 0 }, "an old inner node's children carry no seals")
            guard let child = children.compactMap({ ref in history.old[Int(ref.offset)]?.first { $0.snapshot == pair.old.snapshot } })
                .first(where: { child in !history.newestWrites.contains { $0.overlaps(child.node.range) } }) else { continue }
            let bytes = rolledBack(rolledBack(history.final, pair.old, history), child, history)
            // The old child may overlap nodes of the final version: then either catches it.
            try expectCaught(bytes, at: directory.path("subtree-\(cases).realm"), sealMentioned: false,
                             context: "\(pair.new.kind) node at \(pair.new.offset) and its old child \(child.node.kind) at \(child.node.offset) rolled back")
            cases += 1
        }
        #expect(cases > 0, "no subtree to roll back")
    }

    @Test func aNodeRolledBackToAnOlderCopyOfItselfIsCaught() async {
        await #expect(processExitsWith: .success) {
            try RollbackTests.singleNodeSweep()
        }
    }

    @Test func aSubtreeRolledBackWithItsParentIsCaughtAbove() async {
        await #expect(processExitsWith: .success) {
            try RollbackTests.subtreeSweep()
        }
    }

    /// The seal check itself: a ref to a node of an encrypted file opens it only with the seal
    /// its tag begins with; a ref without one (a bare offset) or with another is refused.
    @Test func aRefWithoutItsNodesSealDoesNotOpenIt() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path("seal.realm"), options: SealingMode.encrypted.applied(to: StoreOptions()))
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("T", columns: [ColumnSpec(name: "n", type: .int)])
        try transaction.insert(table, values: [.int(7)])
        try transaction.commit()
        let read = store.beginRead()
        let top = read.slot.topRef
        #expect(top.seal != 0)
        #expect(Ref(top.offset, seal: 1) == top, "a ref's identity is its offset")
        _ = try read.context.node(top, .top)
        for wrong in [Ref(top.offset), Ref(top.offset, seal: top.seal ^ 1), Ref(top.offset, seal: top.seal ^ (1 << 63))] {
            do {
                _ = try read.context.node(wrong, .top)
                Issue.record("seal \(wrong.seal) opened the top node")
            } catch {
                #expect(error.code == .fileCorrupted && error.message.contains("seal"), "\(error)")
            }
        }
        try store.verify()
    }

    /// Plain files store no seals: a bare ref opens their nodes, as before.
    @Test func plainFilesCarryNoSeals() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path("plain.realm"), options: StoreOptions())
        let read = store.beginRead()
        #expect(read.slot.topRef.seal == 0)
        _ = try read.context.node(Ref(read.slot.topRef.offset), .top)
    }

    /// Encrypted files of format 5 (no seals; only development builds wrote them) are refused,
    /// saying why, before anything of them is read.
    @Test func anEncryptedFileOfFormat5IsRefused() throws {
        let directory = TemporaryDirectory()
        let path = directory.path("format5.realm")
        do { _ = try Store.open(path: path, options: SealingMode.encrypted.applied(to: StoreOptions())) }
        var bytes = try Self.raw(path)
        #expect(bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: FileHeader.formatVersionOffset, as: UInt32.self) } == 6)
        withUnsafeBytes(of: UInt32(5).littleEndian) { bytes.replaceSubrange(8..<12, with: $0) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Store.open(path: path, options: Self.options)
            Issue.record("a format-5 encrypted file opened")
        } catch {
            #expect(error.code == .unsupportedFormatVersion && error.message.contains("format 5"), "\(error)")
        }
    }
}
