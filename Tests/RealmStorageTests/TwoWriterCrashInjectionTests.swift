import Foundation
import Testing
@testable import RealmStorage

/// Power cuts at every sync of a workload two writers share. The writers are two stores on one
/// file, each with its own lock file descriptor: to each other they are two processes (their
/// file locks exclude each other), and every commit of one builds on a version the other
/// wrote, with the free list and record it read from the file (Store+Process.swift). Both
/// write through one simulated disk. Every post-crash image must recover, verify, and hold the
/// acknowledged commits, or those and the commit in flight; then take a new commit.
@Suite struct TwoWriterCrashInjectionTests {
    static let commits = 14
    static let tableName = "Row"

    /// The rows after `k` commits: commit i inserts row i and rewrites row i - 3 (so that every
    /// commit frees space the other writer's allocator must learn about).
    static func expected(afterCommits k: Int) -> [[Value]] {
        (0..<k).map { j in
            let rewritten = j + 3 < k
            return [.int(Int64(j)), .int(Int64(j % 2)), .string(rewritten ? "rewritten \(j) " + String(repeating: "r", count: j * 37) : "row \(j)")]
        }
    }

    /// `chainLength` 3: the writers cross the ends of chains the other started. `pinAt`: the
    /// first store begins a read before that commit and holds it to the end, so that the
    /// second one's allocator keeps its version from reuse only through the pin the first
    /// published (ProcessCoordination.swift): the version must read the same at the end.
    static func run(crashingAt n: Int, path: String, chainLength: Int, pinAt: Int? = nil) throws
        -> (state: CrashSimulatingFile.CrashState, acknowledged: Int)? {
        let box = WrappedFileBox<CrashSimulatingFile>()
        let limits = TreeLimits(leafCapacity: 4, innerCapacity: 4)
        let first = try Store(path: path, options: StoreOptions(limits: limits, fileWrapper: box.wrapper {
            CrashSimulatingFile(wrapping: $0, crashAtSync: n)
        }, chainLength: chainLength))
        let disk = try #require(box.file)
        let second = try Store(path: path, options: StoreOptions(limits: limits, fileWrapper: { _ in disk }, chainLength: chainLength))
        #expect(second.otherProcessesHaveTheFile)
        let stores = [first, second]
        var acknowledged = 0
        var reader: (read: ReadTransaction, rows: [[Value]])?
        for i in 0..<commits {
            if i == pinAt {
                let read = first.beginRead()
                reader = (read, try rows(read))
            }
            do {
                let transaction = try stores[i % 2].beginWrite()
                let table = try transaction.table(named: tableName)?.key ?? transaction.createTable(tableName, columns: MultiProcessTests.columns)
                try transaction.insert(table, key: ObjectKey(Int64(i)), values: [.int(Int64(i)), .int(Int64(i % 2)), .string("row \(i)")])
                if i >= 3 {
                    try transaction.set(table, ObjectKey(Int64(i - 3)), ColumnKey(2),
                                        .string("rewritten \(i - 3) " + String(repeating: "r", count: (i - 3) * 37)))
                }
                _ = try transaction.commit()
                acknowledged += 1
            } catch {
                break
            }
        }
        if let reader {
            #expect(try rows(reader.read) == reader.rows, "the version the first store holds was overwritten (crash at sync \(n))")
        }
        guard let state = disk.crashState else { return nil }
        #expect(acknowledged == n - 1, "commit i is made durable by sync i + 1")
        return (state, acknowledged)
    }

    static func rows(_ store: Store) throws -> [[Value]] { try rows(store.beginRead()) }

    static func rows(_ read: ReadTransaction) throws -> [[Value]] { try read.rowValues(ofTable: tableName) }

    @Test(arguments: [3, StoreOptions().chainLength])
    func everyCrashRecoversTheAcknowledgedCommits(chainLength: Int) throws {
        try Self.crashAtEverySync(chainLength: chainLength, pinAt: nil)
    }

    /// The same with a version of the first writer's pinned throughout (from commit 4 on):
    /// the free lists in the images hold extents that pin keeps tagged, merged and not.
    @Test func everyCrashRecoversTheAcknowledgedCommitsWhileTheOtherProcessPinsAVersion() throws {
        try Self.crashAtEverySync(chainLength: 3, pinAt: 4)
    }

    static func crashAtEverySync(chainLength: Int, pinAt: Int?) throws {
        let directory = TemporaryDirectory()
        var crashes = 0
        for n in 1...(Self.commits + 1) {
            guard let (state, k) = try Self.run(crashingAt: n, path: directory.path("work-\(n).realm"), chainLength: chainLength, pinAt: pinAt)
            else { continue }
            crashes += 1
            let policies = CrashInjectionTests.policies(for: state, seed: 0x2_3417E5 &+ UInt64(n), randomCount: 6)
            for (i, policy) in policies.enumerated() {
                let image = state.image(policy)
                let path = directory.path("image-\(n)-\(i).realm")
                let context = "crash at sync \(n), policy \(policy): \(image.fateSummary)"
                do {
                    try image.write(to: path)
                    let store = try Store.open(path: path, options: StoreOptions(create: false))
                    try store.verify()
                    let recovered = try Self.rows(store)
                    let before = Self.expected(afterCommits: k), after = Self.expected(afterCommits: k + 1)
                    if image.commitArrived {
                        #expect(recovered == after, "everything arrived, so the commit in flight must be recovered; \(context)")
                    } else if !image.rootArrived {
                        #expect(recovered == before, "no new root arrived, so the acknowledged commits must be recovered; \(context)")
                    } else {
                        #expect(recovered == before || recovered == after, "recovered \(recovered.count) rows; \(context)")
                    }
                    try MultiProcessTests.append(store, writer: 3)
                    try store.verify()
                } catch {
                    Issue.record("the recovered file failed: \(error); \(context)")
                }
                try? FileManager.default.removeItem(atPath: path)
                try? FileManager.default.removeItem(atPath: path + ".lock")
            }
        }
        #expect(crashes == Self.commits, "every sync of the workload must have been crashed once")
    }
}
