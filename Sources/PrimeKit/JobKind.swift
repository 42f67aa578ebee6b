/// What a job computes.
public enum JobKind: String, Sendable, Hashable, Codable, CaseIterable {
    /// A factorization: ``FactorResult``.
    case factor
    /// A primality answer shaped like the original plugin's: ``PrimalityResult``.
    case isPrime
}
