import ExampleSupport
import ArgumentParser
import Dispatch
import Foundation
import Histogram
import OpenRealm
import Synchronization

/// An account: what the load reads, queries and updates.
final class Account: Object {
    @Persisted(primaryKey: true) var id: Int
    /// Indexed: every query selects one region.
    @Persisted(indexed: true) var region: String
    @Persisted var balance: Int
    /// How many writes changed this account: their sum checks that no write was lost.
    @Persisted var updates: Int
}

/// A load generator against one `RealmActor`, reporting throughput and latency percentiles
/// per operation, as wrk or k6 do for HTTP.
///
/// ```sh
/// swift run -c release --package-path Examples LoadTest --seconds 10 --tasks 8 --writes 10 --reads 70 --queries 20
/// ```
///
/// `--tasks` tasks run until the time is up, each picking operations at random by the weights:
/// a write updates one account through `RealmActor.write` (writes queued together share one
/// transaction and one sync); a read looks one account up by primary key, and a query selects
/// a region's richest accounts, both in a frozen snapshot (`Frozen<Realm>`), which a task
/// reads without the actor or any lock. A snapshot task publishes a new snapshot every
/// `--snapshot-ms`; each task moves to it at its next operation.
@main
struct LoadTest: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Concurrent writes, snapshot reads and queries against one RealmActor, with latency percentiles.")

    @Option(help: "How long the load runs.")
    var seconds = 10

    @Option(help: "Concurrent tasks.")
    var tasks = 8

    @Option(help: "Weight of writes in the mix.")
    var writes = 10

    @Option(help: "Weight of point reads in the mix.")
    var reads = 70

    @Option(help: "Weight of queries in the mix.")
    var queries = 20

    @Option(help: "Accounts in the realm before the load starts.")
    var objects = 10_000

    @Option(help: "Milliseconds between frozen snapshots.")
    var snapshotMs = 100

    @Option(help: "The realm file; by default a new file in a temporary folder, removed at the end.")
    var realm: String?

    func validate() throws {
        guard seconds > 0, tasks > 0, objects > 0, snapshotMs > 0 else {
            throw ValidationError("--seconds, --tasks, --objects and --snapshot-ms must be positive")
        }
        guard writes >= 0, reads >= 0, queries >= 0, writes + reads + queries > 0 else {
            throw ValidationError("the weights must not be negative, and one must be positive")
        }
    }

    func run() async throws {
        let fileURL: URL
        var temporaryFolder: URL?
        if let realm {
            fileURL = URL(fileURLWithPath: realm)
        } else {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("loadtest-\(UUID())")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            temporaryFolder = folder
            fileURL = folder.appendingPathComponent("load.realm")
        }
        defer { if let temporaryFolder { try? FileManager.default.removeItem(at: temporaryFolder) } }
        let store = RealmActor(configuration: Realm.Configuration(fileURL: fileURL, objectTypes: [Account.self]))

        try await Self.preload(store, objects: objects)
        let updatesBefore = try await store.read { realm in realm.objects(Account.self).sum(ofProperty: "updates") as Int }

        print("LoadTest: \(seconds) s, \(tasks) tasks against one RealmActor, \(Format.count(objects)) accounts, "
              + "mix \(writes)/\(reads)/\(queries) (writes/reads/queries), a snapshot every \(snapshotMs) ms")
        let load = Load(store: store, objects: objects, weights: [writes, reads, queries])
        let board = try await SnapshotBoard(store: store)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(seconds)
        let began = clock.now
        let results = try await withThrowingTaskGroup(of: WorkerResult?.self) { group in
            group.addTask {
                // Publishes snapshots until the load ends.
                while clock.now < deadline {
                    try await Task.sleep(for: .milliseconds(snapshotMs))
                    board.publish(try await store.read { realm in Frozen(realm) })
                }
                return nil
            }
            for worker in 0..<tasks {
                group.addTask { try await load.work(seed: UInt64(worker + 1), until: deadline, board: board) }
            }
            var results: [WorkerResult] = []
            for try await result in group {
                if let result { results.append(result) }
            }
            return results
        }
        let elapsed = clock.now - began
        let elapsedSeconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18

        var merged = WorkerResult()
        for result in results { merged.add(result) }
        Report.print(merged, seconds: elapsedSeconds)

        // Every write that returned is durable and counted once: anything else is a lost or
        // doubled write.
        let updatesAfter = try await store.read { realm in realm.objects(Account.self).sum(ofProperty: "updates") as Int }
        let writesDone = Int(merged.histograms[Operation.write.rawValue].totalCount)
        guard updatesAfter - updatesBefore == writesDone else {
            print("check FAILED: \(Format.count(writesDone)) writes returned, but the accounts count "
                  + "\(Format.count(updatesAfter - updatesBefore)) updates")
            throw ExitCode.failure
        }
        print("check: the accounts count \(Format.count(writesDone)) updates, one per write that returned")
        await store.close()
    }

    /// Fills the realm up to `objects` accounts, in a few large transactions.
    private static func preload(_ store: RealmActor, objects: Int) async throws {
        let existing = try await store.read { realm in realm.objects(Account.self).count }
        var next = existing
        while next < objects {
            let range = next..<min(next + 10_000, objects)
            try await store.write { realm in
                for id in range {
                    let account = Account()
                    account.id = id
                    account.region = Load.regions[id % Load.regions.count]
                    account.balance = (id * 7_919) % 100_000
                    realm.add(account)
                }
            }
            next = range.upperBound
        }
    }
}

enum Operation: Int, CaseIterable {
    case write, read, query

    var name: String { ["write", "read", "query"][rawValue] }
}

/// The newest frozen snapshot, shared by every worker.
final class SnapshotBoard: Sendable {
    private let current: Mutex<(generation: Int, snapshot: Frozen<Realm>)>

    init(store: RealmActor) async throws {
        current = Mutex((0, try await store.read { realm in Frozen(realm) }))
    }

    func publish(_ snapshot: Frozen<Realm>) {
        current.withLock { $0 = ($0.generation + 1, snapshot) }
    }

    var generation: Int { current.withLock { $0.generation } }

    var latest: (generation: Int, snapshot: Frozen<Realm>) { current.withLock { $0 } }
}

/// What every worker does.
struct Load: Sendable {
    static let regions = ["eu-west", "eu-north", "us-east", "us-west", "ap-south", "ap-east", "sa-east", "af-south"]

    let store: RealmActor
    let objects: Int
    let weights: [Int]

    func work(seed: UInt64, until deadline: ContinuousClock.Instant, board: SnapshotBoard) async throws -> WorkerResult {
        var random = SplitMix64(seed: seed)
        var result = WorkerResult()
        var (generation, snapshot) = board.latest
        // This task's own frozen realm of the snapshot: read without locks, whichever thread
        // the task runs on, until the board has a newer one.
        var frozen = snapshot.value
        let total = weights.reduce(0, +)
        var checksum = 0
        while ContinuousClock.now < deadline {
            if board.generation != generation {
                (generation, snapshot) = board.latest
                frozen = snapshot.value
            }
            var pick = Int(random.next() % UInt64(total))
            var operation = Operation.write
            for candidate in Operation.allCases {
                if pick < weights[candidate.rawValue] {
                    operation = candidate
                    break
                }
                pick -= weights[candidate.rawValue]
            }
            let id = Int(random.next() % UInt64(objects))
            let start = DispatchTime.now().uptimeNanoseconds
            switch operation {
            case .write:
                let delta = Int(random.next() % 201) - 100
                try await store.write { realm in
                    guard let account = realm.object(ofType: Account.self, forPrimaryKey: id) else { return }
                    account.balance += delta
                    account.updates += 1
                }
            case .read:
                checksum &+= frozen.object(ofType: Account.self, forPrimaryKey: id)?.balance ?? 0
            case .query:
                let region = Self.regions[id % Self.regions.count]
                let threshold = id % 50_000
                let richest = frozen.objects(Account.self)
                    .where { $0.region == region && $0.balance > threshold }
                    .sorted(byKeyPath: "balance", ascending: false)
                for account in richest.prefix(10) { checksum &+= account.balance }
            }
            result.record(operation, nanoseconds: DispatchTime.now().uptimeNanoseconds - start)
        }
        // Keeps the reads from being optimised away.
        result.checksum = checksum
        return result
    }
}

/// One worker's latencies, in nanoseconds, one histogram per operation.
struct WorkerResult: Sendable {
    var histograms = Operation.allCases.map { _ in
        // Up to a minute at three significant digits: a stall that long still shows in max.
        Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
    }
    var checksum = 0

    mutating func record(_ operation: Operation, nanoseconds: UInt64) {
        _ = histograms[operation.rawValue].record(min(nanoseconds, 60_000_000_000))
    }

    mutating func add(_ other: WorkerResult) {
        for index in histograms.indices { histograms[index].add(other.histograms[index]) }
        checksum &+= other.checksum
    }
}

enum Report {
    static func print(_ result: WorkerResult, seconds: Double) {
        let percentiles = [50.0, 90.0, 99.0, 99.9]
        Swift.print(pad("operation", 10) + pad("count", 12, right: true) + pad("ops/s", 12, right: true)
                    + percentiles.map { pad("p\(Format.percentile($0))", 10, right: true) }.joined()
                    + pad("max", 10, right: true) + "   (latency in µs)")
        var all = Histogram<UInt64>(lowestDiscernibleValue: 1, highestTrackableValue: 60_000_000_000, numberOfSignificantValueDigits: .three)
        for operation in Operation.allCases {
            let histogram = result.histograms[operation.rawValue]
            all.add(histogram)
            Swift.print(row(operation.name, histogram, seconds: seconds, percentiles: percentiles))
        }
        Swift.print(row("all", all, seconds: seconds, percentiles: percentiles))
    }

    private static func row(_ name: String, _ histogram: Histogram<UInt64>, seconds: Double, percentiles: [Double]) -> String {
        let count = Int(histogram.totalCount)
        guard count > 0 else { return pad(name, 10) + pad("0", 12, right: true) }
        return pad(name, 10) + pad(Format.count(count), 12, right: true)
            + pad(String(format: "%.0f", Double(count) / seconds), 12, right: true)
            + percentiles.map { pad(micros(histogram.valueAtPercentile($0)), 10, right: true) }.joined()
            + pad(micros(histogram.max), 10, right: true)
    }

    private static func micros(_ nanoseconds: UInt64) -> String {
        String(format: nanoseconds < 10_000 ? "%.2f" : "%.0f", Double(nanoseconds) / 1_000)
    }

    private static func pad(_ text: String, _ width: Int, right: Bool = false) -> String {
        let padding = String(repeating: " ", count: max(0, width - text.count))
        return right ? padding + text : text + padding
    }
}

extension Format {
    static func percentile(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(value)
    }
}

/// A small, fast, seeded generator: each worker its own, so that no lock is shared.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        // Wrapping arithmetic is the algorithm: the state is a counter mod 2^64.
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
