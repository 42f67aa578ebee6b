// `primekit bench`: reduced versions of the kernel and engine benchmarks, through the engine, in one table each.
// The full benchmarks, with their plain-C and OperationQueue peers, are `make bench` and
// `make bench-engine`.

import ArgumentParser
import Foundation
import PrimeKit

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the kernel and engine benchmarks and print their tables.",
        discussion: """
            Kernel workloads run through the engine on one worker (unsplit), so their rates are the kernel's own; \
            the engine table measures what the queue adds. Use a release build: \
            swift run -c release primekit bench. The full benchmarks, with plain-C and OperationQueue peers, \
            are `make bench` and `make bench-engine`.
            """)

    @Flag(help: "Smaller workloads and fewer samples (well under a minute).")
    var quick = false

    func run() async throws {
        #if DEBUG
        reportError("warning: this is a debug build; run `swift run -c release primekit bench` for real figures")
        #endif
        let output = OutputStream(descriptor: 1)
        output.write("primekit bench\(quick ? " --quick" : "") — \(ProcessInfo.processInfo.activeProcessorCount) cores, kernel \(PrimeKitVersion.kernel)\n\n")
        output.flush()
        try await kernelTable(output)
        try await engineTable(output)
        output.write("\nFull benchmarks: make bench (kernel against plain C), "
                     + "make bench-engine (engine against OperationQueue).\n")
        output.flush()
    }

    // MARK: Kernel workloads

    private struct Workload {
        var name: String
        var what: String
        var candidate: String
        var bound: String?
    }

    private var workloads: [Workload] {
        var list = [
            Workload(name: "W1", what: "largest 64-bit prime, to 2^32", candidate: "18446744073709551557"),
            Workload(name: "W1b", what: "4294967279 · 4294967291, to 2^32", candidate: "18446743979220271189"),
            Workload(name: "W128", what: "2^127 − 1, to 10^9", candidate: "170141183460469231731687303715884105727",
                     bound: "1000000000"),
            Workload(name: "G1k", what: "1,000 digits, to 10^7", candidate: Self.digits(1_000), bound: "10000000"),
        ]
        list.append(quick ? Workload(name: "W2", what: "100,000 digits, to 10^6", candidate: Self.digits(100_000),
                                     bound: "1000000")
                          : Workload(name: "W2", what: "100,000 digits, to 10^7", candidate: Self.digits(100_000),
                                     bound: "10000000"))
        return list
    }

    /// A fixed pseudo-random odd number of `count` digits (a linear congruential generator, so every run is equal).
    static func digits(_ count: Int) -> String {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            bytes[index] = UInt8(ascii: "0") + UInt8((state >> 33) % 10)
        }
        if bytes[0] == UInt8(ascii: "0") { bytes[0] = UInt8(ascii: "7") }
        bytes[count - 1] = UInt8(ascii: "7")
        return String(decoding: bytes, as: UTF8.self)
    }

    private func kernelTable(_ output: OutputStream) async throws {
        let queue = JobQueue(maxConcurrentJobs: 1)
        let runs = quick ? 1 : 3
        output.write("Kernel workloads (one worker, unsplit; median of \(runs))\n")
        output.write(row(["workload", "job", "time", "divisors", "divisors/s", "answer"], [5, 34, 10, 14, 12, 0]))
        output.flush()
        for workload in workloads {
            var times: [Double] = []
            var tested: UInt64 = 0
            var answer = ""
            for _ in 0..<runs {
                let start = ContinuousClock.now
                let job = try queue.submit(.factor(workload.candidate, bound: workload.bound).splitting(false))
                job.onProgress { _ in }
                let result = try await job.result.factorization!
                times.append(seconds(ContinuousClock.now - start))
                tested = job.progress.divisorsTested
                answer = "factors \(result.factors.count), cofactor \(result.cofactorStatus.rawValue)"
            }
            let time = median(times)
            output.write(row([workload.name, workload.what, String(format: "%.3f s", time), String(tested),
                              ProgressBar.formatRate(Double(tested) / time), answer], [5, 34, 10, 14, 12, 0]))
            output.flush()
        }
        output.write("\n")
    }

    // MARK: Engine overhead

    private func engineTable(_ output: OutputStream) async throws {
        let widths = [52, 0]
        output.write("Engine (JobQueue, \(ProcessInfo.processInfo.activeProcessorCount) workers)\n")
        output.write(row(["measurement", "result"], widths))
        let tiny = quick ? 20_000 : 100_000
        let queue = JobQueue()

        // Tiny isPrime jobs, one submit each, all awaited.
        var start = ContinuousClock.now
        var jobs: [Job] = []
        jobs.reserveCapacity(tiny)
        for index in 0..<tiny { jobs.append(try queue.submit(.isPrime(1_000 + index))) }
        for job in jobs { _ = try await job.result }
        let oneByOne = Double(tiny) / seconds(ContinuousClock.now - start)
        output.write(row(["tiny isPrime jobs (1,000…), one submit each", ProgressBar.formatRate(oneByOne) + " jobs/s"],
                         widths))
        output.flush()

        // The same through submit(contentsOf:) in chunks of 10,000.
        jobs.removeAll(keepingCapacity: true)
        start = ContinuousClock.now
        var submitting = Duration.zero
        for chunk in stride(from: 0, to: tiny, by: 10_000) {
            let requests = (chunk..<min(tiny, chunk + 10_000)).map { JobRequest.isPrime(1_000 + $0) }
            let submitStart = ContinuousClock.now
            jobs += try queue.submit(contentsOf: requests)
            submitting += ContinuousClock.now - submitStart
        }
        for job in jobs { _ = try await job.result }
        let chunked = Double(tiny) / seconds(ContinuousClock.now - start)
        output.write(row(["the same, submit(contentsOf:) in chunks of 10,000", ProgressBar.formatRate(chunked) + " jobs/s"],
                         widths))
        output.write(row(["  submission alone", ProgressBar.formatRate(Double(tiny) / seconds(submitting)) + " jobs/s"],
                         widths))
        output.flush()
        jobs.removeAll()

        // Latency of cancel and pause on a running job.
        let samples = quick ? 15 : 50
        var cancels: [Double] = []
        for _ in 0..<samples {
            let job = try queue.submit(.factor("18446744073709551557").splitting(false))
            _ = await job.wait(until: .running)
            let begin = ContinuousClock.now
            job.cancel()
            _ = await job.wait(until: .cancelled)
            cancels.append(seconds(ContinuousClock.now - begin))
        }
        output.write(row(["cancel() → job cancelled", latency(cancels)], widths))
        var pauses: [Double] = []
        let paused = try queue.submit(.factor("18446744073709551557").splitting(false))
        for _ in 0..<samples {
            _ = await paused.wait(until: .running)
            let begin = ContinuousClock.now
            _ = try await paused.pause()
            pauses.append(seconds(ContinuousClock.now - begin))
            try paused.resume()
        }
        paused.cancel()
        output.write(row(["pause() → checkpoint returned", latency(pauses)], widths))
        output.flush()

        // One big job on one worker, then split over every worker.
        let big = "18446744073709551557"
        let bound = quick ? "1000000000" : nil
        let single = JobQueue(maxConcurrentJobs: 1)
        var ones: [Double] = [], alls: [Double] = []
        for _ in 0..<(quick ? 1 : 3) {
            start = ContinuousClock.now
            _ = try await single.submit(.factor(big, bound: bound).splitting(false)).result
            ones.append(seconds(ContinuousClock.now - start))
            start = ContinuousClock.now
            _ = try await queue.submit(.factor(big, bound: bound)).result
            alls.append(seconds(ContinuousClock.now - start))
        }
        let (one, all) = (median(ones), median(alls))
        output.write(row(["W1\(quick ? " to 10^9" : ""): 1 worker → all workers (split)",
                          String(format: "%.3f s → %.3f s, %.2f×", one, all, one / all)], widths))
        output.flush()
    }

    private func latency(_ values: [Double]) -> String {
        let sorted = values.sorted()
        func at(_ p: Double) -> Double { sorted[min(sorted.count - 1, Int((p / 100 * Double(sorted.count - 1)).rounded()))] }
        return String(format: "p50 %.1f µs, p99 %.1f µs", at(50) * 1e6, at(99) * 1e6)
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    private func row(_ cells: [String], _ widths: [Int]) -> String {
        var line = ""
        for (cell, width) in zip(cells, widths) {
            line += width == 0 ? cell : cell.padding(toLength: max(width, cell.count + 1), withPad: " ", startingAt: 0)
        }
        return line + "\n"
    }
}
