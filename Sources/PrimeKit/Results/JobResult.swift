/// The answer of a finished job: a factorization or a plugin-shaped primality answer, by the job's kind.
public indirect enum JobResult: Sendable, Hashable {
    /// The answer of a `factor` job.
    case factorization(FactorResult)
    /// The answer of an `isPrime` job.
    case primality(PrimalityResult)
    /// The answer of a `factorRange` job (its factorizations came as blocks).
    case rangeSummary(RangeSummary)

    /// The factorization (for an `isPrime` job, the one its answer was derived from).
    public var factorization: FactorResult? {
        switch self {
        case .factorization(let result): result
        case .primality(let result): result.factorization
        case .rangeSummary: nil
        }
    }

    /// The primality answer of an `isPrime` job; nil for a `factor` job.
    public var primality: PrimalityResult? {
        if case .primality(let result) = self { return result }
        return nil
    }

    /// The summary of a `factorRange` job; nil for other jobs.
    public var rangeSummary: RangeSummary? {
        if case .rangeSummary(let summary) = self { return summary }
        return nil
    }

    /// The candidate, decimal (a range job's: "first-last").
    public var candidate: String {
        switch self {
        case .factorization(let result): result.candidate
        case .primality(let result): result.candidate
        case .rangeSummary(let summary): RangeSummary.candidate(first: summary.firstText, last: summary.lastText)
        }
    }

    /// Whether the candidate is prime (nil when unknown).
    public var isPrime: Bool? {
        switch self {
        case .factorization(let result): result.isPrime
        case .primality(let result): result.isPrime
        case .rangeSummary: nil
        }
    }
}
