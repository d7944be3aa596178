import Dispatch
import Foundation
import Testing
@testable import RealmStorage

/// Power cuts at every sync of a grouped workload. Groups of commits are written while the
/// previous sync waits after syncing (GatedSyncFile), so each sync makes a group durable at
/// once, and the pending writes at a crash are the group in flight: every member's nodes,
/// record and root (a run header, or for the group's last one a slot). Every post-crash image
/// must recover, verify, and hold the acknowledged groups and a prefix of the group in flight
/// (each member is a transaction of its own: those whose writes all arrived may be recovered,
/// in order), all of it when everything arrived; then take new commits.
///
/// The commits of a group come from tasks (`commit(then:)`, synced by the sync queue) or from
/// threads that wait for them (`commit()`, synced by one of the waiting threads:
/// Store+GroupCommitThreads.swift), one thread per commit, each started once the one before has
/// written its commit, so that the rows are in commit order.
@Suite struct GroupCrashInjectionTests {
    enum Committers: String, CaseIterable, CustomTestStringConvertible {
        case tasks, threads
        var testDescription: String { rawValue }
    }

    /// Group 0 creates the table; the others insert this many rows each.
    static let groupSizes = [1, 3, 1, 4, 2, 5, 1]

    static func rows(throughGroup g: Int) -> [Int]? {
        guard g >= 0 else { return nil }
        return Array(0..<groupSizes.prefix(g + 1).dropFirst().reduce(0, +))
    }

    struct Crash {
        var state: CrashSimulatingFile.CrashState
        /// The group whose sync failed.
        var group: Int
    }

    /// Runs the grouped workload on a file that loses power at sync `n`.
    /// `chainLength` 2 puts a version that starts a new chain inside most groups.
    static func run(crashingAt n: Int, path: String, chainLength: Int, committers: Committers = .tasks) throws -> Crash? {
        let box = WrappedFileBox<GatedSyncFile>()
        let store = try Store.open(path: path, options: StoreOptions(limits: TreeLimits(leafCapacity: 4, innerCapacity: 4), fileWrapper: box.wrapper {
            GatedSyncFile(wrapping: CrashSimulatingFile(wrapping: $0, crashAtSync: n), passAfterFailure: true, gateAfterSync: true)
        }, chainLength: chainLength))
        let gate = try #require(box.file)
        let crashFile = try #require(gate.inner as? CrashSimulatingFile)
        let answers = GroupCommitTests.Answers()
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: GroupCommitTests.columns)
        try setup.commit(then: answers.record(-1))
        var next = 0
        var failed: Int?
        let threads = DispatchGroup()
        // Every committing thread is done before the store goes (a failed group's too).
        defer { threads.wait() }
        for g in 1...groupSizes.count {
            // Sync g (of group g-1) has synced and waits, or has crashed.
            gate.waitForSyncAtGate()
            if crashFile.didCrash {
                failed = g - 1
                break
            }
            // Written after that sync: pending until sync g+1, which makes them durable.
            if g < groupSizes.count {
                // Group g-1's threads wait for sync g meanwhile (group 0 is the task's table).
                let waiting = committers == .threads && g >= 2 ? groupSizes[g - 1] : 0
                for member in 0..<groupSizes[g] {
                    switch committers {
                    case .tasks:
                        try GroupCommitTests.insert(store, table, next, answers)
                    case .threads:
                        GroupCommitTests.insertOnThread(store, table, next, answers, threads)
                        GroupCommitTests.waitUntilThreadsWait(store, waiting + member + 1)
                    }
                    next += 1
                }
                try GroupCommitTests.barrier(store)
            }
            gate.open()
            answers.waitFor(groupSizes[g - 1])
        }
        // Every thread answered: a thread leader hands the lead on before it answers its group,
        // so the next group's sync may fail (and its threads be answered) before that.
        threads.wait()
        guard let failed, let state = crashFile.crashState else { return nil }
        // Everything answered before the crash succeeded; the crashed group failed.
        let firstFailed = failed <= 1 ? 0 : groupSizes[1..<failed].reduce(0, +)
        for id in 0..<firstFailed { #expect((try? answers[id]?.get()) != nil, "row \(id) was acknowledged before the crash") }
        return Crash(state: state, group: failed)
    }

    /// Checks that a recovered file takes a new commit and still verifies.
    static func takeANewCommit(_ store: Store) throws {
        let transaction = try store.beginWrite()
        let table = try transaction.table(named: "Row")?.info.key ?? transaction.createTable("Row", columns: GroupCommitTests.columns)
        try transaction.insert(table, values: [.int(1_000), .string("after")])
        try transaction.commit()
        try store.verify()
    }

    /// The rows after the acknowledged groups and the first `members` of group `g`.
    static func rows(throughGroup g: Int, members: Int) -> [Int]? {
        guard let before = rows(throughGroup: g - 1) else { return members > 0 ? rows(throughGroup: g) : nil }
        return before + (before.count..<(before.count + members))
    }

    @Test(arguments: [2, StoreOptions().chainLength], Committers.allCases)
    func everyCrashRecoversAPrefixOfTheGroupInFlight(chainLength: Int, committers: Committers) throws {
        let directory = TemporaryDirectory()
        var crashes = 0
        for n in 1...(Self.groupSizes.count + 1) {
            guard let crash = try Self.run(crashingAt: n, path: directory.path("work-\(n).realm"), chainLength: chainLength,
                                           committers: committers) else { continue }
            crashes += 1
            let before = Self.rows(throughGroup: crash.group - 1), after = Self.rows(throughGroup: crash.group)
            let policies = CrashInjectionTests.policies(for: crash.state, seed: 0x6C0_0C0 &+ UInt64(n), randomCount: 6)
            for (i, policy) in policies.enumerated() {
                let image = crash.state.image(policy)
                let path = directory.path("image-\(n)-\(i).realm")
                let context = "crash at sync \(n) (group \(crash.group)), policy \(policy): \(image.fateSummary)"
                do {
                    try image.write(to: path)
                    let store = try Store.open(path: path, options: StoreOptions(create: false))
                    try store.verify()
                    let recovered = try GroupCommitTests.ids(store.beginRead())
                    if image.commitArrived {
                        #expect(recovered == after, "everything arrived, so the group in flight must be recovered; got \(String(describing: recovered)); \(context)")
                    } else if !image.rootArrived {
                        #expect(recovered == before, "no new root arrived, so the acknowledged groups must be recovered; got \(String(describing: recovered)); \(context)")
                    } else {
                        // Group 0 is the table's creation: a group of one.
                        let members = crash.group == 0 ? 1 : Self.groupSizes[crash.group]
                        let prefixes = (0...members).map { Self.rows(throughGroup: crash.group, members: $0) }
                        #expect(prefixes.contains(recovered), "recovered \(String(describing: recovered)); \(context)")
                    }
                    try Self.takeANewCommit(store)
                } catch {
                    Issue.record("the recovered file failed: \(error); \(context)")
                }
                try? FileManager.default.removeItem(atPath: path)
                try? FileManager.default.removeItem(atPath: path + ".lock")
            }
        }
        #expect(crashes == Self.groupSizes.count, "every sync of the workload must have been crashed once")
    }
    /// After each crash, the same transactions again: the rows the recovered file lacks are
    /// inserted once more, one commit each, on a file that loses power again. The first
    /// attempt's versions are still in the file (run headers, records, nodes), and the retries
    /// write the same rows as the same versions; none of them may come back, whole or in part:
    /// every image holds exactly the rows acknowledged, perhaps with the one in flight.
    @Test(arguments: [2, StoreOptions().chainLength], Committers.allCases)
    func rerunningTheLostTransactionsAfterACrashBringsNothingBack(chainLength: Int, committers: Committers) throws {
        let directory = TemporaryDirectory()
        let total = Self.groupSizes.reduce(0, +) - 1
        var checked = 0, openCrashes = 0
        for n in 1...(Self.groupSizes.count + 1) {
            guard let crash = try Self.run(crashingAt: n, path: directory.path("work-\(n).realm"), chainLength: chainLength,
                                           committers: committers) else { continue }
            let firstPolicies: [CrashPolicy] = [.dropAll, .keepAll, .random(seed: 0x2E_2E &+ UInt64(n)), .random(seed: 0x2F_2F &+ UInt64(n))]
            for (p, policy) in firstPolicies.enumerated() {
                for m in 1...3 {
                    let path = directory.path("rerun-\(n)-\(p)-\(m).realm")
                    try crash.state.image(policy).write(to: path)
                    let box = WrappedFileBox<CrashSimulatingFile>()
                    let options = StoreOptions(limits: TreeLimits(leafCapacity: 4, innerCapacity: 4),
                                               fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: m) }, chainLength: chainLength)
                    var acknowledged: Int
                    do {
                        let store: Store
                        do {
                            store = try Store(path: path, options: options)
                        } catch {
                            // The crash came in open's sync (no lock file vouches for the image).
                            #expect(try #require(box.file).didCrash, "\(error)")
                            openCrashes += 1
                            continue
                        }
                        let recovered = try GroupCommitTests.ids(store.beginRead()) ?? []
                        acknowledged = recovered.count
                        do {
                            let transaction = try store.beginWrite()
                            let table = try transaction.table(named: "Row")?.info.key ?? transaction.createTable("Row", columns: GroupCommitTests.columns)
                            try transaction.commit()
                            for id in recovered.count..<total {
                                let insert = try store.beginWrite()
                                try insert.insert(table, values: [.int(Int64(id)), .string("row \(id)")])
                                try insert.commit()
                                acknowledged = id + 1
                            }
                        } catch {}
                    }
                    guard let second = try #require(box.file).crashState else { continue }
                    let secondPolicies: [CrashPolicy] = [.dropAll, .keepAll, .random(seed: 0x3E_3E &+ UInt64(m)), .random(seed: 0x3F_3F &+ UInt64(m))]
                    for (q, secondPolicy) in secondPolicies.enumerated() {
                        let imagePath = directory.path("image-\(n)-\(p)-\(m)-\(q).realm")
                        let context = "crash at sync \(n), policy \(policy); rerun crashed at sync \(m), policy \(secondPolicy)"
                        do {
                            try second.image(secondPolicy).write(to: imagePath)
                            let store = try Store.open(path: imagePath, options: StoreOptions(create: false))
                            try store.verify()
                            let ids = try GroupCommitTests.ids(store.beginRead()) ?? []
                            checked += 1
                            let expected = Array(0..<ids.count)
                            #expect(ids == expected && ids.count >= acknowledged && ids.count <= acknowledged + 1,
                                    "\(acknowledged) rows were acknowledged, the image holds \(ids); \(context)")
                        } catch {
                            Issue.record("the image failed: \(error); \(context)")
                        }
                        try? FileManager.default.removeItem(atPath: imagePath)
                        try? FileManager.default.removeItem(atPath: imagePath + ".lock")
                    }
                }
            }
        }
        #expect(checked > 100 && openCrashes > 0, "\(checked) images checked, \(openCrashes) crashes in open")
    }
}
