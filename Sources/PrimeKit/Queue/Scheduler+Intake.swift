import DequeModule
import Synchronization

/// Jobs submitted one at a time while every worker is busy, and batches, wait here in submission order until a
/// worker takes or registers them on its next trip into the queue's lock: the submitter then takes only this short
/// lock and never waits for a worker that holds the queue's.
///
/// Everything that looks at the queue goes through ``Scheduler/locked(_:)``, which registers the intake first, so
/// counts, job lists, control operations and conditions see such a job exactly as if it had been registered when
/// it was submitted; a job's own `state` does the same (``Job/state``). A submission takes the queue's lock instead
/// when a job has dependencies or outranks a running job (it may have to preempt it), and a single job also when a
/// worker is parked (registering it wakes one, the shortest way to a lone job's start); a batch joins the intake
/// and wakes one parked worker, which wakes the next while more is waiting than one trip takes.
struct Intake: Sendable {
    var jobs = IntakeJobs()
    /// Set at shutdown: later submissions are refused.
    var closed = false
}

/// The intake's jobs in submission order, in the arrays they came in: a batch joins as the array its submitter
/// gets back (one reference, not one per job, and no second list of a million jobs), and single jobs gather in an
/// array of the intake's own.
struct IntakeJobs: Sendable {
    private var batches = Deque<[Job]>()
    /// How many jobs of the first array were taken.
    private var taken = 0
    /// The last array is the intake's own: single jobs join it.
    private var lastIsOwn = false

    var isEmpty: Bool { batches.isEmpty }

    /// The oldest job; nil when there is none.
    var first: Job? { batches.isEmpty ? nil : batches[0][taken] }

    mutating func append(_ job: Job) {
        if lastIsOwn {
            batches[batches.count - 1].append(job)
        } else {
            batches.append([job])
            lastIsOwn = true
        }
    }

    mutating func append(contentsOf jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        batches.append(jobs)
        lastIsOwn = false
    }

    /// Takes the oldest job. The intake must not be empty.
    mutating func removeFirst() -> Job {
        let job = batches[0][taken]
        taken += 1
        if taken == batches[0].count {
            batches.removeFirst()
            taken = 0
            if batches.isEmpty { lastIsOwn = false }
        }
        return job
    }

    /// Calls `body` with every job, oldest first.
    func forEach(_ body: (Job) -> Void) {
        for (index, batch) in batches.enumerated() {
            for position in (index == 0 ? taken : 0)..<batch.count { body(batch[position]) }
        }
    }

    /// Empties the intake, keeping its capacity.
    mutating func removeAll() {
        batches.removeAll(keepingCapacity: true)
        taken = 0
        lastIsOwn = false
    }
}

/// Names the intake's lock to ThreadSanitizer (a lock announced under the queue's own anchor would hide races
/// between code that holds only one of the two).
final class IntakeAnchor: Sendable {}

extension Scheduler {
    /// Registers every job in the intake, oldest first.
    @inline(__always)
    func drainIntake(_ s: inout SchedulerState, _ effects: inout Effects) {
        guard intakeCount.load(ordering: .sequentiallyConsistent) > 0 else { return }
        intake.withLock(anchoredTo: intakeAnchor) { intake in
            swap(&intake.jobs, &s.intakeDrained)
            intakeCount.store(0, ordering: .sequentiallyConsistent)
        }
        var drained = IntakeJobs()
        swap(&drained, &s.intakeDrained)
        drained.forEach { register($0, dependencies: [], &s, &effects) }
        drained.removeAll()
        swap(&drained, &s.intakeDrained)
    }

    /// A worker's trip into the lock: while nothing waits in the ready deques, the worker takes the oldest small
    /// one-piece jobs of the intake (up to ``Scheduler/batchLimit``) for itself — ready and running in one step, as
    /// `dispatch` would have taken them right after they were queued, without the round trip through a deque — and
    /// leaves the rest where they are, in order. Otherwise, or when the oldest job is not small, it registers the
    /// whole intake (``drainIntake(_:_:)``) and takes nothing.
    func takeIntake(_ s: inout SchedulerState, _ effects: inout Effects) -> [Assignment] {
        guard intakeCount.load(ordering: .sequentiallyConsistent) > 0 else { return [] }
        guard s.dispatchAllowed, s.queuedEntries == 0 else {
            drainIntake(&s, &effects)
            return []
        }
        let budget = s.budget
        let smallLimit = Double(budget) / Double(Self.batchLimit)
        intake.withLock(anchoredTo: intakeAnchor) { intake in
            while s.intakeSpare.count < Self.batchLimit, let job = intake.jobs.first, job.onePiece,
                  job.estimatedWork <= smallLimit {
                s.intakeSpare.append(intake.jobs.removeFirst())
            }
            intakeCount.subtract(s.intakeSpare.count, ordering: .sequentiallyConsistent)
        }
        if s.intakeSpare.isEmpty {
            drainIntake(&s, &effects)
            return []
        }
        var taken: [Assignment] = []
        taken.reserveCapacity(s.intakeSpare.count)
        for index in s.intakeSpare.indices {
            let job = s.intakeSpare[index]
            s.clock += 1
            taken.append(job.core.withLock(anchoredTo: job) { core in
                core.inIntake = false
                if core.hasExtras {
                    s.counts.pending += 1
                    transition(job, &core, to: .ready, &s, &effects)
                    transition(job, &core, to: .running, &s, &effects)
                } else {
                    // Pending, ready and running in one step: nobody waits on the job, and a pending job of the
                    // intake is in no index, so the two transitions would change nothing but these counts.
                    precondition(core.state == .pending, "PrimeKit: invalid job transition \(core.state) → running")
                    core.state = .running
                    s.counts.running += 1
                }
                return core.pieces.update(0) { piece in
                    piece.onWorker = true
                    return Assignment(
                        job: job, piece: 0, kernel: piece.kernel, range: piece.range,
                        workBefore: piece.progress.workDone, factorsKnown: piece.factors.count, budget: budget,
                        single: true, priority: core.priority, continuing: false)
                }
            })
        }
        s.intakeSpare.removeAll(keepingCapacity: true)
        // More than one trip's worth was waiting (a batch submission): a parked worker takes the next part.
        if intakeCount.load(ordering: .sequentiallyConsistent) > 0, let parker = s.idle.popLast() {
            publishIdle(s)
            effects.add { parker.unpark() }
        }
        return taken
    }

    /// Wakes a parked worker for the jobs in the intake (after a batch joined it), unless the queue is held or no
    /// worker is parked. Takes the queue's lock without registering the intake: the worker takes from it.
    func wakeForIntake() {
        let parker: Parker? = state.withLock(anchoredTo: self) { s in
            guard s.dispatchAllowed, intakeCount.load(ordering: .sequentiallyConsistent) > 0,
                  let parker = s.idle.popLast() else { return nil }
            publishIdle(s)
            return parker
        }
        parker?.unpark()
    }

    /// Registers the intake now (for readers that look at one job without the queue's lock).
    func drainIntake() {
        locked { _, _ in }
    }

    /// Publishes how many workers are parked.
    @inline(__always)
    func publishIdle(_ s: borrowing SchedulerState) {
        parkedWorkers.store(s.idle.count, ordering: .sequentiallyConsistent)
    }

    /// Publishes the lowest priority among the jobs on workers.
    @inline(__always)
    func publishSlotPriorities(_ s: borrowing SchedulerState) {
        lowestRunningPriority.store(s.slotPriorities.min() ?? Int.max, ordering: .relaxed)
    }
}
