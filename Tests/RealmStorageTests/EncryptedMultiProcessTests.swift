import Foundation
import Testing
import TestSupport
@testable import RealmStorage
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Several processes on one encrypted file. Each process reads through a decrypted image of
/// its own, which it brings up to date when it catches up with another process's commits
/// (EncryptedFile.swift, I1): the cases where realm-core's encryption failed (core #8086, one
/// writer process and one reader process) run here as a bounded soak, in both directions.
@Suite(.childProcesses) struct EncryptedMultiProcessTests {
    static let key: [UInt8] = (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ 11) }
    static let rows: Int64 = 300

    static func options(chainLength: Int = StoreOptions().chainLength, cacheSize: Int = EncryptedFile.defaultCacheSize) -> StoreOptions {
        var options = StoreOptions(chainLength: chainLength)
        options.encryptionKey = key
        options.encryptedCacheSize = cacheSize
        return options
    }

    static func open(_ path: String, cacheSize: Int = EncryptedFile.defaultCacheSize) throws -> Store {
        try Store.open(path: path, options: options(cacheSize: cacheSize))
    }

    /// The default budget of decrypted pages in each process, and the smallest (four units per
    /// image), where every read and write meets the drops (File/FaultRegion.swift).
    static let cacheSizes = [EncryptedFile.defaultCacheSize, 64 << 10]

    /// Every row's payload names one round: a reader must never see two rounds in one version.
    static func round(of read: ReadTransaction) throws -> Int? {
        let rows = try read.rowValues(ofTable: MultiProcessTests.tableName)
        guard rows.count == Int(Self.rows) else { throw StorageError(.invalidArgument, "read \(rows.count) rows") }
        let rounds = Set(rows.map { row -> Int in
            guard case .string(let payload) = row[2] else { return -1 }
            return Int(payload.split(separator: " ")[3]) ?? -1
        })
        guard rounds.count == 1, let round = rounds.first, round >= 0 else {
            throw StorageError(.fileCorrupted, "one version holds rounds \(rounds.sorted())")
        }
        // And each payload is the one its round wrote.
        for (i, row) in rows.enumerated() where row[2] != .string(MultiProcessTests.payload(Int64(i), round: round)) {
            throw StorageError(.fileCorrupted, "row \(i) of round \(round) reads \(row[2])")
        }
        return round
    }

    static func setUp(_ path: String, cacheSize: Int = EncryptedFile.defaultCacheSize) throws -> Store {
        let store = try open(path, cacheSize: cacheSize)
        let setup = try store.beginWrite()
        let table = try setup.createTable(MultiProcessTests.tableName, columns: MultiProcessTests.columns)
        for id in Int64(0)..<rows {
            try setup.insert(table, key: ObjectKey(id), values: [.int(id), .int(1), .string(MultiProcessTests.payload(id))])
        }
        try setup.commit()
        return store
    }

    /// Reads until `stop` says so, checking every version read is one whole round and that
    /// rounds never go back; returns the last round seen and how many reads there were.
    static func readUntil(_ store: Store, stop: () -> Bool) throws -> (round: Int, reads: Int) {
        var last = 0
        var reads = 0
        while !stop() {
            let read = store.beginRead()
            let round = try round(of: read) ?? 0
            guard round >= last else { throw StorageError(.fileCorrupted, "round \(round) read after round \(last)") }
            last = round
            reads += 1
            usleep(200)
        }
        return (last, reads)
    }

    @Test(arguments: cacheSizes) func writersInTwoProcessesTakeTurns(cacheSize: Int) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let turns = 30
        let store = try Self.open(path, cacheSize: cacheSize)
        let childExited = StopFlag()
        let said = MultiProcessTests.marker(path, "child-error")
        async let child: Void = {
            defer { childExited.set() }
            await #expect(processExitsWith: .success) { [path = path as String, said = said as String, turns = turns as Int, cacheSize = cacheSize as Int] in
                do {
                    let store = try EncryptedMultiProcessTests.open(path, cacheSize: cacheSize)
                    try MultiProcessTests.takeTurns(store, writer: 2, turns: turns)
                    try store.verify()
                } catch {
                    _ = FileManager.default.createFile(atPath: said, contents: Data("\(error)".utf8))
                    exit(2)
                }
            }
        }()
        try await onThread { try MultiProcessTests.takeTurns(store, writer: 1, turns: turns, partner: childExited) }
        await child
        if let error = FileManager.default.contents(atPath: said) { Issue.record("the child said: \(String(decoding: error, as: UTF8.self))") }
        let rows = try MultiProcessTests.rows(store.beginRead())
        #expect(rows.count == 2 * turns)
        for (i, row) in rows.enumerated() {
            #expect(row == [.int(Int64(i)), .int(i % 2 == 0 ? 1 : 2), .string(MultiProcessTests.payload(Int64(i)))], "object \(i)")
        }
        try store.verify()
    }

    /// core #8086: a writer process rewrites every row, round after round, reusing the space
    /// older rounds freed, while this process reads version after version.
    @Test(arguments: cacheSizes) func aReaderProcessFollowsAWriterProcess(cacheSize: Int) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Self.setUp(path, cacheSize: cacheSize)
        let rounds = 150
        let childExited = StopFlag()
        async let child: Void = {
            defer { childExited.set() }
            await #expect(processExitsWith: .success) { [path = path as String, rounds = rounds as Int, cacheSize = cacheSize as Int] in
                let store = try EncryptedMultiProcessTests.open(path, cacheSize: cacheSize)
                for round in 1...rounds { try MultiProcessTests.rewrite(store, round: round, rows: EncryptedMultiProcessTests.rows) }
            }
        }()
        let seen = try await onThread { try Self.readUntil(store) { childExited.isSet } }
        await child
        #expect(try Self.round(of: store.beginRead()) == rounds)
        #expect(seen.reads > 0)
        try store.verify()
        // A new process, a new image: the same rows.
        await #expect(processExitsWith: .success) { [path = path as String, rounds = rounds as Int, cacheSize = cacheSize as Int] in
            let store = try EncryptedMultiProcessTests.open(path, cacheSize: cacheSize)
            guard try EncryptedMultiProcessTests.round(of: store.beginRead()) == rounds else { exit(3) }
            try store.verify()
        }
    }

    /// core #8086 the other way round: this process writes, a reader process follows, and
    /// says what it saw in a marker file.
    @Test(arguments: cacheSizes) func aWriterProcessIsFollowedByAReaderProcess(cacheSize: Int) async throws {
        let directory = TemporaryDirectory()
        let path = directory.path()
        let store = try Self.setUp(path, cacheSize: cacheSize)
        let rounds = 150
        let done = MultiProcessTests.marker(path, "writer-done")
        let said = MultiProcessTests.marker(path, "reader-said")
        let started = MultiProcessTests.marker(path, "reader-started")
        let childExited = StopFlag()
        async let child: Void = {
            defer { childExited.set() }
            await #expect(processExitsWith: .success) { [path = path as String, done = done as String, said = said as String, started = started as String,
                                                          cacheSize = cacheSize as Int] in
                do {
                    let store = try EncryptedMultiProcessTests.open(path, cacheSize: cacheSize)
                    MultiProcessTests.touch(started)
                    let seen = try EncryptedMultiProcessTests.readUntil(store) { FileManager.default.fileExists(atPath: done) }
                    let last = try EncryptedMultiProcessTests.round(of: store.beginRead()) ?? -1
                    _ = FileManager.default.createFile(atPath: said, contents: Data("\(last) \(seen.reads)".utf8))
                } catch {
                    _ = FileManager.default.createFile(atPath: said, contents: Data("error \(error)".utf8))
                    exit(2)
                }
            }
        }()
        try await onThread {
            try MultiProcessTests.waitUntil("the reader", partner: childExited) { FileManager.default.fileExists(atPath: started) }
            for round in 1...rounds {
                try MultiProcessTests.rewrite(store, round: round, rows: Self.rows)
                usleep(2_000)
            }
        }
        MultiProcessTests.touch(done)
        await child
        let words = String(decoding: FileManager.default.contents(atPath: said) ?? Data(), as: UTF8.self).split(separator: " ")
        #expect(words.first.map(String.init) == "\(rounds)", "the reader said: \(words.joined(separator: " "))")
        try store.verify()
    }
}
