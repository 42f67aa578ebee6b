import Dispatch

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
    let range: PieceRange?
    let workBefore: UInt64
    let factorsKnown: Int
    let budget: UInt64
    let single: Bool
    let priority: JobPriority
    /// Taken from the continuing entries: the piece has had a slice before.
    let continuing: Bool

    var from: String? { range?.from }
    var bound: String? { range?.bound }
}

/// What a worker brings back into the lock after a slice.
enum SliceReport: Sendable {
    /// The piece stepped (or was held before its first step) and has work left.
    case stepped(Job, piece: Int, KernelStep?, KernelProgress, factors: [PrimeFactor]?, elapsed: Duration, units: UInt64)
    /// The piece finished; for a one-piece job with the job's result.
    case finished(Job, piece: Int, KernelProgress, factors: [PrimeFactor]?, outcome: JobOutcome?)
    /// The piece could not be created or stepped.
    case failed(Job, piece: Int, PrimeKitError)
    /// A range job's buffer of unread blocks was full: the piece did no work and waits for its consumer.
    case blocked(Job, piece: Int)
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
