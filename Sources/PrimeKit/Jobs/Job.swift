import Synchronization

/// A handle to one job of a ``JobQueue``: watch it, await its result, pause, resume, cancel or checkpoint it.
///
/// Handles are `Sendable` and cheap to share. Callbacks (`onProgress`, `onSuccess`, `onFailure`) run on one of the
/// engine's threads and should return quickly.
public final class Job: Sendable, Hashable, Identifiable, CustomStringConvertible {
    // Fields are ordered so that the small ones share the words after the candidate: a million queued jobs are
    // a million of these.

    /// The queue-unique id (`j1`, `j2`, …).
    public let id: JobID
    let scheduler: Scheduler
    /// The job's share of a batch's work, proportional to its estimated kernel work.
    let estimatedWork: Double
    /// The shortest time between two progress snapshots (to the nanosecond).
    public var progressInterval: Duration { .nanoseconds(progressNanoseconds) }
    /// `progressInterval` in nanoseconds (saturating): half a `Duration`'s 16 bytes.
    private let progressNanoseconds: Int64
    /// The candidate as submitted (an integer one is written out only when `candidate` is read).
    let submitted: JobCandidate
    /// What the job computes.
    public let kind: JobKind
    /// The job runs as one piece (its divisor range was not cut for several workers).
    let onePiece: Bool
    /// Complete factorization, or trial division over a range.
    let mode: FactorMode
    /// A trial-division factor job's result carries its final checkpoint (``JobRequest/keepsFinalCheckpoint``).
    let keepsFinalCheckpoint: Bool
    /// A complete job's effort limits and running time; nil when it has no limit (most jobs).
    let effort: JobEffort?
    let core: Mutex<JobCore>

    /// The candidate, decimal.
    public var candidate: String { submitted.decimal }

    init(id: JobID, kind: JobKind, candidate: JobCandidate, progressInterval: Duration, estimatedWork: Double,
         priority: JobPriority, pieces: consuming PieceList?, mode: FactorMode = .trialDivision,
         effort: JobEffort? = nil, inIntake: Bool = false, keepsFinalCheckpoint: Bool = false,
         scheduler: Scheduler) {
        self.mode = mode
        self.keepsFinalCheckpoint = keepsFinalCheckpoint
        self.effort = effort
        self.onePiece = (pieces?.count ?? 1) == 1
        self.id = id
        self.kind = kind
        self.submitted = candidate
        self.progressNanoseconds = Self.nanoseconds(progressInterval)
        self.estimatedWork = estimatedWork
        self.scheduler = scheduler
        self.core = Mutex(JobCore(priority: priority, pieces: consume pieces, inIntake: inIntake))
    }

    /// `duration` in whole nanoseconds, toward zero; saturated at the ends of `Int64`. (Not through `components`,
    /// which costs a 128-bit multiplication and division, four times this.)
    static func nanoseconds(_ duration: Duration) -> Int64 {
        Int64(clamping: duration.attoseconds / 1_000_000_000)
    }

    public static func == (lhs: Job, rhs: Job) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    public var description: String {
        "Job(\(id), \(kind.rawValue), \(candidate.count > 30 ? candidate.prefix(27) + "…" : candidate), \(state))"
    }

    /// The current state.
    public var state: JobState {
        let (state, inIntake) = core.withLock(anchoredTo: self) { ($0.state, $0.inIntake) }
        guard inIntake else { return state }
        // Submitted while every worker was busy and not registered yet: register it, then answer.
        scheduler.drainIntake()
        return core.withLock(anchoredTo: self) { $0.state }
    }

    /// The scheduling priority. Setting it takes effect at the job's next slice boundary.
    public var priority: JobPriority {
        get { core.withLock(anchoredTo: self) { $0.priority } }
        set { scheduler.setPriority(of: self, to: newValue) }
    }

    /// The latest progress snapshot taken; before the first one, what the job's kernel state says (where a
    /// restored job stopped, or nothing done).
    public var progress: JobProgress {
        core.withLock(anchoredTo: self) { core in
            core.lastSnapshot ?? core.measure(jobID: id, state: core.state, seq: 0)
        }
    }

    /// Why the job was cancelled (nil unless it was).
    public var cancellationReason: CancellationReason? {
        core.withLock(anchoredTo: self) { core in
            if case .cancelled(let reason) = core.outcome { return reason }
            return nil
        }
    }

    /// The error the job failed with (nil unless it failed).
    public var error: PrimeKitError? {
        core.withLock(anchoredTo: self) { core in
            if case .failure(let error) = core.outcome { return error }
            return nil
        }
    }

    /// The jobs this one depends on.
    public var dependencies: [Job] {
        core.withLock(anchoredTo: self) { $0.dependencies }
    }

    /// The result, once the job succeeds. Cancelling the awaiting Task cancels the job.
    /// - Throws: ``PrimeKitError`` when the job failed; `CancellationError` when it was cancelled (see
    ///   ``cancellationReason`` for why).
    public var result: JobResult {
        get async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    scheduler.addResultWaiter(self, continuation)
                }
            } onCancel: {
                scheduler.cancel(self, reason: .taskCancelled)
            }
        }
    }

    /// A `factorRange` job's blocks, in order, each delivered once (see ``RangeBlocks``); empty for other jobs.
    /// Read by one consumer at a time: a second concurrent reader gets `invalidState`.
    public var rangeBlocks: RangeBlocks {
        RangeBlocks(job: self, run: rangeRun, committing: true)
    }

    /// The blocks without committing them as they are read: the reader commits each with ``commitRangeBlock(_:)``
    /// once it is safely consumed (the bridge: once the client acknowledged it), so a checkpoint continues with
    /// the first block not committed.
    package var uncommittedRangeBlocks: RangeBlocks {
        RangeBlocks(job: self, run: rangeRun, committing: false)
    }

    /// Commits a block read from ``uncommittedRangeBlocks`` (blocks in order; others are ignored).
    package func commitRangeBlock(_ block: RangeBlock) {
        rangeRun?.commit(block)
    }

    /// Returns once this range job waits for its consumer (its buffer of unread blocks is full, so it is not
    /// scheduled), or has finished; at once for other jobs.
    public func waitUntilWaitingForConsumer() async {
        await rangeRun?.waitUntilWaiting()
    }

    /// Whether this range job waits for its consumer now.
    public var isWaitingForConsumer: Bool { rangeRun?.isWaitingForConsumer ?? false }

    /// A range job's shared state.
    var rangeRun: RangeRun? {
        guard kind == .factorRange else { return nil }
        return core.withLock(anchoredTo: self) { $0.pieces.read(0) { $0.range?.run } }
    }

    /// Progress snapshots, at most one per ``progressInterval``; the last one before success has percent 100.
    /// The sequence ends when the job finishes. Each iteration is its own subscription; snapshots taken before it
    /// started are not replayed.
    public var progressUpdates: ProgressUpdates<JobProgress> {
        ProgressUpdates { [self] in
            let channel = ProgressChannel<JobProgress>()
            let finished = core.withLock(anchoredTo: self) { core in
                if core.state.isFinished { return true }
                core.channels.append(channel)
                return false
            }
            if finished { channel.finish() }
            return channel
        }
    }

    /// Pauses the job at its next slice boundary and returns its checkpoint. Pausing a paused job returns its
    /// checkpoint again.
    /// - Returns: The checkpoint the job stopped at.
    /// - Throws: ``PrimeKitError`` `invalidState` when the job is pending or finished (or finishes before it stops).
    @discardableResult
    public func pause() async throws -> Checkpoint {
        try await withCheckedThrowingContinuation { continuation in
            scheduler.pause(self, continuation)
        }
    }

    /// Resumes a paused job: it re-enters the queue (state `ready`) and continues from where it stopped.
    /// - Throws: ``PrimeKitError`` `invalidState` when the job is not paused.
    public func resume() throws(PrimeKitError) {
        try scheduler.resume(self)
    }

    /// Cancels the job. A running job stops at its next slice boundary (well under a millisecond); dependents are
    /// cancelled with this job as the cause. Cancelling a finished job does nothing.
    public func cancel() {
        scheduler.cancel(self, reason: .requested)
    }

    /// A cancelled job's checkpoint, at once, from any thread (what `checkpoint()` returns for it); nil for a job
    /// in any other state.
    package var cancelledCheckpoint: Checkpoint? {
        scheduler.cancelledCheckpoint(self)
    }

    /// The job's checkpoint: taken at the next slice boundary of a running job (which keeps running), at once
    /// otherwise. A cancelled job returns the checkpoint it stopped at.
    /// - Returns: A checkpoint that ``JobRequest/restore(_:)`` continues from.
    /// - Throws: ``PrimeKitError`` `invalidState` for a succeeded or failed job.
    public func checkpoint() async throws -> Checkpoint {
        try await withCheckedThrowingContinuation { continuation in
            scheduler.checkpoint(self, continuation)
        }
    }

    /// Waits until the job is in one of `states`.
    /// - Parameter states: The states to wait for.
    /// - Returns: The state the job is in: one of `states`, or a finished state that can never change. If the
    ///   waiting Task is cancelled, returns at once with the current state (the job is not affected).
    @discardableResult
    public func wait(until states: JobState...) async -> JobState {
        let wanted = Set(states)
        let id = core.withLock(anchoredTo: self) { core in
            core.nextWaiterID += 1
            return core.nextWaiterID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now: JobState? = core.withLock(anchoredTo: self) { core in
                    // A job whose end is being announced answers once its callbacks have run.
                    if (wanted.contains(core.state) || core.state.isFinished || Task.isCancelled) && !core.announcing {
                        return core.state
                    }
                    core.stateWaiters.append(StateWaiter(id: id, states: wanted, continuation: continuation))
                    return nil
                }
                if let now { continuation.resume(returning: now) }
            }
        } onCancel: {
            let found: (JobState, StateWaiter)? = core.withLock(anchoredTo: self) { core in
                guard let index = core.stateWaiters.firstIndex(where: { $0.id == id }) else { return nil }
                return (core.state, core.stateWaiters.remove(at: index))
            }
            if let (state, waiter) = found { waiter.continuation.resume(returning: state) }
        }
    }

    /// Adds a dependency: this job starts only after `other` succeeds, and is cancelled if it fails or is cancelled.
    /// - Parameter other: A job of the same queue.
    /// - Throws: ``PrimeKitError`` `dependencyCycle`, `foreignJob`, or `invalidState` when this job already started.
    public func addDependency(_ other: Job) throws(PrimeKitError) {
        try scheduler.addDependency(self, on: other)
    }

    /// Calls `handler` with each progress snapshot (at most one per ``progressInterval``).
    /// - Parameter handler: Runs on an engine thread; keep it short.
    public func onProgress(_ handler: @escaping @Sendable (JobProgress) -> Void) {
        core.withLock(anchoredTo: self) { core in
            if !core.state.isFinished { core.progressHandlers.append(handler) }
        }
    }

    /// Calls `handler` with the result when the job succeeds (at once if it already has).
    /// - Parameter handler: Runs on an engine thread or the caller's; keep it short.
    public func onSuccess(_ handler: @escaping @Sendable (JobResult) -> Void) {
        let result: JobResult? = core.withLock(anchoredTo: self) { core in
            switch core.outcome {
            case .success, .small: return core.outcome?.result(kind: kind)
            case nil: core.successHandlers.append(handler)
            case .failure, .cancelled: break
            }
            return nil
        }
        if let result { handler(result) }
    }

    /// Calls `handler` when the job fails or is cancelled (at once if it already has).
    /// - Parameter handler: Runs on an engine thread or the caller's; keep it short.
    public func onFailure(_ handler: @escaping @Sendable (JobFailure) -> Void) {
        let failure: JobFailure? = core.withLock(anchoredTo: self) { core in
            switch core.outcome {
            case .failure(let error): return .failed(error)
            case .cancelled(let reason): return .cancelled(reason)
            case nil: core.failureHandlers.append(handler)
            default: break
            }
            return nil
        }
        if let failure { handler(failure) }
    }

    /// Registers an internal observer; reports at once when the job already finished.
    func addObserver(_ observer: JobObserver) {
        let outcome: JobOutcome? = core.withLock(anchoredTo: self) { core in
            if let outcome = core.outcome { return outcome }
            core.observers.append(observer)
            return nil
        }
        if let outcome { observer.finished(self, outcome) }
    }
}

/// A test seam, not API: the queue asks it before each slice whether the job fails with an error instead of
/// running (``JobQueue/Configuration/failureInjection``, ``Engine/Options/failureInjection``). Only tests set one;
/// jobs and requests carry nothing for it.
struct FailureInjection: Sendable {
    let error: @Sendable (Job) -> PrimeKitError?
}
