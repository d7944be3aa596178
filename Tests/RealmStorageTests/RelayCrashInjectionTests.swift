import Foundation
import Testing
@testable import RealmStorage

/// Power cuts at every sync of a workload of relayed writes (WriteTransaction+Relay.swift): each relay is
/// several threads' writes in one commit, so a crash may keep or lose a relay but never part
/// of one. Every post-crash image must recover, verify, and hold the relays acknowledged
/// before the crash, perhaps with the one in flight, whole; then take new commits.
@Suite struct RelayCrashInjectionTests {
    /// The parts of each relay; relay r inserts rows `firstID(r) ..< firstID(r) + size`.
    static let relaySizes = [3, 1, 4, 2]

    static func firstID(_ relay: Int) -> Int { relaySizes.prefix(relay).reduce(0, +) }

    /// The rows of the first `count` relays.
    static func rows(relays count: Int) -> [Int] { Array(0..<firstID(count)) }

    /// Runs the relays on a file that loses power at sync `n`; returns the crash and how many
    /// relays were acknowledged before it, or nil when the workload ended first.
    static func run(crashingAt n: Int, path: String) throws -> (state: CrashSimulatingFile.CrashState, acknowledged: Int)? {
        let box = WrappedFileBox<CrashSimulatingFile>()
        let store = try Store.open(path: path, options: StoreOptions(limits: TreeLimits(leafCapacity: 4, innerCapacity: 4),
                                                                    fileWrapper: box.wrapper { CrashSimulatingFile(wrapping: $0, crashAtSync: n) }))
        let file = try #require(box.file)
        let setup = try store.beginWrite()
        let table = try setup.createTable("Row", columns: GroupCommitTests.columns)
        guard (try? setup.commit()) != nil else { return file.crashState.map { ($0, -1) } }
        for relay in relaySizes.indices {
            let answers = WriteRelayTests.Answers()
            WriteRelayTests.relay(store, table, firstID: firstID(relay), Array(repeating: .keep, count: relaySizes[relay]), answers)
            let succeeded = answers.all.values.filter { (try? $0.get()) != nil }.count
            if succeeded < relaySizes[relay] {
                #expect(succeeded == 0, "a relay's parts succeed or fail together")
                return file.crashState.map { ($0, relay) }
            }
        }
        return nil
    }

    @Test func everyCrashRecoversWholeRelays() throws {
        let directory = TemporaryDirectory()
        var crashes = 0
        for n in 1...(Self.relaySizes.count + 3) {
            guard let crash = try Self.run(crashingAt: n, path: directory.path("work-\(n).realm")) else { continue }
            let (state, acknowledged) = crash
            crashes += 1
            let policies = CrashInjectionTests.policies(for: state, seed: 0x7E1A_7 &+ UInt64(n), randomCount: 6)
            for (i, policy) in policies.enumerated() {
                let image = state.image(policy)
                let path = directory.path("image-\(n)-\(i).realm")
                let context = "crash at sync \(n) (relays acknowledged: \(acknowledged)), policy \(policy): \(image.fateSummary)"
                do {
                    try image.write(to: path)
                    let store = try Store.open(path: path, options: StoreOptions(create: false))
                    try store.verify()
                    let recovered = try GroupCommitTests.ids(store.beginRead())
                    // The table's creation is the commit before the first relay.
                    let allowed: [[Int]?] = acknowledged < 0 ? [nil, []] : [Self.rows(relays: acknowledged), Self.rows(relays: acknowledged + 1)]
                    #expect(allowed.contains(recovered), "recovered \(String(describing: recovered)); \(context)")
                    if image.commitArrived, acknowledged >= 0 {
                        #expect(recovered == Self.rows(relays: acknowledged + 1), "everything arrived: the relay in flight is there; \(context)")
                    }
                    try GroupCrashInjectionTests.takeANewCommit(store)
                } catch {
                    Issue.record("the recovered file failed: \(error); \(context)")
                }
                try? FileManager.default.removeItem(atPath: path)
                try? FileManager.default.removeItem(atPath: path + ".lock")
            }
        }
        #expect(crashes >= Self.relaySizes.count + 1, "the table's sync and every relay's must have been crashed once")
    }
}
