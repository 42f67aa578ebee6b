// One run of `factor` or `is-prime`: numbers below 2^128 for `factor` (no divisor range given) go through the batch
// path in chunks (Batch.swift); other numbers go to the engine's JobQueue (a few at a time, so small numbers keep
// every worker busy). Answers come out in input order, and SIGINT/SIGTERM pause what is unfinished and write it
// to a checkpoint file (a chunk not yet answered as its numbers).

import Foundation
import PrimeKit
import PrimeKitBridge

final class Runner {
    private enum Event: Sendable {
        case input([StandardInput.Token])
        case inputEnded(String?)
        case jobEnded
        case interrupt
    }

    /// A number on its way through the run, in input order.
    private enum Slot {
        case job(Job, origin: WorkItem)
        case invalid(InvalidCandidate)
        case rejected(candidate: String, message: String)
        case chunk(BatchChunk)
    }

    private let settings: RunSettings
    private let options: RunOptions
    private let checkpointPath: String
    /// Whether the user chose the checkpoint's place (--checkpoint, or the file being resumed).
    private let checkpointChosen: Bool
    private let queue = JobQueue()
    private let output = OutputStream(descriptor: 1)
    private let events: AsyncStream<Event>
    private let sink: AsyncStream<Event>.Continuation
    private var pending: [WorkItem] = []
    private var pendingStart = 0
    private var window: [Slot] = []
    private var windowDigits = 0
    private var failed: Bool
    private var answers: [Bool?] = []
    private var stdin: StandardInput?
    private let bar: ProgressBar?
    /// The job at the head of the window whose end is awaited.
    private var watched: Job?
    /// Factors the batch path's chunks; nil when the run takes no number that way.
    private let pool: BatchPool?
    /// The chunk at the end of the window still taking numbers (handed to the pool at the end of `refill`).
    private var openChunk: BatchChunk?

    /// The most numbers in flight at once, and the most digits.
    private static let maxInFlight = 256
    private static let maxDigitsInFlight = 2_000_000

    /// - Parameters:
    ///   - settings: What to compute and how to print it.
    ///   - options: Progress and checkpoint options.
    ///   - items: The work, in order; nil reads numbers from standard input.
    ///   - failed: Whether an earlier part of this run already failed (from a checkpoint).
    ///   - resumedFrom: The checkpoint file being resumed: the default place for a new checkpoint.
    ///   - prefix: Standard input already read (when `items` is nil).
    init(settings: RunSettings, options: RunOptions, items: [WorkItem]?, failed: Bool = false,
         resumedFrom: String? = nil, prefix: StandardInputPrefix? = nil)
    {
        self.settings = settings
        self.options = options
        self.failed = failed
        checkpointPath = options.checkpoint ?? resumedFrom ?? "primekit-\(getpid()).checkpoint"
        checkpointChosen = options.checkpoint != nil || resumedFrom != nil
        bar = ProgressBar(mode: options.progressMode)
        pool = settings.command == .factor && settings.from == nil && settings.bound == nil
            ? BatchPool(json: settings.json, exponents: settings.exponents) : nil
        (events, sink) = AsyncStream<Event>.makeStream()
        if let items {
            pending = items
            sink.yield(.inputEnded(nil))
        } else {
            let stdin = StandardInput(batching: pool != nil, prefix: prefix)
            self.stdin = stdin
            stdin.start(deliver: { [sink] tokens in sink.yield(.input(tokens)) },
                        finish: { [sink] error in sink.yield(.inputEnded(error)) })
        }
    }

    /// Runs to the end (or to an interrupt) and returns the exit status.
    func run() async -> Int32 {
        let signals = SignalWatcher { [sink] in sink.yield(.interrupt) }
        var inputDone = false
        for await event in events {
            switch event {
            case .input(let tokens):
                for token in tokens {
                    if let chunk = token.chunk {
                        readChunks[pending.count] = chunk
                        pending.append(.number(""))
                        continue
                    }
                    if let fullLength = token.fullLength { truncatedLengths[pending.count] = fullLength }
                    pending.append(.number(token.text))
                }
            case .inputEnded(let error):
                if let error {
                    reportError(error)
                    failed = true
                }
                inputDone = true
            case .jobEnded:
                break
            case .interrupt:
                bar?.stop()
                return await interrupt(signals: signals)
            }
            // Printing frees room in the window, and the numbers that fill it may be finished at once (their
            // events already handled), so repeat until nothing more can be printed.
            repeat { refill() } while await printFinished(bar: bar)
            if inputDone && window.isEmpty && pendingStart == pending.count { break }
        }
        bar?.stop()
        output.flush()
        if failed { return ExitStatus.error }
        if settings.exitStatus, settings.command == .isPrime, answers.count == 1 {
            switch answers[0] {
            case true?: return ExitStatus.ok
            case false?: return ExitStatus.notPrime
            case nil: return ExitStatus.unknown
            }
        }
        return ExitStatus.ok
    }

    /// Chunks the standard-input reader gathered, by index in `pending` (which holds a placeholder there).
    private var readChunks: [Int: BatchChunk] = [:]

    /// Full lengths of stdin tokens that were cut short (too long to be candidates), by index in `pending`.
    private var truncatedLengths: [Int: Int] = [:]

    /// Starts numbers while there is room.
    private func refill() {
        while pendingStart < pending.count, window.count < Self.maxInFlight,
              window.isEmpty || windowDigits < Self.maxDigitsInFlight
        {
            let index = pendingStart
            let item = pending[index]
            pendingStart += 1
            if !readChunks.isEmpty, let chunk = readChunks.removeValue(forKey: index) {
                stdin?.used(StandardInput.chunkPermits)
                dispatchChunk()
                window.append(.chunk(chunk))
                pool?.submit(chunk) { [sink] in sink.yield(.jobEnded) }
                continue
            }
            stdin?.used(1)
            switch item {
            case .number(let text):
                if pool != nil, let value = BatchChunk.value(text) {
                    if openChunk == nil {
                        let chunk = BatchChunk()
                        openChunk = chunk
                        window.append(.chunk(chunk))
                    }
                    openChunk!.append(text, value)
                    if openChunk!.isFull { dispatchChunk() }
                    continue
                }
                dispatchChunk()
                let fullLength = truncatedLengths.isEmpty ? nil : truncatedLengths.removeValue(forKey: index)
                if let problem = CandidateCheck.problem(with: text, fullLength: fullLength) {
                    window.append(.invalid(problem))
                    continue
                }
                submit(request(for: text), origin: item, candidate: text)
            case .job(let checkpoint):
                dispatchChunk()
                submit(.restore(checkpoint), origin: item, candidate: "checkpoint")
            }
        }
        dispatchChunk()
        if pendingStart == pending.count, pendingStart > 0 {
            pending.removeAll(keepingCapacity: true)
            pendingStart = 0
        }
    }

    /// Hands the open chunk to the pool; its end wakes the run.
    private func dispatchChunk() {
        guard let chunk = openChunk, let pool else { return }
        openChunk = nil
        pool.submit(chunk) { [sink] in sink.yield(.jobEnded) }
    }

    private func request(for candidate: String) -> JobRequest {
        switch settings.command {
        case .factor:
            // Without a divisor range a number is factored completely; with one, by trial division over it.
            settings.from == nil && settings.bound == nil
                ? .factor(candidate).complete(ecmDigits: settings.ecmDigits)
                    .effort(timeLimit: settings.timeLimitDuration)
                : .factor(candidate, from: settings.from, bound: settings.bound)
        case .isPrime: .isPrime(candidate, from: settings.from, bound: settings.bound)
        }
    }

    private func submit(_ request: JobRequest, origin: WorkItem, candidate: String) {
        do {
            // The engine splits a long divisor range over every core; its pieces share the factors they find.
            let job = try queue.submit(request.progressInterval(.milliseconds(100)))
            // The engine takes snapshots only for listeners; the bar reads the latest one (job.progress).
            if bar != nil { job.onProgress { _ in } }
            windowDigits += job.candidate.utf8.count
            window.append(.job(job, origin: origin))
        } catch {
            window.append(.rejected(candidate: candidate, message: error.message))
        }
    }

    /// Prints the answers at the head of the window that are ready, in order.
    /// - Returns: Whether anything was printed.
    @discardableResult
    private func printFinished(bar: ProgressBar?) async -> Bool {
        var printed = false
        while let head = window.first {
            switch head {
            case .invalid(let problem):
                bar?.clear()
                output.flush()
                reportError(problem.message)
                if settings.json {
                    output.write(AnswerFormat.jsonError(candidate: problem.text, code: "invalidCandidate",
                                                        message: problem.reason))
                }
                failed = true
            case .rejected(let candidate, let message):
                bar?.clear()
                output.flush()
                reportError("cannot start \(candidate.prefix(40)): \(message)")
                if settings.json {
                    output.write(AnswerFormat.jsonError(candidate: candidate, code: "rejected", message: message))
                }
                failed = true
            case .chunk(let chunk):
                guard let lines = chunk.output else {
                    if printed { output.flush() }
                    bar?.track(nil, label: "")
                    return printed
                }
                output.write(lines)
            case .job(let job, _):
                guard job.state.isFinished else {
                    // Only the job whose answer is printed next needs to say that it ended (a callback
                    // registered on a job that has finished meanwhile runs at once).
                    if watched !== job {
                        watched = job
                        job.onSuccess { [sink] _ in sink.yield(.jobEnded) }
                        job.onFailure { [sink] _ in sink.yield(.jobEnded) }
                    }
                    if printed { output.flush() }
                    bar?.track(job, label: Self.label(job.candidate))
                    return printed
                }
                windowDigits -= job.candidate.utf8.count
                bar?.clear()
                do {
                    let result = try await job.result
                    write(result)
                } catch let error as PrimeKitError {
                    output.flush()
                    reportError("\(job.candidate.prefix(40)): \(error.message)")
                    failed = true
                } catch {
                    output.flush()
                    reportError("\(job.candidate.prefix(40)): the job was cancelled")
                    failed = true
                }
            }
            printed = true
            window.removeFirst()
        }
        bar?.track(nil, label: "")
        output.flush()
        return printed
    }

    private func write(_ result: JobResult) {
        switch result {
        case .factorization(let factorization):
            output.write(settings.json ? AnswerFormat.json(factorization)
                                       : Array(AnswerFormat.text(factorization, exponents: settings.exponents,
                                                             complete: settings.command == .factor
                                                                 && settings.from == nil && settings.bound == nil,
                                                             ecmDigits: settings.ecmDigits,
                                                             timeLimit: settings.timeLimit).utf8))
        case .primality(let primality):
            answers.append(primality.isPrime)
            output.write(settings.json ? AnswerFormat.json(primality) : Array(AnswerFormat.text(primality).utf8))
        case .rangeSummary:
            break  // this runner submits factor and isPrime jobs only
        }
    }

    private static func label(_ candidate: String) -> String {
        let digits = candidate.utf8.count
        return digits <= 24 ? candidate : "\(candidate.prefix(8))…(\(digits) digits)"
    }

    /// The first SIGINT/SIGTERM: print what is already answered, pause the rest, write the checkpoint.
    private func interrupt(signals: SignalWatcher) async -> Int32 {
        var items: [WorkItem] = []
        // Answers that are ready and next in order are printed; everything after the first unfinished one waits.
        var index = 0
        while index < window.count {
            if case .job(let job, _) = window[index], !job.state.isFinished { break }
            if case .chunk(let chunk) = window[index], chunk.output == nil { break }
            index += 1
        }
        let ready = Array(window[..<index])
        let rest = Array(window[index...])
        window = ready
        await printFinished(bar: nil)
        for slot in rest {
            switch slot {
            case .invalid(let problem):
                items.append(.number(problem.text))
            case .rejected(let candidate, _):
                items.append(.number(candidate))
            case .chunk(let chunk):
                // Not answered yet: its numbers go into the checkpoint as numbers not started.
                items += chunk.texts.map(WorkItem.number)
            case .job(let job, let origin):
                if let checkpoint = try? await job.pause() {
                    items.append(.job(checkpoint))
                } else {
                    items.append(origin)  // it finished meanwhile; its answer is recomputed on resume
                }
            }
        }
        for index in pendingStart..<pending.count {
            if let chunk = readChunks[index] {
                items += chunk.texts.map(WorkItem.number)
            } else {
                items.append(pending[index])
            }
        }
        output.flush()
        guard !items.isEmpty else {
            reportError("interrupted")
            return ExitStatus.interrupted
        }
        return Self.saveCheckpoint(items, settings: settings, failed: failed, path: checkpointPath,
                                   chosen: checkpointChosen, signals: signals, fromStandardInput: stdin != nil)
    }

    /// Writes the checkpoint of an interrupted run and says so on standard error.
    /// - Parameters:
    ///   - items: What is left, in order (not empty unless `ranges` is not).
    ///   - ranges: What a `factor --range` run has left, in order (then `items` is empty).
    ///   - path: Where to write it; unless `chosen`, the temporary directory is tried next.
    ///   - signals: The watcher that removes a half-written file when a second signal comes.
    ///   - fromStandardInput: The run reads standard input (whose unread numbers are not in the checkpoint).
    /// - Returns: The exit status, 130.
    static func saveCheckpoint(_ items: [WorkItem], ranges: [RangeWork] = [], settings: RunSettings, failed: Bool,
                               path checkpointPath: String, chosen checkpointChosen: Bool, signals: SignalWatcher,
                               fromStandardInput: Bool) -> Int32
    {
        let bytes = CheckpointFile(settings: settings, failed: failed, items: items, ranges: ranges).encoded()
        // The default place is the current directory; when it is not writable, the temporary directory.
        var places = [checkpointPath]
        if !checkpointChosen {
            places.append((NSTemporaryDirectory() as NSString).appendingPathComponent(checkpointPath))
        }
        var written: String?
        for path in places {
            let temporary = path + ".tmp-\(getpid())"
            signals.writing(temporary)
            do {
                try AtomicFile.write(bytes, to: path, temporaryPath: temporary)
                written = path
                break
            } catch {
                reportError("the checkpoint could not be written: \(error.message)")
            }
        }
        signals.writing(nil)
        guard let checkpointPath = written else {
            reportError("interrupted, without a checkpoint")
            return ExitStatus.interrupted
        }
        reportError("interrupted; checkpoint written to \(checkpointPath)")
        if fromStandardInput {
            reportError("numbers not yet read from standard input are not in the checkpoint")
        }
        reportError("continue with: primekit resume \(Self.shellQuoted(checkpointPath))")
        return ExitStatus.interrupted
    }

    private static func shellQuoted(_ path: String) -> String {
        let safe = path.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "-_./+".unicodeScalars.contains($0) }
        return safe ? path : "'" + path.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
