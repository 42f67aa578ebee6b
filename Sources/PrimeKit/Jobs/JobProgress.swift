/// A snapshot of a job's progress (the payload of the bridge's `job/progress`).
public struct JobProgress: Sendable, Hashable {
    /// The job.
    public let jobID: JobID
    /// Strictly increasing per job.
    public let seq: UInt64
    /// The job's state when the snapshot was taken.
    public let state: JobState
    /// 0–100, never decreasing; 100 in the last snapshot before success.
    public let percent: Double
    /// Every divisor below this has been tried (for a split job: in the lowest unfinished piece).
    public let nextDivisor: UInt64
    /// Trial divisors tested so far.
    public let divisorsTested: UInt64
    /// Kernel work units done so far.
    public let workDone: UInt64
    /// Distinct prime factors found so far, ascending, decimal.
    public let factors: [String]
    /// What the job is doing: "trial", "power", "prime", "split" (word-size parts), "ecm", "qs" or "done".
    public var stage: String = "trial"
    /// 0...1 within the stage, never decreasing while the stage and the part worked on stay the same.
    public var stageFraction: Double = 0
    /// Composite parts not yet resolved (a complete job after trial division; 0 otherwise).
    public var partsLeft: Int = 0
    /// A range job's numbers delivered so far (0 for other jobs); `percent` is `numbersDone / numbersTotal`.
    public var numbersDone: UInt64 = 0
    /// A range job's count of numbers (0 for other jobs); both read `UInt64.max` from 2^64 − 1 numbers on.
    public var numbersTotal: UInt64 = 0
}
