/// Why a job is paused or about to be.
enum PauseOrigin: Sendable {
    /// `pause()` on the job.
    case user
    /// The queue was suspended or went to the background.
    case queue
}

/// How a finished job ended.
enum JobOutcome: Sendable {
    case success(JobResult)
    /// Succeeded below 2^32: the kernel's eight-byte answer, from which the job's result is made (equal each time)
    /// when somebody reads it — most small jobs' results are never read, and the answer costs no allocation and no
    /// reference counting on its way through the queue and the engine's events.
    case small(SmallAnswer)
    /// Boxed: the error is three words, and every job keeps room for its outcome.
    indirect case failure(PrimeKitError)
    case cancelled(CancellationReason)

    /// The result of a `kind` job that succeeded; nil when it did not.
    func result(kind: JobKind) -> JobResult? {
        switch self {
        case .success(let result): result
        case .small(let answer): answer.result(kind: kind)
        case .failure, .cancelled: nil
        }
    }
}

/// A job's end as `Scheduler.finish` leaves it: the outcome, and the dependents to tell (taken from the job in
/// the same hold of its lock).
struct JobEnd: Sendable {
    let outcome: JobOutcome
    let dependents: [Job]
}

/// A Task waiting in `Job.wait(until:)`.
struct StateWaiter: Sendable {
    let id: UInt64
    let states: Set<JobState>
    let continuation: CheckedContinuation<JobState, Never>
}

/// An internal listener on one job (used by batches).
struct JobObserver: Sendable {
    let progress: @Sendable (JobProgress) -> Void
    let finished: @Sendable (Job, JobOutcome) -> Void
}

/// The rarely used part of a job's state, allocated the first time one of its fields is set to something.
/// Accessed only under the job's mutex (through `JobCore`), hence `@unchecked Sendable`.
final class JobCoreExtras: @unchecked Sendable {
    var cancelRequest: CancellationReason? = nil
    var unmetDependencies = 0
    var pendingFailure: PrimeKitError? = nil
    var savedCheckpoint: Checkpoint? = nil
    var pauseWaiters: [CheckedContinuation<Checkpoint, any Error>] = []
    var checkpointWaiters: [CheckedContinuation<Checkpoint, any Error>] = []
    var resultWaiters: [CheckedContinuation<JobResult, any Error>] = []
    var stateWaiters: [StateWaiter] = []
    var nextWaiterID: UInt64 = 0
    var channels: [ProgressChannel<JobProgress>] = []
    var progressHandlers: [@Sendable (JobProgress) -> Void] = []
    var successHandlers: [@Sendable (JobResult) -> Void] = []
    var failureHandlers: [@Sendable (JobFailure) -> Void] = []
    var observers: [JobObserver] = []
    var seq: UInt64 = 0
    var lastPublish: ContinuousClock.Instant? = nil
    var lastSnapshot: JobProgress? = nil
    var dependencies: [Job] = []
    var dependents: [Job] = []
}

/// The mutable state of one job. Guarded by the job's mutex; changed only by the scheduler while it also holds the
/// queue's mutex (so readers may take the job's mutex alone).
struct JobCore: Sendable {
    var pieces: PieceList
    // The one-byte fields follow the pieces, where they share the words after the first piece.
    var state: JobState = .pending
    var priority: JobPriority
    var pauseRequest: PauseOrigin?
    var pausedBy: PauseOrigin?
    var checkpointRequested = false
    var merging = false
    /// The job is in the scheduler's index of pending and paused jobs.
    var indexedAsWaiting = false
    /// The end's callbacks are running: `result` waits for them (they run before its awaiters resume).
    var announcing = false
    /// Submitted through the scheduler's intake and not registered yet (state `pending` until then).
    var inIntake = false
    /// The most ECM shares of this job a worker was stepping at once (tests read it: shares run side by side).
    var peakSharesOnWorkers: UInt8 = 0
    /// Waiters, listeners, snapshots and dependencies: most small jobs never need them, so they live in a box
    /// allocated on first use and keep every job's footprint small. Measured against the same fields stored here
    /// (engine benchmark): batch submission of 10^6 jobs takes half the page faults (76,767 against 158,799) and
    /// 1.5x the rate, and one-by-one jobs 19 % fewer instructions (callgrind). A cancel request and the count of
    /// unmet dependencies live there too (16 bytes less a job).
    private var extras: JobCoreExtras?
    var outcome: JobOutcome?

    /// False while nobody has waited on, listened to, cancelled or checkpointed the job and it has no dependencies
    /// (most small jobs): every field kept in the extras is then at its initial value, and ending the job has
    /// nobody to tell.
    var hasExtras: Bool { extras != nil }

    private mutating func extrasBox() -> JobCoreExtras {
        if let extras { return extras }
        let created = JobCoreExtras()
        extras = created
        return created
    }

    var cancelRequest: CancellationReason? {
        get { extras?.cancelRequest ?? nil }
        set { if extras != nil || !(newValue == nil) { extrasBox().cancelRequest = newValue } }
    }
    var unmetDependencies: Int {
        get { extras?.unmetDependencies ?? 0 }
        set { if extras != nil || !(newValue == 0) { extrasBox().unmetDependencies = newValue } }
    }
    var pendingFailure: PrimeKitError? {
        get { extras?.pendingFailure ?? nil }
        set { if extras != nil || !(newValue == nil) { extrasBox().pendingFailure = newValue } }
    }
    var savedCheckpoint: Checkpoint? {
        get { extras?.savedCheckpoint ?? nil }
        set { if extras != nil || !(newValue == nil) { extrasBox().savedCheckpoint = newValue } }
    }
    var pauseWaiters: [CheckedContinuation<Checkpoint, any Error>] {
        get { extras?.pauseWaiters ?? [] }
        _modify { yield &extrasBox().pauseWaiters }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().pauseWaiters = newValue } }
    }
    var checkpointWaiters: [CheckedContinuation<Checkpoint, any Error>] {
        get { extras?.checkpointWaiters ?? [] }
        _modify { yield &extrasBox().checkpointWaiters }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().checkpointWaiters = newValue } }
    }
    var resultWaiters: [CheckedContinuation<JobResult, any Error>] {
        get { extras?.resultWaiters ?? [] }
        _modify { yield &extrasBox().resultWaiters }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().resultWaiters = newValue } }
    }
    var stateWaiters: [StateWaiter] {
        get { extras?.stateWaiters ?? [] }
        _modify { yield &extrasBox().stateWaiters }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().stateWaiters = newValue } }
    }
    var nextWaiterID: UInt64 {
        get { extras?.nextWaiterID ?? 0 }
        set { if extras != nil || !(newValue == 0) { extrasBox().nextWaiterID = newValue } }
    }
    var channels: [ProgressChannel<JobProgress>] {
        get { extras?.channels ?? [] }
        _modify { yield &extrasBox().channels }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().channels = newValue } }
    }
    var progressHandlers: [@Sendable (JobProgress) -> Void] {
        get { extras?.progressHandlers ?? [] }
        _modify { yield &extrasBox().progressHandlers }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().progressHandlers = newValue } }
    }
    var successHandlers: [@Sendable (JobResult) -> Void] {
        get { extras?.successHandlers ?? [] }
        _modify { yield &extrasBox().successHandlers }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().successHandlers = newValue } }
    }
    var failureHandlers: [@Sendable (JobFailure) -> Void] {
        get { extras?.failureHandlers ?? [] }
        _modify { yield &extrasBox().failureHandlers }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().failureHandlers = newValue } }
    }
    var observers: [JobObserver] {
        get { extras?.observers ?? [] }
        _modify { yield &extrasBox().observers }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().observers = newValue } }
    }
    var seq: UInt64 {
        get { extras?.seq ?? 0 }
        set { if extras != nil || !(newValue == 0) { extrasBox().seq = newValue } }
    }
    var lastPublish: ContinuousClock.Instant? {
        get { extras?.lastPublish ?? nil }
        set { if extras != nil || !(newValue == nil) { extrasBox().lastPublish = newValue } }
    }
    var lastSnapshot: JobProgress? {
        get { extras?.lastSnapshot ?? nil }
        set { if extras != nil || !(newValue == nil) { extrasBox().lastSnapshot = newValue } }
    }
    var dependencies: [Job] {
        get { extras?.dependencies ?? [] }
        _modify { yield &extrasBox().dependencies }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().dependencies = newValue } }
    }
    var dependents: [Job] {
        get { extras?.dependents ?? [] }
        _modify { yield &extrasBox().dependents }
        set { if extras != nil || !(newValue.isEmpty) { extrasBox().dependents = newValue } }
    }

    /// - Parameter pieces: The job's pieces; nil for one piece over the whole divisor range (built here, in place).
    init(priority: JobPriority, pieces: consuming PieceList?, inIntake: Bool = false) {
        self.priority = priority
        if let pieces { self.pieces = pieces } else { self.pieces = PieceList(whole: ()) }
        self.inIntake = inIntake
    }

    /// The merged answer of a split job lists every factor, also those no piece found itself (pieces that ended
    /// early at the shared limit leave a proven prime remainder to the merge): the final progress lists them too.
    mutating func adoptMergedFactors(_ result: Result<JobResult, PrimeKitError>) {
        guard case .success(let answer) = result, let listed = answer.factorization?.listedFactors else { return }
        pieces.update(0) { $0.factors = listed }
    }

    /// Somebody listens to progress.
    var hasProgressObservers: Bool {
        !channels.isEmpty || !progressHandlers.isEmpty || !observers.isEmpty
    }

    /// A pause, cancel or checkpoint is waiting for the pieces to come to rest.
    var holdRequested: Bool {
        pauseRequest != nil || cancelRequest != nil || checkpointRequested || pendingFailure != nil
    }

    /// Pieces a worker is stepping now.
    var piecesOnWorkers: Int {
        pieces.reduce(0) { $0 + ($1.onWorker ? 1 : 0) }
    }

    /// A progress snapshot from the pieces' last known progress.
    mutating func snapshot(jobID: JobID, state: JobState, percentOverride: Double? = nil) -> JobProgress {
        seq += 1
        let measured = measure(jobID: jobID, state: state, seq: seq)
        let previous = lastSnapshot?.percent ?? 0
        let snapshot = JobProgress(
            jobID: jobID, seq: seq, state: state,
            percent: percentOverride ?? max(previous, min(measured.percent, 100)),
            nextDivisor: measured.nextDivisor, divisorsTested: measured.divisorsTested,
            workDone: measured.workDone, factors: measured.factors, stage: measured.stage,
            stageFraction: measured.stageFraction, partsLeft: measured.partsLeft, ecm: measured.ecm,
            numbersDone: measured.numbersDone, numbersTotal: measured.numbersTotal)
        lastSnapshot = snapshot
        return snapshot
    }

    /// The job's progress as its pieces know it, without taking a snapshot (a job restored from a checkpoint
    /// reports where it stopped before its first slice).
    func measure(jobID: JobID, state: JobState, seq: UInt64) -> JobProgress {
        var percent = 0.0
        var tested: UInt64 = 0
        var work: UInt64 = 0
        var next = UInt64.max
        var factors: [PrimeFactor] = []
        // ECM shares all stand at the job's percentage until they merge (a share that is over is not done).
        let shares = pieces.count > 1 && pieces.read(0, \.ecmShare)
        // A small job's answer keeps its final progress and its factors until they are read (any other job's are
        // in its pieces); such a job has one piece.
        let small: (progress: KernelProgress, factors: [PrimeFactor])? =
            if case .small(let answer) = outcome { answer.progressAndFactors() } else { nil }
        let smallProgress = small?.progress
        for piece in pieces {
            let progress = smallProgress ?? piece.progress
            percent += piece.weight * (piece.finished && !shares ? 100 : progress.percent)
            tested &+= progress.divisorsTested
            work &+= progress.workDone
            if !piece.finished { next = min(next, piece.nextDivisor) }
            factors += piece.factors
        }
        if next == UInt64.max { next = smallProgress?.nextDivisor ?? pieces.map(\.nextDivisor).max() ?? 0 }
        let run = pieces.read(0) { $0.range?.run }
        let delivered = run?.computed ?? 0
        let rangeComplete = run?.isComplete ?? false
        if let run { percent = rangeComplete ? 100 : Double(delivered) / Double(run.total) * 100 }
        if factors.isEmpty, let small { factors = small.factors }
        if pieces.count > 1 {
            factors.sort { ($0.prime.utf8.count, $0.prime) < ($1.prime.utf8.count, $1.prime) }
        }
        var primes: [String] = []
        for factor in factors where primes.last != factor.prime { primes.append(factor.prime) }
        // One piece reports the kernel's stage; the pieces of a split job are all trial division.
        let stage: KernelStage
        let fraction: Double
        var partsLeft = 0
        var ecm: KernelProgress?
        if pieces.count == 1 {
            let piece = pieces[0]
            let progress = smallProgress ?? piece.progress
            stage = piece.finished ? .done : progress.stage
            fraction = piece.finished ? 1 : progress.stageFraction
            partsLeft = piece.finished ? 0 : Int(progress.partsLeft)
            if stage == .ecm { ecm = progress }
        } else if shares {
            // The curves below the lowest share's current one are all done: its fraction never goes back, and
            // the merged job's is at least that.
            stage = .ecm
            ecm = pieces.map(\.progress).min { $0.stageFraction < $1.stageFraction }
            fraction = ecm?.stageFraction ?? 0
            partsLeft = Int(pieces[0].progress.partsLeft)
        } else {
            stage = pieces.allSatisfy(\.finished) ? .done : .trial
            fraction = min(percent, 100) / 100
        }
        var progress = JobProgress(jobID: jobID, seq: seq, state: state, percent: min(percent, 100), nextDivisor: next,
                                   divisorsTested: tested, workDone: work, factors: primes, stage: stage.name,
                                   stageFraction: fraction, partsLeft: partsLeft)
        if let ecm, ecm.ecmCurve > 0 {
            progress.ecm = EcmPosition(curve: Int(ecm.ecmCurve), curves: Int(ecm.ecmCurves), b1: UInt64(ecm.ecmB1),
                                       digits: Int(ecm.ecmDigits))
        }
        if let run {
            progress.numbersDone = delivered
            progress.numbersTotal = run.total
            progress.stage = rangeComplete ? "done" : "range"
        }
        return progress
    }
}
