// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OpenRealm",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenRealm", targets: ["OpenRealm"]),
        // swift-log, swift-metrics and swift-service-lifecycle for OpenRealm, in a library of its
        // own so that OpenRealm itself depends on nothing.
        .library(name: "OpenRealmServer", targets: ["OpenRealmServer"]),
        // The command-line tool: a thin executable over OpenRealmTool, the library of its commands
        // (a target of its own so that its tests call the commands' code and run the tool).
        .executable(name: "openrealm", targets: ["openrealm"]),
        // A low-level facade over the storage engine for the benchmarks (Benchmarks/), a module
        // of its own so that the OpenRealm module users import does not carry it. Not user API.
        .library(name: "_OpenRealmEngine", targets: ["_OpenRealmEngine"]),
    ],
    dependencies: [
        // swift-docc-plugin only for `swift package generate-documentation` (scripts/build-docs.sh);
        // swift-log, swift-metrics and swift-service-lifecycle only for the OpenRealmServer product,
        // swift-argument-parser only for the openrealm tool:
        // the OpenRealm library itself depends on nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        // swift-argument-parser only for the openrealm tool (OpenRealmTool and its executable).
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Hummingbird only for OpenRealmWebView, the read-only web view `openrealm serve` runs.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "CStorageSupport"),
        // The system's OpenSSL libcrypto (Debian: libssl-dev) for encryption at rest: AES-256-XTS,
        // HMAC-SHA-256, HKDF and the CSPRNG (Sources/RealmStorage/Crypto/). A C target rather
        // than a system library, so that OpenSSL's headers stay inside its .c file.
        .target(name: "CCrypto", linkerSettings: [.linkedLibrary("crypto")]),
        .target(name: "CSwiftRuntime"),
        .target(
            name: "RealmStorage",
            dependencies: ["CLZ4", "CStorageSupport", "CCrypto"]
        ),
        .target(name: "OpenRealm", dependencies: ["RealmStorage", "CSwiftRuntime"]),
        .target(name: "_OpenRealmEngine", dependencies: ["RealmStorage", "OpenRealm"]),
        .target(
            name: "OpenRealmServer",
            dependencies: [
                "OpenRealm",
                // For `Locked`, the one lock of the package; nothing of the engine shows in its API.
                "RealmStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // Values of any class read through the dynamic API, whatever their type (optionals,
        // mixed values, lists, sets and maps opened, sort key paths checked): what the web view
        // and the tool's query and export share, apart from the library (which gains nothing).
        .target(name: "DynamicReading", dependencies: ["OpenRealm"]),
        // The read-only web view of a realm file (`openrealm serve`): a library target of its own,
        // so that Hummingbird (and SwiftNIO under it) reaches neither OpenRealm nor its users.
        // RealmStorage for the info page (format, space, versions), as the tool reads them.
        .target(
            name: "OpenRealmWebView",
            dependencies: [
                "OpenRealm",
                "DynamicReading",
                "RealmStorage",
                .product(name: "Hummingbird", package: "hummingbird"),
                // For the graceful shutdown that ends the history streams.
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // The tool's commands, one file each (Sources/OpenRealmTool/Commands/); the executable only
        // calls `OpenRealmCommand.main()`. `serve` runs the web view.
        .target(
            name: "OpenRealmTool",
            dependencies: [
                "RealmStorage",
                "OpenRealm",
                "DynamicReading",
                "OpenRealmWebView",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .executableTarget(name: "openrealm", dependencies: ["OpenRealmTool"]),
        // What RealmStorageTests and OpenRealmTests both use (the `.childProcesses` trait, the
        // seeded generator), once: a library of the tests only, in no product.
        .target(name: "TestSupport", path: "Tests/TestSupport"),
        .testTarget(name: "RealmStorageTests", dependencies: ["RealmStorage", "TestSupport"], exclude: ["Golden"]),
        .testTarget(name: "OpenRealmTests", dependencies: ["OpenRealm", "RealmStorage", "_OpenRealmEngine", "TestSupport"]),
        // Runs the built `openrealm` as a child process: the dependency on the executable target
        // makes `swift build --build-tests` and `swift test` build it first.
        .testTarget(
            name: "OpenRealmToolTests",
            dependencies: ["OpenRealmTool", "openrealm", "OpenRealm", "RealmStorage", "TestSupport"]
        ),
        .testTarget(
            name: "OpenRealmServerTests",
            dependencies: [
                "OpenRealmServer",
                "OpenRealm",
                // For `Locked`, the one lock, in the tests' log recorders.
                "RealmStorage",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "OpenRealmWebViewTests",
            dependencies: [
                "OpenRealmWebView",
                "OpenRealm",
                "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                // The service group the browser tests run the web view in takes a Logger.
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
