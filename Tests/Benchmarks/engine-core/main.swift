// primekit-engine-core-bench — the Engine core's costs (docs/engine.md, "Benchmark"; results in
// Tests/Benchmarks/engine-core/RESULTS.md):
//   1. engine overhead on small jobs with 0, 1 and 8 plugins subscribed to every stream, against the bare queue;
//   2. the checkpoint store's cost at a 200 ms interval with 1,000 paused jobs.
//
//   make bench-engine-core ARGS="..."   (from the repository's root), or in Tests/Benchmarks:
//   swift run -c release primekit-engine-core-bench [--jobs N] [--runs N] [--paused N] [--plugins N [--runs-api]]
//
// The configurations of (1) are interleaved run by run and reported as medians, so a neighbour's load spreads over
// all of them alike.

import Foundation
import PrimeKit
import Synchronization

var jobCount = 100_000
var runs = 7
var pausedCount = 1_000
/// `--plugins N`: only the engine with N plugins on every stream, once per run (for profiling); `--runs-api`: the
/// plugins take events in runs.
var onlyPlugins: Int?
var onlyInRuns = false
var iterator = CommandLine.arguments.dropFirst().makeIterator()
while let argument = iterator.next() {
    switch argument {
    case "--jobs": jobCount = iterator.next().flatMap(Int.init) ?? jobCount
    case "--runs": runs = iterator.next().flatMap(Int.init) ?? runs
    case "--paused": pausedCount = iterator.next().flatMap(Int.init) ?? pausedCount
    case "--plugins": onlyPlugins = iterator.next().flatMap(Int.init)
    case "--runs-api": onlyInRuns = true
    default:
        print("usage: primekit-engine-core-bench [--jobs N] [--runs N] [--paused N] [--plugins N [--runs-api]]")
        exit(argument == "-h" || argument == "--help" ? 0 : 2)
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// A plugin that counts what it receives and signals when it has seen `expected` results. The engine calls it one
/// call at a time, so each counter has one writer: a plain load and store (no locked instruction), which keeps the
/// plugin's own cost per event near a nanosecond and the figures the engine's. Readers on other threads see a count
/// no newer than the last event. With `batches` it takes runs of events in `receive(contentsOf:)` and looks at them
/// where they lie; without, it takes each in `receive(_:)`, as the protocol's default passes them.
final class CountingPlugin: Plugin, @unchecked Sendable {
    let name: String
    let streams: Streams
    let batches: Bool
    private let expected: Int
    private let events = Atomic<Int>(0)
    private let results = Atomic<Int>(0)
    private let lock = NSLock()
    private var done = false
    private var waiter: CheckedContinuation<Void, Never>?

    init(_ name: String, streams: Streams = .all, batches: Bool = false, expected: Int) {
        self.name = name
        self.streams = streams
        self.batches = batches
        self.expected = expected
    }

    func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        engine.subscribe(self, to: streams)
        return true
    }

    func stop() -> PluginStopResult { .stopped }

    func receive(_ event: EngineEvent) {
        events.store(events.load(ordering: .relaxed) &+ 1, ordering: .relaxed)
        guard case .finished = event else { return }
        counted(results: 1)
    }

    func receive(contentsOf events: ArraySlice<EngineEvent>) {
        guard batches else {
            for index in events.indices { receive(events[index]) }
            return
        }
        self.events.store(self.events.load(ordering: .relaxed) &+ events.count, ordering: .relaxed)
        var finished = 0
        for index in events.indices {
            if case .finished = events[index] { finished += 1 }
        }
        counted(results: finished)
    }

    private func counted(results more: Int) {
        let seen = results.load(ordering: .relaxed) &+ more
        results.store(seen, ordering: .relaxed)
        guard seen == expected, more > 0 else { return }
        let waiting: CheckedContinuation<Void, Never>? = lock.withLock {
            done = true
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume()
    }

    var received: Int { events.load(ordering: .relaxed) }

    /// Returns once `expected` results arrived.
    func waitForResults() async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock {
                if done { return true }
                waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}

let requests = (0..<jobCount).map { JobRequest.isPrime(1_000 + $0) }
let chunk = 10_000

/// One run: wall seconds end to end, the process's CPU seconds (every thread: submitter, workers, plugins) over
/// the same span, and the events each plugin received.
struct Sample {
    var wall: Double
    var cpu: Double
    var events = 0
}

/// Submits every request in chunks and waits for every result, including every plugin having received every
/// result.
func runEngine(plugins count: Int, streams: Streams = .all, batches: Bool = false) async -> Sample {
    let engine = await Engine()
    let plugins = (0..<count).map {
        CountingPlugin("counter\($0)", streams: streams, batches: batches, expected: requests.count)
    }
    for plugin in plugins { engine.add(plugin) }
    let start = ContinuousClock.now
    let cpuStart = cpuSeconds()
    var last: Job?
    for offset in stride(from: 0, to: requests.count, by: chunk) {
        last = try! engine.submit(contentsOf: Array(requests[offset..<min(offset + chunk, requests.count)])).last
    }
    _ = try? await last?.result
    await engine.queue.waitUntilIdle()
    for plugin in plugins { await plugin.waitForResults() }
    let sample = Sample(wall: seconds(start.duration(to: .now)), cpu: cpuSeconds() - cpuStart,
                        events: plugins.first?.received ?? 0)
    _ = await engine.shutdown()
    return sample
}

func runQueue() async -> Sample {
    let queue = JobQueue()
    let start = ContinuousClock.now
    let cpuStart = cpuSeconds()
    for offset in stride(from: 0, to: requests.count, by: chunk) {
        _ = try! queue.submit(contentsOf: Array(requests[offset..<min(offset + chunk, requests.count)]))
    }
    await queue.waitUntilIdle()
    let sample = Sample(wall: seconds(start.duration(to: .now)), cpu: cpuSeconds() - cpuStart)
    await queue.tearDown(.cancel)
    return sample
}

if let count = onlyPlugins {
    for _ in 0..<runs {
        let sample = await runEngine(plugins: count, batches: onlyInRuns)
        print(String(format: "Engine, %d plugins: %.3f s, CPU %.2f µs/job", count, sample.wall,
                     sample.cpu / Double(requests.count) * 1e6))
    }
    exit(0)
}
print("PrimeKit Engine core benchmark: \(jobCount) isPrime jobs (1,000 …), \(runs) runs, "
      + "\(ProcessInfo.processInfo.activeProcessorCount) cores; medians; CPU = every thread of the process")
/// Every plugin subscribes to every stream unless said; "per event" plugins take each event in `receive(_:)`,
/// "in runs" ones implement `receive(contentsOf:)`.
let configurations: [(name: String, plugins: Int, streams: Streams, batches: Bool)] = [
    ("Engine, 0 plugins", 0, .all, false),
    ("Engine, 1 plugin, per event", 1, .all, false),
    ("Engine, 8 plugins, per event", 8, .all, false),
    ("Engine, 1 plugin, in runs", 1, .all, true),
    ("Engine, 8 plugins, in runs", 8, .all, true),
    ("Engine, 8 plugins, results and errors only", 8, [.results, .errors], false),
]
var queueSamples: [Sample] = []
var samples = [[Sample]](repeating: [], count: configurations.count)
for _ in 0..<runs {
    queueSamples.append(await runQueue())
    for (index, configuration) in configurations.enumerated() {
        samples[index].append(await runEngine(plugins: configuration.plugins, streams: configuration.streams,
                                              batches: configuration.batches))
    }
}
let baseWall = median(queueSamples.map(\.wall)), baseCPU = median(queueSamples.map(\.cpu))
let zeroWall = median(samples[0].map(\.wall)), zeroCPU = median(samples[0].map(\.cpu))
let jobsRun = Double(jobCount)
func perJob(_ seconds: Double) -> Double { seconds / jobsRun * 1e6 }
func label(_ name: String) -> String { name.padding(toLength: 44, withPad: " ", startingAt: 0) }
print(String(format: "  %@ %7.3f s %7.1f k jobs/s   CPU %5.2f µs/job", label("bare JobQueue"), baseWall,
             Double(jobCount) / baseWall / 1e3, perJob(baseCPU)))
for (index, configuration) in configurations.enumerated() {
    let wall = median(samples[index].map(\.wall)), cpu = median(samples[index].map(\.cpu))
    print(String(format: "  %@ %7.3f s %7.1f k jobs/s   CPU %5.2f µs/job   vs 0 plugins: wall %+6.1f %%, "
                 + "CPU %+6.1f %%   (%d events per plugin)",
                 label(configuration.name), wall, Double(jobCount) / wall / 1e3, perJob(cpu),
                 (wall / zeroWall - 1) * 100, (cpu / zeroCPU - 1) * 100, samples[index].last?.events ?? 0))
}

// MARK: - The checkpoint store with paused jobs

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("primekit-core-bench-\(getpid())").path
defer { try? FileManager.default.removeItem(atPath: directory) }
var settings = EngineSettings()
settings.stateDirectory = directory
settings.checkpointInterval = .milliseconds(200)
let engine = await Engine(settings: settings)
await engine.suspend()
let paused = try! engine.submit(contentsOf: (0..<pausedCount).map {
    JobRequest.factor(UInt64(18_446_744_073_709_551_557) - UInt64($0) * 2).splitting(false)
})
for job in paused { _ = try! await job.pause() }
engine.resume()
var start = ContinuousClock.now
await engine.store!.persistNow()
let firstWrite = seconds(start.duration(to: .now))
let writes = engine.store!.writesCompleted
let window = 2.0
let cpuBefore = cpuSeconds()
start = ContinuousClock.now
try? await Task.sleep(for: .seconds(window))
let cpuIdle = cpuSeconds() - cpuBefore
print(String(format: "  store, %d paused jobs: first write of all %.3f s (%.2f ms per job, %d files); then %.1f ms CPU "
             + "per second at a 200 ms interval (%d more writes: nothing changed)",
             pausedCount, firstWrite, firstWrite / Double(max(writes, 1)) * 1e3, writes, cpuIdle / window * 1e3,
             engine.store!.writesCompleted - writes))
start = ContinuousClock.now
_ = await engine.shutdown()
print(String(format: "  shutdown with %d paused jobs: %.3f s", pausedCount, seconds(start.duration(to: .now))))
