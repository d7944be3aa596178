// swift-tools-version: 6.1
import PackageDescription

let package = Package(
    name: "OpenRealm",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "OpenRealm", targets: ["OpenRealm"]),
        .executable(name: "openrealm", targets: ["openrealm"]),
    ],
    dependencies: [
        // Only for `swift package generate-documentation` (scripts/build-docs.sh); the library
        // itself depends on nothing.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        .target(name: "CStorageSupport"),
        .target(name: "CSwiftRuntime"),
        .target(
            name: "RealmStorage",
            dependencies: ["CLZ4", "CStorageSupport"]
        ),
        .target(name: "OpenRealm", dependencies: ["RealmStorage", "CSwiftRuntime"]),
        .executableTarget(name: "openrealm", dependencies: ["RealmStorage", "OpenRealm"]),
        .testTarget(name: "RealmStorageTests", dependencies: ["RealmStorage"], exclude: ["Golden"]),
        .testTarget(name: "OpenRealmTests", dependencies: ["OpenRealm", "RealmStorage"]),
    ],
    swiftLanguageModes: [.v6]
)
