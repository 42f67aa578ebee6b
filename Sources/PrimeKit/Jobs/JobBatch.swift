import Synchronization

/// Jobs submitted together, watched as one: per-job and overall progress (jobs finished and work done), one
/// completion, and the list of failed jobs. Create one with ``JobQueue/submitBatch(_:progressInterval:)``.
public final class JobBatch: Sendable {
    private struct State: Sendable {
        var percent: [Double]
        var outcomes: [JobOutcome?]
        var finished = 0
        var succeeded = 0
        var failed = 0
        var cancelled = 0
        var seq: UInt64 = 0
        var lastPublish: ContinuousClock.Instant?
        var latest: BatchProgress?
        var channels: [ProgressChannel<BatchProgress>] = []
        var progressHandlers: [@Sendable (BatchProgress) -> Void] = []
        var completionHandlers: [@Sendable (BatchOutcome) -> Void] = []
        var waiters: [CheckedContinuation<BatchOutcome, Never>] = []
        var outcome: BatchOutcome?
        /// The completion handlers are running: `outcome` waits for them (they run before its awaiters resume).
        var announcing = false
    }

    /// The jobs, in submission order.
    public let jobs: [Job]
    /// The shortest time between two progress snapshots (the last one, with every job finished, is always sent).
    public let progressInterval: Duration
    private let weights: [Double]
    private let index: [JobID: Int]
    private let state: Mutex<State>

    init(jobs: [Job], progressInterval: Duration) {
        self.jobs = jobs
        self.progressInterval = progressInterval
        let total = jobs.reduce(0) { $0 + $1.estimatedWork }
        weights = jobs.map { total > 0 ? $0.estimatedWork / total : 1 / Double(jobs.count) }
        index = Dictionary(uniqueKeysWithValues: jobs.enumerated().map { ($1.id, $0) })
        state = Mutex(State(percent: Array(repeating: 0, count: jobs.count),
                            outcomes: Array(repeating: nil, count: jobs.count)))
        for job in jobs {
            job.addObserver(JobObserver(
                progress: { [weak self] snapshot in self?.jobProgressed(snapshot) },
                finished: { [weak self] job, outcome in self?.jobFinished(job, outcome) }))
        }
        if jobs.isEmpty { complete() }
    }

    /// The latest snapshot.
    public var progress: BatchProgress {
        state.withLock(anchoredTo: self) { state in state.latest ?? makeSnapshot(&state) }
    }

    /// Progress snapshots, at most one per ``progressInterval`` plus the final one; ends when every job finished.
    public var progressUpdates: ProgressUpdates<BatchProgress> {
        ProgressUpdates { [self] in
            let channel = ProgressChannel<BatchProgress>()
            let done = state.withLock(anchoredTo: self) { state in
                if state.outcome != nil { return true }
                state.channels.append(channel)
                return false
            }
            if done { channel.finish() }
            return channel
        }
    }

    /// Waits until every job finished.
    public var outcome: BatchOutcome {
        get async {
            await withCheckedContinuation { continuation in
                let done = state.withLock(anchoredTo: self) { state -> BatchOutcome? in
                    if let outcome = state.outcome, !state.announcing { return outcome }
                    state.waiters.append(continuation)
                    return nil
                }
                if let done { continuation.resume(returning: done) }
            }
        }
    }

    /// Calls `handler` with each progress snapshot, on an engine thread.
    public func onProgress(_ handler: @escaping @Sendable (BatchProgress) -> Void) {
        state.withLock(anchoredTo: self) { $0.progressHandlers.append(handler) }
    }

    /// Calls `handler` once every job finished (at once if they have).
    public func onCompletion(_ handler: @escaping @Sendable (BatchOutcome) -> Void) {
        let done = state.withLock(anchoredTo: self) { state -> BatchOutcome? in
            if let outcome = state.outcome { return outcome }
            state.completionHandlers.append(handler)
            return nil
        }
        if let done { handler(done) }
    }

    /// Cancels every unfinished job of the batch.
    public func cancel() {
        for job in jobs { job.cancel() }
    }

    private func makeSnapshot(_ state: inout State) -> BatchProgress {
        state.seq += 1
        var work = 0.0
        var byJob: [JobID: Double] = [:]
        byJob.reserveCapacity(jobs.count)
        for (position, job) in jobs.enumerated() {
            let percent = state.outcomes[position] != nil ? 100 : state.percent[position]
            work += weights[position] * percent / 100
            byJob[job.id] = state.percent[position]
        }
        let snapshot = BatchProgress(
            seq: state.seq, finished: state.finished, total: jobs.count, succeeded: state.succeeded,
            failed: state.failed, cancelled: state.cancelled, percentByJob: byJob,
            // Every job finished is all the work, whatever the weights' rounding adds up to.
            fractionOfWork: state.finished == jobs.count ? 1 : min(1, work))
        state.latest = snapshot
        return snapshot
    }

    private func jobProgressed(_ snapshot: JobProgress) {
        guard let position = index[snapshot.jobID] else { return }
        publish(force: false) { state in
            state.percent[position] = max(state.percent[position], snapshot.percent)
        }
    }

    private func jobFinished(_ job: Job, _ outcome: JobOutcome) {
        guard let position = index[job.id] else { return }
        let last = publish(force: nil) { state in
            guard state.outcomes[position] == nil else { return }
            state.outcomes[position] = outcome
            state.finished += 1
            switch outcome {
            case .success, .small:
                state.succeeded += 1
                state.percent[position] = 100
            case .failure: state.failed += 1
            case .cancelled: state.cancelled += 1
            }
        }
        if last { complete() }
    }

    /// Applies `change`, then sends a snapshot if the interval passed (or always for the final one).
    /// - Returns: True when every job has finished.
    @discardableResult
    private func publish(force: Bool?, _ change: (inout State) -> Void) -> Bool {
        let (snapshot, channels, handlers, allDone) = state.withLock(anchoredTo: self) { state in
            change(&state)
            let allDone = state.finished == jobs.count
            let now = ContinuousClock.now
            let due = allDone || state.lastPublish.map { $0.duration(to: now) >= progressInterval } ?? true
            guard due, !(state.channels.isEmpty && state.progressHandlers.isEmpty) || allDone else {
                return (nil as BatchProgress?, [ProgressChannel<BatchProgress>](),
                        [@Sendable (BatchProgress) -> Void](), allDone)
            }
            state.lastPublish = now
            return (makeSnapshot(&state), state.channels, state.progressHandlers, allDone)
        }
        if let snapshot {
            for channel in channels { channel.send(snapshot) }
            for handler in handlers { handler(snapshot) }
        }
        return allDone
    }

    private func complete() {
        let (outcome, channels, handlers) = state.withLock(anchoredTo: self) { state in
            var results: [JobID: JobResult] = [:]
            var failed: [Job] = []
            var cancelled: [Job] = []
            for (position, job) in jobs.enumerated() {
                switch state.outcomes[position] {
                case .success, .small: results[job.id] = state.outcomes[position]?.result(kind: job.kind)
                case .failure: failed.append(job)
                case .cancelled: cancelled.append(job)
                case nil: break
                }
            }
            let outcome = BatchOutcome(results: results, failed: failed, cancelled: cancelled)
            state.outcome = outcome
            state.announcing = true
            defer {
                state.channels = []
                state.completionHandlers = []
                state.progressHandlers = []
            }
            return (outcome, state.channels, state.completionHandlers)
        }
        for channel in channels { channel.finish() }
        for handler in handlers { handler(outcome) }
        // The awaiters, including those that came while the handlers ran, are taken only now.
        let waiters = state.withLock(anchoredTo: self) { state in
            state.announcing = false
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: outcome) }
    }
}
