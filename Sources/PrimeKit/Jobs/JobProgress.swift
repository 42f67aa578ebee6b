/// Where a job's ECM stands: the current curve of a B1 level (levels follow the published table of expected curves
/// per factor size; the last level repeats, so `curve` may pass `curves` there).
public struct EcmPosition: Sendable, Hashable, CustomStringConvertible {
    /// The current curve's number within its level, from 1.
    public var curve: Int
    /// The curves the level expects to run to find a factor of `digits` digits.
    public var curves: Int
    /// The level's stage 1 bound.
    public var b1: UInt64
    /// The factor size, in decimal digits, the level aims at.
    public var digits: Int

    public init(curve: Int, curves: Int, b1: UInt64, digits: Int) {
        self.curve = curve
        self.curves = curves
        self.b1 = b1
        self.digits = digits
    }

    /// `curve 12 of 90 at B1 = 50000 (25 digits)`
    public var description: String { "curve \(curve) of \(curves) at B1 = \(b1) (\(digits) digits)" }
}

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
    /// Where ECM stands on the current part (stage "ecm"; nil otherwise): curve `curve` of the `curves` its B1
    /// level expects to find a factor of `digits` digits.
    public var ecm: EcmPosition?
    /// A range job's numbers delivered so far (0 for other jobs); `percent` is `numbersDone / numbersTotal`.
    public var numbersDone: UInt64 = 0
    /// A range job's count of numbers (0 for other jobs); both read `UInt64.max` from 2^64 − 1 numbers on.
    public var numbersTotal: UInt64 = 0
}
