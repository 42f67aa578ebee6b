import Foundation
import Synchronization

/// Runs factor and isPrime jobs on its own worker threads, in slices, by priority.
///
/// Like an operation queue, but a running job can be paused (with a checkpoint) and resumed, suspending the queue
/// pauses running jobs at their next slice, dependents of a failed or cancelled job are cancelled with the cause,
/// and a large job can use every worker at once.
///
/// ```swift
/// let queue = JobQueue()
/// let job = try queue.submit(.isPrime("1301081"))
/// for await progress in job.progressUpdates { print(progress.percent) }
/// let answer = try await job.result
/// ```
///
/// Work never runs on Swift's cooperative thread pool: each worker is a thread of its own that takes the best
/// ready piece of work, runs one kernel slice of about ``Configuration/sliceDuration``, and between slices honours
/// pause, cancel and priority. Releasing the queue cancels its unfinished jobs and ends its threads.
public final class JobQueue: Sendable {
    /// How a queue runs its jobs.
    public struct Configuration: Sendable {
        /// Worker threads, so jobs (or pieces of one large job) running at once. Default: the core count.
        public var maxConcurrentJobs: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)
        /// The target length of one slice; the kernel budget is calibrated to it while jobs run.
        public var sliceDuration: Duration = .milliseconds(10)
        /// Aging: a waiting job gains one priority level per this many slices dispatched, so a low priority job
        /// never starves.
        public var agingSlices: Int = 64
        /// A job with at least this many trial divisors in its range is cut into pieces that run in parallel.
        public var splitThreshold: UInt64 = 1 << 27
        /// The number of pieces of a split job; nil means four per worker (pieces of equal length can cost very
        /// different time — past 2^32 a divisor costs more — so more pieces than workers balance the load).
        public var splitPieces: Int? = nil
        /// A range job is cut into chunks of this many numbers (at least 8,192), taken in turn by up to four
        /// workers at once when it has two chunks or more. Each chunk's sieve is set up on its own (milliseconds
        /// near 10^12, a tenth of a second near 10^18), and a worker ahead of the one being read keeps its chunk's
        /// answers (about 35 bytes a number) until their turn.
        public var rangeChunk: UInt64 = 1 << 20
        /// The longest candidate accepted, in digits.
        public var maxDigits: Int = KernelLimits.defaults.maxDigits
        /// The longest remainder classified by BPSW, in digits; longer ones are "unknown".
        public var bpswDigits: Int = KernelLimits.defaults.bpswDigits
        /// Test seam (internal): jobs it names fail instead of running.
        var failureInjection: FailureInjection? = nil

        /// The defaults.
        public init() {}
    }

    /// The configuration the queue was created with.
    public let configuration: Configuration
    let scheduler: Scheduler
    let activeBlocks = ActiveBlockQueue()
    /// The engine this queue belongs to, if any: the public submissions go through its door (``Engine/submit(_:)``),
    /// so a job submitted to `engine.queue` meets the same digit limit, progress interval, lifecycle events and
    /// store as one submitted to the engine. Set once, before the engine hands the queue out.
    private let owner = Mutex(WeakEngine())
    private let owned = Atomic<Bool>(false)

    private struct WeakEngine {
        weak var engine: Engine?
    }

    /// Creates a queue and starts its worker threads.
    /// - Parameter configuration: How the queue runs its jobs.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        scheduler = Scheduler(configuration: configuration)
        scheduler.startWorkers()
    }

    /// Creates a queue with `maxConcurrentJobs` workers and the other defaults.
    public convenience init(maxConcurrentJobs: Int) {
        var configuration = Configuration()
        configuration.maxConcurrentJobs = maxConcurrentJobs
        self.init(configuration: configuration)
    }

    deinit {
        activeBlocks.cancelPending(close: true)
        scheduler.shutdown()
    }

    /// Worker threads, so jobs running at once. Raising it starts threads; lowering it ends threads after their
    /// current slice.
    public var maxConcurrentJobs: Int {
        get { scheduler.maxConcurrentJobs }
        set { scheduler.maxConcurrentJobs = newValue }
    }

    /// The target length of one slice (at least 10 µs). Setting it takes effect as the budget recalibrates,
    /// within a few slices.
    public var sliceDuration: Duration {
        get { .nanoseconds(scheduler.sliceNanoseconds.load(ordering: .relaxed)) }
        set { scheduler.sliceNanoseconds.store(Scheduler.nanoseconds(newValue), ordering: .relaxed) }
    }

    // MARK: - Submitting

    /// Submits one job.
    /// - Parameter request: What to compute.
    /// - Returns: The job's handle; the job is `ready` (or `pending` while dependencies run).
    /// - Throws: ``PrimeKitError`` for an invalid candidate, options or checkpoint, a foreign dependency, or after
    ///   ``tearDown(_:)``.
    @discardableResult
    public func submit(_ request: JobRequest) throws(PrimeKitError) -> Job {
        if let engine = ownerEngine() { return try engine.submit(request) }
        return try submit(request, beforeRegistering: { _ in })
    }

    /// `submit(_:)`; `beforeRegistering` sees the handle before the job can run.
    func submit(_ request: JobRequest, beforeRegistering: (Job) -> Void) throws(PrimeKitError) -> Job {
        // The plan's parts go straight into the job.
        let (candidate, pieces, estimatedWork, effort) = try JobPlan.make(request, configuration: configuration,
                                                                          workers: scheduler.maxConcurrentJobs)
        return try scheduler.submit(request, candidate: candidate, pieces: consume pieces, estimatedWork: estimatedWork,
                                    effort: effort, beforeRegistering: beforeRegistering)
    }

    /// Submits many jobs at once, under one lock: the fast path for large numbers of small jobs. Either every
    /// request is valid and all are submitted, or none is.
    /// - Parameter requests: What to compute.
    /// - Returns: The jobs' handles, in order.
    /// - Throws: ``PrimeKitError`` for the first invalid request.
    @discardableResult
    public func submit(contentsOf requests: [JobRequest]) throws(PrimeKitError) -> [Job] {
        if let engine = ownerEngine() { return try engine.submit(contentsOf: requests) }
        return try submit(contentsOf: requests, beforeRegistering: { _ in })
    }

    /// Makes `engine` the door of this queue's public submissions.
    func attach(to engine: Engine) {
        owner.withLock { $0.engine = engine }
        owned.store(true, ordering: .releasing)
    }

    /// The owning engine, while it lives; nil for a queue of its own (one atomic load).
    @inline(__always)
    private func ownerEngine() -> Engine? {
        guard owned.load(ordering: .acquiring) else { return nil }
        return owner.withLock { $0.engine }
    }

    /// `submit(contentsOf:)`; `beforeRegistering` sees the handles before any of the jobs can run.
    func submit(contentsOf requests: [JobRequest], beforeRegistering: ([Job]) -> Void) throws(PrimeKitError)
        -> [Job]
    {
        try scheduler.submit(contentsOf: requests, configuration: configuration, beforeRegistering: beforeRegistering)
    }

    /// Submits jobs as one batch with aggregate progress and one completion.
    /// - Parameters:
    ///   - requests: What to compute.
    ///   - progressInterval: The shortest time between two batch progress snapshots.
    /// - Returns: The batch.
    /// - Throws: ``PrimeKitError`` for the first invalid request (then nothing is submitted).
    public func submitBatch(_ requests: [JobRequest], progressInterval: Duration = .milliseconds(250))
        throws(PrimeKitError) -> JobBatch
    {
        JobBatch(jobs: try submit(contentsOf: requests), progressInterval: progressInterval)
    }

    /// Submits jobs that run one after another: each depends on the one before it, so a failure or cancellation
    /// cancels every later one.
    /// - Parameter requests: The jobs in order of execution.
    /// - Returns: Their handles, in the same order.
    @discardableResult
    public func chain(_ requests: [JobRequest]) throws(PrimeKitError) -> [Job] {
        var jobs: [Job] = []
        for var request in requests {
            if let previous = jobs.last { request.dependencies.append(previous) }
            jobs.append(try submit(request))
        }
        return jobs
    }

    /// Wires existing jobs into a chain: `jobs[i]` depends on `jobs[i - 1]`. Edges are added in order; the first
    /// one that cannot be added (a cycle, a job already started) throws and leaves the earlier ones in place.
    /// - Parameter jobs: Jobs of this queue in order of execution.
    public func chain(_ jobs: [Job]) throws(PrimeKitError) {
        for (earlier, later) in zip(jobs, jobs.dropFirst()) {
            try later.addDependency(earlier)
        }
    }

    // MARK: - Watching

    /// How many jobs are in each state.
    public var counts: JobCounts { scheduler.counts }

    /// The unfinished jobs, oldest first.
    public var jobs: [Job] { scheduler.unfinishedJobs }

    /// An unfinished job by id.
    public func job(_ id: JobID) -> Job? { scheduler.job(id) }

    /// Returns when no job is pending, ready or running (paused jobs do not count).
    public func waitUntilIdle() async {
        await scheduler.wait(for: .idle)
    }

    // MARK: - Controlling

    /// True while ``suspend()`` holds the queue.
    public var isSuspended: Bool { scheduler.isSuspended }

    /// Stops starting slices: running jobs pause at their next slice boundary (state `paused`) and nothing new
    /// starts until ``resume()``.
    public func suspend() {
        scheduler.hold(background: false)
    }

    /// Lifts ``suspend()``: jobs it paused continue, and queued jobs start.
    public func resume() {
        scheduler.release(background: false)
    }

    /// Cancels every unfinished job.
    /// - Returns: The ids of the jobs asked to cancel: every unfinished one. A job whose last slice is ending on a
    ///   worker at this moment may still succeed or fail; ``reset()`` waits and lists only the jobs that ended
    ///   cancelled.
    @discardableResult
    public func cancelAll() -> [JobID] {
        scheduler.cancelAll(reason: .requested).map(\.id)
    }
}
