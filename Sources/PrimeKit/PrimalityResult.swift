/// The answer of an `isPrime` job, shaped like the original plugin's result (PROTOCOL.md, "Results"):
/// `{candidate, isPrime, complete: true, progress: 100, factors}`.
public struct PrimalityResult: Sendable, Hashable, Codable {
    /// The most divisors listed in `factors`; beyond it only `divisorCount` is given.
    public static let maxListedDivisors = 100_000

    /// The candidate, decimal.
    public let candidate: String
    /// True, false, or nil when the remainder above the bound could not be classified.
    public let isPrime: Bool?
    /// Always true for a finished job (the plugin's "the computation completed").
    public let complete: Bool
    /// Always 100 for a finished job.
    public let progress: Double
    /// Every divisor, ascending, 1 and the candidate included; `[]` for a prime; nil when the factorization is
    /// incomplete or has more than ``maxListedDivisors`` divisors.
    public let factors: [String]?
    /// The number of divisors when `factors` is nil because there are too many (nil when unknown).
    public let divisorCount: Int?
    /// The factorization the answer was derived from (not part of the wire shape).
    public var factorization: FactorResult? = nil

    /// Creates a result.
    public init(candidate: String, isPrime: Bool?, complete: Bool = true, progress: Double = 100,
                factors: [String]?, divisorCount: Int?, factorization: FactorResult? = nil) {
        self.candidate = candidate
        self.isPrime = isPrime
        self.complete = complete
        self.progress = progress
        self.factors = factors
        self.divisorCount = divisorCount
        self.factorization = factorization
    }

    private enum CodingKeys: String, CodingKey {
        case candidate, isPrime, complete, progress, factors, divisorCount
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(candidate, forKey: .candidate)
        try container.encode(isPrime, forKey: .isPrime)
        try container.encode(complete, forKey: .complete)
        try container.encode(progress, forKey: .progress)
        try container.encodeIfPresent(factors, forKey: .factors)
        try container.encodeIfPresent(divisorCount, forKey: .divisorCount)
    }
}
