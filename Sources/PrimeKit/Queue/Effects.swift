/// Work collected while the engine holds its locks (continuations to resume, callbacks to call, workers to wake)
/// and run after the locks are released, so user code never runs under an engine lock.
struct Effects: Sendable {
    private var actions: [@Sendable () -> Void] = []
    /// What the queue's tap gets from this trip into the lock: one call for all of it.
    private var tap: QueueTap?
    private var finished: [QueueTap.Ending] = []
    private var progress: [JobProgress] = []
    /// Ended jobs that had nobody to tell, whose `result` waits until the tap has seen their end.
    private var announced: [(job: Job, outcome: JobOutcome, state: JobState)] = []

    mutating func add(_ action: @escaping @Sendable () -> Void) {
        actions.append(action)
    }

    /// A job's end for the queue's tap, when it has one. The tap is taken from `s` once per trip into the lock: a
    /// copy per job would be three reference count operations on one object under the lock, per job.
    mutating func tap(finished job: Job, _ outcome: JobOutcome, from s: borrowing SchedulerState) {
        guard s.tap != nil else { return }
        if tap == nil { tap = s.tap }
        finished.append(QueueTap.Ending(jobID: job.id, kind: job.kind, candidate: job.submitted, outcome: outcome))
    }

    /// Ends the announcement of `job` once the tap has seen its end (``Scheduler/endAnnouncement(of:_:_:)``): an
    /// array entry, not a closure, because it comes once per small job while a tap is installed.
    mutating func endAnnouncement(of job: Job, _ outcome: JobOutcome, _ state: JobState) {
        announced.append((job, outcome, state))
    }

    /// A progress snapshot for the queue's tap (which `s` has).
    mutating func tap(progress snapshot: JobProgress, from s: borrowing SchedulerState) {
        if tap == nil { tap = s.tap }
        progress.append(snapshot)
    }

    /// The tap first, so it has seen a job's end before anyone awaiting that job resumes.
    func run() {
        tap?.receive(finished: finished, progress: progress)
        for entry in announced { Scheduler.endAnnouncement(of: entry.job, entry.outcome, entry.state) }
        for action in actions { action() }
    }
}

/// A queue-wide observer (the engine's): every job's end, and progress snapshots while ``SchedulerState/tapProgress``
/// is set, in batches — one call per trip a worker or caller makes into the queue's lock, after the lock is released.
final class QueueTap: Sendable {
    /// A job's end as the tap sees it: what it was and how it ended, not the job itself — holding the job would
    /// make the tap, on whichever thread runs it, the one that frees the job.
    struct Ending: Sendable {
        let jobID: JobID
        let kind: JobKind
        let candidate: JobCandidate
        let outcome: JobOutcome
    }

    private let handler: @Sendable (_ finished: [Ending], _ progress: [JobProgress]) -> Void
    /// Whoever asks for a job's result after it ended gets it only once this tap has seen the end, also when nobody
    /// waited at the time (the engine's store needs this: `await job.result` then `persistNow()` includes the job).
    /// It costs a lock and an entry per such job, so a tap that only feeds plugins does without.
    let holdsResults: Bool

    init(holdsResults: Bool = false,
         _ handler: @escaping @Sendable (_ finished: [Ending], _ progress: [JobProgress]) -> Void) {
        self.holdsResults = holdsResults
        self.handler = handler
    }

    func receive(finished: [Ending], progress: [JobProgress]) {
        handler(finished, progress)
    }
}
