import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Power cuts at every sync of a workload. `CrashSimulatingFile` stops the store at sync N and
/// builds the files a disk could hold afterwards (pending writes kept, dropped, torn or
/// garbled); each must open, pass `verify`, and hold exactly the last acknowledged commit or
/// the one in flight, and must then take new commits.
@Suite struct CrashInjectionTests {
    static let seed: UInt64 = 0xC4A5_5EED_0001
    static let randomImagesPerCrash = 8

    /// How a workload run with a crash at one sync ended.
    struct CrashedRun {
        var state: CrashSimulatingFile.CrashState
        /// The 0-based workload step whose commit was in flight.
        var step: Int
        /// The crash came in `open`'s sync, before the step began.
        var duringOpen = false
    }

    /// Runs the workload on a new file that loses power at sync `n`; nil when the workload
    /// completes first. A reader pins an old version across steps 4-8, so the commits there
    /// must allocate around it.
    static func runWorkload(crashingAt n: Int, in directory: TemporaryDirectory, chainLength: Int = StoreOptions().chainLength,
                            sealing: SealingMode = .checksum) throws -> CrashedRun? {
        try runWorkload(crashingAt: n, path: directory.path("work-\(n).realm"), from: 0, chainLength: chainLength, sealing: sealing)
    }

    /// Runs the workload from step `first` on the file at `path` (created when missing), which
    /// must hold the state before that step. `chainLength`: roots in slots at every commit (1),
    /// in short chains crossed often (3), or as by default (the whole workload one chain).
    /// `sealing`: node checksums, or authentication tags on the plain file (NodeSealing.swift).
    static func runWorkload(crashingAt n: Int, path: String, from first: Int, chainLength: Int = StoreOptions().chainLength,
                            sealing: SealingMode = .checksum) throws -> CrashedRun? {
        let box = WrappedFileBox<CrashSimulatingFile>()
        var options = sealing.applied(to: StoreOptions(limits: CrashWorkload.limits,
                                                       fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: n) }, chainLength: chainLength))
        // Commits of more than one leaf encode them on two threads (LeafPreEncoding.swift).
        options.parallelEncodingLeaves = 2
        let store: Store
        do {
            store = try Store.open(path: path, options: options)
        } catch {
            // Opening a file no lock file vouches for syncs it (Store.swift, `settle`): a crash
            // there leaves the state before step `first`.
            let file = try #require(box.file)
            guard let state = file.crashState else { throw error }
            return CrashedRun(state: state, step: first, duringOpen: true)
        }
        var pins: [ReadTransaction] = []
        for step in first..<CrashWorkload.steps.count {
            if step == 3 { pins.append(store.beginRead()) }
            if step == 8 { pins.removeAll() }
            do {
                try CrashWorkload.commit(step: step, on: store)
            } catch {
                let file = try #require(box.file)
                guard let state = file.crashState else {
                    Issue.record("step \(step + 1) failed without a simulated crash: \(error)")
                    return nil
                }
                #expect(error.code == .ioFailure, "the failed sync must surface as ioFailure, got \(error)")
                return CrashedRun(state: state, step: step)
            }
        }
        return nil
    }

    /// The post-crash images to check for one crash: the fixed policies, each pending change
    /// dropped or torn alone, every prefix in order, and random mixes.
    static func policies(for state: CrashSimulatingFile.CrashState, seed: UInt64, randomCount: Int) -> [CrashPolicy] {
        let count = state.pending.count
        var policies: [CrashPolicy] = [.keepAll, .dropAll]
        policies += (1..<max(count, 1)).map { .keepFirst($0) }
        policies += (0..<count).map { .dropOnly($0) }
        for (index, change) in state.pending.enumerated() {
            if case .write = change { policies.append(.tearOnly(index, seed: ReplayableRandom.derive(seed, index))) }
        }
        policies += (0..<randomCount).map { .random(seed: ReplayableRandom.derive(seed, 1000 + $0)) }
        return policies
    }

    /// Opens the image of a crash in step `step` and checks it; with `continueWorkload`, runs
    /// the rest of the workload on it and checks the end state too.
    ///
    /// `slotDecides`: whether a root slot that did not arrive proves the commit lost. Not so on
    /// a file recovered from an earlier crash: the slot the lost commit wrote then may still be
    /// there, and a retry that rewrites that commit's nodes byte for byte makes it verify
    /// again (with the same contents as the retry, so still the commit in flight).
    static func checkRecovery(_ image: CrashSimulatingFile.CrashImage, step: Int, syncNumber: Int,
                              path: String, continueWorkload: Bool, slotDecides: Bool = true, sealing: SealingMode = .checksum) {
        let before = CrashWorkload.expected[step], after = CrashWorkload.expected[step + 1]
        let context = "crash at sync \(syncNumber) in step \(step + 1) (\(CrashWorkload.steps[step].name)), policy \(image.policy), suite seed \(seed); pending: \(image.fateSummary)"
        do {
            try image.write(to: path)
            let store = try Store.open(path: path, options: sealing.applied(to: StoreOptions(create: false, limits: CrashWorkload.limits)))
            // Every node the recovered version reaches verifies its checksum (format 4), or its
            // tag, here.
            #expect(store.verifiesNodes, "\(context)")
            try store.verify()
            let recovered = try DatabaseDump(store.beginRead())
            try DatabaseDump.checkIndexes(store.beginRead())
            if image.commitArrived {
                #expect(recovered == after, "everything the commit wrote arrived, so it must be recovered: \(recovered.differences(from: after)); \(context)")
            } else if !image.rootArrived && slotDecides && !sealing.isEncrypted {
                // (Under the cipher the crash layer cannot tell a run header's write from
                // another: it sees ciphertext. The last branch still holds such a file to exact
                // contents.)
                #expect(recovered == before, "no new root arrived, so the previous commit must be recovered: \(recovered.differences(from: before)); \(context)")
            } else {
                #expect(recovered == before || recovered == after,
                        "recovered neither the acknowledged commit (\(recovered.differences(from: before))) nor the one in flight (\(recovered.differences(from: after))); \(context)")
            }
            guard recovered == before || recovered == after else { return }

            if continueWorkload {
                // The recovered free list must carry the rest of the workload.
                let next = recovered == after ? step + 1 : step
                for remaining in next..<CrashWorkload.steps.count {
                    try CrashWorkload.commit(step: remaining, on: store)
                }
                // From the disk, not from what this process verified or wrote: the nodes the
                // recovered store wrote into reused space carry checksums that verify.
                try store.verify(uncached: true)
                let end = try DatabaseDump(store.beginRead())
                #expect(end == CrashWorkload.expected.last!, "after recovery the rest of the workload went wrong: \(end.differences(from: CrashWorkload.expected.last!)); \(context)")
            } else {
                // The recovered file takes a new commit and keeps what it had.
                let transaction = try store.beginWrite()
                let table = try transaction.createTable("AfterCrash", columns: [ColumnSpec(name: "n", type: .int, indexed: true)])
                try transaction.insert(table, values: [.int(7)])
                try transaction.commit()
                try store.verify()
                var later = try DatabaseDump(store.beginRead())
                #expect(later.tables.removeValue(forKey: table.value)?.rows.count == 1, "\(context)")
                later.version -= 1
                later.nextTableKey -= 1
                #expect(later == recovered, "a commit after recovery changed older data: \(later.differences(from: recovered)); \(context)")
            }
        } catch {
            Issue.record("the recovered file failed: \(error); \(context)")
        }
    }

    // MARK: Tests

    @Test func workloadMatchesTheModelWithoutCrashes() throws {
        let directory = TemporaryDirectory()
        let store = try Store.open(path: directory.path(), options: StoreOptions(limits: CrashWorkload.limits))
        #expect(try DatabaseDump(store.beginRead()) == CrashWorkload.expected[0])
        var reused = 0
        for step in CrashWorkload.steps.indices {
            reused += try CrashWorkload.commit(step: step, on: store)
            try store.verify()
            let dump = try DatabaseDump(store.beginRead())
            #expect(dump == CrashWorkload.expected[step + 1], "step \(step + 1): \(dump.differences(from: CrashWorkload.expected[step + 1]))")
            try DatabaseDump.checkIndexes(store.beginRead())
        }
        // So the crash tests below cover commits that build on kept leaf buffers.
        #expect(reused > 0, "the workload's commits should take leaves the commit before kept")
    }

    @Test func everyDurableCommitSyncsExactlyOnce() throws {
        let directory = TemporaryDirectory()
        for durability in [Durability.full, .unsafe] {
            let box = WrappedFileBox<CrashSimulatingFile>()
            let options = StoreOptions(durability: durability, limits: CrashWorkload.limits,
                                       fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: nil) })
            let store = try Store.open(path: directory.path("\(durability).realm"), options: options)
            for step in 0..<4 { try CrashWorkload.commit(step: step, on: store) }
            #expect(try #require(box.file).syncCount == (durability == .full ? 4 : 0), "\(durability)")
        }
    }

    /// Each chain length with node checksums; roots in slots and the default chain with
    /// authentication tags and 16-byte footprints on the plain file (NodeSealing.swift), and on
    /// an encrypted file, the crash layer under the cipher: the tears hit ciphertext.
    /// And on an encrypted file read through four decrypted units at a time.
    @Test(arguments: zip([1, 3, StoreOptions().chainLength, 1, StoreOptions().chainLength, 1, StoreOptions().chainLength, StoreOptions().chainLength],
                         [SealingMode.checksum, .checksum, .checksum, .authenticated, .authenticated, .encrypted, .encrypted, .encryptedTinyCache]))
    func everySyncOfTheWorkloadSurvivesAPowerCut(chainLength: Int, sealing: SealingMode) throws {
        var crashes = 0
        for n in 1... {
            let directory = TemporaryDirectory()
            guard let run = try Self.runWorkload(crashingAt: n, in: directory, chainLength: chainLength, sealing: sealing) else { break }
            crashes += 1
            let policies = Self.policies(for: run.state, seed: ReplayableRandom.derive(Self.seed, n), randomCount: Self.randomImagesPerCrash)
            for (index, policy) in policies.enumerated() {
                Self.checkRecovery(run.state.image(policy), step: run.step, syncNumber: n,
                                   path: directory.path("image-\(index).realm"),
                                   continueWorkload: policy == .keepAll || policy == .dropAll, sealing: sealing)
            }
            if n > 100 {
                Issue.record("the workload still crashes at sync \(n): the crash layer never stops it")
                break
            }
        }
        #expect(crashes >= CrashWorkload.steps.count, "every commit must sync at least once")
    }

    @Test(arguments: [3, StoreOptions().chainLength])
    func aPowerCutAfterRecoveryIsSurvivedToo(chainLength: Int) throws {
        // Recovery must leave a file whose own next commits are crash-safe: the recovered free
        // list and the root left over from the lost commit (a slot, or a run header) must not
        // let a later commit overwrite what the recovered version reaches.
        for n in 1... {
            let directory = TemporaryDirectory()
            guard let first = try Self.runWorkload(crashingAt: n, in: directory, chainLength: chainLength) else { break }
            let seed = ReplayableRandom.derive(Self.seed, n, 77)
            let firstPolicies: [CrashPolicy] = [.dropAll, .random(seed: seed), .random(seed: seed &+ 1)]
            for (p, policy) in firstPolicies.enumerated() {
                let image = first.state.image(policy)
                let recoveredPath = directory.path("recovered-\(p).realm")
                try image.write(to: recoveredPath)
                let recovered = try DatabaseDump(try Store.open(path: recoveredPath, options: StoreOptions(create: false)).beginRead())
                guard let step = [first.step, first.step + 1].first(where: { CrashWorkload.expected[$0] == recovered }) else {
                    Issue.record("crash at sync \(n), policy \(policy): recovered neither state; \(recovered.differences(from: CrashWorkload.expected[first.step]))")
                    continue
                }
                guard step < CrashWorkload.steps.count else { continue }
                for m in 1...3 {
                    // Each second crash runs on its own copy of the recovered file, as the plain
                    // open above left it (it clears a slot it refused, with a sync of its own).
                    let workPath = directory.path("second-\(p)-\(m).realm")
                    try Data(contentsOf: URL(fileURLWithPath: recoveredPath)).write(to: URL(fileURLWithPath: workPath))
                    guard let second = try Self.runWorkload(crashingAt: m, path: workPath, from: step, chainLength: chainLength) else { continue }
                    let secondSeed = ReplayableRandom.derive(seed, p, m)
                    let policies: [CrashPolicy] = [.keepAll, .dropAll] + (0..<3).map { .random(seed: secondSeed &+ UInt64($0)) }
                    if second.duringOpen {
                        // Open wrote nothing but a sync: the file is the recovered one, whatever arrived.
                        for (index, secondPolicy) in policies.enumerated() {
                            let imagePath = directory.path("image-\(p)-\(m)-\(index).realm")
                            try second.state.image(secondPolicy).write(to: imagePath)
                            let reopened = try Store.open(path: imagePath, options: StoreOptions(create: false, limits: CrashWorkload.limits))
                            #expect(try DatabaseDump(reopened.beginRead()) == recovered, "crash in open, policy \(secondPolicy)")
                        }
                        continue
                    }
                    for (index, secondPolicy) in policies.enumerated() {
                        Self.checkRecovery(second.state.image(secondPolicy), step: second.step, syncNumber: m,
                                           path: directory.path("image-\(p)-\(m)-\(index).realm"), continueWorkload: false,
                                           slotDecides: false)
                    }
                }
            }
        }
    }

    @Test func crashDuringTheFirstCommitAfterCreatingTheFile() throws {
        let directory = TemporaryDirectory()
        let run = try #require(try Self.runWorkload(crashingAt: 1, in: directory))
        #expect(run.step == 0)
        let seed = ReplayableRandom.derive(Self.seed, -1)
        for (index, policy) in Self.policies(for: run.state, seed: seed, randomCount: 32).enumerated() {
            Self.checkRecovery(run.state.image(policy), step: 0, syncNumber: 1,
                               path: directory.path("image-\(index).realm"), continueWorkload: index < 2)
        }
        // The primary image the crash layer writes itself, under the dropAll policy.
        let path = directory.path("direct.realm")
        let box = WrappedFileBox<CrashSimulatingFile>()
        let options = StoreOptions(limits: CrashWorkload.limits, fileWrapper: box.wrapper {
            CrashSimulatingFile(wrapping: $0, crashAtSync: 1, policy: .dropAll, imagePath: path)
        })
        let store = try Store.open(path: directory.path("direct-work.realm"), options: options)
        #expect(throws: StorageError.self) { try CrashWorkload.commit(step: 0, on: store) }
        #expect(try #require(box.file).imageWriteError == nil)
        let reopened = try Store.open(path: path, options: StoreOptions(create: false))
        try reopened.verify()
        #expect(try DatabaseDump(reopened.beginRead()) == .genesis)
    }

    @Test func afterThePowerCutEveryCallFails() throws {
        let directory = TemporaryDirectory()
        let box = WrappedFileBox<CrashSimulatingFile>()
        let options = StoreOptions(limits: CrashWorkload.limits, fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: 2) })
        let store = try Store.open(path: directory.path(), options: options)
        try CrashWorkload.commit(step: 0, on: store)
        #expect(throws: StorageError.self) { try CrashWorkload.commit(step: 1, on: store) }
        // The machine is down: the store stays at the acknowledged version and cannot write.
        #expect(try DatabaseDump(store.beginRead()) == CrashWorkload.expected[1])
        #expect(throws: StorageError.self) { try CrashWorkload.commit(step: 1, on: store) }
        let file = try #require(box.file)
        #expect(file.syncCount == 2)
        let state = try #require(file.crashState)
        #expect(state.syncNumber == 2)
        // The second commit follows the first through its run header: no slot write.
        #expect(state.pending.contains { $0.isRootWrite && !$0.isSlotWrite })
        #expect(!state.pending.contains { $0.isSelectorWrite })
    }

    @Test func staleCreationFileDoesNotPreventCreatingTheRealm() throws {
        // A crash while creating the file leaves only the temporary beside it, never a
        // half-written realm at the path.
        let directory = TemporaryDirectory()
        let path = directory.path()
        try Data([1, 2, 3]).write(to: URL(fileURLWithPath: path + ".creating"))
        let store = try Store.open(path: path)
        try store.verify()
        #expect(try DatabaseDump(store.beginRead()) == .genesis)
    }
}
