/// The answer of a finished job: a factorization or a plugin-shaped primality answer, by the job's kind.
public indirect enum JobResult: Sendable, Hashable {
    /// The answer of a `factor` job.
    case factorization(FactorResult)
    /// The answer of an `isPrime` job.
    case primality(PrimalityResult)

    /// The factorization (for an `isPrime` job, the one its answer was derived from).
    public var factorization: FactorResult? {
        switch self {
        case .factorization(let result): result
        case .primality(let result): result.factorization
        }
    }

    /// The primality answer of an `isPrime` job; nil for a `factor` job.
    public var primality: PrimalityResult? {
        if case .primality(let result) = self { return result }
        return nil
    }

    /// The candidate, decimal.
    public var candidate: String {
        switch self {
        case .factorization(let result): result.candidate
        case .primality(let result): result.candidate
        }
    }

    /// Whether the candidate is prime (nil when unknown).
    public var isPrime: Bool? {
        switch self {
        case .factorization(let result): result.isPrime
        case .primality(let result): result.isPrime
        }
    }
}
