// swift-tools-version: 6.1
// Runnable examples of OpenRealm in server code: an HTTP service, a resumable ingestion job
// and a load generator.
//
// One package with three executables, not three packages: OpenRealm and the dependencies
// they share (swift-argument-parser, swift-log, SwiftNIO under Hummingbird) are then resolved
// and compiled once, which is what keeps the CI step that builds them short (README.md).
//
//   swift run --package-path Examples TodoServer --port 8080
//   swift run --package-path Examples Ingest --rows 200000
//   swift run --package-path Examples LoadTest --seconds 10
import PackageDescription

let package = Package(
    name: "OpenRealmExamples",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "OpenRealm", path: ".."),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Already built for Hummingbird; its AsyncChannel gives the event stream backpressure.
        .package(url: "https://github.com/apple/swift-async-algorithms", from: "1.1.4"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
    ],
    targets: [
        // What Ingest and LoadTest both print.
        .target(name: "ExampleSupport"),
        .executableTarget(
            name: "TodoServer",
            dependencies: [
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "OpenRealmServer", package: "OpenRealm"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "AsyncAlgorithms", package: "swift-async-algorithms"),
            ]
        ),
        .executableTarget(
            name: "Ingest",
            dependencies: [
                "ExampleSupport",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(
            name: "LoadTest",
            dependencies: [
                "ExampleSupport",
                .product(name: "OpenRealm", package: "OpenRealm"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
