/// What a job computes.
public enum JobKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A factorization: ``FactorResult``.
    case factor
    /// A primality answer with every divisor listed: ``PrimalityResult``.
    case isPrime
    /// The factorization of every number of a range, delivered in order as ``RangeBlock``s; the result is a
    /// ``RangeSummary``.
    case factorRange
}
