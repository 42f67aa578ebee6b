/// A distinct prime factor and its exponent.
public struct PrimeFactor: Sendable, Hashable, Codable {
    /// The prime, as a canonical decimal string.
    public let prime: String
    /// How many times it divides the candidate.
    public let exponent: Int

    /// Creates a factor.
    public init(prime: String, exponent: Int) {
        self.prime = prime
        self.exponent = exponent
    }
}

/// What is known about the part of the candidate that trial division left over.
public enum CofactorStatus: String, Sendable, Hashable, Codable {
    /// Nothing is left: every prime factor is listed.
    case one
    /// Passes BPSW; above 2^64, so not proven.
    case probablePrime = "probable-prime"
    /// Proven composite, its factors unknown.
    case composite
    /// Too long to classify.
    case unknown
}

/// How a "prime" answer is known.
public enum Certainty: String, Sendable, Hashable, Codable {
    case proven
    case probable
}

/// The answer of a `factor` job (PROTOCOL.md, "Results").
public struct FactorResult: Sendable, Hashable, Codable {
    /// The candidate, decimal.
    public let candidate: String
    /// Proven prime factors, ascending.
    public let factors: [PrimeFactor]
    /// The candidate divided by every listed factor power, decimal ("1" when nothing is left).
    public let cofactor: String
    /// What is known about `cofactor`.
    public let cofactorStatus: CofactorStatus
    /// True when every prime factor is known (status `one` or `probablePrime`).
    public let complete: Bool
    /// True, false, or nil when nothing was found and the remainder could not be classified.
    public let isPrime: Bool?
    /// Whether a `true` (or a complete factorization) is proven or probable.
    public let certainty: Certainty

    /// Creates a result.
    public init(candidate: String, factors: [PrimeFactor], cofactor: String, cofactorStatus: CofactorStatus,
                complete: Bool, isPrime: Bool?, certainty: Certainty) {
        self.candidate = candidate
        self.factors = factors
        self.cofactor = cofactor
        self.cofactorStatus = cofactorStatus
        self.complete = complete
        self.isPrime = isPrime
        self.certainty = certainty
    }

    private enum CodingKeys: String, CodingKey {
        case candidate, factors, cofactor, cofactorStatus, complete, isPrime, certainty
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(candidate, forKey: .candidate)
        try container.encode(factors, forKey: .factors)
        try container.encode(cofactor, forKey: .cofactor)
        try container.encode(cofactorStatus, forKey: .cofactorStatus)
        try container.encode(complete, forKey: .complete)
        try container.encode(isPrime, forKey: .isPrime)  // null when unknown, never omitted
        try container.encode(certainty, forKey: .certainty)
    }
}
