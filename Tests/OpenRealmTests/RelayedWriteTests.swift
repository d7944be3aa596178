import Foundation
@testable import OpenRealm
import RealmStorage
import Testing

/// Threads whose `realm.write {}` calls wait in line for the write lane share one transaction
/// and one commit (WriteTransaction+Relay.swift), and each still sees what it would see had they committed
/// one after another. Each relay here is staged: the first thread's block holds the lane until
/// every other thread waits in line.
@Suite struct RelayedWriteTests {
    /// What one thread's write block does besides adding its person.
    enum Block: Sendable {
        case add
        /// Adds, then throws `Stop`.
        case addAndThrow
        /// Adds a second person with the first thread's primary key.
        case addDuplicateOfTheFirst
    }

    struct Stop: Error {}

    /// The outcome of each thread's write, by thread.
    final class Outcomes: Sendable {
        private let results = Locked<[Int: Result<Bool, Error>]>([:])
        func record(_ thread: Int, _ result: Result<Bool, Error>) { results.withLock { $0[thread] = result } }
        subscript(thread: Int) -> Result<Bool, Error>? { results.withLock { $0[thread] } }
    }

    /// Runs one staged relay: thread i writes person i with `blocks[i]`. The outcome is true
    /// when the write returned and the thread's realm then held its person.
    static func relay(_ configuration: Realm.Configuration, _ blocks: [Block]) throws -> Outcomes {
        let outcomes = Outcomes()
        // Held for the whole relay: the threads' realms share its store, and so its lane.
        let realm = try Realm(configuration: configuration)
        defer { withExtendedLifetime(realm) {} }
        let lane = realm.store.lane
        let done = DispatchGroup(), holding = DispatchSemaphore(value: 0)
        for (thread, block) in blocks.enumerated() {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                do {
                    let realm = try Realm(configuration: configuration)
                    try realm.write {
                        let person = Person()
                        person.id = thread
                        person.name = "thread \(thread)"
                        realm.add(person)
                        if thread == 0 {
                            holding.signal()
                            while lane.waitingCount < blocks.count - 1 { usleep(100) }
                        }
                        switch block {
                        case .add: break
                        case .addAndThrow: throw Stop()
                        case .addDuplicateOfTheFirst:
                            let duplicate = Person()
                            duplicate.id = 0
                            realm.add(duplicate)
                        }
                    }
                    outcomes.record(thread, .success(realm.object(ofType: Person.self, forPrimaryKey: thread) != nil))
                } catch {
                    outcomes.record(thread, .failure(error))
                }
            }
            // The others queue behind the first, in order (the last sets the first going).
            if thread == 0 {
                holding.wait()
            } else if thread < blocks.count - 1 {
                while lane.waitingCount < thread { usleep(100) }
            }
        }
        done.wait()
        return outcomes
    }

    static func ids(_ configuration: Realm.Configuration) throws -> [Int] {
        try Realm(configuration: configuration).objects(Person.self).map(\.id).sorted()
    }

    @Test func threadsWritingTogetherShareOneCommit() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Person(value: ["id": 100])) }
        let before = realm.store.latestVersion
        let outcomes = try Self.relay(configuration, Array(repeating: .add, count: 6))
        for thread in 0..<6 {
            #expect((try? outcomes[thread]?.get()) == true, "thread \(thread)'s write returned and its realm holds its person")
        }
        #expect(realm.store.latestVersion.value == before.value + 1, "six writes, one commit")
        #expect(try Self.ids(configuration) == Array(0..<6) + [100])
        try RoundTripTests.verify(folder)
    }

    @Test(arguments: [1, 2])
    func aBlockThatThrowsIsUndoneAlone(thread thrower: Int) throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        var blocks = Array(repeating: Block.add, count: 3)
        blocks[thrower] = .addAndThrow
        let outcomes = try Self.relay(configuration, blocks)
        for thread in 0..<3 where thread != thrower {
            #expect((try? outcomes[thread]?.get()) == true, "thread \(thread)'s write is kept")
        }
        guard case .failure(let error)? = outcomes[thrower] else {
            Issue.record("the throwing block's write did not throw")
            return
        }
        #expect(error is Stop)
        #expect(try Self.ids(configuration) == (0..<3).filter { $0 != thrower })
        // The realm of a thread whose block threw writes again.
        let realm = try Realm(configuration: configuration)
        try realm.write { realm.add(Person(value: ["id": 10])) }
        #expect(try Self.ids(configuration).last == 10)
        try RoundTripTests.verify(folder)
    }

    @Test func aDuplicatePrimaryKeyFailsThatWriteAlone() throws {
        let folder = TestFolder()
        let configuration = folder.configuration([Person.self])
        let outcomes = try Self.relay(configuration, [.add, .add, .addDuplicateOfTheFirst, .add])
        for thread in [0, 1, 3] { #expect((try? outcomes[thread]?.get()) == true, "thread \(thread)'s write is kept") }
        guard case .failure(let error)? = outcomes[2] else {
            Issue.record("the write with a duplicate primary key did not throw")
            return
        }
        #expect((error as? Realm.Error)?.code == .duplicatePrimaryKey)
        #expect(try Self.ids(configuration) == [0, 1, 3])
        try RoundTripTests.verify(folder)
    }
}
