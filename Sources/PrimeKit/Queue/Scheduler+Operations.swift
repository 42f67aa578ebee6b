import DequeModule
import Foundation
import Synchronization

/// The operations the public API calls: submission, dependencies, job control, queue control.
extension Scheduler {
    // MARK: - Submission

    /// Validates, creates and registers jobs (all or none); they start as soon as their dependencies allow.
    /// `beforeRegistering` sees their handles before any of them can run.
    ///
    /// A batch without dependencies that outranks no running job joins the intake in one step, as a single job
    /// does while every worker is busy (see ``Intake``): the submitter never takes the queue's lock per job, and
    /// the workers take small jobs from the intake a batch at a time. Otherwise every job is registered here.
    func submit(contentsOf requests: [JobRequest], configuration: JobQueue.Configuration,
                beforeRegistering: ([Job]) -> Void = { _ in }) throws(PrimeKitError) -> [Job]
    {
        // Each job is made as soon as its request is validated, so its plan goes straight into it; the ids are
        // taken first and given back if a request is refused (unless another submission took ids meanwhile).
        let count = UInt64(requests.count)
        let end = nextJobID.add(count, ordering: .relaxed).newValue
        let workers = maxConcurrentJobs
        let lowestRunning = lowestRunningPriority.load(ordering: .relaxed)
        var viaIntake = true
        var highest = JobPriority.veryLow
        var jobs: [Job] = []
        jobs.reserveCapacity(requests.count)
        do {
            for index in requests.indices {
                jobs.append(try planned(requests[index], id: end - count + UInt64(index) + 1,
                                        configuration: configuration, workers: workers, lowestRunning: lowestRunning,
                                        viaIntake: &viaIntake, highest: &highest))
            }
        } catch {
            _ = nextJobID.compareExchange(expected: end, desired: end - count, ordering: .relaxed)
            throw error
        }
        beforeRegistering(jobs)
        if viaIntake {
            let accepted = intake.withLock(anchoredTo: intakeAnchor) { intake -> Bool in
                guard !intake.closed else { return false }
                intake.jobs.append(contentsOf: jobs)
                intakeCount.add(jobs.count, ordering: .sequentiallyConsistent)
                return true
            }
            guard accepted else { throw Self.shutDownError }
            // A parked worker does not look at the intake by itself: wake one (it wakes the next while the intake
            // holds more than it takes).
            if parkedWorkers.load(ordering: .sequentiallyConsistent) > 0 { wakeForIntake() }
            // Every worker on a long job's later slice: free one for the batch rather than wait for a slice to end.
            if longSliceHint.load(ordering: .sequentiallyConsistent) >= workers { shareWorkers(with: highest) }
            return jobs
        }
        return try locked { s, effects throws(PrimeKitError) in
            guard !s.shutDown else { throw Self.shutDownError }
            requests.withUnsafeBufferPointer { requests in
                for index in jobs.indices { register(jobs[index], dependencies: requests[index].dependencies, &s, &effects) }
            }
            return jobs
        }
    }

    /// One job of a batch, validated and planned. The request is read through this one borrow: with its fields
    /// read one by one in the caller, each read copied the request out of the array again (about 120
    /// instructions a copy). Clears `viaIntake` when the job has dependencies or outranks a running job.
    @inline(__always)
    private func planned(_ request: borrowing JobRequest, id: UInt64, configuration: JobQueue.Configuration,
                         workers: Int, lowestRunning: Int, viaIntake: inout Bool,
                         highest: inout JobPriority) throws(PrimeKitError) -> Job
    {
        if !request.isPlain, !request.dependencies.isEmpty {
            try checkDependencies(request.dependencies)
            viaIntake = false
        }
        if request.priority.rawValue > lowestRunning { viaIntake = false }
        highest = max(highest, request.priority)
        let (candidate, pieces, work, effort) = try JobPlan.make(request, configuration: configuration,
                                                                 workers: workers)
        return makeJob(request, id: id, candidate: candidate, pieces: consume pieces, estimatedWork: work,
                       effort: effort, inIntake: true)
    }

    /// One job: the same as `submit(contentsOf: [request])[0]` without the arrays (the one-at-a-time hot path);
    /// `candidate`, `pieces` and `estimatedWork` are the request's plan (``JobPlan/make(_:configuration:workers:)``).
    func submit(_ request: borrowing JobRequest, candidate: JobCandidate, pieces: consuming PieceList?, estimatedWork: Double,
                effort: JobEffort? = nil, beforeRegistering: (Job) -> Void = { _ in }) throws(PrimeKitError) -> Job
    {
        let dependencies = request.dependencies
        if !dependencies.isEmpty { try checkDependencies(dependencies) }
        // Every worker busy, nothing of lower priority running, no dependencies: the job joins the intake, which
        // the workers register from on their next trip into the lock, and the submitter never waits for them.
        let viaIntake = dependencies.isEmpty && parkedWorkers.load(ordering: .relaxed) == 0
            && request.priority.rawValue <= lowestRunningPriority.load(ordering: .relaxed)
        let job = makeJob(request, id: nextJobID.add(1, ordering: .relaxed).newValue, candidate: candidate,
                          pieces: consume pieces, estimatedWork: estimatedWork, effort: effort, inIntake: viaIntake)
        beforeRegistering(job)
        if viaIntake {
            let accepted = intake.withLock(anchoredTo: intakeAnchor) { intake -> Bool in
                guard !intake.closed else { return false }
                intake.jobs.append(job)
                intakeCount.add(1, ordering: .sequentiallyConsistent)
                return true
            }
            guard accepted else { throw Self.shutDownError }
            // A worker parked meanwhile (before it could see this job): register it now, which wakes one.
            if parkedWorkers.load(ordering: .sequentiallyConsistent) > 0 { drainIntake() }
            // Every worker on a long job's later slice: free one for this job rather than wait for a slice to end.
            if longSliceHint.load(ordering: .sequentiallyConsistent) >= workerTarget.load(ordering: .relaxed) {
                shareWorkers(with: request.priority)
            }
            return job
        }
        // The closure captures only the dependencies and the job.
        return try locked { s, effects throws(PrimeKitError) in
            guard !s.shutDown else { throw Self.shutDownError }
            register(job, dependencies: dependencies, &s, &effects)
            return job
        }
    }

    /// Makes the next job id at least `id + 1` (never lowers it).
    func raiseNextJobID(to id: UInt64) {
        var current = nextJobID.load(ordering: .relaxed)
        while current < id {
            let (exchanged, original) = nextJobID.compareExchange(expected: current, desired: id, ordering: .relaxed)
            if exchanged { return }
            current = original
        }
    }

    static let shutDownError = PrimeKitError(code: .queueShutDown, message: "the queue was shut down")

    func checkDependencies(_ dependencies: [Job]) throws(PrimeKitError) {
        for dependency in dependencies where dependency.scheduler !== self {
            throw PrimeKitError(code: .foreignJob, message: "dependency \(dependency.id) belongs to another queue")
        }
    }

    @inline(__always)
    func makeJob(_ request: borrowing JobRequest, id: UInt64, candidate: JobCandidate, pieces: consuming PieceList?,
                 estimatedWork: Double, effort: JobEffort?, inIntake: Bool) -> Job {
        Job(id: JobID(rawValue: id), kind: request.kind, candidate: candidate, progressInterval: request.progressInterval,
            estimatedWork: estimatedWork, priority: request.priority, pieces: consume pieces, mode: request.mode,
            effort: effort, inIntake: inIntake, keepsFinalCheckpoint: request.keepsFinalCheckpoint, scheduler: self)
    }

    /// Registers a new job: pending while dependencies run, ready (queued) otherwise, cancelled at once when a
    /// dependency already failed or was cancelled.
    func register(_ job: Job, dependencies: [Job], _ s: inout SchedulerState, _ effects: inout Effects) {
        s.counts.pending += 1
        var cause: CancellationReason?
        var unmet = 0
        for dependency in dependencies {
            dependency.core.withLock(anchoredTo: dependency) { core in
                switch core.outcome {
                case .success, .small: break
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
            core.inIntake = false
            if !dependencies.isEmpty { core.dependencies = dependencies }
            core.unmetDependencies = unmet
            if unmet == 0 {
                transition(job, &core, to: .ready, &s, &effects)
                if core.pieces.count == 1 && !core.pieces.read(0, \.finished) {
                    // A new one-piece job (the common case): its piece is neither queued nor on a worker.
                    enqueue(job, &core, piece: 0, continuing: false, &s, &effects)
                } else {
                    enqueueRestingPieces(job, &core, continuing: false, &s, &effects)
                }
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
                case .success, .small: return nil
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
            if let outcome = core.outcome, !core.announcing { return outcome }
            core.resultWaiters.append(continuation)
            return nil
        }
        switch outcome {
        case .success(let result): continuation.resume(returning: result)
        case .small(let answer): continuation.resume(returning: answer.result(kind: job.kind))
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
                resumePaused(job, &core, continuing: false, &s, &effects)
            }
        }
    }

    /// Puts a paused job back: among the new work when the user resumes it, among the jobs between slices when
    /// the queue does (`continuing`).
    func resumePaused(_ job: Job, _ core: inout JobCore, continuing: Bool, _ s: inout SchedulerState,
                      _ effects: inout Effects) {
        core.pausedBy = nil
        core.savedCheckpoint = nil
        transition(job, &core, to: .ready, &s, &effects)
        enqueueRestingPieces(job, &core, continuing: continuing, &s, &effects)
    }

    /// A cancelled job's checkpoint (the one it was cancelled with, else captured now).
    func cancelledCheckpoint(_ job: Job, _ core: inout JobCore) throws(PrimeKitError) -> Checkpoint {
        if let saved = core.savedCheckpoint { return saved }
        return try capture(job, &core, keep: false)
    }

    /// ``Job/cancelledCheckpoint``: nil unless the job is cancelled and has one.
    func cancelledCheckpoint(_ job: Job) -> Checkpoint? {
        locked { s, effects in
            job.core.withLock(anchoredTo: job) { core in
                core.state == .cancelled ? try? cancelledCheckpoint(job, &core) : nil
            }
        }
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
                        try cancelledCheckpoint(job, &core)
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
                    // A piece that has run keeps its place among the pieces between slices of its new level.
                    let started = core.pieces.read(index) { $0.kernel != nil }
                    enqueue(job, &core, piece: index, continuing: started, &s, &effects)
                }
            }
        }
    }

    // MARK: - Queue operations

    var counts: JobCounts { locked { s, _ in s.counts } }

    var unfinishedJobs: [Job] {
        locked { s, _ in s.unfinishedJobs }
    }

    func job(_ id: JobID) -> Job? {
        locked { s, _ in s.unfinishedJobs.first { $0.id == id } }
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
                        resumePaused(job, &core, continuing: true, &s, &effects)
                    }
                }
            }
            s.queuePaused = [:]
            // Requests made while every worker was held: wake as many workers as there is work.
            let queued = (s.fresh + s.continuing).reduce(0) { $0 + $1.count }
            for _ in 0..<min(queued, s.idle.count) {
                let parker = s.idle.removeLast()
                publishIdle(s)
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

    /// Cancels every unfinished job; returns them. A job a worker is finishing at this moment may still succeed
    /// or fail: its state says how it ended.
    @discardableResult
    func cancelAll(reason: CancellationReason) -> [Job] {
        locked { s, effects in
            let jobs = s.unfinishedJobs
            for job in jobs { cancel(job, reason: reason, &s, &effects) }
            return jobs
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
            let now = locked { s, _ in
                if s.holds(condition) { return true }
                s.waiters.append((condition, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Stops accepting work, cancels what is unfinished and lets the workers exit.
    func shutdown() {
        intake.withLock(anchoredTo: intakeAnchor) { $0.closed = true }
        cancelAll(reason: .shutdown)
        let idle = state.withLock(anchoredTo: self) { s -> [Parker] in
            s.shutDown = true
            defer {
                s.idle.removeAll()
                publishIdle(s)
            }
            return s.idle
        }
        for parker in idle { parker.unpark() }
    }

    // MARK: - Range jobs

    /// The consumer of a range job read a block from a full buffer: a job that waits for it is queued again (a
    /// paused or finished job is left alone; resuming queues it, and its next slice looks at the buffer).
    func wakeRange(_ job: Job) {
        locked { s, effects in
            job.core.withLock(anchoredTo: job) { core in
                guard core.state == .running, !core.holdRequested,
                      let run = core.pieces.read(0, { $0.range?.run }) else { return }
                s.parkedRanges[job.id] = nil
                for lane in run.unparkAll() where core.pieces.read(lane, { !$0.onWorker && !$0.queued && !$0.finished }) {
                    enqueue(job, &core, piece: lane, continuing: true, &s, &effects)
                }
            }
        }
    }
}
