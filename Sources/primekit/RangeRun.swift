// `factor --range A B`: every number of [A, B] factored completely and printed in order, one line each, as for
// numbers given one by one. Below 2^128 the numbers go through RangePipeline (the kernel's range sieve below 2^64,
// its batch calls above); from 2^128 on, one complete engine job each, a few at a time. Ctrl-C or SIGTERM stops at
// the next segment with every line before it written and none after, and writes a checkpoint of the rest: the
// kernel checkpoint of the sub-range being written (a "range" item) and the numbers after it (a "span" item).

import Foundation
import PrimeKit
import PrimeKitBridge
import Synchronization

/// What a range run has left to do, in order (the items of its checkpoint file).
enum RangeWork: Sendable, Equatable {
    /// A sub-range below 2^64 part-way through, as its kernel checkpoint text.
    case position(String)
    /// Every number from `first` to `last` (canonical decimals, 2 <= first <= last).
    case span(first: String, last: String)
}

/// Canonical decimal text of any length, for the ends of a range.
enum DecimalText {
    static let twoTo64 = "18446744073709551616"
    static let twoTo128 = "340282366920938463463374607431768211456"

    /// Orders two canonical decimals.
    static func less(_ a: String, _ b: String) -> Bool {
        a.utf8.count != b.utf8.count ? a.utf8.count < b.utf8.count : a < b
    }

    /// n + 1.
    static func successor(_ text: String) -> String {
        var digits = Array(text.utf8)
        var index = digits.count - 1
        while index >= 0, digits[index] == UInt8(ascii: "9") {
            digits[index] = UInt8(ascii: "0")
            index -= 1
        }
        if index < 0 { digits.insert(UInt8(ascii: "1"), at: 0) } else { digits[index] += 1 }
        return String(decoding: digits, as: UTF8.self)
    }

    /// The value of checked decimal text, when below 2^128.
    static func value(_ text: String) -> UInt128? { UInt128(text) }

    /// How many numbers [first, last] holds (exactly below 2^53, else nearly).
    static func count(_ first: String, _ last: String) -> Double {
        if let a = value(first), let b = value(last) { return Double(b - a) + 1 }
        return (Double(last) ?? .infinity) - (Double(first) ?? 0) + 1
    }
}

struct RangeRun {
    let settings: RunSettings
    /// `--progress` / `--no-progress`, and `--checkpoint` (nil: the default path).
    let progressMode: ProgressMode
    let checkpoint: String?
    let work: [RangeWork]
    let failed: Bool
    let resumedFrom: String?

    /// The checks of `--range A B`: two canonical decimals with 2 <= A <= B.
    /// - Returns: What is wrong, as a usage message, or nil.
    static func problem(first: String, last: String) -> String? {
        for (name, value) in [("A", first), ("B", last)] {
            if let problem = CandidateCheck.problem(with: value) {
                return "invalid --range \(name) \"\(value.prefix(40))\": \(problem.reason)"
            }
        }
        if DecimalText.less(last, first) { return "--range A B needs A <= B (got \(first.prefix(40)) > \(last.prefix(40)))" }
        return nil
    }

    /// `factor --range A B` with no option but --json and --exponents, as the parser would take it, without the
    /// parser (its start-up is a good part of a short range's time); nil for anything else, the parser's to check.
    static func plain(_ arguments: [String]) -> RangeRun? {
        guard arguments.first == "factor" else { return nil }
        var settings = RunSettings(command: .factor)
        var ends: (String, String)?
        var index = 1
        while index < arguments.count {
            switch arguments[index] {
            case "--json" where !settings.json: settings.json = true
            case "--exponents" where !settings.exponents: settings.exponents = true
            case "--range" where ends == nil && index + 2 < arguments.count:
                ends = (arguments[index + 1], arguments[index + 2])
                index += 2
            default: return nil
            }
            index += 1
        }
        guard let (first, last) = ends, problem(first: first, last: last) == nil else { return nil }
        return RangeRun(settings: settings, progressMode: .automatic, checkpoint: nil,
                        work: [.span(first: first, last: last)], failed: false, resumedFrom: nil)
    }

    /// The stop request: the pipeline and the engine jobs running when it comes are told at once.
    private final class Interrupt: @unchecked Sendable {
        private let state = Mutex<(requested: Bool, pipeline: RangePipeline?, jobs: [Job])>((false, nil, []))

        var requested: Bool { state.withLock { $0.requested } }

        func request() {
            let (pipeline, jobs) = state.withLock { state in
                state.requested = true
                return (state.pipeline, state.jobs)
            }
            pipeline?.interrupt()
            for job in jobs { job.cancel() }
        }

        func running(_ pipeline: RangePipeline?) {
            let requested = state.withLock { state in
                state.pipeline = pipeline
                return state.requested
            }
            if requested { pipeline?.interrupt() }
        }

        func running(_ jobs: [Job]) {
            let requested = state.withLock { state in
                state.jobs = jobs
                return state.requested
            }
            if requested { for job in jobs { job.cancel() } }
        }
    }

    /// Numbers written so far, for the progress line.
    private final class Counts: Sendable {
        /// Written by finished pipelines and engine jobs, and the pipeline running.
        let state = Mutex<(earlier: UInt64, current: RangePipeline?)>((0, nil))

        var done: UInt64 {
            let (earlier, current) = state.withLock { ($0.earlier, $0.current) }
            return earlier + (current?.done.load(ordering: .relaxed) ?? 0)
        }
    }

    /// Runs to the end (or to an interrupt) and returns the exit status.
    func run() async -> Int32 {
        let interrupt = Interrupt()
        let signals = SignalWatcher { interrupt.request() }
        let threads = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let format = RangeFormat(json: settings.json, exponents: settings.exponents)
        let counts = Counts()
        var total = 0.0
        for item in work {
            switch item {
            case .position(let text):
                if let progress = try? KernelRange(checkpoint: text).progress() {
                    total += Double(progress.total - progress.done)
                }
            case .span(let first, let last):
                total += DecimalText.count(first, last)
            }
        }
        let bar = RangeProgress.start(mode: progressMode, total: total) { counts.done }
        var failed = self.failed
        var left: [RangeWork] = []
        var index = 0
        itemLoop: while index < work.count {
            let item = work[index]
            index += 1
            var pieces: [RangePiece] = []
            var first = "", last = ""
            switch item {
            case .position(let text):
                do {
                    pieces = [.restored(try KernelRange(checkpoint: text))]
                } catch {
                    reportError("a range position in the checkpoint is refused: \(error.message)")
                    bar?.stop()
                    return ExitStatus.usage
                }
            case .span(let spanFirst, let spanLast):
                (first, last) = (spanFirst, spanLast)
                if let a = DecimalText.value(first), a >> 64 == 0 {
                    let b = DecimalText.value(last).map { min($0, UInt128(UInt64.max)) } ?? UInt128(UInt64.max)
                    pieces.append(.sieve(first: UInt64(a), last: UInt64(b)))
                }
                if let b = DecimalText.value(last), b >> 64 != 0 {
                    pieces.append(.words(first: max(DecimalText.value(first)!, UInt128(1) << 64), last: b))
                } else if DecimalText.value(last) == nil, let a = DecimalText.value(first) {
                    pieces.append(.words(first: max(a, UInt128(1) << 64), last: UInt128.max))
                }
            }
            if !pieces.isEmpty {
                let pipeline = RangePipeline(pieces: pieces, format: format, threads: threads)
                counts.state.withLock { $0.current = pipeline }
                interrupt.running(pipeline)
                let (stop, failure) = await Self.onThread { pipeline.run() }
                interrupt.running(nil as RangePipeline?)
                counts.state.withLock {
                    $0.earlier += pipeline.done.load(ordering: .relaxed)
                    $0.current = nil
                }
                if let stop {
                    switch stop {
                    case .kernel(let checkpoint, let after):
                        left.append(.position(checkpoint))
                        if case .span = item, !DecimalText.less(last, String(after)) {
                            left.append(.span(first: String(after), last: last))
                        }
                    case .at(let number):
                        if case .position = item {
                            // A restored sub-range stopped before it began again: it is left whole.
                            left.append(item)
                        } else {
                            left.append(.span(first: String(number), last: last))
                        }
                    }
                    if let failure {
                        reportError(failure)
                        bar?.stop()
                        return ExitStatus.error
                    }
                    left += work[index...]
                    break itemLoop
                }
            }
            // From 2^128 on: complete engine jobs, a few at a time, written in order.
            if case .span = item, !DecimalText.less(last, DecimalText.twoTo128) {
                let start = DecimalText.less(first, DecimalText.twoTo128) ? DecimalText.twoTo128 : first
                let outcome = await engine(from: start, to: last, threads: threads, interrupt: interrupt,
                                           counts: counts)
                if outcome.failed { failed = true }
                if let next = outcome.stoppedAt {
                    left.append(.span(first: next, last: last))
                    left += work[index...]
                    break itemLoop
                }
            }
        }
        bar?.stop()
        guard left.isEmpty else {
            return Runner.saveCheckpoint([], ranges: left, settings: settings, failed: failed,
                                         path: checkpoint ?? resumedFrom ?? "primekit-\(getpid()).checkpoint",
                                         chosen: checkpoint != nil || resumedFrom != nil, signals: signals,
                                         fromStandardInput: false)
        }
        if interrupt.requested {
            reportError("interrupted")
            return ExitStatus.interrupted
        }
        return failed ? ExitStatus.error : ExitStatus.ok
    }

    /// Numbers from 2^128 on, one complete job each, at most `threads` at a time.
    /// - Returns: Whether one failed, and the first number not written when an interrupt stopped the run.
    private func engine(from first: String, to last: String, threads: Int, interrupt: Interrupt,
                        counts: Counts) async -> (failed: Bool, stoppedAt: String?) {
        let queue = JobQueue()
        var next: String? = first
        var flight: [Job] = []
        var failed = false
        while true {
            while flight.count < threads, let number = next, !interrupt.requested {
                do {
                    flight.append(try queue.submit(.factor(number).complete()))
                } catch {
                    reportError("cannot start \(number.prefix(40)): \(error.message)")
                    failed = true
                }
                next = number == last ? nil : DecimalText.successor(number)
                interrupt.running(flight)
            }
            guard let job = flight.first else {
                return (failed, next.flatMap { interrupt.requested ? $0 : nil })
            }
            var answer: FactorResult?
            do {
                if case .factorization(let factorization) = try await job.result { answer = factorization }
            } catch {
                if interrupt.requested {
                    for job in flight { job.cancel() }
                    return (failed, job.candidate)
                }
                reportError("\(job.candidate.prefix(40)): "
                            + ((error as? PrimeKitError)?.message ?? "the job was cancelled"))
                failed = true
            }
            flight.removeFirst()
            interrupt.running(flight)
            if let answer {
                let line = settings.json ? AnswerFormat.json(answer)
                    : Array(AnswerFormat.text(answer, exponents: settings.exponents, complete: true).utf8)
                let error = writeAll(1, line)
                guard error == 0 else {
                    reportError("cannot write to standard output: \(String(cString: strerror(error)))")
                    for job in flight { job.cancel() }
                    return (true, nil)
                }
                counts.state.withLock { $0.earlier += 1 }
            }
        }
    }

    /// Runs blocking work on a plain thread (not the cooperative pool) and awaits its result.
    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: body()) }
        }
    }
}

/// The progress line of a range run: numbers written of the total, rate and time left.
enum RangeProgress {
    static func start(mode: ProgressMode, total: Double, done: @escaping @Sendable () -> UInt64) -> StatusLine? {
        let start = ContinuousClock.now
        return StatusLine(mode: mode) { _ in
            let count = done()
            let elapsed = seconds(ContinuousClock.now - start)
            let rate = elapsed > 0 ? Double(count) / elapsed : 0
            let eta = rate > 0 ? (total - Double(count)) / rate : nil
            let percent = total > 0 ? Double(count) / total * 100 : 100
            let totalText = total < 9e15 ? String(UInt64(total)) : String(format: "%.3g", total)
            return "\(count) / \(totalText) numbers \(String(format: "%5.1f%%", min(100, percent)))  ETA "
                + (eta.map(ProgressBar.formatDuration) ?? "–") + "  " + ProgressBar.formatRate(rate) + " numbers/s"
        }
    }
}
