import DequeModule
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
    let from: String?
    let bound: String?
    let workBefore: UInt64
    let factorsKnown: Int
    let budget: UInt64
    let single: Bool
}

/// What a worker brings back into the lock after a slice.
enum SliceReport: Sendable {
    /// The piece stepped (or was held before its first step) and has work left.
    case stepped(Job, piece: Int, KernelStep?, KernelProgress, factors: [PrimeFactor]?, elapsed: Duration, units: UInt64)
    /// The piece finished; for a one-piece job with the job's result.
    case finished(Job, piece: Int, KernelProgress, factors: [PrimeFactor]?, result: Result<JobResult, PrimeKitError>?)
    /// The piece could not be created or stepped.
    case failed(Job, piece: Int, PrimeKitError)
    /// The pieces of a split job were merged.
    case merged(Job, Result<JobResult, PrimeKitError>)
}

/// What a worker does next.
enum WorkerStep: Sendable {
    case run([Assignment])
    case merge(Job, [KernelJob])
    case spin
    case park
    case exit
}

/// Conditions async callers wait for.
enum QueueCondition: Sendable {
    /// No job pending, ready or running.
    case idle
    /// No job running.
    case quiet
    /// No job unfinished.
    case empty
}

/// The queue's mutable state, guarded by one mutex.
struct SchedulerState: Sendable {
    var levels = [Deque<ReadyEntry>](repeating: Deque(), count: JobPriority.allCases.count)
    var clock: UInt64 = 0
    var nextToken: UInt64 = 0
    var idle: [Parker] = []
    var workers = 0
    var targetWorkers: Int
    var suspended = false
    var background = false
    var shutDown = false
    /// The job each worker is running a piece of (or merging), by worker slot.
    var slots: [[Job]] = []
    /// Pending and paused jobs: the unfinished jobs that are neither queued nor on a worker.
    var waiting: [JobID: Job] = [:]
    var queuePaused: [JobID: Job] = [:]
    var counts = JobCounts()
    var waiters: [(QueueCondition, CheckedContinuation<Void, Never>)] = []
    var budget: UInt64 = 1 << 21
    /// Entries in the deques, stale ones included.
    var queuedEntries = 0

    var dispatchAllowed: Bool { !suspended && !background && !shutDown }

    /// Every unfinished job, oldest first: on workers, queued, pending or paused. O(queue length); the hot path
    /// keeps no index of all jobs.
    var unfinishedJobs: [Job] {
        var seen: Set<ObjectIdentifier> = []
        var jobs: [Job] = []
        func add(_ job: Job) {
            if seen.insert(ObjectIdentifier(job)).inserted, !job.core.withLock(anchoredTo: job, { $0.state.isFinished }) {
                jobs.append(job)
            }
        }
        for jobs in slots { for job in jobs { add(job) } }
        for level in levels { for entry in level { add(entry.job) } }
        for job in waiting.values { add(job) }
        return jobs.sorted { $0.id < $1.id }
    }

    func holds(_ condition: QueueCondition) -> Bool {
        switch condition {
        case .idle: counts.pending + counts.ready + counts.running == 0
        case .quiet: counts.running == 0
        case .empty: counts.unfinished == 0
        }
    }
}

/// The engine behind a ``JobQueue``: ready deques by priority with aging, worker threads running slices, and
/// every job state change. All job transitions happen here, under the queue's mutex (and the job's).
final class Scheduler: Sendable {
    let configuration: JobQueue.Configuration
    let limits: KernelLimits
    let state: Mutex<SchedulerState>
    let nextJobID = Atomic<UInt64>(0)
    /// The target slice length; settable while the queue runs.
    let sliceNanoseconds: Atomic<Int64>
    /// `targetWorkers`, readable without the lock.
    let workerTarget: Atomic<Int>
    /// `queuedEntries`, readable without the lock by idle workers.
    let queuedHint = Atomic<Int>(0)

    init(configuration: JobQueue.Configuration) {
        self.configuration = configuration
        self.limits = KernelLimits(maxDigits: configuration.maxDigits, bpswDigits: configuration.bpswDigits)
        self.state = Mutex(SchedulerState(targetWorkers: max(1, configuration.maxConcurrentJobs)))
        self.workerTarget = Atomic(max(1, configuration.maxConcurrentJobs))
        self.sliceNanoseconds = Atomic(Self.nanoseconds(configuration.sliceDuration))
    }

    // MARK: - Workers

    /// Starts worker threads up to the target count.
    func startWorkers() {
        let slots = state.withLock(anchoredTo: self) { s -> Range<Int> in
            let missing = max(0, s.targetWorkers - s.workers)
            s.workers += missing
            let first = s.slots.count
            s.slots += Array(repeating: [], count: missing)
            return first..<(first + missing)
        }
        for slot in slots {
            let parker = Parker()
            let thread = Thread { [self] in runWorker(parker, slot: slot) }
            thread.name = "primekit-worker"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        max(10_000, duration.components.seconds * 1_000_000_000 + duration.components.attoseconds / 1_000_000_000)
    }

    var maxConcurrentJobs: Int {
        get { workerTarget.load(ordering: .relaxed) }
        set {
            let wake = state.withLock(anchoredTo: self) { s -> [Parker] in
                s.targetWorkers = max(1, newValue)
                workerTarget.store(s.targetWorkers, ordering: .relaxed)
                defer { s.idle.removeAll() }
                return s.idle
            }
            for parker in wake { parker.unpark() }
            startWorkers()
        }
    }

    /// The most small jobs a worker takes per trip into the lock.
    private static let batchLimit = 16

    private func runWorker(_ parker: Parker, slot: Int) {
        var reports: [SliceReport] = []
        var mayIdleSpin = true
        while true {
            var effects = Effects()
            let pending = reports
            reports = []
            let next: WorkerStep = state.withLock(anchoredTo: self) { s in
                var followUp: WorkerStep?
                if !pending.isEmpty {
                    s.slots[slot] = []
                    for report in pending {
                        if let step = apply(report, &s, &effects) {
                            precondition(followUp == nil, "PrimeKit: two merges in one batch")
                            followUp = step
                        }
                    }
                    if case .merge(let job, _) = followUp { s.slots[slot] = [job] }
                }
                defer { checkConditions(&s, &effects) }
                if let followUp { return followUp }
                if s.shutDown || s.workers > s.targetWorkers {
                    s.workers -= 1
                    return .exit
                }
                if let first = dispatch(&s, &effects, smallerThan: nil) {
                    // Small jobs (far less than a slice of work) are taken several at a time: one trip into the
                    // lock per batch instead of per job.
                    var batch = [first]
                    if first.single, first.job.estimatedWork * Double(Self.batchLimit) <= Double(first.budget) {
                        while batch.count < Self.batchLimit,
                              let more = dispatch(&s, &effects, smallerThan: Double(first.budget) / Double(Self.batchLimit)) {
                            batch.append(more)
                        }
                    }
                    s.slots[slot] = batch.map(\.job)
                    return .run(batch)
                }
                if mayIdleSpin && s.dispatchAllowed { return .spin }
                s.idle.append(parker)
                return .park
            }
            effects.run()
            switch next {
            case .run(let batch):
                mayIdleSpin = true
                reports.reserveCapacity(batch.count)
                for assignment in batch { reports.append(runSlice(assignment)) }
            case .merge(let job, let kernels):
                let result = Result { () throws(PrimeKitError) -> JobResult in
                    try Self.buildResult(kind: job.kind, kernel: KernelJob.merge(kernels), candidate: job.candidate)
                }
                reports = [.merged(job, result)]
            case .spin:
                // Nothing queued: watch the queue for a moment before sleeping, so a steady stream of small
                // jobs does not cost a futex wake-up and a context switch per job.
                mayIdleSpin = false
                for _ in 0..<64 where queuedHint.load(ordering: .relaxed) == 0 { sched_yield() }
                continue
            case .park:
                parker.park()
            case .exit:
                return
            }
        }
    }

    /// Runs one slice of one piece, outside every lock.
    private func runSlice(_ assignment: Assignment) -> SliceReport {
        let job = assignment.job
        if let failure = job.injectedFailure { return .failed(job, piece: assignment.piece, failure) }
        let kernel: KernelJob
        if let existing = assignment.kernel {
            kernel = existing
        } else {
            do {
                kernel = try KernelJob.create(candidate: job.candidate, from: assignment.from,
                                              bound: assignment.bound, limits: limits)
            } catch {
                return .failed(job, piece: assignment.piece, error)
            }
            // Publish the kernel so pause and cancel can interrupt it; they may already be waiting.
            let held = job.core.withLock(anchoredTo: job) { core in
                core.pieces[assignment.piece].kernel = kernel
                return core.holdRequested
            }
            if held {
                return .stepped(job, piece: assignment.piece, nil, kernel.progress(), factors: nil, elapsed: .zero,
                                units: 0)
            }
        }
        let start = ContinuousClock.now
        let step: KernelStep
        do {
            step = try kernel.step(budget: assignment.budget)
        } catch {
            return .failed(job, piece: assignment.piece, error)
        }
        let elapsed = start.duration(to: .now)
        let progress = kernel.progress()
        var factors: [PrimeFactor]?
        if step == .done && assignment.single {
            let result = Result { () throws(PrimeKitError) -> JobResult in
                try Self.buildResult(kind: job.kind, kernel: kernel, candidate: job.candidate)
            }
            return .finished(job, piece: assignment.piece, progress, factors: nil, result: result)
        }
        if progress.factorsFound > assignment.factorsKnown {
            factors = try? kernel.factors(count: progress.factorsFound)
        }
        if step == .done {
            return .finished(job, piece: assignment.piece, progress, factors: factors, result: nil)
        }
        let units = progress.workDone &- assignment.workBefore
        return .stepped(job, piece: assignment.piece, step, progress, factors: factors, elapsed: elapsed, units: units)
    }

    /// Turns a finished kernel job into the answer for the job's kind.
    static func buildResult(kind: JobKind, kernel: KernelJob, candidate: String) throws(PrimeKitError) -> JobResult {
        let factorization = try kernel.factorResult(candidate: candidate)
        switch kind {
        case .factor:
            return .factorization(factorization)
        case .isPrime:
            var divisors: [String]?
            var count: Int?
            if factorization.isPrime == true {
                divisors = []
            } else if factorization.complete {
                switch try kernel.divisors(maxCount: PrimalityResult.maxListedDivisors) {
                case .listed(let list): divisors = list
                case .tooMany(let total): count = total
                case .incomplete: break
                }
            }
            return .primality(PrimalityResult(
                candidate: factorization.candidate, isPrime: factorization.isPrime, factors: divisors,
                divisorCount: count, factorization: factorization))
        }
    }

    // MARK: - Dispatch

    /// Takes the best valid entry: the highest priority, unless a lower level's oldest entry has waited long enough
    /// (`agingSlices` dispatches per level) to outrank it. Within a level, first in first out.
    /// - Parameter limit: When set, take an entry only if its job's estimated work is below it (else leave it).
    private func dispatch(_ s: inout SchedulerState, _ effects: inout Effects, smallerThan limit: Double?)
        -> Assignment?
    {
        guard s.dispatchAllowed else { return nil }
        let aging = UInt64(max(1, configuration.agingSlices))
        var bestLevel = -1
        var bestScore: UInt64 = 0
        for level in stride(from: s.levels.count - 1, through: 0, by: -1) {
            while let head = s.levels[level].first, !isDispatchable(head) {
                s.levels[level].removeFirst()
                s.queuedEntries -= 1
            }
            guard let head = s.levels[level].first else { continue }
            let score = UInt64(level) * aging + (s.clock - head.enqueuedAt)
            if bestLevel < 0 || score > bestScore {
                bestLevel = level
                bestScore = score
            }
        }
        guard bestLevel >= 0 else { return nil }
        if let limit, let head = s.levels[bestLevel].first, head.job.estimatedWork >= limit || head.job.pieceCount > 1 {
            return nil
        }
        let entry = s.levels[bestLevel].removeFirst()
        s.queuedEntries -= 1
        queuedHint.store(s.queuedEntries, ordering: .relaxed)
        s.clock += 1
        let budget = s.budget
        return entry.job.core.withLock(anchoredTo: entry.job) { core in
            core.pieces[entry.piece].queued = false
            core.pieces[entry.piece].onWorker = true
            if core.state == .ready { transition(entry.job, &core, to: .running, &s, &effects) }
            let piece = core.pieces[entry.piece]
            return Assignment(
                job: entry.job, piece: entry.piece, kernel: piece.kernel, from: piece.from, bound: piece.bound,
                workBefore: piece.progress.workDone, factorsKnown: piece.factors.count, budget: budget,
                single: core.pieces.count == 1)
        }
    }

    /// Whether a deque entry may run now. An entry of a job waiting to come to rest (pause, cancel, checkpoint) is
    /// held: dropped from the deque and re-queued when the job settles.
    private func isDispatchable(_ entry: ReadyEntry) -> Bool {
        entry.job.core.withLock(anchoredTo: entry.job) { core in
            guard core.pieces[entry.piece].queued, core.pieces[entry.piece].token == entry.token else { return false }
            if core.holdRequested || !(core.state == .ready || core.state == .running) {
                core.pieces[entry.piece].queued = false
                return false
            }
            return true
        }
    }

    /// Puts a piece in its priority's deque: at the back (new work) or the front (a job continuing between slices).
    private func enqueue(_ job: Job, _ core: inout JobCore, piece: Int, front: Bool, _ s: inout SchedulerState,
                         _ effects: inout Effects) {
        s.nextToken += 1
        core.pieces[piece].token = s.nextToken
        core.pieces[piece].queued = true
        let entry = ReadyEntry(job: job, piece: piece, token: s.nextToken, enqueuedAt: s.clock)
        let level = core.priority.rawValue
        if front { s.levels[level].prepend(entry) } else { s.levels[level].append(entry) }
        s.queuedEntries += 1
        queuedHint.store(s.queuedEntries, ordering: .relaxed)
        guard s.dispatchAllowed else { return }
        if let parker = s.idle.popLast() {
            effects.add { parker.unpark() }
        } else if !front {
            preemptForPriority(core.priority, &s, &effects)
        }
    }

    /// Enqueues every unfinished piece that is not queued or on a worker.
    private func enqueueRestingPieces(_ job: Job, _ core: inout JobCore, front: Bool, _ s: inout SchedulerState,
                                      _ effects: inout Effects) {
        var any = false
        for index in core.pieces.indices where !core.pieces[index].finished && !core.pieces[index].onWorker
            && !core.pieces[index].queued {
            enqueue(job, &core, piece: index, front: front, &s, &effects)
            any = true
        }
        // Every piece finished (a restored checkpoint of a finished job): step one to collect the answer.
        if !any, core.piecesOnWorkers == 0, !core.merging, core.pieces.allSatisfy(\.finished) {
            core.pieces[0].finished = false
            enqueue(job, &core, piece: 0, front: front, &s, &effects)
        }
    }

    /// A job of `priority` is waiting and every worker is busy: cut the slice of the lowest-priority running job
    /// short, so the new job starts within about a millisecond instead of a whole slice.
    private func preemptForPriority(_ priority: JobPriority, _ s: inout SchedulerState, _ effects: inout Effects) {
        var victim: (JobPriority, KernelJob)?
        for job in s.slots.joined() {
            job.core.withLock(anchoredTo: job) { core in
                guard core.priority < priority, victim == nil || core.priority < victim!.0 else { return }
                if let kernel = core.pieces.first(where: { $0.onWorker && $0.kernel != nil })?.kernel {
                    victim = (core.priority, kernel)
                }
            }
        }
        if let kernel = victim?.1 { effects.add { kernel.interrupt() } }
    }

    // MARK: - Slice reports

    private func apply(_ report: SliceReport, _ s: inout SchedulerState, _ effects: inout Effects) -> WorkerStep? {
        switch report {
        case .stepped(let job, let piece, let step, let progress, let factors, let elapsed, let units):
            if step == .more { calibrate(elapsed: elapsed, units: units, &s) }
            let outcome: JobOutcome? = job.core.withLock(anchoredTo: job) { core in
                core.pieces[piece].onWorker = false
                core.pieces[piece].progress = progress
                if let factors { core.pieces[piece].factors = factors }
                if core.holdRequested || core.state != .running {
                    return settle(job, &core, &s, &effects)
                }
                publishProgress(job, &core, &effects)
                enqueue(job, &core, piece: piece, front: true, &s, &effects)
                return nil
            }
            if let outcome { propagate(job, outcome, &s, &effects) }
            return nil

        case .finished(let job, let piece, let progress, let factors, let result):
            var mergeKernels: [KernelJob]?
            let outcome: JobOutcome? = job.core.withLock(anchoredTo: job) { core in
                core.pieces[piece].onWorker = false
                core.pieces[piece].finished = true
                core.pieces[piece].progress = progress
                if let factors { core.pieces[piece].factors = factors }
                if let result {
                    if case .success(let answer) = result, let found = answer.factorization?.factors {
                        core.pieces[piece].factors = found
                    }
                    return finish(job, &core, outcome: JobOutcome(result), &s, &effects)
                }
                if core.pieces.allSatisfy(\.finished), core.piecesOnWorkers == 0, core.pendingFailure == nil {
                    core.merging = true
                    mergeKernels = core.pieces.compactMap(\.kernel)
                    return nil
                }
                if core.holdRequested { return settle(job, &core, &s, &effects) }
                publishProgress(job, &core, &effects)
                return nil
            }
            if let outcome { propagate(job, outcome, &s, &effects) }
            if let mergeKernels { return .merge(job, mergeKernels) }
            return nil

        case .failed(let job, let piece, let error):
            let outcome: JobOutcome? = job.core.withLock(anchoredTo: job) { core in
                core.pieces[piece].onWorker = false
                if core.pendingFailure == nil { core.pendingFailure = error }
                if core.piecesOnWorkers == 0 { return settle(job, &core, &s, &effects) }
                interruptPieces(core, &effects)
                return nil
            }
            if let outcome { propagate(job, outcome, &s, &effects) }
            return nil

        case .merged(let job, let result):
            let outcome: JobOutcome = job.core.withLock(anchoredTo: job) { core in
                core.merging = false
                return finish(job, &core, outcome: JobOutcome(result), &s, &effects)
            }
            propagate(job, outcome, &s, &effects)
            return nil
        }
    }

    /// Keeps slices near the target length: units of work per second measured on real slices.
    private func calibrate(elapsed: Duration, units: UInt64, _ s: inout SchedulerState) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard seconds > 0.0002, units > 0 else { return }
        let target = Double(sliceNanoseconds.load(ordering: .relaxed)) * 1e-9
        let ideal = Double(units) / seconds * target
        let blended = (Double(s.budget) * 3 + ideal) / 4
        s.budget = UInt64(min(max(blended, 10_000), 1e13))
    }

    /// A job with no piece on a worker acts on what was asked of it: fail, cancel, pause, or checkpoint.
    /// Returns the outcome when the job finished.
    private func settle(_ job: Job, _ core: inout JobCore, _ s: inout SchedulerState, _ effects: inout Effects)
        -> JobOutcome?
    {
        guard core.piecesOnWorkers == 0, !core.merging, !core.state.isFinished else { return nil }
        if let error = core.pendingFailure {
            return finish(job, &core, outcome: .failure(error), &s, &effects)
        }
        if let reason = core.cancelRequest {
            return finish(job, &core, outcome: .cancelled(reason), &s, &effects)
        }
        if let origin = core.pauseRequest, core.state == .running || core.state == .ready {
            unqueueAll(&core)
            let checkpoint = Result { () throws(PrimeKitError) -> Checkpoint in try capture(job, &core, keep: true) }
            core.savedCheckpoint = try? checkpoint.get()
            core.pauseRequest = nil
            core.pausedBy = origin
            if origin == .queue { s.queuePaused[job.id] = job }
            transition(job, &core, to: .paused, &s, &effects)
            for channel in core.channels { channel.dropPending() }
            let waiters = core.pauseWaiters + core.checkpointWaiters
            core.pauseWaiters = []
            core.checkpointWaiters = []
            core.checkpointRequested = false
            effects.add { for waiter in waiters { waiter.resume(with: checkpoint) } }
            return nil
        }
        if core.checkpointRequested {
            let checkpoint = Result { () throws(PrimeKitError) -> Checkpoint in try capture(job, &core, keep: true) }
            let waiters = core.checkpointWaiters
            core.checkpointWaiters = []
            core.checkpointRequested = false
            effects.add { for waiter in waiters { waiter.resume(with: checkpoint) } }
        }
        if core.state == .running { enqueueRestingPieces(job, &core, front: true, &s, &effects) }
        return nil
    }

    /// The job's checkpoint from its pieces at rest; a piece that never started gets its kernel job now.
    private func capture(_ job: Job, _ core: inout JobCore, keep: Bool) throws(PrimeKitError) -> Checkpoint {
        var pieces: [Checkpoint.Piece] = []
        for index in core.pieces.indices {
            let piece = core.pieces[index]
            let kernel: KernelJob
            if let existing = piece.kernel {
                kernel = existing
            } else {
                kernel = try KernelJob.create(candidate: job.candidate, from: piece.from, bound: piece.bound,
                                              limits: limits)
                if keep { core.pieces[index].kernel = kernel }
            }
            pieces.append(Checkpoint.Piece(from: piece.from, bound: piece.bound, kernelText: try kernel.checkpoint()))
        }
        return Checkpoint(kind: job.kind, pieces: pieces)
    }

    private func unqueueAll(_ core: inout JobCore) {
        for index in core.pieces.indices { core.pieces[index].queued = false }
    }

    /// Interrupts every piece a worker is stepping (after the locks are released).
    private func interruptPieces(_ core: JobCore, _ effects: inout Effects) {
        let kernels = core.pieces.filter(\.onWorker).compactMap(\.kernel)
        if !kernels.isEmpty { effects.add { for kernel in kernels { kernel.interrupt() } } }
    }

    /// Sends a progress snapshot when somebody listens and the job's interval has passed.
    private func publishProgress(_ job: Job, _ core: inout JobCore, _ effects: inout Effects) {
        guard core.hasProgressObservers else { return }
        let now = ContinuousClock.now
        if let last = core.lastPublish, last.duration(to: now) < job.progressInterval { return }
        core.lastPublish = now
        deliver(core.snapshot(jobID: job.id, state: core.state), &core, &effects)
    }

    private func deliver(_ snapshot: JobProgress, _ core: inout JobCore, _ effects: inout Effects) {
        // Channels are fed under the lock, so a pause that returns has already dropped anything older.
        for channel in core.channels { channel.send(snapshot) }
        let handlers = core.progressHandlers
        let observers = core.observers
        if !handlers.isEmpty || !observers.isEmpty {
            effects.add {
                for handler in handlers { handler(snapshot) }
                for observer in observers { observer.progress(snapshot) }
            }
        }
    }

    // MARK: - Transitions

    /// The one place a job changes state: validates the transition and keeps the counts and indexes in step.
    private func transition(_ job: Job, _ core: inout JobCore, to next: JobState, _ s: inout SchedulerState,
                            _ effects: inout Effects) {
        let previous = core.state
        precondition(previous.canTransition(to: next), "PrimeKit: invalid job transition \(previous) → \(next)")
        core.state = next
        s.counts[previous] -= 1
        s.counts[next] += 1
        if previous == .paused { s.queuePaused[job.id] = nil }
        let waits = next == .pending || next == .paused
        if waits != core.indexedAsWaiting {
            s.waiting[job.id] = waits ? job : nil
            core.indexedAsWaiting = waits
        }
        if !core.stateWaiters.isEmpty {
            var ready: [CheckedContinuation<JobState, Never>] = []
            core.stateWaiters.removeAll { waiter in
                guard waiter.states.contains(next) || next.isFinished else { return false }
                ready.append(waiter.continuation)
                return true
            }
            let resumed = ready
            if !resumed.isEmpty { effects.add { for continuation in resumed { continuation.resume(returning: next) } } }
        }
    }

    /// Ends a job: stores the outcome, wakes every awaiter and callback, frees the kernel jobs.
    private func finish(_ job: Job, _ core: inout JobCore, outcome: JobOutcome, _ s: inout SchedulerState,
                        _ effects: inout Effects) -> JobOutcome {
        unqueueAll(&core)
        switch outcome {
        case .success:
            if core.hasProgressObservers {
                deliver(core.snapshot(jobID: job.id, state: .running, percentOverride: 100), &core, &effects)
            }
            transition(job, &core, to: .succeeded, &s, &effects)
        case .failure:
            transition(job, &core, to: .failed, &s, &effects)
        case .cancelled:
            if core.savedCheckpoint == nil, core.pieces.contains(where: { $0.kernel != nil }) {
                core.savedCheckpoint = try? capture(job, &core, keep: false)
            }
            transition(job, &core, to: .cancelled, &s, &effects)
        }
        core.outcome = outcome
        for index in core.pieces.indices { core.pieces[index].kernel = nil }
        core.cancelRequest = nil
        core.pauseRequest = nil

        let resultWaiters = core.resultWaiters
        let pauseWaiters = core.pauseWaiters
        let checkpointWaiters = core.checkpointWaiters
        let channels = core.channels
        let successHandlers = core.successHandlers
        let failureHandlers = core.failureHandlers
        let observers = core.observers
        let saved = core.savedCheckpoint
        core.resultWaiters = []
        core.pauseWaiters = []
        core.checkpointWaiters = []
        core.channels = []
        core.progressHandlers = []
        core.successHandlers = []
        core.failureHandlers = []
        core.observers = []

        for channel in channels { channel.finish() }
        // Nothing to tell anybody (the common case for small jobs): no closure at all.
        if resultWaiters.isEmpty && pauseWaiters.isEmpty && checkpointWaiters.isEmpty && successHandlers.isEmpty
            && failureHandlers.isEmpty && observers.isEmpty {
            return outcome
        }
        let notFinishedYet = PrimeKitError(code: .invalidState, message: "job \(job.id) finished before it stopped")
        effects.add {
            // Callbacks and observers first, so whoever awaits the result sees them done.
            switch outcome {
            case .success(let result): for handler in successHandlers { handler(result) }
            case .failure(let error): for handler in failureHandlers { handler(.failed(error)) }
            case .cancelled(let reason): for handler in failureHandlers { handler(.cancelled(reason)) }
            }
            for observer in observers { observer.finished(job, outcome) }
            switch outcome {
            case .success(let result): for waiter in resultWaiters { waiter.resume(returning: result) }
            case .failure(let error): for waiter in resultWaiters { waiter.resume(throwing: error) }
            case .cancelled: for waiter in resultWaiters { waiter.resume(throwing: CancellationError()) }
            }
            for waiter in pauseWaiters { waiter.resume(throwing: notFinishedYet) }
            for waiter in checkpointWaiters {
                if let saved { waiter.resume(returning: saved) } else { waiter.resume(throwing: notFinishedYet) }
            }
        }
        return outcome
    }

    /// Passes a finished job's outcome to its dependents: success releases them, failure and cancellation cancel
    /// them with this job as the cause (transitively).
    private func propagate(_ job: Job, _ outcome: JobOutcome, _ s: inout SchedulerState, _ effects: inout Effects) {
        let dependents = job.core.withLock(anchoredTo: job) { core in
            defer { core.dependents = [] }
            return core.dependents
        }
        for dependent in dependents {
            switch outcome {
            case .success:
                dependent.core.withLock(anchoredTo: dependent) { core in
                    core.unmetDependencies -= 1
                    guard core.unmetDependencies == 0, core.state == .pending else { return }
                    transition(dependent, &core, to: .ready, &s, &effects)
                    enqueueRestingPieces(dependent, &core, front: false, &s, &effects)
                }
            case .failure(let error):
                cancel(dependent, reason: .dependencyFailed(job.id, error), &s, &effects)
            case .cancelled(let reason):
                cancel(dependent, reason: .dependencyCancelled(job.id, reason), &s, &effects)
            }
        }
    }

    private func cancel(_ job: Job, reason: CancellationReason, _ s: inout SchedulerState, _ effects: inout Effects) {
        let outcome: JobOutcome? = job.core.withLock(anchoredTo: job) { core in
            guard !core.state.isFinished, core.cancelRequest == nil else { return nil }
            core.cancelRequest = reason
            if core.piecesOnWorkers == 0 && !core.merging {
                return finish(job, &core, outcome: .cancelled(reason), &s, &effects)
            }
            interruptPieces(core, &effects)
            return nil
        }
        if let outcome { propagate(job, outcome, &s, &effects) }
    }

    private func checkConditions(_ s: inout SchedulerState, _ effects: inout Effects) {
        guard !s.waiters.isEmpty else { return }
        var ready: [CheckedContinuation<Void, Never>] = []
        let snapshot = s
        s.waiters.removeAll { condition, continuation in
            guard snapshot.holds(condition) else { return false }
            ready.append(continuation)
            return true
        }
        let resumed = ready
        if !resumed.isEmpty { effects.add { for continuation in resumed { continuation.resume() } } }
    }

    /// Runs `body` under the queue's lock, then the collected effects.
    private func locked<R: Sendable, E: Error>(_ body: (inout SchedulerState, inout Effects) throws(E) -> R)
        throws(E) -> R
    {
        var effects = Effects()
        let result = state.withLock(anchoredTo: self) { s -> Result<R, E> in
            defer { checkConditions(&s, &effects) }
            return Result { () throws(E) -> R in try body(&s, &effects) }
        }
        effects.run()
        return try result.get()
    }

    // MARK: - Submission

    /// Creates and registers jobs; they start as soon as their dependencies allow.
    func submit(_ prepared: [PreparedJob]) throws(PrimeKitError) -> [Job] {
        for spec in prepared { try checkDependencies(spec) }
        // The handles are built outside the lock; ids come from an atomic counter.
        let last = nextJobID.add(UInt64(prepared.count), ordering: .relaxed).newValue
        var id = last - UInt64(prepared.count)
        let jobs = prepared.map { spec in
            id += 1
            return makeJob(spec, id: id)
        }
        return try locked { s, effects throws(PrimeKitError) in
            guard !s.shutDown else { throw Self.shutDownError }
            for (job, spec) in zip(jobs, prepared) { register(job, spec, &s, &effects) }
            return jobs
        }
    }

    /// One job: the same as `submit([spec])[0]` without the arrays (the one-at-a-time hot path).
    func submit(_ spec: PreparedJob) throws(PrimeKitError) -> Job {
        try checkDependencies(spec)
        let job = makeJob(spec, id: nextJobID.add(1, ordering: .relaxed).newValue)
        return try locked { s, effects throws(PrimeKitError) in
            guard !s.shutDown else { throw Self.shutDownError }
            register(job, spec, &s, &effects)
            return job
        }
    }

    private static let shutDownError = PrimeKitError(code: .queueShutDown, message: "the queue was shut down")

    private func checkDependencies(_ spec: PreparedJob) throws(PrimeKitError) {
        for dependency in spec.dependencies where dependency.scheduler !== self {
            throw PrimeKitError(code: .foreignJob, message: "dependency \(dependency.id) belongs to another queue")
        }
    }

    private func makeJob(_ spec: PreparedJob, id: UInt64) -> Job {
        Job(id: JobID(rawValue: id), kind: spec.kind, candidate: spec.candidate,
            progressInterval: spec.progressInterval, estimatedWork: spec.estimatedWork, priority: spec.priority,
            pieces: spec.pieces, injectedFailure: spec.injectedFailure, scheduler: self)
    }

    /// Registers a new job: pending while dependencies run, ready (queued) otherwise, cancelled at once when a
    /// dependency already failed or was cancelled.
    private func register(_ job: Job, _ spec: PreparedJob, _ s: inout SchedulerState, _ effects: inout Effects) {
        s.counts.pending += 1
        var cause: CancellationReason?
        var unmet = 0
        for dependency in spec.dependencies {
            dependency.core.withLock(anchoredTo: dependency) { core in
                switch core.outcome {
                case .success: break
                case .failure(let error): cause = cause ?? .dependencyFailed(dependency.id, error)
                case .cancelled(let reason): cause = cause ?? .dependencyCancelled(dependency.id, reason)
                case nil:
                    unmet += 1
                    core.dependents.append(job)
                }
            }
        }
        if let cause {
            cancel(job, reason: cause, &s, &effects)
            return
        }
        job.core.withLock(anchoredTo: job) { core in
            if !spec.dependencies.isEmpty { core.dependencies = spec.dependencies }
            core.unmetDependencies = unmet
            if unmet == 0 {
                transition(job, &core, to: .ready, &s, &effects)
                enqueueRestingPieces(job, &core, front: false, &s, &effects)
            } else {
                s.waiting[job.id] = job
                core.indexedAsWaiting = true
            }
        }
    }

    func addDependency(_ job: Job, on other: Job) throws(PrimeKitError) {
        guard job.scheduler === self, other.scheduler === self else {
            throw PrimeKitError(code: .foreignJob, message: "both jobs must belong to the same queue")
        }
        try locked { s, effects throws(PrimeKitError) in
            // A cycle exists if `job` is reachable from `other` through dependencies.
            var stack = [other]
            var seen: Set<ObjectIdentifier> = []
            while let next = stack.popLast() {
                if next === job {
                    throw PrimeKitError(code: .dependencyCycle,
                                        message: "\(job.id) depending on \(other.id) would make a cycle")
                }
                guard seen.insert(ObjectIdentifier(next)).inserted else { continue }
                stack += next.core.withLock(anchoredTo: next) { $0.dependencies }
            }
            let otherOutcome: JobOutcome? = other.core.withLock(anchoredTo: other) { core in
                if core.outcome == nil { core.dependents.append(job) }
                return core.outcome
            }
            let cause: CancellationReason? = try job.core.withLock(anchoredTo: job) { core throws(PrimeKitError) in
                guard core.state == .pending || core.state == .ready else {
                    throw PrimeKitError(code: .invalidState,
                                        message: "job \(job.id) is \(core.state.rawValue); only a pending or ready job can gain a dependency")
                }
                core.dependencies.append(other)
                switch otherOutcome {
                case .success: return nil
                case .failure(let error): return .dependencyFailed(other.id, error)
                case .cancelled(let reason): return .dependencyCancelled(other.id, reason)
                case nil:
                    core.unmetDependencies += 1
                    if core.state == .ready {
                        unqueueAll(&core)
                        transition(job, &core, to: .pending, &s, &effects)
                    }
                    return nil
                }
            }
            if let cause { cancel(job, reason: cause, &s, &effects) }
        }
    }

    // MARK: - Job operations

    func addResultWaiter(_ job: Job, _ continuation: CheckedContinuation<JobResult, any Error>) {
        let outcome: JobOutcome? = job.core.withLock(anchoredTo: job) { core in
            if let outcome = core.outcome { return outcome }
            core.resultWaiters.append(continuation)
            return nil
        }
        switch outcome {
        case .success(let result): continuation.resume(returning: result)
        case .failure(let error): continuation.resume(throwing: error)
        case .cancelled: continuation.resume(throwing: CancellationError())
        case nil: break
        }
    }

    func cancel(_ job: Job, reason: CancellationReason) {
        locked { s, effects in cancel(job, reason: reason, &s, &effects) }
    }

    func pause(_ job: Job, _ continuation: CheckedContinuation<Checkpoint, any Error>) {
        locked { s, effects in
            job.core.withLock(anchoredTo: job) { core in
                switch core.state {
                case .paused:
                    if core.pausedBy == .queue {
                        core.pausedBy = .user
                        s.queuePaused[job.id] = nil
                    }
                    let checkpoint = Result { () throws(PrimeKitError) -> Checkpoint in
                        if let saved = core.savedCheckpoint { return saved }
                        return try capture(job, &core, keep: true)
                    }
                    effects.add { continuation.resume(with: checkpoint) }
                case .ready, .running:
                    if core.cancelRequest != nil || core.pendingFailure != nil {
                        let error = PrimeKitError(code: .invalidState, message: "job \(job.id) is finishing")
                        effects.add { continuation.resume(throwing: error) }
                        return
                    }
                    core.pauseRequest = .user
                    core.pauseWaiters.append(continuation)
                    if core.piecesOnWorkers == 0 {
                        _ = settle(job, &core, &s, &effects)
                    } else {
                        interruptPieces(core, &effects)
                    }
                case .pending, .succeeded, .failed, .cancelled:
                    let error = PrimeKitError(code: .invalidState,
                                              message: "job \(job.id) is \(core.state.rawValue) and cannot be paused")
                    effects.add { continuation.resume(throwing: error) }
                }
            }
        }
    }

    func resume(_ job: Job) throws(PrimeKitError) {
        try locked { s, effects throws(PrimeKitError) in
            try job.core.withLock(anchoredTo: job) { core throws(PrimeKitError) in
                guard core.state == .paused else {
                    throw PrimeKitError(code: .invalidState,
                                        message: "job \(job.id) is \(core.state.rawValue), not paused")
                }
                resumePaused(job, &core, front: false, &s, &effects)
            }
        }
    }

    private func resumePaused(_ job: Job, _ core: inout JobCore, front: Bool, _ s: inout SchedulerState,
                              _ effects: inout Effects) {
        core.pausedBy = nil
        core.savedCheckpoint = nil
        transition(job, &core, to: .ready, &s, &effects)
        enqueueRestingPieces(job, &core, front: front, &s, &effects)
    }

    func checkpoint(_ job: Job, _ continuation: CheckedContinuation<Checkpoint, any Error>) {
        locked { s, effects in
            job.core.withLock(anchoredTo: job) { core in
                let invalid = PrimeKitError(code: .invalidState,
                                            message: "job \(job.id) is \(core.state.rawValue); it has no checkpoint")
                switch core.state {
                case .pending, .ready, .paused:
                    let checkpoint = Result { () throws(PrimeKitError) -> Checkpoint in
                        if core.state == .paused, let saved = core.savedCheckpoint { return saved }
                        return try capture(job, &core, keep: true)
                    }
                    effects.add { continuation.resume(with: checkpoint) }
                case .cancelled:
                    let checkpoint = Result { () throws(PrimeKitError) -> Checkpoint in
                        if let saved = core.savedCheckpoint { return saved }
                        return try capture(job, &core, keep: false)
                    }
                    effects.add { continuation.resume(with: checkpoint) }
                case .running:
                    if core.merging || core.cancelRequest != nil || core.pendingFailure != nil {
                        effects.add { continuation.resume(throwing: invalid) }
                        return
                    }
                    core.checkpointWaiters.append(continuation)
                    core.checkpointRequested = true
                    if core.piecesOnWorkers == 0 {
                        _ = settle(job, &core, &s, &effects)
                    } else {
                        interruptPieces(core, &effects)
                    }
                case .succeeded, .failed:
                    effects.add { continuation.resume(throwing: invalid) }
                }
            }
        }
    }

    func setPriority(of job: Job, to priority: JobPriority) {
        locked { s, effects in
            job.core.withLock(anchoredTo: job) { core in
                guard core.priority != priority else { return }
                core.priority = priority
                for index in core.pieces.indices where core.pieces[index].queued {
                    enqueue(job, &core, piece: index, front: false, &s, &effects)
                }
            }
        }
    }

    // MARK: - Queue operations

    var counts: JobCounts { state.withLock(anchoredTo: self) { $0.counts } }

    var unfinishedJobs: [Job] {
        state.withLock(anchoredTo: self) { s in s.unfinishedJobs }
    }

    func job(_ id: JobID) -> Job? {
        state.withLock(anchoredTo: self) { s in s.unfinishedJobs.first { $0.id == id } }
    }

    var isSuspended: Bool { state.withLock(anchoredTo: self) { $0.suspended } }
    var isInBackground: Bool { state.withLock(anchoredTo: self) { $0.background } }

    /// Suspends dispatch (by the user or by going to the background) and pauses running jobs at their next slice.
    func hold(background: Bool) {
        locked { s, effects in
            if background { s.background = true } else { s.suspended = true }
            for job in s.unfinishedJobs where job.core.withLock(anchoredTo: job, { $0.state == .running }) {
                job.core.withLock(anchoredTo: job) { core in
                    guard core.pauseRequest == nil, core.cancelRequest == nil, core.pendingFailure == nil,
                          !core.merging else { return }
                    core.pauseRequest = .queue
                    if core.piecesOnWorkers == 0 {
                        _ = settle(job, &core, &s, &effects)
                    } else {
                        interruptPieces(core, &effects)
                    }
                }
            }
        }
    }

    /// Lifts a suspension or the background hold; jobs the queue paused continue when both are lifted.
    func release(background: Bool) {
        locked { s, effects in
            if background { s.background = false } else { s.suspended = false }
            guard s.dispatchAllowed else { return }
            for job in s.queuePaused.values.sorted(by: { $0.id < $1.id }) {
                job.core.withLock(anchoredTo: job) { core in
                    if core.state == .paused, core.pausedBy == .queue {
                        resumePaused(job, &core, front: true, &s, &effects)
                    }
                }
            }
            s.queuePaused = [:]
            // Requests made while every worker was held: wake as many workers as there is work.
            let queued = s.levels.reduce(0) { $0 + $1.count }
            for _ in 0..<min(queued, s.idle.count) {
                let parker = s.idle.removeLast()
                effects.add { parker.unpark() }
            }
        }
    }

    /// Checkpoints of the jobs the queue paused.
    func queuePausedCheckpoints() -> [JobID: Checkpoint] {
        state.withLock(anchoredTo: self) { s in
            var result: [JobID: Checkpoint] = [:]
            for job in s.queuePaused.values {
                if let checkpoint = job.core.withLock(anchoredTo: job, { $0.savedCheckpoint }) { result[job.id] = checkpoint }
            }
            return result
        }
    }

    /// Cancels every unfinished job; returns their ids.
    @discardableResult
    func cancelAll(reason: CancellationReason) -> [JobID] {
        locked { s, effects in
            let jobs = s.unfinishedJobs
            for job in jobs { cancel(job, reason: reason, &s, &effects) }
            return jobs.map(\.id)
        }
    }

    /// Forgets the finished counts (after a reset).
    func clearFinishedCounts() {
        state.withLock(anchoredTo: self) { s in
            s.counts.succeeded = 0
            s.counts.failed = 0
            s.counts.cancelled = 0
        }
    }

    func wait(for condition: QueueCondition) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock(anchoredTo: self) { s in
                if s.holds(condition) { return true }
                s.waiters.append((condition, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Stops accepting work, cancels what is unfinished and lets the workers exit.
    func shutdown() {
        cancelAll(reason: .shutdown)
        let idle = state.withLock(anchoredTo: self) { s -> [Parker] in
            s.shutDown = true
            defer { s.idle.removeAll() }
            return s.idle
        }
        for parker in idle { parker.unpark() }
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
