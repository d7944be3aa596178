import Foundation
@testable import OpenRealm
import RealmStorage
import Synchronization
import Testing

/// Threads committing through `realm.write {}` at the same time share syncs
/// (Store+GroupCommitThreads.swift): the threads whose commits are written while a sync runs are
/// made durable by the next one, led by one of them.
@Suite struct ThreadGroupCommitTests {
    /// How many threads commit at once, and how many commits each makes.
    static let threads = 16
    static let commitsPerThread = 12

    /// A count that threads change.
    final class Count: Sendable {
        private let value = Atomic<Int>(0)
        var current: Int { value.load(ordering: .sequentiallyConsistent) }
        func set(_ n: Int) { value.store(n, ordering: .sequentiallyConsistent) }
        func increment() { value.add(1, ordering: .sequentiallyConsistent) }
        func decrement() { value.subtract(1, ordering: .sequentiallyConsistent) }
    }

    /// Problems seen on the committing threads, for the test to report.
    final class Problems: Sendable {
        private let list = Locked<[String]>([])
        func add(_ problem: String) { list.withLock { $0.append(problem) } }
        var all: [String] { list.withLock { $0 } }
    }

    /// 16 threads, each with a realm of its own, make 12 durable one-object commits each. Each
    /// sync is held until every thread still committing has written a commit and waits for
    /// it, so that the threads that can share a sync are there whatever the machine's speed:
    /// the syncs then alternate between the threads one sync answered and the others, about 8
    /// commits each. Threads that each led a sync of their own (1-2 commits per sync before
    /// this design) would stay below 3.
    @Test func sixteenThreadsCommittingAtOnceShareTheirSyncs() throws {
        let folder = TestFolder()
        var configuration = folder.configuration([Person.self])
        let probe = GroupCommitProbe()
        let opened = Count(), committing = Count(), holding = Count()
        configuration.holdSyncs(while: { holding.current == 1 && probe.waitingThreads < committing.current })
        let realm = try Realm(configuration: configuration)
        probe.attach(realm)
        let threadConfiguration = configuration
        let problems = Problems()
        let ready = DispatchGroup(), done = DispatchGroup()
        let go = DispatchSemaphore(value: 0)
        for thread in 0..<Self.threads {
            ready.enter()
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                let threadRealm: Realm
                do {
                    threadRealm = try Realm(configuration: threadConfiguration)
                    opened.increment()
                    ready.leave()
                } catch {
                    problems.add("thread \(thread) could not open the realm: \(error)")
                    ready.leave()
                    return
                }
                go.wait()
                defer { committing.decrement() }
                for n in 0..<Self.commitsPerThread {
                    let person = Person()
                    person.id = thread * 1_000 + n
                    person.name = "thread \(thread), commit \(n)"
                    do {
                        try threadRealm.write { threadRealm.add(person) }
                    } catch {
                        problems.add("thread \(thread), commit \(n): \(error)")
                        return
                    }
                    // Answered only once durable: the thread's realm is at its own commit.
                    if threadRealm.object(ofType: Person.self, forPrimaryKey: person.id) == nil {
                        problems.add("thread \(thread) does not see its commit \(n)")
                    }
                }
            }
        }
        ready.wait()
        let before = probe.syncsAndCommits
        committing.set(opened.current)
        holding.set(1)
        for _ in 0..<Self.threads { go.signal() }
        done.wait()
        holding.set(0)
        let after = probe.syncsAndCommits
        #expect(problems.all.isEmpty, "\(problems.all)")

        // A thread's write may ride on another's commit (WriteTransaction+Relay.swift): fewer commits than
        // writes, each made durable by one sync.
        let syncs = after.syncs - before.syncs, commits = after.commits - before.commits
        let writes = Self.threads * Self.commitsPerThread
        #expect(commits > 0 && commits <= writes, "\(commits) commits carried \(writes) writes")
        #expect(syncs > 0 && Double(writes) / Double(syncs) >= 3,
                "\(writes) writes in \(syncs) syncs: the threads that write during a sync must share the next one")
        realm.refresh()
        let expected = Set((0..<Self.threads).flatMap { t in (0..<Self.commitsPerThread).map { t * 1_000 + $0 } })
        #expect(Set(realm.objects(Person.self).map(\.id)) == expected)
        #expect(realm.objects(Person.self).count == expected.count)
        try RoundTripTests.verify(folder)
    }

    /// Threads that write while a sync runs share the next commit (WriteTransaction+Relay.swift): the
    /// first to take the lane with nobody in line waits, lane held, for the next to come
    /// instead of committing alone. The threads start one at a time, each once the one before
    /// waits, and the first sync is held until all eight wait: the first thread's commit and
    /// one carrying the seven others, two syncs. (Committing alone, they made eight.)
    @Test func threadsThatWriteDuringASyncShareTheNextCommit() throws {
        let threads = 8
        let folder = TestFolder()
        var configuration = folder.configuration([Person.self])
        let probe = GroupCommitProbe()
        let holding = Count(), released = Count()
        configuration.holdSyncs(while: {
            guard holding.current == 1, released.current == 0 else { return false }
            if probe.waitingThreads < threads { return true }
            released.set(1)
            return false
        })
        let realm = try Realm(configuration: configuration)
        probe.attach(realm)
        let threadConfiguration = configuration
        let problems = Problems()
        let done = DispatchGroup()
        let before = probe.syncsAndCommits
        holding.set(1)
        for thread in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                do {
                    let threadRealm = try Realm(configuration: threadConfiguration)
                    try threadRealm.write { threadRealm.create(Person.self, value: ["id": thread, "name": "thread \(thread)"]) }
                } catch {
                    problems.add("thread \(thread): \(error)")
                }
            }
            // The next starts once this one waits: for its sync, as a rider, or lane held.
            let deadline = ContinuousClock.now + .seconds(120)    // a hang guard only
            while probe.waitingThreads < thread + 1 && ContinuousClock.now < deadline && problems.all.isEmpty { usleep(100) }
        }
        done.wait()
        let after = probe.syncsAndCommits
        #expect(problems.all.isEmpty, "\(problems.all)")
        #expect(after.commits - before.commits == 2, "\(after.commits - before.commits) commits carried \(threads) writes")
        #expect(after.syncs - before.syncs == 2)
        realm.refresh()
        #expect(Set(realm.objects(Person.self).map(\.id)) == Set(0..<threads))
        try RoundTripTests.verify(folder)
    }
}
