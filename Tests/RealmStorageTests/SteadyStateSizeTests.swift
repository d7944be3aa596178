import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file's size in the steady state (issue 23): commits that keep rewriting the same
/// objects must reuse the space they free, whether or not another process holds a version,
/// and whichever process writes. Each test measures the same run with one writer and no
/// reader first, in its own file, and bounds the run under test by twice that plus what the
/// pinned version reaches (FreeSpace.swift, ProcessCoordination.swift). Sizes, not times.
@Suite(.childProcesses) struct SteadyStateSizeTests {
    static let tableName = "Steady"
    static let rows: Int64 = 100
    static let commits = 2_000
    static let columns = [
        ColumnSpec(name: "id", type: .int, unique: true),
        ColumnSpec(name: "payload", type: .string),
    ]

    static func payload(_ id: Int64, round: Int) -> String {
        "row \(id) round \(round) " + String(repeating: "s", count: 40 + Int(id % 60))
    }

    /// Rounds of commits each writer process makes before the other's turn.
    static let turn = 50
    static let counterName = "Counter"

    static func setUp(_ store: Store) throws {
        let transaction = try store.beginWrite()
        let counter = try transaction.createTable(counterName, columns: [ColumnSpec(name: "round", type: .int)])
        try transaction.insert(counter, key: ObjectKey(0), values: [.int(0)])
        let table = try transaction.createTable(tableName, columns: columns)
        for id in 0..<rows {
            try transaction.insert(table, key: ObjectKey(id), values: [.int(id), .string(payload(id, round: 0))])
        }
        try transaction.commit()
    }

    /// Commit `round` rewrites five of the rows, the next five each time, and counts the round.
    static func update(_ store: Store, round: Int) throws {
        let transaction = try store.beginWrite()
        let table = try #require(try transaction.table(named: tableName)).key
        for k in 0..<5 {
            let id = Int64((round * 5 + k) % Int(rows))
            try transaction.set(table, ObjectKey(id), ColumnKey(1), .string(payload(id, round: round)))
        }
        let counter = try #require(try transaction.table(named: counterName)).key
        try transaction.set(counter, ObjectKey(0), ColumnKey(0), .int(Int64(round)))
        try transaction.commit()
    }

    static func lastRound(_ store: Store) throws -> Int {
        let counter = try #require(try store.beginRead().table(named: counterName))
        guard case .int(let round) = try counter.row(ObjectKey(0))?.values()[0] else { return -1 }
        return Int(round)
    }

    static func contents(_ read: ReadTransaction) throws -> [[Value]] { try read.rowValues(ofTable: tableName) }

    /// The size of the file after the run with one writer and nothing else, and the bytes the
    /// set-up version reaches (what a reader holding it can keep from reuse at most).
    static func baseline(_ directory: TemporaryDirectory) throws -> (size: UInt64, live: UInt64) {
        let store = try Store.open(path: directory.path("baseline.realm"))
        try setUp(store)
        let usage = try store.spaceUsage()
        for round in 1...commits { try update(store, round: round) }
        try store.verify()
        return (try store.spaceUsage().fileSize, usage.fileSize - usage.freeBytes)
    }

    // MARK: A reader in another process

    /// A child process opens the file, reads once and stays idle holding that version while
    /// this process rewrites the rows 2,000 times: the file stays within twice the size of the
    /// same run without the reader plus that version's bytes, and the child's version reads
    /// the same at the end as at the start.
    @Test func aReaderInAnotherProcessCostsOnlyTheVersionItPins() async throws {
        let directory = TemporaryDirectory()
        let (alone, live) = try await onThread { try Self.baseline(directory) }
        let path = directory.path()
        let store = try Store.open(path: path)
        try Self.setUp(store)
        let ready = MultiProcessTests.marker(path, "ready"), done = MultiProcessTests.marker(path, "done")
        async let child: Void = Self.idleReader(path: path, ready: ready, done: done)
        try await onThread {
            try MultiProcessTests.waitUntil("the reader") { FileManager.default.fileExists(atPath: ready) }
            for round in 1...Self.commits { try Self.update(store, round: round) }
            MultiProcessTests.touch(done)
        }
        await child
        let size = try store.spaceUsage().fileSize
        // Printed for the record (issue 23 quotes such sizes); the bound is the test.
        print("SteadyStateSizeTests: \(Self.commits) commits, \(alone) bytes alone, \(size) with an idle reader in another process")
        #expect(size <= 2 * alone + live, "\(size) bytes with the reader, \(alone) without, the pinned version reaches \(live)")
        try store.verify()
    }

    private static func idleReader(path: String, ready: String, done: String) async {
        await #expect(processExitsWith: .success) { [path = path as String, ready = ready as String, done = done as String] in
            let store = try Store.open(path: path)
            let reader = store.beginRead()
            let before = try SteadyStateSizeTests.contents(reader)
            guard before.count == Int(SteadyStateSizeTests.rows) else { exit(2) }
            MultiProcessTests.touch(ready)
            try MultiProcessTests.waitUntil("the writer") { FileManager.default.fileExists(atPath: done) }
            guard try SteadyStateSizeTests.contents(reader) == before else { exit(3) }
        }
    }

    // MARK: Two writer processes

    /// This process and a child each rewrite the rows 1,000 times, in turns of 50 commits,
    /// and each holds a read of its newest version as a live realm does: the file stays within
    /// twice the size of one writer's 2,000 commits plus a version's bytes. (With a floor per
    /// process, everything the other freed during a turn was kept from reuse.)
    @Test func twoWriterProcessesTakingTurnsStayNearOneWritersSize() async throws {
        let directory = TemporaryDirectory()
        let (alone, live) = try await onThread { try Self.baseline(directory) }
        let path = directory.path()
        let store = try Store.open(path: path)
        try Self.setUp(store)
        let ready = MultiProcessTests.marker(path, "ready")
        async let child: Void = Self.secondWriter(path: path, ready: ready)
        try await onThread {
            try MultiProcessTests.waitUntil("the other writer") { FileManager.default.fileExists(atPath: ready) }
            try Self.writeTakingTurns(store, writer: 1)
        }
        await child
        let size = try store.spaceUsage().fileSize
        print("SteadyStateSizeTests: \(Self.commits) commits, \(alone) bytes alone, \(size) with two writer processes")
        #expect(size <= 2 * alone + live, "\(size) bytes with two writers, \(alone) with one, a version reaches \(live)")
        let read = store.beginRead()
        #expect(try Self.contents(read).count == Int(Self.rows))
        try store.verify()
    }

    /// Commits writer `writer`'s rounds (1 or 2: alternate blocks of `turn`), each once the
    /// round before it is in, holding a read of the newest version it saw between commits.
    static func writeTakingTurns(_ store: Store, writer: Int) throws {
        var reader = store.beginRead()
        for round in 1...commits where ((round - 1) / turn) % 2 == writer - 1 {
            try MultiProcessTests.waitUntil("round \(round - 1)") { try lastRound(store) == round - 1 }
            try update(store, round: round)
            reader = store.beginRead()
        }
        withExtendedLifetime(reader) {}
    }

    private static func secondWriter(path: String, ready: String) async {
        await #expect(processExitsWith: .success) { [path = path as String, ready = ready as String] in
            let store = try Store.open(path: path)
            MultiProcessTests.touch(ready)
            try SteadyStateSizeTests.writeTakingTurns(store, writer: 2)
            try store.verify()
        }
    }
}
