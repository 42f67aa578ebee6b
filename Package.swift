// swift-tools-version:6.1
import PackageDescription

// The package exports the PrimeKit library and the primekit tool; the Swift benchmarks are a package of their own
// (Tests/Benchmarks/Package.swift), which depends on this one.
let package = Package(
    name: "PrimeKit",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "PrimeKit", targets: ["PrimeKit"]),
        .executable(name: "primekit", targets: ["PrimeKitCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The C kernel: sources in CKernel/, the one public header in include/.
        .target(
            name: "CPrimeKit",
            path: ".",
            sources: ["CKernel"],
            publicHeadersPath: "include",
            cSettings: [.headerSearchPath("CKernel")],
            linkerSettings: [.linkedLibrary("ecm"), .linkedLibrary("gmp")]
        ),
        .target(
            name: "PrimeKit",
            dependencies: [
                "CPrimeKit",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The JSON bridge's wire types and dispatcher (docs/protocol.md); `primekit serve` runs it on stdio.
        .target(
            name: "PrimeKitBridge",
            dependencies: ["PrimeKit", .product(name: "DequeModule", package: "swift-collections")]
        ),
        .testTarget(
            name: "PrimeKitBridgeTests",
            dependencies: ["PrimeKitBridge", "PrimeKit", "PrimeKitTestSupport",
                           .product(name: "Logging", package: "swift-log")]
        ),
        // What the test targets share: starting the built tools as child processes, a seeded generator.
        .target(
            name: "PrimeKitTestSupport",
            path: "Tests/PrimeKitTestSupport"
        ),
        .testTarget(
            name: "PrimeKitTests",
            dependencies: ["PrimeKit", "CPrimeKit", "PrimeKitTestSupport", .product(name: "Logging", package: "swift-log")]
        ),
        // Runs an Engine on a state directory until the crash-recovery tests SIGKILL it: test support, no product
        // (`swift build` and `swift test` build it beside the test bundles).
        .executableTarget(
            name: "PrimeKitCrashChild",
            dependencies: ["PrimeKit"],
            path: "Tests/PrimeKitCrashChild"
        ),
        // The command-line tool: swift run -c release primekit factor 600851475143
        // (module PrimeKitCLI, not "primekit": a module name that differs from PrimeKit only in case
        // collides on case-insensitive file systems).
        .executableTarget(
            name: "PrimeKitCLI",
            dependencies: [
                "PrimeKit",
                "PrimeKitBridge",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/primekit"
        ),
        // Runs the built primekit executable (swift build builds it before the tests).
        .testTarget(
            name: "PrimeKitCLITests",
            dependencies: ["PrimeKit", "PrimeKitBridge", "PrimeKitTestSupport"]
        ),
    ]
)
