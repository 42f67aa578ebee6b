// swift-tools-version:6.1
// PrimeKit's Swift benchmarks: a package of their own, so that the main package exports only the library and the
// tool. Each benchmark's source sits beside its dated results (RESULTS.md):
//
//   swift run --package-path Tests/Benchmarks -c release primekit-engine-bench [--quick]
//   swift run --package-path Tests/Benchmarks -c release primekit-engine-core-bench
//   swift run --package-path Tests/Benchmarks -c release primekit-bridge-bench --tool .build/release/primekit
//
// The kernel benchmark (kernel/, C) builds with its own Makefile; cli/ and split/ are scripts.
import PackageDescription

let package = Package(
    name: "PrimeKitBenchmarks",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "primekit-engine-bench", targets: ["PrimeKitEngineBench"]),
        .executable(name: "primekit-engine-core-bench", targets: ["PrimeKitEngineCoreBench"]),
        .executable(name: "primekit-bridge-bench", targets: ["PrimeKitBridgeBench"]),
    ],
    dependencies: [
        // The repository's root package; its own dependencies resolve as they do there.
        .package(name: "PrimeKit", path: "../.."),
    ],
    targets: [
        // The job engine against OperationQueue, latencies, split jobs (docs/queue.md, "Benchmark").
        .executableTarget(
            name: "PrimeKitEngineBench",
            dependencies: [.product(name: "PrimeKit", package: "PrimeKit")],
            path: "engine",
            exclude: ["RESULTS.md"]
        ),
        // The engine core with 0, 1 and 8 plugins, and the checkpoint store (docs/engine.md, "Benchmark").
        .executableTarget(
            name: "PrimeKitEngineCoreBench",
            dependencies: [.product(name: "PrimeKit", package: "PrimeKit")],
            path: "engine-core",
            exclude: ["RESULTS.md"]
        ),
        // Jobs per second and round trips through `primekit serve` (docs/bridge.md, "Benchmark").
        .executableTarget(
            name: "PrimeKitBridgeBench",
            dependencies: [.product(name: "PrimeKit", package: "PrimeKit")],
            path: "bridge",
            exclude: ["RESULTS.md"]
        ),
    ]
)
