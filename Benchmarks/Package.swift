// swift-tools-version: 6.1
// Benchmarks of the storage engine, run side by side with GRDB (SQLite) as the peer.
//
// Its own package so that neither the benchmark harness nor the peer database is ever a
// dependency of OpenRealm itself.
//
//   swift package --package-path Benchmarks benchmark                 # ordo-one harness
//   swift run -c release --package-path Benchmarks EngineSideBySide   # one table with ratios
import PackageDescription

let package = Package(
    name: "OpenRealmBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "OpenRealm", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ],
    targets: [
        // The workloads, shared by the harness target and the side-by-side runner.
        .target(
            name: "EngineWorkloads",
            dependencies: [
                .product(name: "_OpenRealmEngine", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        .executableTarget(
            name: "EngineBenchmarks",
            dependencies: [
                "EngineWorkloads",
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/EngineBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "EngineSideBySide",
            dependencies: ["EngineWorkloads"]
        ),
        // The object layer (W1, W3 of the object-model issue) against GRDB records.
        .executableTarget(
            name: "ObjectSideBySide",
            dependencies: [
                "EngineWorkloads",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Queries (W4, W4b, W5, W5s of the queries issue) against GRDB's query interface.
        .executableTarget(
            name: "QuerySideBySide",
            dependencies: [
                "EngineWorkloads",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Durable commits, group commit and readers under a writer (W2, W2g, W6 of the actors
        // issue) against GRDB.
        .executableTarget(
            name: "ConcurrencySideBySide",
            dependencies: [
                "EngineWorkloads",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // The steady state: commit rates per window on large files, file size under readers in
        // other processes and two writer processes (the steady-state issue).
        .executableTarget(
            name: "SteadyStateSideBySide",
            dependencies: [
                "EngineWorkloads",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Commit → delivery latency of collection notifications (issue 27).
        .executableTarget(
            name: "NotificationLatency",
            dependencies: [
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Compacted copies and compaction (W7 of the writeCopy issue) against SQLite's VACUUM
        // INTO and VACUUM.
        .executableTarget(
            name: "CopySideBySide",
            dependencies: [
                "EngineWorkloads",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "_OpenRealmEngine", package: "OpenRealm"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
