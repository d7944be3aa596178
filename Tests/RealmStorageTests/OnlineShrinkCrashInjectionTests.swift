import Foundation
import Testing
import TestSupport
@testable import RealmStorage

/// Power cut at every sync of an online shrink (OnlineShrink.swift): the grown file is shrunk
/// by ordinary commits through the crash-simulating file layer (CrashSimulatingFile.swift),
/// which loses power at sync N; the image the disk holds then, under each policy for the
/// writes and the cut still pending, must open, verify, and hold the last acknowledged round
/// or the one in flight, and nothing else.
@Suite struct OnlineShrinkCrashInjectionTests {
    /// The grown file before the shrink, and the syncs the shrink takes to cut it.
    struct Grown {
        var bytes: Data
        var syncs: Int
    }

    static let grown: Grown = {
        let directory = TemporaryDirectory()
        let path = directory.path()
        do {
            do {
                let store = try Store.open(path: path)
                try ShrinkWorkload.grow(store)
            }
            let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
            // The syncs of the rounds until the shrink has finished and the file was cut, and a
            // few more.
            let copy = directory.path("count.realm")
            try bytes.write(to: URL(fileURLWithPath: copy))
            let box = WrappedFileBox<CrashSimulatingFile>()
            var options = StoreOptions()
            options.fileWrapper = box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: nil) }
            let store = try Store.open(path: copy, options: options)
            var rounds = 0
            while (store.shrinkCounts.finished == 0 || store.shrinkCounts.truncations == 0) && rounds < 2_000 {
                try ShrinkWorkload.commitRound(store)
                rounds += 1
            }
            precondition(store.shrinkCounts.truncations > 0, "the workload did not shrink: \(store.shrinkCounts)")
            for _ in 0..<3 { try ShrinkWorkload.commitRound(store) }
            return Grown(bytes: bytes, syncs: box.file!.syncCount)
        } catch {
            fatalError("the shrink workload failed: \(error)")
        }
    }()

    enum Policies: String, CaseIterable, Sendable {
        /// Everything pending arrived, or nothing did.
        case wholeOrNothing
        /// The first k pending changes arrived, for every k: the cut without what follows it.
        case prefixes
        /// Each change kept, dropped, torn or garbled at random; the last change torn.
        case random
    }

    static func policies(_ kind: Policies, _ state: CrashSimulatingFile.CrashState, seed: UInt64) -> [CrashPolicy] {
        switch kind {
        case .wholeOrNothing: return [.keepAll, .dropAll]
        case .prefixes: return (1..<max(state.pending.count, 1)).map { .keepFirst($0) }
        case .random:
            var policies: [CrashPolicy] = (0..<3).map { .random(seed: ReplayableRandom.derive(seed, $0)) }
            if !state.pending.isEmpty { policies.append(.tearOnly(state.pending.count - 1, seed: seed)) }
            return policies
        }
    }

    /// Every policy, with roots chained through run headers (the default) and with a slot
    /// written at every commit.
    @Test(arguments: Policies.allCases, [16, 1])
    func aPowerCutAtAnySyncOfAShrinkLeavesAWholeFile(_ kind: Policies, chainLength: Int) throws {
        let directory = TemporaryDirectory()
        var checked = 0
        for sync in 1...Self.grown.syncs {
            let path = directory.path("crash-\(sync).realm")
            try Self.grown.bytes.write(to: URL(fileURLWithPath: path))
            let box = WrappedFileBox<CrashSimulatingFile>()
            var options = StoreOptions(chainLength: chainLength)
            options.fileWrapper = box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: sync) }
            var acknowledged = 0
            do {
                let store = try Store.open(path: path, options: options)
                while true { acknowledged = try ShrinkWorkload.commitRound(store) }
            } catch {
                // The power cut: every call fails from here on.
            }
            guard let state = box.file?.crashState else {
                Issue.record("sync \(sync) never happened")
                continue
            }
            for policy in Self.policies(kind, state, seed: ReplayableRandom.derive(0x5A81_C4A5, sync)) {
                let image = state.image(policy)
                let imagePath = directory.path("image-\(sync)-\(checked).realm")
                try image.write(to: imagePath)
                let context = "chain length \(chainLength), sync \(sync), \(policy), acknowledged round \(acknowledged); \(image.fateSummary)"
                do {
                    let store = try Store.open(path: imagePath, options: StoreOptions(create: false))
                    _ = try store.verify(uncached: true)
                    let read = store.beginRead()
                    let round = try ShrinkWorkload.round(read)
                    #expect(round == acknowledged || round == acknowledged + 1, "round \(round); \(context)")
                    #expect(try ShrinkWorkload.contents(read) == ShrinkWorkload.expected(afterRound: round), "\(context)")
                    // The recovered file goes on shrinking.
                    for _ in 0..<3 { try ShrinkWorkload.commitRound(store) }
                    _ = try store.verify()
                } catch {
                    Issue.record("\(error); \(context)")
                }
                try? FileManager.default.removeItem(atPath: imagePath)
                checked += 1
            }
            try? FileManager.default.removeItem(atPath: path)
        }
        print("OnlineShrinkCrashInjectionTests: \(kind), chain length \(chainLength): \(Self.grown.syncs) syncs, \(checked) images")
        #expect(checked > 0)
    }
}
