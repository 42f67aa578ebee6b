// The bridge benchmark (docs/bridge.md, "Benchmark"; results in Tests/Benchmarks/bridge/RESULTS.md):
//
//   make bench-bridge                          (the release tool, then the Node and Python round trips)
//   swift run --package-path Tests/Benchmarks -c release primekit-bridge-bench --tool PATH [--jobs N] [--runs R]
//
// Starts `primekit serve` (`--tool PATH`, else the executable next to this one) and measures, medians of R runs:
// - tiny isPrime jobs submitted pipelined over the pipe (one request per line, and batches of 100), end to end:
//   from the first request written until every job/finished was read; the same jobs through the engine in this
//   process are the baseline of the same run;
// - sequential round trips: ping, and isPrime submit → job/finished;
// - what progress notifications cost: the server's CPU time and lines per second with 1,000 paused jobs, and with
//   1,000 jobs queued or running, at a 50 ms progress interval.
//
// `--fairness` measures only this instead: two long factor jobs keep both workers busy, and 20 tiny factor jobs of
// the same priority are submitted one after another; for each, submit → job/finished (median and worst, R runs).
// `--tool PATH` names the `primekit` to run (another build, to compare builds in one run).

import Foundation
import PrimeKit

// MARK: - Options

var jobs = 100_000
var runs = 5
var fairness = false
nonisolated(unsafe) var tool = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    .appendingPathComponent("primekit").path
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--jobs": jobs = Int(arguments.next() ?? "") ?? jobs
    case "--runs": runs = Int(arguments.next() ?? "") ?? runs
    case "--fairness": fairness = true
    case "--tool": tool = arguments.next() ?? tool
    default:
        FileHandle.standardError.write(Data(
            "usage: primekit-bridge-bench [--jobs N] [--runs R] [--fairness] [--tool PATH]\n".utf8))
        exit(2)
    }
}

// MARK: - A server over pipes

final class Server: @unchecked Sendable {
    let process = Process()
    let input: FileHandle
    let output: Int32
    private var buffer: [UInt8] = []
    private var start = 0

    init(_ extra: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["serve"] + extra
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading.fileDescriptor
        buffer.reserveCapacity(1 << 22)
    }

    func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Foundation.write(input.fileDescriptor, raw.baseAddress! + offset, raw.count - offset)
                if written <= 0 { if errno == EINTR { continue }; return }
                offset += written
            }
        }
    }

    /// The next line (without its newline), reading as needed; nil at the end, or once `deadline` (`now()`) passed.
    func readLine(deadline: Double? = nil) -> ArraySlice<UInt8>? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 0x0A) {
                let line = buffer[start..<newline]
                start = newline + 1
                return line
            }
            if start > 0 {
                buffer.removeSubrange(..<start)
                start = 0
            }
            if let deadline {
                let left = deadline - now()
                var wanted = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
                if left <= 0 || poll(&wanted, 1, Int32(left * 1000) + 1) == 0 { return nil }
            }
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(output, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { return nil }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// Reads lines until `done` says stop.
    func read(until done: (ArraySlice<UInt8>) -> Bool) {
        while let line = readLine() {
            if done(line) { return }
        }
    }

    /// CPU seconds the server has used (user + system), from /proc.
    var cpuSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")")
        else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        try? input.close()
        process.waitUntilExit()
    }
}

func contains(_ line: ArraySlice<UInt8>, _ needle: [UInt8]) -> Bool {
    guard line.count >= needle.count else { return false }
    var index = line.startIndex
    while index <= line.endIndex - needle.count {
        if line[index] == needle[0], line[index..<index + needle.count].elementsEqual(needle) { return true }
        index += 1
    }
    return false
}

let finishedTag = Array(#""method":"job/finished""#.utf8)
let progressTag = Array(#""method":"job/progress""#.utf8)

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }
func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

// MARK: - Pipelined jobs

func submitLine(_ index: Int) -> String {
    #"{"jsonrpc":"2.0","id":\#(index),"method":"job/submit","params":{"kind":"isPrime","candidate":"\#(1000 + index)"}}"#
}

/// Seconds from the first request to the last job/finished, `count` jobs, `perLine` requests per line.
func pipelined(count: Int, perLine: Int) throws -> Double {
    let server = try Server()
    var lines: [UInt8] = []
    lines.reserveCapacity(count * 110)
    var index = 0
    while index < count {
        let end = min(count, index + perLine)
        if perLine == 1 {
            lines += Array(submitLine(index).utf8)
        } else {
            lines += Array(("[" + (index..<end).map(submitLine).joined(separator: ",") + "]").utf8)
        }
        lines.append(0x0A)
        index = end
    }
    let started = now()
    let writer = Thread { [lines] in server.write(lines) }
    writer.start()
    var finished = 0
    server.read { line in
        if contains(line.prefix(40), finishedTag) { finished += 1 }
        return finished == count
    }
    let elapsed = now() - started
    server.stop()
    return elapsed
}

/// The same jobs through the engine in this process.
func inProcess(count: Int) async throws -> Double {
    let engine = await Engine()
    let requests = (0..<count).map { JobRequest.isPrime(String(1000 + $0)) }
    let started = now()
    var handles: [Job] = []
    handles.reserveCapacity(count)
    for request in requests { handles.append(try engine.submit(request)) }
    await engine.queue.waitUntilIdle()
    let elapsed = now() - started
    _ = await engine.shutdown()
    return elapsed
}

// MARK: - Round trips

func roundTrips(samples: Int) throws -> (ping: [Double], job: [Double]) {
    let server = try Server()
    var ping: [Double] = []
    var job: [Double] = []
    for index in 0..<samples {
        let started = now()
        server.write(Array((#"{"jsonrpc":"2.0","id":\#(index),"method":"ping"}"# + "\n").utf8))
        server.read { _ in true }
        ping.append(now() - started)
    }
    for index in 0..<samples {
        let started = now()
        server.write(Array((submitLine(index) + "\n").utf8))
        server.read { contains($0.prefix(40), finishedTag) }
        job.append(now() - started)
    }
    server.stop()
    return (ping, job)
}

// MARK: - Progress cost

/// With 1,000 jobs (paused, or running: all started, taking slices in turn on the workers) at a progress interval: the server's CPU seconds per
/// second, progress lines per second, and divisors tested per second (the kernel's throughput) over `window`.
func progressCost(paused: Bool, intervalMs: Int, window: Double) throws -> (cpu: Double, lines: Double, tested: Double) {
    let server = try Server()
    var request = #"{"jsonrpc":"2.0","id":0,"method":"queue/suspend"}"# + "\n"
    for index in 1...1000 {
        let candidate = "1000000000000000000000000000057"
        request += #"{"jsonrpc":"2.0","id":\#(index),"method":"job/submit","params":{"kind":"factor","candidate":"\#(candidate)","bound":"100000000000","progressIntervalMs":\#(intervalMs)}}"# + "\n"
    }
    if !paused { request += #"{"jsonrpc":"2.0","id":1001,"method":"queue/resume"}"# + "\n" }
    request += #"{"jsonrpc":"2.0","id":"ready","method":"ping"}"# + "\n"
    server.write(Array(request.utf8))
    server.read { contains($0, Array(#""id":"ready""#.utf8)) }
    // Count progress lines on a thread while the window passes; then shut down and add up what every job's
    // checkpoint says it tested (the kernel's own count: job/status shows the last progress snapshot only).
    let counter = ProgressCounter()
    let done = DispatchSemaphore(value: 0)
    let reader = Thread {
        server.read { line in
            if contains(line.prefix(40), progressTag) { counter.add() }
            guard contains(line.prefix(40), Array(#""id":"down""#.utf8)) else { return false }
            let text = String(decoding: line, as: UTF8.self)
            for part in text.components(separatedBy: "\\ntested ").dropFirst() {
                counter.addTested(Double(part.prefix { $0.isNumber }) ?? 0)
            }
            return true
        }
        done.signal()
    }
    reader.start()
    let cpuBefore = server.cpuSeconds, linesBefore = counter.value, started = now()
    Thread.sleep(forTimeInterval: window)  // the measurement window
    let elapsed = now() - started
    let cpu = (server.cpuSeconds - cpuBefore) / elapsed
    let lines = Double(counter.value - linesBefore) / elapsed
    server.write(Array((#"{"jsonrpc":"2.0","id":"down","method":"shutdown"}"# + "\n").utf8))
    done.wait()
    let total = now() - started
    server.stop()
    return (cpu, lines, counter.tested / total)
}

final class ProgressCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    private var testedSum = 0.0
    func add() { lock.withLock { count += 1 } }
    func addTested(_ value: Double) { lock.withLock { testedSum += value } }
    var value: Int { lock.withLock { count } }
    var tested: Double { lock.withLock { testedSum } }
}

// MARK: - Fairness

/// Two long factor jobs on the two workers, then `samples` tiny factor jobs of the same priority one after another:
/// seconds from each submit to its job/finished (at most `limit` each; nil once one takes longer).
func fairnessRun(samples: Int, limit: Double) throws -> [Double]? {
    let server = try Server(["--workers", "2"])
    defer {
        // Read on to the end: a server blocked writing progress lines would never read the shutdown.
        server.write(Array((#"{"jsonrpc":"2.0","id":"down","method":"shutdown"}"# + "\n").utf8))
        server.read { contains($0, Array(#""id":"down""#.utf8)) }
        server.stop()
    }
    let long = #"{"kind":"factor","candidate":"170141183460469231731687303715884105727","bound":"10000000000000","progressIntervalMs":1}"#
    server.write(Array((#"{"jsonrpc":"2.0","id":"l1","method":"job/submit","params":\#(long)}"# + "\n"
        + #"{"jsonrpc":"2.0","id":"l2","method":"job/submit","params":\#(long)}"# + "\n").utf8))
    // Both long jobs have reported progress, so each has had a slice: the steady state of a busy queue. (Each is
    // split into pieces; a build whose first job keeps both workers never reports the second: wait 2 s at most.)
    var seen: Set<String> = []
    let waitEnd = now() + 2
    while seen.count < 2, let line = server.readLine(deadline: waitEnd) {
        if contains(line.prefix(40), progressTag) {
            for id in ["j1", "j2"] where contains(line, Array(#""jobId":"\#(id)""#.utf8)) { seen.insert(id) }
        }
    }
    var latencies: [Double] = []
    for index in 0..<samples {
        let tag = Array(#""jobId":"j\#(3 + index)""#.utf8)
        let started = now()
        server.write(Array((#"{"jsonrpc":"2.0","id":\#(index),"method":"job/submit","params":{"kind":"factor","candidate":"\#(600_851_475_143 + index)"}}"# + "\n").utf8))
        var finished = false
        while let line = server.readLine(deadline: started + limit) {
            if contains(line.prefix(40), finishedTag) && contains(line, tag) {
                finished = true
                break
            }
        }
        guard finished else { return nil }
        latencies.append(now() - started)
    }
    return latencies
}

// MARK: - Run

func loadAverage() -> String {
    (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3)
        .joined(separator: " ") ?? "?"
}

if fairness {
    let samples = 20, limit = 20.0
    print("primekit-bridge-bench --fairness: \(tool), 2 workers, 2 long factor jobs, \(samples) tiny factor jobs one "
          + "after another, \(runs) runs, load \(loadAverage())")
    var all: [Double] = []
    for run in 1...runs {
        guard let latencies = try fairnessRun(samples: samples, limit: limit) else {
            print(String(format: "  run %d: a tiny job's job/finished did not come within %.0f s", run, limit))
            exit(1)
        }
        all += latencies
        print(String(format: "  run %d: median %.2f ms, worst %.2f ms", run, median(latencies) * 1e3,
                     latencies.max()! * 1e3))
    }
    print(String(format: "submit → job/finished of a tiny job, 2 long jobs running: median %.2f ms, worst %.2f ms "
                 + "(%d samples; floor 50 / 250 ms, aim 5 / 50 ms)", median(all) * 1e3, all.max()! * 1e3, all.count))
    print("load after: \(loadAverage())")
    exit(0)
}

print("primekit-bridge-bench: \(jobs) tiny isPrime jobs, \(runs) runs, \(ProcessInfo.processInfo.activeProcessorCount) cores, load \(loadAverage())")
var single: [Double] = [], batched: [Double] = [], local: [Double] = []
for run in 1...runs {
    // Interleaved, so the machine's load falls on every configuration alike.
    single.append(try pipelined(count: jobs, perLine: 1))
    batched.append(try pipelined(count: jobs, perLine: 100))
    local.append(try await inProcess(count: jobs))
    print(String(format: "  run %d: one per line %.3f s, batches of 100 %.3f s, in process %.3f s", run,
                 single.last!, batched.last!, local.last!))
}
let rate = { (seconds: Double) in Double(jobs) / seconds }
print(String(format: "pipelined, one request per line: %.0f jobs/s (median %.3f s)", rate(median(single)), median(single)))
print(String(format: "pipelined, batches of 100:       %.0f jobs/s (median %.3f s)", rate(median(batched)), median(batched)))
print(String(format: "engine in process (baseline):    %.0f jobs/s (median %.3f s)", rate(median(local)), median(local)))
print(String(format: "bridge / in-process time: %.2fx (one per line), %.2fx (batches)", median(single) / median(local),
             median(batched) / median(local)))

let trips = try roundTrips(samples: 2000)
print(String(format: "round trip, ping: p50 %.0f µs, p99 %.0f µs", percentile(trips.ping, 0.5) * 1e6,
             percentile(trips.ping, 0.99) * 1e6))
print(String(format: "round trip, isPrime submit → job/finished: p50 %.0f µs, p99 %.0f µs",
             percentile(trips.job, 0.5) * 1e6, percentile(trips.job, 0.99) * 1e6))

let idle = try progressCost(paused: true, intervalMs: 50, window: 2)
print(String(format: "1,000 paused jobs, 50 ms progress interval: server CPU %.1f ms/s, %.0f progress lines/s",
             idle.cpu * 1000, idle.lines))
var withProgress: [Double] = [], withoutProgress: [Double] = []
for _ in 0..<3 {
    let on = try progressCost(paused: false, intervalMs: 50, window: 2)
    let off = try progressCost(paused: false, intervalMs: 3_600_000, window: 2)
    withProgress.append(on.tested)
    withoutProgress.append(off.tested)
    print(String(format: "  1,000 running jobs (time-sliced on the default workers): 50 ms → %.0f progress lines/s, %.3g divisors/s; no progress → %.3g divisors/s",
                 on.lines, on.tested, off.tested))
}
print(String(format: "1,000 running jobs, 50 ms progress vs none: kernel throughput ratio %.3f (medians of 3)",
             median(withProgress) / median(withoutProgress)))
print("load after: \(loadAverage())")
