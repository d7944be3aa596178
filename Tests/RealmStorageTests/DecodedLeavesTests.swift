import Dispatch
import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Leaf buffers a commit keeps for the next write transaction (DecodedLeaves.swift): taken
/// by a transaction built on that very commit, never after a failed sync or by a second
/// transaction after a cancelled one, and never different from their nodes (debug builds,
/// which run these tests, check every buffer taken against its node byte for byte).
@Suite struct DecodedLeavesTests {
    static let columns = [
        ColumnSpec(name: "n", type: .int, indexed: true),
        ColumnSpec(name: "s", type: .string, nullable: true),
        ColumnSpec(name: "l", type: .int, isList: true),
    ]

    /// The rows a test expects, by object key: `n`, `s` and the list.
    typealias Model = [Int64: (n: Int64, s: String?, list: [Int64])]

    static func expectMatches(_ store: Store, _ table: TableKey, _ model: Model, _ context: String,
                              sourceLocation: SourceLocation = #_sourceLocation) throws {
        let dump = try DatabaseDump(store.beginRead())
        let rows = try #require(dump.tables[table.value], sourceLocation: sourceLocation).rows
        var expected: [Int64: DatabaseDump.Row] = [:]
        for (key, row) in model {
            expected[key] = DatabaseDump.Row(values: [.int(row.n), row.s.map(Value.string) ?? .null, .null],
                                             lists: [2: row.list.map(Value.int)])
        }
        #expect(rows == expected, "\(context)", sourceLocation: sourceLocation)
        try DatabaseDump.checkIndexes(store.beginRead())
    }

    @Test(arguments: [TreeLimits(leafCapacity: 4, innerCapacity: 3), TreeLimits.standard])
    func runsOfSmallCommitsTakeTheLeavesTheLastOneWrote(limits: TreeLimits) throws {
        // Three workloads: a stale buffer shows only when freed space is reused by a leaf
        // that is not kept itself, which one run of this size meets about every other time.
        let seed = ReplayableRandom.seed("OPENREALM_DECODED_LEAVES_SEED")
        for round in 0..<3 { try Self.smallCommits(limits: limits, seed: seed &+ UInt64(round)) }
    }

    static func smallCommits(limits: TreeLimits, seed: UInt64) throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        var random = ReplayableRandom(seed: seed)
        var model: Model = [:]
        let table: TableKey
        var taken = 0
        do {
            let store = try Store.open(path: path, options: StoreOptions(durability: .unsafe, limits: limits))
            let setup = try store.beginWrite()
            table = try setup.createTable("Row", columns: Self.columns)
            try setup.commit()
            for round in 0..<400 {
                let transaction = try store.beginWrite()
                for _ in 0..<Int.random(in: 1...3, using: &random) {
                    let keys = Array(model.keys)
                    let pick = Int.random(in: 0..<10, using: &random)
                    if keys.isEmpty || pick < 4 {
                        let n = Int64.random(in: 0..<50, using: &random)
                        let s: String? = random.chance(0.2) ? nil : "row \(round) " + String(repeating: "x", count: Int.random(in: 0..<30, using: &random))
                        let key = try transaction.insert(table, values: [.int(n), s.map(Value.string) ?? .null, .null])
                        model[key.value] = (n, s, [])
                    } else if pick < 7 {
                        let key = keys.randomElement(using: &random)!
                        let n = Int64.random(in: 0..<50, using: &random)
                        try transaction.set(table, ObjectKey(key), ColumnKey(0), .int(n))
                        model[key]!.n = n
                    } else if random.chance(0.04) {
                        // Frees every node of the table, kept or not, for later commits to reuse.
                        try transaction.clear(table)
                        model = [:]
                    } else if pick < 8 {
                        // An unwritten list makes its leaf one the commit does not keep.
                        let key = keys.randomElement(using: &random)!
                        let list = (0..<Int.random(in: 0..<4, using: &random)).map { _ in Int64.random(in: 0..<9, using: &random) }
                        try transaction.setList(table, ObjectKey(key), ColumnKey(2), list.map(Value.int))
                        model[key]!.list = list
                    } else {
                        let key = keys.randomElement(using: &random)!
                        _ = try transaction.delete(table, ObjectKey(key))
                        model[key] = nil
                    }
                }
                taken += transaction.reusedLeafCount
                try transaction.commit()
                if round % 25 == 0 { try Self.expectMatches(store, table, model, "seed \(seed), round \(round)") }
            }
            try Self.expectMatches(store, table, model, "seed \(seed), at the end")
            try store.verify()
        }
        #expect(taken > 100, "small commits should mostly take the leaves the previous one wrote (took \(taken))")
        let reopened = try Store.open(path: path, options: StoreOptions(durability: .unsafe, limits: limits))
        try Self.expectMatches(reopened, table, model, "seed \(seed), reopened")
        try reopened.verify()
    }

    /// `handedOver`: each commit goes through the store's write queue (`commit(then:)`), which
    /// carries the kept leaves over on that queue's thread, not the committer's.
    @Test(arguments: [false, true])
    func leavesACommitDidNotTouchAreTakenByALaterOne(handedOver: Bool) throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 16)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int)])
        for n in 0..<40 { try setup.insert(table, values: [.int(Int64(n))]) }
        try setup.commit()
        var taken: [Int] = []
        for (round, key) in [0, 39, 0, 39, 20].enumerated() {
            let transaction = try store.beginWrite()
            try transaction.set(table, ObjectKey(Int64(key)), ColumnKey(0), .int(Int64(-round - 1)))
            taken.append(transaction.reusedLeafCount)
            if handedOver {
                let durable = DispatchSemaphore(value: 0)
                try transaction.commit(then: { result in
                    #expect((try? result.get()) != nil)
                    durable.signal()
                })
                durable.wait()
            } else {
                try transaction.commit()
            }
        }
        // The bulk commit keeps only its last leaf: the full ones its appends left behind are
        // not touched by appends again. So the leaves of keys 0 and 20 are decoded; the last
        // leaf is taken, and then each writer finds its leaf kept although the commit in
        // between wrote another one.
        #expect(taken == [0, 1, 1, 1, 0], "leaf buffers taken per commit")
        let read = try store.beginRead().table(table)
        for (key, n) in [(0, -3), (39, -4), (20, -5), (1, 1)] {
            #expect(try read.row(ObjectKey(Int64(key)))?.value(ColumnKey(0)) == .int(Int64(n)))
        }
        try store.verify()
    }

    /// The inner nodes a commit wrote are kept too: the next commit on the same path takes
    /// them instead of decoding every key (debug builds check each against its node).
    @Test func innerNodesACommitWroteAreTakenByTheNext() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 4)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int, indexed: true)])
        for n in 0..<100 { try setup.insert(table, values: [.int(Int64(n))]) }
        try setup.commit()
        var taken: [Int] = []
        for (round, key) in [99, 99, 50, 50, 0].enumerated() {
            let transaction = try store.beginWrite()
            try transaction.set(table, ObjectKey(Int64(key)), ColumnKey(0), .int(Int64(1000 + round)))
            try transaction.commit()
            taken.append(transaction.reusedInnerCount)
        }
        // Every commit takes at least the roots its predecessor wrote (the object tree's and
        // the index's); a path it shares with the commit before comes whole.
        #expect(taken.allSatisfy { $0 >= 2 }, "inner nodes taken per commit: \(taken)")
        let read = try store.beginRead().table(table)
        for (key, n) in [(99, 1001), (50, 1003), (0, 1004), (1, 1)] {
            #expect(try read.row(ObjectKey(Int64(key)))?.value(ColumnKey(0)) == .int(Int64(n)))
        }
        try store.verify()
    }

    /// A kept leaf whose node a commit frees must go (the space is reused). Whether the new
    /// nodes land on those offsets depends on the allocator, so this only checks that a table
    /// cleared and refilled reads back right; the random test above (which catches a missing
    /// filter in most runs) and the debug check of every buffer taken cover the general case.
    @Test func aTableClearedAndRefilledReadsBack() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 16)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int), ColumnSpec(name: "l", type: .int, isList: true)])
        for n in 0..<8 { try setup.insert(table, values: [.int(Int64(n)), .null], lists: [1: [.int(Int64(n))]]) }
        try setup.commit()
        // Leaves with lists written by the same commit are not kept; these are, lists written.
        let touch = try store.beginWrite()
        for n in 0..<8 { try touch.set(table, ObjectKey(Int64(n)), ColumnKey(0), .int(Int64(100 + n))) }
        try touch.commit()
        // Frees those kept leaves without taking them.
        let clear = try store.beginWrite()
        try clear.clear(table)
        try clear.commit()
        // Until no version that reaches them is pinned, freed nodes keep their space.
        for n in 0..<2 {
            let spacer = try store.beginWrite()
            _ = try spacer.createTable("Spacer\(n)", columns: [ColumnSpec(name: "n", type: .int)])
            try spacer.commit()
        }
        // New leaves (not kept: their lists are unwritten) go to the space just freed.
        let refill = try store.beginWrite()
        for n in 0..<8 {
            try refill.insert(table, key: ObjectKey(Int64(n)), values: [.int(Int64(200 + n)), .null], lists: [1: [.int(Int64(-n))]])
        }
        try refill.commit()
        let edit = try store.beginWrite()
        try edit.set(table, ObjectKey(5), ColumnKey(0), .int(555))
        try edit.commit()
        let read = try store.beginRead().table(table)
        for n in 0..<8 {
            let row = try #require(try read.row(ObjectKey(Int64(n))))
            #expect(try row.value(ColumnKey(0)) == .int(n == 5 ? 555 : Int64(200 + n)))
            #expect(try row.list(ColumnKey(1)) == [.int(Int64(-n))])
        }
        try store.verify()
    }

    @Test func aCancelledTransactionUsedTheLeavesUpSoTheNextDecodesThem() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: Self.columns)
        var model: Model = [:]
        for n in 0..<20 {
            let key = try setup.insert(table, values: [.int(Int64(n)), .string("row \(n)"), .null])
            model[key.value] = (Int64(n), "row \(n)", [])
        }
        try setup.commit()
        let touch = try store.beginWrite()
        try touch.set(table, ObjectKey(3), ColumnKey(1), .string("touched"))
        model[3]!.s = "touched"
        try touch.commit()

        let cancelled = try store.beginWrite()
        try cancelled.set(table, ObjectKey(3), ColumnKey(1), .string("never committed"))
        try cancelled.set(table, ObjectKey(3), ColumnKey(0), .int(999))
        #expect(cancelled.reusedLeafCount > 0, "the leaf the last commit wrote should be taken")
        cancelled.rollback()

        let next = try store.beginWrite()
        try next.set(table, ObjectKey(4), ColumnKey(0), .int(44))
        model[4]!.n = 44
        #expect(next.reusedLeafCount == 0, "the cancelled transaction edited the kept leaves: they are gone")
        #expect(try next.table(table).row(ObjectKey(3))?.value(ColumnKey(1)) == .string("touched"))
        try next.commit()
        try Self.expectMatches(store, table, model, "after the cancelled transaction")
    }

    /// After a failed sync the next write builds on the durable version, which reaches none
    /// of the failed version's new nodes; so its kept leaves cannot be hit even without the
    /// version and lineage checks of `Store.startWrite` (defence in depth). What this checks
    /// is that everything reads back right around the failure, before and after reopening.
    @Test func nothingIsTakenAfterAFailedSync() throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let box = WrappedFileBox<GatedSyncFile>()
        var model: Model = [:]
        let table: TableKey
        do {
            let store = try Store.open(path: path, options: StoreOptions(fileWrapper: box.wrapper { GatedSyncFile(wrapping: $0) }))
            let gate = try #require(box.file)
            let answers = GroupCommitTests.Answers()
            let setup = try store.beginWrite()
            table = try setup.createTable("Row", columns: Self.columns)
            let first = try setup.insert(table, values: [.int(1), .string("durable"), .null])
            model[first.value] = (1, "durable", [])
            try setup.commit(then: answers.record(1))
            gate.waitForSyncAtGate()
            gate.open()                                    // sync 1 succeeds
            answers.waitFor(1)

            let failing = try store.beginWrite()
            try failing.set(table, first, ColumnKey(1), .string("lost"))
            _ = try failing.insert(table, values: [.int(2), .string("lost too"), .null])
            #expect(failing.reusedLeafCount > 0, "built on the commit that kept them, it takes its leaves")
            try failing.commit(then: answers.record(2))
            gate.waitForSyncAtGate()
            gate.fail(sync: 2)
            gate.open()
            gate.waitForSyncAtGate()                       // sync 3: the failed slot is zeroed
            gate.open()
            answers.waitFor(1)
            #expect(throws: StorageError.self) { try answers[2]?.get() }

            let after = try store.beginWrite()
            #expect(try after.table(table).row(first)?.value(ColumnKey(1)) == .string("durable"))
            try after.set(table, first, ColumnKey(0), .int(10))
            model[first.value]!.n = 10
            #expect(after.reusedLeafCount == 0, "the leaves of a failed version must not be used for the durable one")
            try after.commit(then: answers.record(3))
            gate.waitForSyncAtGate()
            gate.open()
            answers.waitFor(1)
            _ = try answers[3]?.get()
            try Self.expectMatches(store, table, model, "after the failed sync")
        }
        let reopened = try Store.open(path: path, options: StoreOptions())
        try Self.expectMatches(reopened, table, model, "reopened after the failed sync")
        try reopened.verify()
    }

    @Test func aTableWhoseColumnsChangedReadsBackTheSame() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(durability: .unsafe, limits: TreeLimits(leafCapacity: 4, innerCapacity: 3)))
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: [ColumnSpec(name: "n", type: .int)])
        for n in 0..<30 { try setup.insert(table, values: [.int(Int64(n))]) }
        try setup.commit()
        let touch = try store.beginWrite()
        for key in [0, 13, 29] { try touch.set(table, ObjectKey(Int64(key)), ColumnKey(0), .int(-1)) }
        try touch.commit()
        // The leaves kept were encoded with one column; this transaction has two.
        let widen = try store.beginWrite()
        let added = try widen.addColumn(table, ColumnSpec(name: "s", type: .string, nullable: true))
        try widen.set(table, ObjectKey(13), added, .string("thirteen"))
        try widen.insert(table, values: [.int(30), .string("new")])
        try widen.commit()
        let read = try store.beginRead().table(table)
        for n in 0...30 {
            let row = try #require(try read.row(ObjectKey(Int64(n))))
            let expected: Int64 = [0, 13, 29].contains(n) ? -1 : Int64(n)
            #expect(try row.value(ColumnKey(0)) == .int(expected))
            let s: Value = n == 13 ? .string("thirteen") : n == 30 ? .string("new") : .null
            #expect(try row.value(added) == s)
        }
        try store.verify()
    }

    @Test func overTheBudgetTheLeavesWrittenLongestAgoGoFirst() {
        func leaf() -> IndexLeaf { IndexLeaf(entries: (0..<10).map { IndexEntry(value: .int($0), key: $0) }) }
        let room = 64 + 10 * MemoryLayout<IndexEntry>.stride
        // Room for four leaves; each commit writes one and carries the others over.
        var kept = DecodedLeaves(version: 1, lineage: 0, budget: 4 * room)
        kept.keep(leaf(), at: Ref(4096))
        for version in 2...6 {
            let next = DecodedLeaves(version: UInt64(version), lineage: 0, budget: 4 * room)
            next.keep(leaf(), at: Ref(4096 * UInt64(version)))
            next.carryOver(kept, freed: FreedNodes())
            kept = next
        }
        // The fifth went over: the two oldest went, down to three quarters of the room; the
        // sixth fitted again.
        let left = (1...6).filter { kept.takeIndex(at: Ref(4096 * UInt64($0))) != nil }
        #expect(left == [3, 4, 5, 6])
    }
}
