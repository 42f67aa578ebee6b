/// A snapshot of a batch's progress.
public struct BatchProgress: Sendable, Hashable {
    /// Strictly increasing per batch.
    public let seq: UInt64
    /// Jobs finished (succeeded, failed or cancelled).
    public let finished: Int
    /// Jobs in the batch.
    public let total: Int
    /// Jobs that succeeded.
    public let succeeded: Int
    /// Jobs that failed.
    public let failed: Int
    /// Jobs that were cancelled.
    public let cancelled: Int
    /// Each job's percent (0–100), by id.
    public let percentByJob: [JobID: Double]
    /// 0–1, weighted by each job's estimated work (a job to 2^32 counts far more than one to 10^3); a finished job
    /// counts as complete whatever its outcome.
    public let fractionOfWork: Double

    /// `finished / total`, 0–1.
    public var fractionOfJobs: Double { total == 0 ? 1 : Double(finished) / Double(total) }
}

/// How a batch ended.
public struct BatchOutcome: Sendable {
    /// The results of the jobs that succeeded, by id.
    public let results: [JobID: JobResult]
    /// The jobs that failed, in submission order.
    public let failed: [Job]
    /// The jobs that were cancelled, in submission order.
    public let cancelled: [Job]
}
