/// What a job computes.
public enum JobKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A factorization: ``FactorResult``.
    case factor
    /// A primality answer shaped like the original plugin's: ``PrimalityResult``.
    case isPrime
    /// The factorization of every number of a range, delivered in order as ``RangeBlock``s; the result is a
    /// ``RangeSummary``.
    case factorRange
}
