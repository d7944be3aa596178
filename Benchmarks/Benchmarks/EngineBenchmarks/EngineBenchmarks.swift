// The engine workloads under the ordo-one harness, OpenRealm and GRDB side by side:
//
//   swift package --package-path Benchmarks benchmark
//
// One iteration inserts or looks up 1M rows (`scalingFactor: .mega`, so the starred
// columns — wall clock, mallocs — read per row). The harness's own `.throughput` counts
// iterations per second and rounds anything under one to nothing, so throughput is reported
// as a custom metric, "Rows/s" (rows or lookups per second, larger is better). The harness
// prints no ratio between the engines; EngineSideBySide does.

import Benchmark
import EngineWorkloads

/// One iteration's rows (and lookups); equal to `scalingFactor: .mega`.
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

let rowsPerSecond = BenchmarkMetric.custom("Rows/s", polarity: .prefersLarger, useScalingFactor: false)

/// Records rows per second for `rows` rows done in `elapsed`.
func recordThroughput(_ benchmark: Benchmark, rows: Int, elapsed: Duration) {
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    benchmark.measurement(rowsPerSecond, Int((Double(rows) / seconds).rounded()))
}

let benchmarks: @Sendable () -> Void = {
    let rows = BenchmarkData.rows(count: rowCount)
    let keys = BenchmarkData.lookupKeys(count: rowCount, range: rowCount)

    let configuration = Benchmark.Configuration(
        metrics: [rowsPerSecond, .wallClock, .peakMemoryResident, .mallocCountTotal],
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
                let start = ContinuousClock.now
                benchmark.startMeasurement()
                try db.insert(rows[...], batchSize: batchSize)
                benchmark.stopMeasurement()
                recordThroughput(benchmark, rows: rows.count, elapsed: ContinuousClock.now - start)
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
                let start = ContinuousClock.now
                benchmark.startMeasurement()
                blackHole(try db.lookup(keys))
                benchmark.stopMeasurement()
                recordThroughput(benchmark, rows: keys.count, elapsed: ContinuousClock.now - start)
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
