// `primekit bench`: the kernel workloads through the engine, on the machine the tool runs on — what a user of the
// tool can measure without the source tree. The benchmarks with peers and same-run ratios live in Tests/Benchmarks:
// the kernel against plain C (`make bench`), the engine against OperationQueue with its latencies and split jobs
// (`make bench-engine`), one big number split over every core (Tests/Benchmarks/split/run.sh).

import ArgumentParser
import Foundation
import PrimeKit

struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the kernel workloads through the engine and print their table.",
        discussion: """
            Kernel workloads run through the engine on one worker (unsplit), so their rates are the kernel's own. \
            Use a release build: swift run -c release primekit bench. The benchmarks with peers, in the source \
            tree: `make bench` (the kernel against plain C) and `make bench-engine` (the engine against \
            OperationQueue, latencies, split jobs).
            """)

    @Flag(help: "Smaller workloads, one run each (under a second).")
    var quick = false

    func run() async throws {
        #if DEBUG
        reportError("warning: this is a debug build; run `swift run -c release primekit bench` for real figures")
        #endif
        let output = OutputStream(descriptor: 1)
        output.write("primekit bench\(quick ? " --quick" : "") — \(ProcessInfo.processInfo.activeProcessorCount) cores, kernel \(PrimeKitVersion.kernel)\n\n")
        output.flush()
        try await kernelTable(output)
        output.write("Benchmarks with peers, in the source tree: make bench (the kernel against plain C),\n"
                     + "make bench-engine (the engine against OperationQueue, latencies, split jobs).\n")
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
                let job = try queue.submit(.factor(workload.candidate, bound: workload.bound).trialDivision().splitting(false))
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
