import DequeModule
import Foundation
import Synchronization

/// What happens between slices: applying a worker's report, settling pause/cancel/checkpoint requests, the one
/// state-transition function, finishing jobs and passing outcomes to dependents.
extension Scheduler {
    // MARK: - Slice reports

    func apply(_ report: SliceReport, _ s: inout SchedulerState, _ effects: inout Effects) -> WorkerStep? {
        switch report {
        case .stepped(let job, let piece, let step, let progress, let factors, let elapsed, let units):
            if step == .more { calibrate(elapsed: elapsed, units: units, &s) }
            var mergeKernels: [KernelJob]?
            let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
                let ended = core.pieces.update(piece) {
                    $0.onWorker = false
                    $0.progress = progress
                    if let factors { $0.factors = factors }
                    return $0.finished  // an ECM share stopped because another found a factor
                }
                if ended {
                    mergeKernels = sharesToMerge(&core)
                    if mergeKernels != nil { return nil }
                }
                if core.holdRequested || core.state != .running {
                    return settle(job, &core, &s, &effects)
                }
                publishProgress(job, &core, &s, &effects)
                if !ended { enqueue(job, &core, piece: piece, continuing: true, &s, &effects) }
                enqueueUnparkedLanes(job, &core, &s, &effects)
                return nil
            }
            if let end { propagate(job, end, &s, &effects) }
            if let mergeKernels { return .merge(job, mergeKernels) }
            return nil

        case .shared(let job, let piece, let shares, let progress, let factors):
            let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
                core.pieces.update(piece) { $0.onWorker = false }
                // The job's one piece becomes the shares; its kernel job is let go (the shares hold its state).
                var pieces: [PieceState] = []
                for (kernel, progress) in zip(shares, progress) {
                    var share = PieceState(from: nil, bound: nil, weight: 1 / Double(shares.count), kernel: kernel)
                    share.ecmShare = true
                    share.progress = progress
                    share.factors = factors
                    pieces.append(share)
                }
                core.pieces = PieceList(pieces)
                if core.holdRequested || core.state != .running {
                    return settle(job, &core, &s, &effects)
                }
                publishProgress(job, &core, &s, &effects)
                enqueueRestingPieces(job, &core, continuing: true, &s, &effects)
                return nil
            }
            if let end { propagate(job, end, &s, &effects) }
            return nil

        case .sharesMerged(let job, let result):
            let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
                core.merging = false
                switch result {
                case .success(let (kernel, progress, factors)):
                    var one = PieceState(from: nil, bound: nil, weight: 1, kernel: kernel)
                    one.progress = progress
                    one.factors = factors
                    core.pieces = PieceList(one)
                case .failure(let error):
                    return finish(job, &core, outcome: .failure(error), &s, &effects)
                }
                if core.holdRequested || core.state != .running {
                    return settle(job, &core, &s, &effects)
                }
                publishProgress(job, &core, &s, &effects)
                enqueueRestingPieces(job, &core, continuing: true, &s, &effects)
                return nil
            }
            if let end { propagate(job, end, &s, &effects) }
            return nil

        case .finished(let job, let piece, let progress, let factors, let outcome):
            var mergeKernels: [KernelJob]?
            let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
                core.pieces.update(piece) {
                    $0.onWorker = false
                    $0.finished = true
                    if let progress { $0.progress = progress }
                    // A finished job's listed factors come with the report, read on the worker; a small job's stay in
                    // its answer until read, with its progress (`JobCore.measure` looks there).
                    if let factors { $0.factors = factors }
                }
                if let outcome {
                    return finish(job, &core, outcome: outcome, &s, &effects)
                }
                if let run = core.pieces.read(piece, { $0.range?.run }) {
                    // A range job's lane found no chunk left: the job ends with its last lane.
                    if core.pieces.allSatisfy(\.finished), core.piecesOnWorkers == 0, core.pendingFailure == nil {
                        return finish(job, &core, outcome: .success(.rangeSummary(run.summary())), &s, &effects)
                    }
                    if core.holdRequested || core.state != .running { return settle(job, &core, &s, &effects) }
                    publishProgress(job, &core, &s, &effects)
                    return nil
                }
                if core.pieces.read(piece, \.ecmShare) {
                    // A share that found a factor ends the others: those on a worker are interrupted, the rest
                    // leave the queue; the shares merge once none is on a worker.
                    if core.pieces.read(piece, { $0.kernel?.shareInfo()?.found ?? false }) {
                        for index in core.pieces.indices where index != piece {
                            core.pieces.update(index) {
                                $0.finished = true
                                $0.queued = false
                            }
                        }
                        interruptPieces(core, &effects)
                    }
                    mergeKernels = sharesToMerge(&core)
                    if mergeKernels != nil { return nil }
                    if core.holdRequested { return settle(job, &core, &s, &effects) }
                    publishProgress(job, &core, &s, &effects)
                    return nil
                }
                if core.pieces.allSatisfy(\.finished), core.piecesOnWorkers == 0, core.pendingFailure == nil {
                    core.merging = true
                    mergeKernels = core.pieces.compactMap(\.kernel)
                    return nil
                }
                if core.holdRequested { return settle(job, &core, &s, &effects) }
                publishProgress(job, &core, &s, &effects)
                return nil
            }
            if let end { propagate(job, end, &s, &effects) }
            if let mergeKernels { return .merge(job, mergeKernels) }
            return nil

        case .failed(let job, let piece, let error):
            let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
                core.pieces.update(piece) { $0.onWorker = false }
                if core.pendingFailure == nil { core.pendingFailure = error }
                if core.piecesOnWorkers == 0 { return settle(job, &core, &s, &effects) }
                interruptPieces(core, &effects)
                return nil
            }
            if let end { propagate(job, end, &s, &effects) }
            return nil

        case .blocked(let job, let piece):
            let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
                core.pieces.update(piece) { $0.onWorker = false }
                if core.holdRequested || core.state != .running {
                    return settle(job, &core, &s, &effects)
                }
                guard let run = core.pieces.read(piece, { $0.range?.run }) else { return nil }
                let (waits, waiters) = run.park(lane: piece)
                if waits {
                    s.parkedRanges[job.id] = job
                    publishProgress(job, &core, &s, &effects)
                    if !waiters.isEmpty { effects.add { for waiter in waiters { waiter.resume() } } }
                } else {
                    enqueue(job, &core, piece: piece, continuing: true, &s, &effects)
                }
                return nil
            }
            if let end { propagate(job, end, &s, &effects) }
            return nil

        case .merged(let job, let result):
            let end: JobEnd = job.core.withLock(anchoredTo: job) { core in
                core.merging = false
                core.adoptMergedFactors(result)
                return finish(job, &core, outcome: JobOutcome(result), &s, &effects)
            }
            propagate(job, end, &s, &effects)
            return nil
        }
    }

    /// Queues the lanes of a range job that waited for the head chunk to move on and now can (after a slice of
    /// another lane).
    func enqueueUnparkedLanes(_ job: Job, _ core: inout JobCore, _ s: inout SchedulerState, _ effects: inout Effects) {
        guard core.pieces.count > 1, let run = core.pieces.read(0, { $0.range?.run }) else { return }
        for lane in run.unparkRunnable() where core.pieces.read(lane, { !$0.onWorker && !$0.queued && !$0.finished }) {
            enqueue(job, &core, piece: lane, continuing: true, &s, &effects)
        }
    }

    /// The kernel jobs of a complete job's ECM shares once all are over (or ended by a share's factor) and none is
    /// on a worker; the job is then merging. Nil otherwise.
    func sharesToMerge(_ core: inout JobCore) -> [KernelJob]? {
        guard core.pieces.count > 1, core.pieces.read(0, \.ecmShare), core.pieces.allSatisfy(\.finished),
              core.piecesOnWorkers == 0, core.pendingFailure == nil, !core.merging
        else { return nil }
        core.merging = true
        return core.pieces.compactMap(\.kernel)
    }

    /// Keeps slices near the target length: units of work per second measured on real slices.
    func calibrate(elapsed: Duration, units: UInt64, _ s: inout SchedulerState) {
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        guard seconds > 0.0002, units > 0 else { return }
        let target = Double(sliceNanoseconds.load(ordering: .relaxed)) * 1e-9
        let ideal = Double(units) / seconds * target
        let blended = (Double(s.budget) * 3 + ideal) / 4
        s.budget = UInt64(min(max(blended, 10_000), 1e13))
    }

    /// A job with no piece on a worker acts on what was asked of it: fail, cancel, pause, or checkpoint.
    /// Returns the job's end when it finished.
    func settle(_ job: Job, _ core: inout JobCore, _ s: inout SchedulerState, _ effects: inout Effects)
        -> JobEnd?
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
        if core.state == .running { enqueueRestingPieces(job, &core, continuing: true, &s, &effects) }
        return nil
    }

    /// The job's checkpoint from its pieces at rest; a piece that never started gets its kernel job now.
    func capture(_ job: Job, _ core: inout JobCore, keep: Bool) throws(PrimeKitError) -> Checkpoint {
        // A range job's piece is its sieve (with the position its consumer committed).
        if let run = core.pieces.read(0, { $0.range?.run }) { return try run.checkpoint(kind: job.kind) }
        var pieces: [Checkpoint.Piece] = []
        for index in core.pieces.indices {
            let piece = core.pieces[index]
            let kernel: KernelJob
            if let existing = piece.kernel {
                kernel = existing
            } else {
                kernel = try makeKernel(job, from: piece.from, bound: piece.bound)
                if keep { core.pieces.update(index) { $0.kernel = kernel } }
            }
            pieces.append(try Checkpoint.Piece(kernel))
        }
        let effort = job.effort
        return Checkpoint(kind: job.kind, pieces: pieces, timeLimit: effort?.timeLimit,
                          runningTime: effort?.running.load(ordering: .relaxed) ?? 0)
    }

    /// A kernel job for a piece of `job`: complete (with the job's effort limits) unless the piece has a range.
    func makeKernel(_ job: Job, from: String?, bound: String?) throws(PrimeKitError) -> KernelJob {
        try KernelJob.create(candidate: job.candidate, from: from, bound: bound, limits: limits,
                             complete: job.mode == .complete, ecmDigits: job.effort?.ecmDigits ?? 0,
                             workLimit: job.effort?.workLimit ?? 0)
    }

    func unqueueAll(_ core: inout JobCore) {
        core.pieces.updateAll { $0.queued = false }
    }

    /// Interrupts every piece a worker is stepping (after the locks are released).
    func interruptPieces(_ core: JobCore, _ effects: inout Effects) {
        let kernels = core.pieces.filter(\.onWorker).compactMap(\.kernel)
        if !kernels.isEmpty { effects.add { for kernel in kernels { kernel.interrupt() } } }
        let runs = core.pieces.filter(\.onWorker).compactMap { $0.range?.run }
        if !runs.isEmpty { effects.add { for run in runs { run.interrupt() } } }
    }

    /// Sends a progress snapshot when somebody listens and the job's interval has passed.
    func publishProgress(_ job: Job, _ core: inout JobCore, _ s: inout SchedulerState, _ effects: inout Effects) {
        let tapping = s.tapProgress && s.tap != nil
        guard core.hasProgressObservers || tapping else { return }
        let now = ContinuousClock.now
        if let last = core.lastPublish, last.duration(to: now) < job.progressInterval { return }
        core.lastPublish = now
        let snapshot = core.snapshot(jobID: job.id, state: core.state)
        if tapping { effects.tap(progress: snapshot, from: s) }
        deliver(snapshot, &core, &effects)
    }

    func deliver(_ snapshot: JobProgress, _ core: inout JobCore, _ effects: inout Effects) {
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
    func transition(_ job: Job, _ core: inout JobCore, to next: JobState, _ s: inout SchedulerState,
                            _ effects: inout Effects) {
        let previous = core.state
        precondition(previous.canTransition(to: next), "PrimeKit: invalid job transition \(previous) → \(next)")
        core.state = next
        s.counts[previous] -= 1
        s.counts[next] += 1
        if previous == .paused { s.queuePaused[job.id] = nil }
        if previous == .running, !s.parkedRanges.isEmpty { s.parkedRanges[job.id] = nil }
        let waits = next == .pending || next == .paused
        if waits != core.indexedAsWaiting {
            s.waiting[job.id] = waits ? job : nil
            core.indexedAsWaiting = waits
        }
        if core.hasExtras { resumeStateWaiters(&core, next, &effects) }
    }

    /// The `wait(until:)` callers a transition to `next` answers. Out of line: most jobs have nobody waiting, and
    /// this part's frame (an array of continuations, a closure) made every transition several times as long.
    @inline(never)
    func resumeStateWaiters(_ core: inout JobCore, _ next: JobState, _ effects: inout Effects) {
        guard !core.stateWaiters.isEmpty else { return }
        var ready: [CheckedContinuation<JobState, Never>] = []
        core.stateWaiters.removeAll { waiter in
            guard waiter.states.contains(next) || next.isFinished else { return false }
            ready.append(waiter.continuation)
            return true
        }
        let resumed = ready
        if !resumed.isEmpty { effects.add { for continuation in resumed { continuation.resume(returning: next) } } }
    }

    /// Ends the announcement of a job that had nobody to tell when it finished, after the queue's tap has seen its
    /// end: answers the awaiters that came meanwhile.
    static func endAnnouncement(of job: Job, _ outcome: JobOutcome, _ finalState: JobState) {
        let (resultWaiters, stateWaiters) = job.core.withLock(anchoredTo: job) { core in
            core.announcing = false
            defer {
                core.resultWaiters = []
                core.stateWaiters = []
            }
            return (core.resultWaiters, core.stateWaiters)
        }
        for waiter in stateWaiters { waiter.continuation.resume(returning: finalState) }
        guard !resultWaiters.isEmpty else { return }
        switch outcome {
        case .success, .small:
            let result = outcome.result(kind: job.kind)!
            for waiter in resultWaiters { waiter.resume(returning: result) }
        case .failure(let error): for waiter in resultWaiters { waiter.resume(throwing: error) }
        case .cancelled: for waiter in resultWaiters { waiter.resume(throwing: CancellationError()) }
        }
    }

    /// Ends a job: stores the outcome, wakes every awaiter and callback, frees the kernel jobs, and takes its
    /// dependents, in the same hold of the job's lock that sets the outcome (after it none can be added).
    func finish(_ job: Job, _ core: inout JobCore, outcome: JobOutcome, _ s: inout SchedulerState,
                        _ effects: inout Effects) -> JobEnd {
        unqueueAll(&core)
        let extras = core.hasExtras
        // `wait(until:)` callers are resumed with the awaiters of the result: after the callbacks.
        let stateWaiters = extras ? core.stateWaiters : []
        if extras { core.stateWaiters = [] }
        let end = JobEnd(outcome: outcome, dependents: extras ? core.dependents : [])  // kept in the extras
        if extras { core.dependents = [] }
        // Set before the last snapshot: a small job's final progress comes from its answer.
        core.outcome = outcome
        switch outcome {
        case .success, .small:
            if extras && core.hasProgressObservers {
                deliver(core.snapshot(jobID: job.id, state: .running, percentOverride: 100), &core, &effects)
            } else if extras, core.lastSnapshot != nil {
                // Snapshots were taken (the engine's tap) but nobody listens now: `progress` reads the job's end,
                // not the last snapshot the interval let through.
                _ = core.snapshot(jobID: job.id, state: .running, percentOverride: 100)
            }
            transition(job, &core, to: .succeeded, &s, &effects)
        case .failure:
            transition(job, &core, to: .failed, &s, &effects)
        case .cancelled:
            if core.savedCheckpoint == nil, core.pieces.contains(where: { $0.kernel != nil || $0.range?.run != nil }) {
                core.savedCheckpoint = try? capture(job, &core, keep: false)
            }
            transition(job, &core, to: .cancelled, &s, &effects)
        }
        let finalState = core.state
        if let run = core.pieces.read(0, { $0.range?.run }) {
            let error: (any Error)? = switch outcome {
            case .success, .small: nil
            case .failure(let error): error
            case .cancelled: CancellationError()
            }
            effects.add { run.end(error) }
        }
        // The tap's final word on a job is its end (it needs no 100 % snapshot before it).
        effects.tap(finished: job, outcome, from: s)
        core.pieces.updateAll { $0.kernel = nil }
        core.cancelRequest = nil
        core.pauseRequest = nil
        // Nobody waits, listens or holds a channel: nothing more to do (the common case for small jobs) — but with
        // a tap that holds results, `result` and `wait(until:)` asked from now on answer only once the tap has seen
        // the end (the engine's store files it there: `await job.result` then `persistNow()` must include it).
        guard extras else {
            if s.tapHoldsResults {
                core.announcing = true
                effects.endAnnouncement(of: job, outcome, finalState)
            }
            return end
        }

        let pauseWaiters = core.pauseWaiters
        let checkpointWaiters = core.checkpointWaiters
        let channels = core.channels
        let successHandlers = core.successHandlers
        let failureHandlers = core.failureHandlers
        let observers = core.observers
        let saved = core.savedCheckpoint
        core.pauseWaiters = []
        core.checkpointWaiters = []
        core.channels = []
        core.progressHandlers = []
        core.successHandlers = []
        core.failureHandlers = []
        core.observers = []

        for channel in channels { channel.finish() }
        // Nothing to tell anybody (the common case for small jobs): no closure at all.
        if core.resultWaiters.isEmpty && pauseWaiters.isEmpty && checkpointWaiters.isEmpty && successHandlers.isEmpty
            && failureHandlers.isEmpty && observers.isEmpty {
            if !stateWaiters.isEmpty {
                effects.add { for waiter in stateWaiters { waiter.continuation.resume(returning: finalState) } }
            }
            return end
        }
        let notFinishedYet = PrimeKitError(code: .invalidState, message: "job \(job.id) finished before it stopped")
        core.announcing = true
        effects.add {
            // Callbacks and observers first, so whoever awaits the result sees them done. A small job's result is
            // made once here, for all of them.
            let result = outcome.result(kind: job.kind)
            switch outcome {
            case .success, .small: for handler in successHandlers { handler(result!) }
            case .failure(let error): for handler in failureHandlers { handler(.failed(error)) }
            case .cancelled(let reason): for handler in failureHandlers { handler(.cancelled(reason)) }
            }
            for observer in observers { observer.finished(job, outcome) }
            // The awaiters, including those that came while the callbacks ran, are taken only now.
            let (resultWaiters, lateStateWaiters) = job.core.withLock(anchoredTo: job) { core in
                core.announcing = false
                defer {
                    core.resultWaiters = []
                    core.stateWaiters = []
                }
                return (core.resultWaiters, core.stateWaiters)
            }
            for waiter in stateWaiters + lateStateWaiters { waiter.continuation.resume(returning: finalState) }
            switch outcome {
            case .success, .small: for waiter in resultWaiters { waiter.resume(returning: result!) }
            case .failure(let error): for waiter in resultWaiters { waiter.resume(throwing: error) }
            case .cancelled: for waiter in resultWaiters { waiter.resume(throwing: CancellationError()) }
            }
            for waiter in pauseWaiters { waiter.resume(throwing: notFinishedYet) }
            for waiter in checkpointWaiters {
                if let saved { waiter.resume(returning: saved) } else { waiter.resume(throwing: notFinishedYet) }
            }
        }
        return end
    }

    /// Passes a finished job's outcome to the dependents `finish` took: success releases them, failure and
    /// cancellation cancel them with this job as the cause (transitively).
    func propagate(_ job: Job, _ end: JobEnd, _ s: inout SchedulerState, _ effects: inout Effects) {
        for dependent in end.dependents {
            switch end.outcome {
            case .success, .small:
                dependent.core.withLock(anchoredTo: dependent) { core in
                    core.unmetDependencies -= 1
                    guard core.unmetDependencies == 0, core.state == .pending else { return }
                    transition(dependent, &core, to: .ready, &s, &effects)
                    enqueueRestingPieces(dependent, &core, continuing: false, &s, &effects)
                }
            case .failure(let error):
                cancel(dependent, reason: .dependencyFailed(job.id, error), &s, &effects)
            case .cancelled(let reason):
                cancel(dependent, reason: .dependencyCancelled(job.id, reason), &s, &effects)
            }
        }
    }

    func cancel(_ job: Job, reason: CancellationReason, _ s: inout SchedulerState, _ effects: inout Effects) {
        let end: JobEnd? = job.core.withLock(anchoredTo: job) { core in
            guard !core.state.isFinished, core.cancelRequest == nil else { return nil }
            // A job at rest ends now; only one on a worker keeps the request until its slice ends (the request
            // lives in the job's extras, which a job ending here need not get).
            if core.piecesOnWorkers == 0 && !core.merging {
                return finish(job, &core, outcome: .cancelled(reason), &s, &effects)
            }
            core.cancelRequest = reason
            interruptPieces(core, &effects)
            return nil
        }
        if let end { propagate(job, end, &s, &effects) }
    }

    func checkConditions(_ s: inout SchedulerState, _ effects: inout Effects) {
        guard !s.waiters.isEmpty else { return }
        // Jobs in the intake are not counted yet: nothing is idle or empty until they are registered (the next
        // trip into the lock registers them and checks again).
        guard intakeCount.load(ordering: .sequentiallyConsistent) == 0 else { return }
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
    func locked<R: Sendable, E: Error>(_ body: (inout SchedulerState, inout Effects) throws(E) -> R)
        throws(E) -> R
    {
        var effects = Effects()
        let result = state.withLock(anchoredTo: self) { s -> Result<R, E> in
            drainIntake(&s, &effects)
            defer { checkConditions(&s, &effects) }
            return Result { () throws(E) -> R in try body(&s, &effects) }
        }
        effects.run()
        return try result.get()
    }
}
