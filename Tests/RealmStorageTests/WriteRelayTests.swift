import Dispatch
import Foundation
import Testing
@testable import RealmStorage

/// Threads that write one after another share one transaction and one commit
/// (WriteTransaction+Relay.swift): a thread ending its part while the next in line accepts a relay passes
/// it the transaction, and the last commits for all. Each relay here is staged: its first
/// thread holds the lane until every other part's thread waits in line, so the relay forms
/// whatever the machine's speed.
@Suite struct WriteRelayTests {
    /// What one part of a relay does after inserting its row.
    enum Part: Sendable {
        /// Ends its part with `commitOrRelay`.
        case keep
        /// Rolls back (a block that threw).
        case rollBack
        /// Adds a column to the table (a schema change no savepoint logs), then rolls back.
        case changeSchemaAndRollBack
        /// Inserts a row whose unique id another part inserted, and rolls back on the error.
        case duplicate(of: Int)
    }

    /// The answers of the parts, by row id.
    final class Answers: Sendable {
        private let results = Locked<[Int: Result<VersionID, StorageError>]>([:])

        func record(_ id: Int, _ result: Result<VersionID, StorageError>) { results.withLock { $0[id] = result } }
        subscript(id: Int) -> Result<VersionID, StorageError>? { results.withLock { $0[id] } }
        var all: [Int: Result<VersionID, StorageError>] { results.withLock { $0 } }
    }

    /// Runs one relay: a thread per part, part i inserting row `firstID + i`; returns when
    /// every part is answered. The first part holds the lane until the others wait in line.
    static func relay(_ store: Store, _ table: TableKey, firstID: Int, _ parts: [Part], _ answers: Answers) {
        let done = DispatchGroup()
        let holding = DispatchSemaphore(value: 0)
        for (i, part) in parts.enumerated() {
            let id = firstID + i
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let result: Result<VersionID, StorageError>
                do throws(StorageError) {
                    let transaction = try store.beginWrite(joiningRelay: i > 0)
                    if i == 0 {
                        holding.signal()
                        while store.lane.waitingCount < parts.count - 1 { usleep(100) }
                    }
                    try transaction.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
                    switch part {
                    case .keep:
                        result = .success(try transaction.commitOrRelay())
                    case .rollBack:
                        transaction.rollback()
                        result = .failure(StorageError(.cancelled, "rolled back"))
                    case .changeSchemaAndRollBack:
                        _ = try transaction.addColumn(table, ColumnSpec(name: "extra \(id)", type: .int, nullable: true))
                        transaction.rollback()
                        result = .failure(StorageError(.cancelled, "rolled back"))
                    case .duplicate(let other):
                        do throws(StorageError) {
                            try transaction.insert(table, values: [.int(Int64(firstID + other)), .string("again")])
                            result = .success(try transaction.commitOrRelay())
                        } catch {
                            transaction.rollback()
                            throw error
                        }
                    }
                } catch {
                    result = .failure(error)
                }
                answers.record(id, result)
            }
            // The others queue behind the first, in order. Once the last is in line the first
            // goes on and the line shortens: that one is not waited for here.
            if i == 0 {
                holding.wait()
            } else if i < parts.count - 1 {
                while store.lane.waitingCount < i { usleep(100) }
            }
        }
        done.wait()
    }

    /// A store with the table, its creation durable.
    static func store(_ directory: TemporaryDirectory, options: StoreOptions = StoreOptions()) throws -> (Store, TableKey) {
        let store = try Store.open(path: directory.path(), options: options)
        let transaction = try store.beginWrite()
        let table = try transaction.createTable("Row", columns: GroupCommitTests.columns)
        try transaction.commit()
        return (store, table)
    }

    @Test func threadsWaitingInLineShareOneCommit() throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.store(directory)
        let before = store.latestVersion
        let answers = Answers()
        Self.relay(store, table, firstID: 0, Array(repeating: .keep, count: 8), answers)
        let versions = Set(answers.all.values.compactMap { try? $0.get() })
        #expect(answers.all.count == 8 && versions.count == 1, "every part is answered with the one commit: \(answers.all)")
        #expect(store.latestVersion.value == before.value + 1, "eight writes, one commit")
        #expect(try GroupCommitTests.ids(store.beginRead()) == Array(0..<8))
        try store.verify()
    }

    @Test(arguments: [1, 3])
    func aPartThatRollsBackIsUndoneAlone(at rolledBack: Int) throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.store(directory)
        let answers = Answers()
        var parts = Array(repeating: Part.keep, count: 4)
        parts[rolledBack] = .rollBack
        Self.relay(store, table, firstID: 0, parts, answers)
        let kept = (0..<4).filter { $0 != rolledBack }
        for id in kept { #expect((try? answers[id]?.get()) != nil, "part \(id) is kept: \(String(describing: answers[id]))") }
        #expect(try GroupCommitTests.ids(store.beginRead()) == kept, "the rolled back part's row goes, the others stay")
        // The last part rolling back commits for the riders.
        try store.verify()
    }

    @Test func aPartWhoseInsertFailsIsUndoneAlone() throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.store(directory)
        let answers = Answers()
        Self.relay(store, table, firstID: 0, [.keep, .keep, .duplicate(of: 0), .keep], answers)
        #expect(answers[2].flatMap { try? $0.get() } == nil)
        if case .failure(let error)? = answers[2] { #expect(error.code == .duplicateKey) }
        #expect(try GroupCommitTests.ids(store.beginRead()) == [0, 1, 3])
        try store.verify()
    }

    @Test func aPartThatCannotBeUndoneAloneFailsTheRelay() throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.store(directory)
        let answers = Answers()
        Self.relay(store, table, firstID: 0, [.keep, .keep, .changeSchemaAndRollBack, .keep], answers)
        for id in [0, 1] {
            guard case .failure(let error)? = answers[id] else {
                Issue.record("part \(id) rode on a transaction that could not be kept: \(String(describing: answers[id]))")
                continue
            }
            #expect(error.code == .mergedWriteFailed)
        }
        // The part after it began a transaction of its own.
        #expect(try GroupCommitTests.ids(store.beginRead()) == [3])
        #expect(try store.beginRead().table(table).info.columns.count == GroupCommitTests.columns.count)
        try store.verify()
    }

    @Test func aFullRelayCommitsAndTheNextGoesOn() throws {
        let directory = TemporaryDirectory()
        let (store, table) = try Self.store(directory)
        let before = store.latestVersion
        let answers = Answers()
        let count = WriteTransaction.relayCapacity + 8
        Self.relay(store, table, firstID: 0, Array(repeating: .keep, count: count), answers)
        #expect(answers.all.values.allSatisfy { (try? $0.get()) != nil })
        #expect(store.latestVersion.value == before.value + 2, "a relay carries at most \(WriteTransaction.relayCapacity) parts")
        #expect(try GroupCommitTests.ids(store.beginRead()) == Array(0..<count))
        try store.verify()
    }

    /// A commit that fails fails every part it carries, and none of them is in the file.
    @Test(arguments: [FaultInjectingFile.Call.write, .sync])
    func aFailedCommitFailsEveryPart(failing call: FaultInjectingFile.Call) throws {
        let directory = TemporaryDirectory()
        let box = WrappedFileBox<FaultInjectingFile>()
        let (store, table) = try Self.store(directory, options: StoreOptions(fileWrapper: box.wrapper {
            FaultInjectingFile(wrapping: $0, failing: call, at: .max, errno: EIO)
        }))
        let file = try #require(box.file)
        file.failNext(call)
        let answers = Answers()
        Self.relay(store, table, firstID: 0, Array(repeating: .keep, count: 4), answers)
        for id in 0..<4 {
            guard case .failure(let error)? = answers[id] else {
                Issue.record("part \(id) succeeded although its commit failed")
                continue
            }
            #expect(error.code == .ioFailure)
        }
        #expect(try GroupCommitTests.ids(store.beginRead()) == [])
        // The store takes the next write.
        Self.relay(store, table, firstID: 10, [.keep, .keep], answers)
        #expect(try GroupCommitTests.ids(store.beginRead()) == [10, 11])
        try store.verify()
    }
}
