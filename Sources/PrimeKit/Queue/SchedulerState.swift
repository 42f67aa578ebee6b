import DequeModule

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
    /// Ready pieces by priority that have not had a slice yet, first in first out: the start order.
    var fresh = [Deque<ReadyEntry>](repeating: Deque(), count: JobPriority.allCases.count)
    /// Ready pieces by priority between slices, each put at the back after its slice: they take turns.
    var continuing = [Deque<ReadyEntry>](repeating: Deque(), count: JobPriority.allCases.count)
    var clock: UInt64 = 0
    var nextToken: UInt64 = 0
    var idle: [Parker] = []
    var workers = 0
    var targetWorkers: Int
    var suspended = false
    var background = false
    var shutDown = false
    /// The jobs each worker is running a piece of (or merging), by worker slot. Each slot keeps its capacity.
    var slots: [[Job]] = []
    /// The lowest priority among each slot's jobs when they were taken (a hint: a later priority change is not
    /// reflected); `Int.max` for an empty slot. Lets a new job skip the preemption scan when nothing lower runs.
    var slotPriorities: [Int] = []
    /// For each slot running one piece on a later slice (a long job): that piece's kernel job, to interrupt when a
    /// new job of its priority or higher waits and every worker runs such a piece. Nil otherwise.
    var longSlices: [KernelJob?] = []
    /// The slots with a `longSlices` entry.
    var longSliceCount = 0
    /// Pending and paused jobs: the unfinished jobs that are neither queued nor on a worker.
    var waiting: [JobID: Job] = [:]
    var queuePaused: [JobID: Job] = [:]
    /// Running range jobs parked until their consumer reads a block: on no worker and in no deque.
    var parkedRanges: [JobID: Job] = [:]
    var counts = JobCounts()
    var waiters: [(QueueCondition, CheckedContinuation<Void, Never>)] = []
    var budget: UInt64 = 1 << 21
    /// Entries in the deques, stale ones included.
    var queuedEntries = 0
    /// Entries in the `continuing` deques, stale ones included (while none, dispatch looks at `fresh` alone).
    var continuingEntries = 0
    /// The queue-wide observer, and whether it wants progress snapshots (of every job, at the job's interval).
    var tap: QueueTap?
    var tapProgress = false
    /// The tap's ``QueueTap/holdsResults``: a finished job answers `result` only after the tap has seen its end.
    var tapHoldsResults = false
    /// The intake's jobs while they are registered (the intake's and this one swap, keeping both capacities).
    var intakeDrained = IntakeJobs()
    /// The intake's jobs a worker takes for itself.
    var intakeSpare: [Job] = []

    var dispatchAllowed: Bool { !suspended && !background && !shutDown }

    /// Every unfinished job, oldest first: on workers, queued, pending, paused or parked for a consumer.
    /// O(queue length); the hot path keeps no index of all jobs.
    var unfinishedJobs: [Job] {
        var seen: Set<ObjectIdentifier> = []
        var jobs: [Job] = []
        func add(_ job: Job) {
            if seen.insert(ObjectIdentifier(job)).inserted, !job.core.withLock(anchoredTo: job, { $0.state.isFinished }) {
                jobs.append(job)
            }
        }
        for jobs in slots { for job in jobs { add(job) } }
        for level in fresh + continuing { for entry in level { add(entry.job) } }
        for job in waiting.values { add(job) }
        for job in parkedRanges.values { add(job) }
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
