// primekit-engine-bench — the job engine's benchmark (docs/queue.md, "Benchmark"; results in
// Tests/Benchmarks/engine/RESULTS.md).
//
//   make bench-engine ARGS="..."   (from the repository's root), or in Tests/Benchmarks:
//   swift run -c release primekit-engine-bench [--quick] [--runs N] [--jobs N]
//
// Every figure is measured in the same run as the figure it is compared with, and each comparison is repeated
// (--runs, default 3) and reported as the median.

import Dispatch
import Foundation
@_spi(Benchmarks) import PrimeKit

// MARK: - Options

struct Options {
    var quick = false
    var runs = 3
    var jobs = 1_000_000
    /// Only the given part (for profiling): "queue", "batch", "submit", "submit1", "drain", "operations", "direct".
    var only: String?
    /// The tiny jobs' kind: isPrime (the plugin answer, with every divisor listed) or factor.
    var kind = JobKind.isPrime

    init(_ arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--quick":
                quick = true
            case "--runs":
                runs = iterator.next().flatMap(Int.init) ?? runs
            case "--jobs":
                jobs = iterator.next().flatMap(Int.init) ?? jobs
            case "--only":
                only = iterator.next()
            case "--kind":
                kind = iterator.next().flatMap(JobKind.init(rawValue:)) ?? kind
            case "-h", "--help":
                print("usage: primekit-engine-bench [--quick] [--runs N] [--jobs N]")
                exit(0)
            default:
                FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
                exit(2)
            }
        }
        if quick {
            runs = min(runs, 1)
            jobs = min(jobs, 100_000)
        }
    }
}

let options = Options(CommandLine.arguments)
let cores = ProcessInfo.processInfo.activeProcessorCount

// MARK: - Helpers

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2]
                                 : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count - 1)).rounded())
    return sorted[min(sorted.count - 1, max(0, rank))]
}

func rate(_ count: Int, _ duration: Duration) -> Double { Double(count) / seconds(duration) }

/// The process's CPU time (user + system) so far: on a shared machine CPU time per job is steadier than wall time.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
}

/// Runs `body`, returning its result and the CPU microseconds it used per job.
func withCPU<T>(_ jobs: Int, _ body: () -> T) -> (T, Double) {
    let before = cpuSeconds()
    let value = body()
    return (value, (cpuSeconds() - before) * 1e6 / Double(jobs))
}

func format(_ value: Double, _ unit: String = "") -> String {
    if value >= 1e6 { return String(format: "%.2f M%@", value / 1e6, unit) }
    if value >= 1e3 { return String(format: "%.1f k%@", value / 1e3, unit) }
    return String(format: "%.2f %@", value, unit)
}

func micros(_ value: Double) -> String { String(format: "%.1f µs", value * 1e6) }

/// The tiny candidates: small numbers, about one in eight prime.
func candidate(_ index: Int) -> UInt64 { UInt64(1_000 + index % 100_000) }

/// A tiny job of the chosen kind.
func tinyRequest(_ index: Int) -> JobRequest {
    options.kind == .isPrime ? .isPrime(candidate(index)) : .factor(candidate(index))
}

/// What one OperationQueue operation does: the same kernel work a job of the chosen kind does, and an answer of
/// the same content, called directly (PrimeKit's benchmark SPI: no engine around it).
func isPrimeDirect(_ n: UInt64) -> Bool {
    KernelBaseline.isPrime(n, divisors: options.kind == .isPrime)
}

/// Blocks the calling (main) thread until an async body finishes; the engine's own threads do the work.
func blocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    nonisolated(unsafe) var output: Result<T, any Error>!
    Task {
        do { output = .success(try await body()) } catch { output = .failure(error) }
        semaphore.signal()
    }
    semaphore.wait()
    do { return try output.get() } catch { fatalError("benchmark step failed: \(error)") }
}

// MARK: - Overhead: tiny jobs

func jobQueueOneByOne(_ count: Int) -> Duration {
    let queue = JobQueue(maxConcurrentJobs: cores)
    let clock = ContinuousClock()
    return clock.measure {
        for index in 0..<count { _ = try! queue.submit(tinyRequest(index)) }
        blocking { await queue.waitUntilIdle() }
    }
}

/// The tiny requests in arrays of 10,000, built before the clock starts (the caller's arrays, not the queue's work).
func tinyChunks(_ count: Int) -> [[JobRequest]] {
    stride(from: 0, to: count, by: 10_000).map { start in (start..<min(count, start + 10_000)).map(tinyRequest) }
}

func jobQueueBatched(_ count: Int) -> (submit: Duration, total: Duration) {
    let queue = JobQueue(maxConcurrentJobs: cores)
    let chunks = tinyChunks(count)
    let clock = ContinuousClock()
    var submit = Duration.zero
    let total = clock.measure {
        submit = clock.measure {
            for chunk in chunks { _ = try! queue.submit(contentsOf: chunk) }
        }
        blocking { await queue.waitUntilIdle() }
    }
    return (submit, total)
}

/// Minor page faults of the process so far.
func pageFaults() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_minflt
}

/// Batch submission alone, into a suspended queue; also the page faults taken meanwhile (each 4 KiB of heap the
/// process touches for the first time costs one).
func batchSubmitOnly(_ count: Int) -> (duration: Duration, faults: Int) {
    let queue = JobQueue(maxConcurrentJobs: cores)
    queue.suspend()
    let chunks = tinyChunks(count)
    let faultsBefore = pageFaults()
    let duration = ContinuousClock().measure {
        for chunk in chunks { _ = try! queue.submit(contentsOf: chunk) }
    }
    let faults = pageFaults() - faultsBefore
    _ = blocking { await queue.reset() }
    return (duration, faults)
}

/// The submitting thread's share: one submit per job into a suspended queue (nothing runs).
func oneByOneSubmitOnly(_ count: Int) -> Duration {
    let queue = JobQueue(maxConcurrentJobs: cores)
    queue.suspend()
    let duration = ContinuousClock().measure {
        for index in 0..<count { _ = try! queue.submit(tinyRequest(index)) }
    }
    _ = blocking { await queue.reset() }
    return duration
}

/// The workers' share: jobs already queued (submitted while suspended) run to the end after `resume()`.
func drainOnly(_ count: Int) -> Duration {
    let queue = JobQueue(maxConcurrentJobs: cores)
    queue.suspend()
    let requests = (0..<count).map(tinyRequest)
    _ = try! queue.submit(contentsOf: requests)
    return ContinuousClock().measure {
        queue.resume()
        blocking { await queue.waitUntilIdle() }
    }
}

func operationQueue(_ count: Int) -> Duration {
    let queue = OperationQueue()
    queue.maxConcurrentOperationCount = cores
    return ContinuousClock().measure {
        for index in 0..<count {
            let n = candidate(index)
            queue.addOperation { _ = isPrimeDirect(n) }
        }
        queue.waitUntilAllOperationsAreFinished()
    }
}

// MARK: - Latency

/// From `cancel()` to the job reporting it (its onFailure callback), and from `pause()` to its return.
func controlLatencies(samples: Int) -> (cancel: [Double], pause: [Double]) {
    let queue = JobQueue(maxConcurrentJobs: cores)
    var cancels: [Double] = []
    var pauses: [Double] = []
    for index in 0..<samples {
        let job = try! queue.submit(.isPrime("18446744073709551557").trialDivision().splitting(false).progressInterval(.zero))
        blocking {
            // Let the job get into its slices first.
            var updates = job.progressUpdates.makeAsyncIterator()
            _ = await updates.next()
        }
        if index % 2 == 0 {
            let reported = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var end = ContinuousClock.now
            job.onFailure { _ in
                end = .now
                reported.signal()
            }
            let start = ContinuousClock.now
            job.cancel()
            reported.wait()
            cancels.append(seconds(start.duration(to: end)))
        } else {
            let duration = blocking { () async -> Duration in
                let start = ContinuousClock.now
                _ = try? await job.pause()
                return start.duration(to: .now)
            }
            pauses.append(seconds(duration))
            job.cancel()
        }
    }
    return (cancels, pauses)
}

/// From submitting a tiny veryHigh job while long low jobs occupy every worker to its result.
func priorityLatency(samples: Int) -> [Double] {
    let queue = JobQueue(maxConcurrentJobs: cores)
    let lows = (0..<cores).map { _ in
        try! queue.submit(.isPrime("18446744073709551557").trialDivision().splitting(false).priority(.low))
    }
    blocking { for low in lows { await low.wait(until: .running) } }
    var latencies: [Double] = []
    for index in 0..<samples {
        let duration = blocking { () async throws -> Duration in
            let start = ContinuousClock.now
            let job = try queue.submit(.isPrime(candidate(index)).priority(.veryHigh))
            _ = try await job.result
            return start.duration(to: .now)
        }
        latencies.append(seconds(duration))
    }
    queue.cancelAll()
    return latencies
}

/// From submitting a tiny job to its result while `count` long jobs of the same (normal) priority run, `samples`
/// tiny jobs one after another. Every long job has had its first slice before the first sample (the steady state
/// of a queue with long work in it).
func fairnessLatency(long count: Int, samples: Int) -> [Double] {
    let queue = JobQueue(maxConcurrentJobs: cores)
    let longs = (0..<count).map { _ in
        try! queue.submit(.factor("170141183460469231731687303715884105727", bound: "10000000000000")
            .splitting(false).progressInterval(.zero))
    }
    blocking {
        for long in longs {
            var updates = long.progressUpdates.makeAsyncIterator()
            _ = await updates.next()
        }
    }
    var latencies: [Double] = []
    for index in 0..<samples {
        let duration = blocking { () async throws -> Duration in
            let start = ContinuousClock.now
            let job = try queue.submit(.factor(600_851_475_143 + UInt64(index)))
            _ = try await job.result
            return start.duration(to: .now)
        }
        latencies.append(seconds(duration))
    }
    precondition(longs.allSatisfy { $0.state == .running }, "a long job ended during the fairness samples")
    queue.cancelAll()
    blocking { await queue.waitUntilIdle() }
    return latencies
}

// MARK: - One big job on all cores

/// One big job with `workers` workers (split into that many pieces when there are two or more).
func bigJob(_ request: JobRequest, workers: Int, check: @escaping @Sendable (JobResult) -> Bool) -> Duration {
    var configuration = JobQueue.Configuration()
    configuration.maxConcurrentJobs = workers
    let queue = JobQueue(configuration: configuration)
    return ContinuousClock().measure {
        let result = blocking { try await queue.submit(request).result }
        precondition(check(result), "wrong answer: \(result)")
    }
}

/// W1b: 4294967279 · 4294967291, trial division must reach 2^32.
let w1b = JobRequest.factor("18446743979220271189").trialDivision()
let w1bCheck: @Sendable (JobResult) -> Bool = {
    $0.factorization?.factors.map(\.prime) == ["4294967279", "4294967291"]
}
/// A heavier one: the Mersenne prime 2^127 - 1 on the 128-bit path, trial division to 6·10^9 (the kernel's
/// divisors past 2^32 cost about 10 times more, so equal pieces are not equal work).
let m127 = JobRequest.isPrime("170141183460469231731687303715884105727", bound: "6000000000")
let m127Check: @Sendable (JobResult) -> Bool = { $0.factorization?.factors.isEmpty == true }

// MARK: - Range jobs

/// The first number of the range parts: 10^12, where the sieve's primes go to 10^6.
let rangeFirst: UInt64 = 1_000_000_000_000

/// `--only range`: a factorRange job over `count` numbers on one worker (`--only range2`: on every core, the job
/// split into one lane per worker), its blocks read as they come (each block's last factorization is touched so
/// that nothing is optimised away); returns the time to the summary.
func rangeJob(_ count: Int, workers: Int = 1) -> Duration {
    var configuration = JobQueue.Configuration()
    configuration.maxConcurrentJobs = workers
    let queue = JobQueue(configuration: configuration)
    return ContinuousClock().measure {
        let summary = blocking { () async throws -> RangeSummary in
            let job = try queue.submit(.factorRange(rangeFirst, rangeFirst + UInt64(count) - 1))
            var numbers = 0
            for try await block in job.rangeBlocks {
                numbers += block.count
                precondition(!block.factorization(at: block.count - 1).isEmpty)
            }
            precondition(numbers == count)
            return try await job.result.rangeSummary!
        }
        precondition(summary.count == UInt64(count))
    }
}

/// `--only rangedirect`: the same numbers through the C API on this thread, one segment per step with the budget
/// the engine's slices have at most, every answer copied out (what the engine does before it builds a block).
func rangeDirect(_ count: Int) -> Duration {
    ContinuousClock().measure {
        let numbers = KernelBaseline.factorRange(first: rangeFirst, last: rangeFirst + UInt64(count) - 1)
        precondition(numbers == count)
    }
}

// MARK: - Run

/// The page faults of a `--only submit` part, printed with its result.
nonisolated(unsafe) var submitFaultsSeen = 0

if let only = options.only {
    let (duration, cpu): (Duration, Double) = withCPU(options.jobs) { () -> Duration in
    switch only {
    case "queue": return jobQueueOneByOne(options.jobs)
    case "batch": return jobQueueBatched(options.jobs).total
    case "submit":
        let (duration, faults) = batchSubmitOnly(options.jobs)
        submitFaultsSeen = faults
        return duration
    case "submit1": return oneByOneSubmitOnly(options.jobs)
    case "drain": return drainOnly(options.jobs)
    case "operations": return operationQueue(options.jobs)
    case "split1": return bigJob(m127, workers: 1, check: m127Check)
    case "split2": return bigJob(m127, workers: 2, check: m127Check)
    case "range": return rangeJob(options.jobs)
    case "range2": return rangeJob(options.jobs, workers: cores)
    case "rangedirect": return rangeDirect(options.jobs)
    case "direct":
        return ContinuousClock().measure { for index in 0..<options.jobs { _ = isPrimeDirect(candidate(index)) } }
    default: fatalError("unknown part \(only)")
    }
    }
    // The last line is read by `isolated(_:)`: jobs per second, the process's CPU µs per job, page faults taken.
    print("\(only): \(format(rate(options.jobs, duration), "jobs/s")), CPU \(String(format: "%.2f", cpu)) µs/job"
          + (only == "submit" ? ", \(submitFaultsSeen) page faults" : ""))
    print("result \(rate(options.jobs, duration)) \(cpu) \(submitFaultsSeen)")
    exit(0)
}

/// Runs one part in a fresh process of its own (this program with `--only`): its jobs per second and CPU µs per job
/// (process CPU time around the part). Foundation's `OperationQueue` slows down run after run within one process
/// (315, 169, 142 k jobs/s in three runs; 210–285 k in fresh processes), so each run of either side
/// starts from a fresh process. Batch submission alone too: within one process its later runs took as many page
/// faults as the first but, at times, twice as long to take them (1.3–1.9 against 4.8–5.2 M jobs/s).
func isolated(_ part: String) -> (rate: Double, cpu: Double, faults: Int) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe")
    process.arguments = ["--only", part, "--jobs", String(options.jobs), "--kind", options.kind.rawValue]
    let output = Pipe()
    process.standardOutput = output
    do { try process.run() } catch { fatalError("cannot start \(part): \(error)") }
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let last = String(decoding: data, as: UTF8.self).split(separator: "\n").last { $0.hasPrefix("result ") }
    guard process.terminationStatus == 0, let fields = last?.split(separator: " "), fields.count == 4,
          let rate = Double(fields[1]), let cpu = Double(fields[2]), let faults = Int(fields[3]) else {
        fatalError("\(part) failed (status \(process.terminationStatus))")
    }
    return (rate, cpu, faults)
}

let startLoad = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
    .joined(separator: " ") ?? "?"
print("primekit-engine-bench: kernel \(PrimeKitVersion.kernel), \(cores) cores, "
      + "\(options.jobs) tiny \(options.kind.rawValue) jobs, \(options.runs) run(s)\(options.quick ? ", quick" : ""), "
      + "load average \(startLoad)")
print("")

var queueRates: [Double] = []
var operationRates: [Double] = []
var ratios: [Double] = []
var batchedRates: [Double] = []
var submitRates: [Double] = []
var submitHereRates: [Double] = []
var queueCPU: [Double] = []
var operationCPU: [Double] = []
for run in 1...options.runs {
    let (ours, oursCPU, _) = isolated("queue")
    let (theirs, theirsCPU, _) = isolated("operations")
    let (submitOnly, _, submitFaults) = isolated("submit")
    queueCPU.append(oursCPU)
    operationCPU.append(theirsCPU)
    let batched = jobQueueBatched(options.jobs)
    let (submitDuration, submitHereFaults) = batchSubmitOnly(options.jobs)
    let submitHere = rate(options.jobs, submitDuration)
    queueRates.append(ours)
    operationRates.append(theirs)
    ratios.append(ours / theirs)
    batchedRates.append(rate(options.jobs, batched.total))
    submitRates.append(submitOnly)
    submitHereRates.append(submitHere)
    print("run \(run): JobQueue \(format(ours, "jobs/s")), OperationQueue \(format(theirs, "jobs/s")), "
          + "ratio \(String(format: "%.1f", ours / theirs))×, batched end-to-end \(format(rate(options.jobs, batched.total), "jobs/s")), "
          + "batch submit \(format(submitOnly, "jobs/s")) (\(submitFaults) page faults; \(format(submitHere, "jobs/s")) and "
          + "\(submitHereFaults) in this process); CPU per job \(String(format: "%.2f", oursCPU)) µs vs "
          + "\(String(format: "%.2f", theirsCPU)) µs (\(String(format: "%.1f", theirsCPU / oursCPU))×)")
}
print("")
print("Overhead: \(options.jobs) tiny \(options.kind.rawValue) jobs, \(cores) workers (medians of \(options.runs))")
print("  JobQueue, one submit per job        \(format(median(queueRates), "jobs/s"))")
print("  OperationQueue (\(cores) concurrent)      \(format(median(operationRates), "jobs/s"))")
print("  ratio JobQueue / OperationQueue     \(String(format: "%.1f", median(ratios)))×   (floor 10×)")
print("  CPU time per job (all threads)      \(String(format: "%.2f", median(queueCPU))) µs vs \(String(format: "%.2f", median(operationCPU))) µs, "
      + "\(String(format: "%.1f", median(operationCPU) / median(queueCPU)))× less")
print("  JobQueue, submit(contentsOf:) 10k   \(format(median(batchedRates), "jobs/s")) end to end")
print("  submit(contentsOf:) alone           \(format(median(submitRates), "jobs/s"))   (floor 4 M/s; fresh processes)")
// A million queued jobs take ~250 MB: each 4 KiB of it the process touches first costs a page fault, about half a
// fresh run's time, and more when the kernel's fault handling is slow (it varies run to run on a shared machine).
print("    in the bench's own process        \(format(median(submitHereRates), "jobs/s"))   (after the other parts)")

let latencySamples = options.quick ? 40 : 200
let (cancels, pauses) = controlLatencies(samples: latencySamples)
let priority = priorityLatency(samples: options.quick ? 20 : 100)
print("")
print("Latency (\(latencySamples / 2) samples each)")
print("  cancel() → job reports cancelled    p50 \(micros(percentile(cancels, 50)))   p99 \(micros(percentile(cancels, 99)))")
print("  pause() → checkpoint returned       p50 \(micros(percentile(pauses, 50)))   p99 \(micros(percentile(pauses, 99)))")
print("  veryHigh submit → result, \(cores) low jobs running   p50 \(micros(percentile(priority, 50)))   p99 \(micros(percentile(priority, 99)))   (slice 10 ms)")

// Medians and worst cases over the runs' samples together.
let fairnessSamples = 20
print("")
print("Fairness: a tiny factor job submit → result while N long factor jobs of its priority run, \(cores) workers, "
      + "slice 10 ms (\(fairnessSamples) tiny jobs one after another, \(options.runs) run(s))")
for count in [1, 2, 8] {
    var latencies: [Double] = []
    for _ in 1...options.runs { latencies += fairnessLatency(long: count, samples: fairnessSamples) }
    print("  N = \(count)   median \(micros(median(latencies)))   worst \(micros(latencies.max() ?? .nan))   "
          + "(floor median ≤ 50 ms, worst ≤ 250 ms; aim 5 ms / 50 ms)")
}

func splitTable(_ title: String, _ request: JobRequest, _ check: @escaping @Sendable (JobResult) -> Bool) {
    var ratios: [Double] = []
    var one: [Double] = []
    var two: [Double] = []
    for _ in 1...options.runs {
        let single = seconds(bigJob(request, workers: 1, check: check))
        let double = seconds(bigJob(request, workers: 2, check: check))
        one.append(single)
        two.append(double)
        ratios.append(single / double)
    }
    print("")
    print("\(title), medians of \(options.runs)")
    print("  1 worker    \(String(format: "%.3f s", median(one)))")
    print("  2 workers   \(String(format: "%.3f s", median(two)))   (split into 8 pieces, merged)")
    print("  speed-up    \(String(format: "%.2f", median(ratios)))×   (floor 1.7×)")
}

splitTable("W1b 4294967279 · 4294967291 (trial division to 2^32)", w1b, w1bCheck)
splitTable("2^127 - 1, isPrime with bound 6·10^9 (128-bit path)", m127, m127Check)
let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
    .joined(separator: " ") ?? "?"
print("")
print("load average at the end: \(load) (other processes on the machine skew every figure)")
