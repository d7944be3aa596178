// The engine workloads under the ordo-one harness, OpenRealm and GRDB side by side:
//
//   swift package --package-path Benchmarks benchmark
//
// Throughput is scaled (`scalingFactor: .mega`): one iteration inserts or looks up 1M
// rows, so the throughput column reads in rows (lookups) per second. The harness prints
// no ratio; EngineSideBySide does.

import Benchmark
import EngineWorkloads

let rowCount = 1_000_000
let batchSize = 10_000

/// A database filled once in setup, then used by one benchmark iteration at a time.
final class LookupFixture<Engine: BenchmarkEngine> {
    let directory: ScratchDirectory
    let db: Engine

    init(rows: [BenchmarkRow]) throws {
        directory = try ScratchDirectory(prefix: "engine-bench")
        db = try Engine(directory: directory.path)
        try db.insert(rows[...], batchSize: batchSize)
    }

    deinit { directory.remove() }
}

let benchmarks: @Sendable () -> Void = {
    let rows = BenchmarkData.rows(count: rowCount)
    let keys = BenchmarkData.lookupKeys(count: rowCount, range: rowCount)

    let configuration = Benchmark.Configuration(
        metrics: [.throughput, .wallClock, .peakMemoryResident, .mallocCountTotal, .syscalls],
        scalingFactor: .mega,
        maxDuration: .seconds(20),
        maxIterations: 3
    )

    func insertBenchmark<Engine: BenchmarkEngine>(_ engine: Engine.Type) {
        Benchmark("E1 insert 1M rows, 10k/tx, full sync: \(Engine.name)", configuration: configuration) { benchmark in
            do {
                let directory = try ScratchDirectory(prefix: "engine-bench")
                defer { directory.remove() }
                let db = try Engine(directory: directory.path)
                benchmark.startMeasurement()
                try db.insert(rows[0..<benchmark.scaledIterations.count], batchSize: batchSize)
                benchmark.stopMeasurement()
                try db.close()
            } catch {
                benchmark.error("\(Engine.name): \(error)")
            }
        }
    }

    /// The database is built once in setup; each iteration does 1M lookups.
    func lookupBenchmark<Engine: BenchmarkEngine>(_ engine: Engine.Type) {
        nonisolated(unsafe) var fixture: LookupFixture<Engine>?
        Benchmark("E2 1M random key lookups, all columns: \(Engine.name)", configuration: configuration) { benchmark in
            guard let db = fixture?.db else { return benchmark.error("\(Engine.name): no fixture") }
            do {
                benchmark.startMeasurement()
                blackHole(try db.lookup(Array(keys[0..<benchmark.scaledIterations.count])))
                benchmark.stopMeasurement()
            } catch {
                benchmark.error("\(Engine.name): \(error)")
            }
        } setup: {
            fixture = try LookupFixture<Engine>(rows: rows)
        } teardown: {
            try fixture?.db.close()
            fixture = nil
        }
    }

    insertBenchmark(OpenRealmEngine.self)
    insertBenchmark(GRDBEngine.self)
    lookupBenchmark(OpenRealmEngine.self)
    lookupBenchmark(GRDBEngine.self)
}
