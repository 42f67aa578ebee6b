import Dispatch
import Foundation
import Synchronization

/// A worker's place to sleep while there is nothing to run.
final class Parker: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)

    func park() { semaphore.wait() }
    func unpark() { semaphore.signal() }
}

/// One runnable piece of a job in the ready deques. Stale when its token no longer matches the piece's.
struct ReadyEntry: Sendable {
    let job: Job
    let piece: Int
    let token: UInt64
    let enqueuedAt: UInt64
}

/// What a worker takes out of the lock to run one slice.
struct Assignment: Sendable {
    let job: Job
    let piece: Int
    let kernel: KernelJob?
    let range: PieceRange?
    let workBefore: UInt64
    let factorsKnown: Int
    let budget: UInt64
    let single: Bool
    let priority: JobPriority
    /// Taken from the continuing entries: the piece has had a slice before.
    let continuing: Bool

    var from: String? { range?.from }
    var bound: String? { range?.bound }
}

/// What a worker brings back into the lock after a slice.
enum SliceReport: Sendable {
    /// The piece stepped (or was held before its first step) and has work left.
    case stepped(Job, piece: Int, KernelStep?, KernelProgress, factors: [PrimeFactor]?, elapsed: Duration, units: UInt64)
    /// The piece finished; for a one-piece job with the job's result. The progress is nil for a small answer,
    /// which gives its own (``SmallAnswer/progressAndFactors()``).
    case finished(Job, piece: Int, KernelProgress?, factors: [PrimeFactor]?, outcome: JobOutcome?)
    /// The piece could not be created or stepped.
    case failed(Job, piece: Int, PrimeKitError)
    /// A range job's buffer of unread blocks was full: the piece did no work and waits for its consumer.
    case blocked(Job, piece: Int)
    /// The pieces of a split job were merged.
    case merged(Job, Result<JobResult, PrimeKitError>)
    /// A complete job's one piece reached ECM and was cut into shares of its curves, one per worker (their
    /// progress and the factors the job had found come along).
    case shared(Job, piece: Int, [KernelJob], [KernelProgress], factors: [PrimeFactor])
    /// The ECM shares of a complete job were merged back into one kernel job, with its progress and factors.
    case sharesMerged(Job, Result<(KernelJob, KernelProgress, [PrimeFactor]), PrimeKitError>)
}

/// What a worker does next.
enum WorkerStep: Sendable {
    /// Run the assignments the trip left in the worker's `batch`.
    case run
    case merge(Job, [KernelJob])
    case spin
    case park
    case exit
}

// MARK: - The worker loop

extension Scheduler {
    func runWorker(_ parker: Parker, slot: Int) {
        // Each report is moved out of `pending` (a copy would retain its job and result once more), applied, and
        // moved into `applied`, which keeps its job alive until the lock is released: a job whose handle nobody kept
        // is freed outside the lock. `pending` is in reverse order (see `.run` below). The three arrays trade
        // buffers and keep their capacity from trip to trip.
        var reports: [SliceReport] = []
        var pending: [SliceReport] = []
        var applied: [SliceReport] = []
        var mayIdleSpin = true
        // The kernel job of the long piece this worker ran, moved out of `longSlices` so that it is freed after the
        // lock if it was the last reference (a finished job's kernel job is freed on the worker, see `runSlice`).
        var longSlice: KernelJob?
        // What a trip took to run: each assignment is moved out of it to run (a copy would retain its job, kernel
        // job and range once more, and the array's release each of them again).
        var batch: [Assignment] = []
        while true {
            var effects = Effects()
            swap(&pending, &reports)
            let next: WorkerStep = state.withLock(anchoredTo: self) { s in
                var followUp: WorkerStep?
                if !pending.isEmpty {
                    s.slots[slot].removeAll(keepingCapacity: true)
                    s.slotPriorities[slot] = Int.max
                    if s.longSlices[slot] != nil {
                        longSlice = s.longSlices[slot]
                        setLongSlice(nil, slot: slot, &s)
                    }
                    while let report = pending.popLast() {
                        if let step = apply(report, &s, &effects) {
                            precondition(followUp == nil, "PrimeKit: two merges in one batch")
                            followUp = step
                        }
                        applied.append(report)
                    }
                    if case .merge(let job, _) = followUp { s.slots[slot].append(job) }
                    publishSlotPriorities(s)
                }
                defer { checkConditions(&s, &effects) }
                if let followUp {
                    drainIntake(&s, &effects)
                    return followUp
                }
                if s.shutDown || s.workers > s.targetWorkers {
                    drainIntake(&s, &effects)
                    s.workers -= 1
                    return .exit
                }
                batch = takeIntake(&s, &effects)
                if batch.isEmpty, let first = dispatch(&s, &effects, smallerThan: nil) {
                    // Small jobs (far less than a slice of work) are taken several at a time: one trip into the
                    // lock per batch instead of per job.
                    let budget = Double(first.budget)
                    let small = first.single && first.job.estimatedWork * Double(Self.batchLimit) <= budget
                    batch.append(first)
                    if small {
                        while batch.count < Self.batchLimit,
                              let more = dispatch(&s, &effects, smallerThan: budget / Double(Self.batchLimit)) {
                            batch.append(more)
                        }
                    }
                }
                if !batch.isEmpty {
                    var lowest = Int.max
                    for index in batch.indices {
                        s.slots[slot].append(batch[index].job)
                        lowest = min(lowest, batch[index].priority.rawValue)
                    }
                    s.slotPriorities[slot] = lowest
                    // One piece that has had a slice already (a long job): another job may cut this slice short.
                    if batch.count == 1, batch[0].continuing {
                        setLongSlice(batch[0].kernel, slot: slot, &s)
                        // A submission that saw not every worker on a long slice left its job in the intake without
                        // cutting one: look once more (each side writes, then reads the other's).
                        if s.longSliceCount >= s.workers, intakeCount.load(ordering: .sequentiallyConsistent) > 0 {
                            shareWorkers(with: .veryHigh, &s, &effects)
                        }
                    }
                    publishSlotPriorities(s)
                    return .run
                }
                if mayIdleSpin && s.dispatchAllowed { return .spin }
                s.idle.append(parker)
                publishIdle(s)
                // A submission that saw no parked worker before this one was published left its job in the intake
                // without waking anybody: look again before sleeping (each side writes, then reads the other's).
                if intakeCount.load(ordering: .sequentiallyConsistent) > 0 {
                    s.idle.removeLast()
                    publishIdle(s)
                    return .spin
                }
                return .park
            }
            effects.run()
            applied.removeAll(keepingCapacity: true)
            longSlice = nil
            switch next {
            case .run:
                mayIdleSpin = true
                reports.reserveCapacity(batch.count)
                // The reports are collected last first, so that popping them applies them in the batch's order.
                while let assignment = batch.popLast() { reports.append(runSlice(assignment)) }
            case .merge(let job, let kernels) where kernels.first?.shareInfo() != nil:
                // ECM shares: one kernel job again, which goes on (docs/queue.md, "One big job on all cores").
                let result = Result { () throws(PrimeKitError) -> (KernelJob, KernelProgress, [PrimeFactor]) in
                    let merged = try KernelJob.mergeShares(kernels)
                    let progress = merged.progress()
                    return (merged, progress, try merged.factors(count: progress.factorsFound))
                }
                reports = [.sharesMerged(job, result)]
            case .merge(let job, let kernels):
                let result = Result { () throws(PrimeKitError) -> JobResult in
                    try Self.buildResult(kind: job.kind, kernel: KernelJob.merge(kernels), candidate: job.candidate,
                                         keepingCheckpoint: job.keepsFinalCheckpoint)
                }
                reports = [.merged(job, result)]
            case .spin:
                // Nothing queued: watch the queue for a moment before sleeping, so a steady stream of small
                // jobs does not cost a futex wake-up and a context switch per job.
                mayIdleSpin = false
                for _ in 0..<64 where queuedHint.load(ordering: .relaxed) == 0
                    && intakeCount.load(ordering: .relaxed) == 0 { sched_yield() }
                continue
            case .park:
                parker.park()
            case .exit:
                return
            }
        }
    }

    /// Runs one slice of one piece, outside every lock.
    func runSlice(_ assignment: Assignment) -> SliceReport {
        let job = assignment.job
        if let inject = configuration.failureInjection, let error = inject.error(job) {
            return .failed(job, piece: assignment.piece, error)
        }
        if let run = assignment.range?.run { return runRangeSlice(assignment, run) }
        let kernel: KernelJob
        if let existing = assignment.kernel {
            kernel = existing
        } else if assignment.single, assignment.range == nil,
                  let small = SmallAnswer(value: job.submitted.value, mode: job.mode) {
            // Below 2^32 the whole answer is one kernel call, far less than a slice: no kernel job at all (and
            // the final progress is the answer's).
            return .finished(job, piece: assignment.piece, nil, factors: nil, outcome: .small(small))
        } else if assignment.single, assignment.range == nil, job.mode == .complete,
                  job.effort?.allowsWordAnswer ?? true, let value = job.submitted.wordValue {
            // A complete job below 2^128: the kernel's batch call answers in one call (microseconds below 2^64,
            // milliseconds for two 64-bit primes), with no kernel job.
            let result = Result { () throws(PrimeKitError) -> JobResult in
                try Self.wordResult(kind: job.kind, value: value, candidate: job.candidate)
            }
            let listed = (try? result.get())?.factorization?.listedFactors
            let progress = KernelProgress(percent: 100, factorsFound: listed?.count ?? 0, stageFraction: 1,
                                          done: true, stage: .done)
            return .finished(job, piece: assignment.piece, progress, factors: listed, outcome: JobOutcome(result))
        } else {
            do {
                kernel = try makeKernel(job, from: assignment.from, bound: assignment.bound)
            } catch {
                return .failed(job, piece: assignment.piece, error)
            }
            // Publish the kernel so pause and cancel can interrupt it; they may already be waiting.
            let held = job.core.withLock(anchoredTo: job) { core in
                core.pieces.update(assignment.piece) { $0.kernel = kernel }
                return core.holdRequested
            }
            if held {
                return .stepped(job, piece: assignment.piece, nil, kernel.progress(), factors: nil, elapsed: .zero,
                                units: 0)
            }
        }
        // A split job's pieces: what the others found lowers this one's limit (docs/queue.md, "One big job").
        assignment.range?.shared?.apply(to: kernel)
        // A complete job past its time limit (also one restored past it) stops splitting: its next steps finish
        // with the partial answer.
        let effort = job.effort
        if let effort, effort.expired { kernel.conclude() }
        let start = ContinuousClock.now
        let step: KernelStep
        do {
            step = try kernel.step(budget: assignment.budget)
        } catch {
            return .failed(job, piece: assignment.piece, error)
        }
        // Only a slice that leaves work behind calibrates the budget, and only a job with a time limit counts its
        // running time: otherwise a finished slice needs no second clock read.
        let elapsed = step == .done && effort == nil ? Duration.zero : start.duration(to: .now)
        if let effort, effort.add(elapsed), step != .done { kernel.conclude() }
        let progress = kernel.progress()
        var factors: [PrimeFactor]?
        if step == .done && assignment.single {
            let result = Result { () throws(PrimeKitError) -> JobResult in
                try Self.buildResult(kind: job.kind, kernel: kernel, candidate: job.candidate,
                                     keepingCheckpoint: job.keepsFinalCheckpoint)
            }
            // The answer is read: the job lets go of its kernel job here, so the C job is freed on this worker when
            // `kernel` goes out of scope, not under the queue's lock when the report is applied. Until then the
            // piece is still on this worker, so nobody else needs the kernel (interrupting a done job is moot).
            job.core.withLock(anchoredTo: job) { core in
                core.pieces.update(assignment.piece) { if $0.kernel === kernel { $0.kernel = nil } }
            }
            let listed = (try? result.get())?.factorization?.listedFactors
            return .finished(job, piece: assignment.piece, progress, factors: listed, outcome: JobOutcome(result))
        }
        if progress.factorsFound > assignment.factorsKnown {
            factors = try? kernel.factors(count: progress.factorsFound)
            if let factors, let shared = assignment.range?.shared, shared.record(factors) {
                // The other pieces' slices would run on to their ends over divisors no longer needed: they are cut
                // short, so each sees the lower limit now (a piece whose range lies above it ends).
                let others = job.core.withLock(anchoredTo: job) { core in
                    core.pieces.filter { $0.onWorker && $0.kernel !== kernel }.compactMap(\.kernel)
                }
                for other in others { other.interrupt() }
            }
        }
        if step == .done {
            return .finished(job, piece: assignment.piece, progress, factors: factors, outcome: nil)
        }
        // A complete job in ECM on a queue of several workers: its curves run on all of them as shares.
        let workers = min(64, workerTarget.load(ordering: .relaxed))
        if step == .more, assignment.single, job.mode == .complete, progress.stage == .ecm, workers > 1,
           let shares = try? kernel.ecmShares(count: workers),
           let known = try? kernel.factors(count: progress.factorsFound) {
            return .shared(job, piece: assignment.piece, shares, shares.map { $0.progress() }, factors: known)
        }
        let units = progress.workDone &- assignment.workBefore
        return .stepped(job, piece: assignment.piece, step, progress, factors: factors, elapsed: elapsed, units: units)
    }

    /// One slice of one lane of a range job: one sieve step (at most one segment), its block handed over in order.
    /// A lane that can do nothing waits for the consumer or for the head chunk (docs/queue.md, "Range jobs"); the
    /// scheduler ends the job once every lane has finished.
    func runRangeSlice(_ assignment: Assignment, _ run: RangeRun) -> SliceReport {
        let job = assignment.job
        let start = ContinuousClock.now
        let step: RangeRun.LaneStep
        do {
            step = try run.step(lane: assignment.piece, budget: assignment.budget)
        } catch {
            return .failed(job, piece: assignment.piece, error)
        }
        switch step {
        case .blocked:
            return .blocked(job, piece: assignment.piece)
        case .finished:
            return .finished(job, piece: assignment.piece, run.progress(), factors: nil, outcome: nil)
        case .stepped(let kernelStep, let numbers):
            return .stepped(job, piece: assignment.piece, kernelStep, run.progress(), factors: nil,
                            elapsed: start.duration(to: .now), units: UInt64(numbers))
        }
    }

    /// The complete answer for 2^32 <= `value` < 2^128 from the kernel's batch call: the answer a complete kernel
    /// job gives, with an isPrime composite's divisors listed from the factorization.
    static func wordResult(kind: JobKind, value: UInt128, candidate: String) throws(PrimeKitError) -> JobResult {
        var factors: [PrimeFactor] = []
        var powers: [(prime: UInt128, exponent: Int)] = []
        try KernelBatch.factor([value]) { _, primes, exponents, probable in
            for index in 0..<primes.count {
                factors.append(PrimeFactor(prime: String(primes[index]), exponent: Int(exponents[index]),
                                           certainty: probable[index] ? .probable : .proven))
                powers.append((primes[index], Int(exponents[index])))
            }
        }
        let isPrime = powers.count == 1 && powers[0].exponent == 1
        let factorization = FactorResult(
            candidate: candidate, factors: factors, cofactor: "1", cofactorStatus: .one, complete: true,
            isPrime: isPrime, certainty: factors.contains { $0.certainty == .probable } ? .probable : .proven,
            parts: [], mode: .complete)
        switch kind {
        case .factor, .factorRange:  // a range job never comes here (its slices are `runRangeSlice`)
            return .factorization(factorization)
        case .isPrime:
            let count = powers.reduce(1) { $0 * ($1.exponent + 1) }
            var text: String?
            if isPrime {
                text = ""
            } else if count <= PrimalityResult.maxListedDivisors {
                var divisors: [UInt128] = [1]
                divisors.reserveCapacity(count)
                for (prime, exponent) in powers {
                    let previous = divisors
                    var power: UInt128 = 1
                    for _ in 0..<exponent {
                        power *= prime
                        divisors += previous.map { $0 * power }
                    }
                }
                divisors.sort()
                text = divisors.map { String($0) }.joined(separator: " ")
            }
            return .primality(PrimalityResult(
                candidate: candidate, isPrime: isPrime, divisorText: text,
                divisorCount: text == nil ? count : nil, factorization: factorization))
        }
    }

    /// Turns a finished kernel job into the answer for the job's kind.
    /// - Parameter keepingCheckpoint: A trial-division factor answer carries the kernel job's final checkpoint.
    static func buildResult(kind: JobKind, kernel: KernelJob, candidate: String, keepingCheckpoint: Bool = false)
        throws(PrimeKitError) -> JobResult
    {
        // A share checkpoint run as a job: it is over, and its outcome goes to a merge (Checkpoint.mergingEcmShares).
        if let share = try kernel.ecmShareResult(candidate: candidate) { return .factorization(share) }
        let factorization = try kernel.factorResult(candidate: candidate)
        switch kind {
        case .factor, .factorRange:
            if keepingCheckpoint, kind == .factor, factorization.mode == .trialDivision {
                let checkpoint = Checkpoint(kind: .factor, pieces: [try Checkpoint.Piece(kernel)])
                return .factorization(factorization.keeping(finalCheckpoint: checkpoint.text))
            }
            return .factorization(factorization)
        case .isPrime:
            var divisors: String?
            var count: Int?
            if factorization.isPrime == true {
                divisors = ""
            } else if factorization.complete {
                switch try kernel.divisors(maxCount: PrimalityResult.maxListedDivisors) {
                case .listed(let text): divisors = text
                case .tooMany(let total): count = total
                case .incomplete: break
                }
            }
            return .primality(PrimalityResult(
                candidate: factorization.candidate, isPrime: factorization.isPrime, divisorText: divisors,
                divisorCount: count, factorization: factorization))
        }
    }
}

extension JobOutcome {
    init(_ result: Result<JobResult, PrimeKitError>) {
        switch result {
        case .success(let value): self = .success(value)
        case .failure(let error): self = .failure(error)
        }
    }
}
