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
    public var candidate: String {
        if case .small(let answer) = storedFactors { return answer.candidate }
        return storedCandidate
    }
    /// The candidate as given (empty for the kernel's answer below 2^32, which knows it).
    private let storedCandidate: String
    /// Proven prime factors, ascending.
    ///
    /// For a candidate below 2^32 the engine keeps only the candidate and finds the factors again (one kernel call)
    /// when this is read: most answers of small jobs are never read.
    public var factors: [PrimeFactor] {
        switch storedFactors {
        case .list(let list): list
        case .small(let answer): answer.primeFactors()
        }
    }
    /// The factors as given, or a candidate below 2^32 whose factors the kernel finds when they are read.
    enum Factors: Sendable {
        case list([PrimeFactor])
        case small(SmallAnswer)
    }
    private let storedFactors: Factors
    /// The factors when they are stored as a list (nil when they are written out on read).
    var listedFactors: [PrimeFactor]? {
        if case .list(let list) = storedFactors { return list }
        return nil
    }
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
        self.storedCandidate = candidate
        self.storedFactors = .list(factors)
        self.cofactor = cofactor
        self.cofactorStatus = cofactorStatus
        self.complete = complete
        self.isPrime = isPrime
        self.certainty = certainty
    }

    /// The engine's result for 2 <= candidate < 2^32: complete, proven, the factors written out when read.
    init(small answer: SmallAnswer) {
        self.storedCandidate = ""
        self.storedFactors = .small(answer)
        self.cofactor = "1"
        self.cofactorStatus = .one
        self.complete = true
        self.isPrime = answer.isPrime
        self.certainty = .proven
    }

    public static func == (lhs: FactorResult, rhs: FactorResult) -> Bool {
        lhs.candidate == rhs.candidate && lhs.factors == rhs.factors && lhs.cofactor == rhs.cofactor
            && lhs.cofactorStatus == rhs.cofactorStatus && lhs.complete == rhs.complete && lhs.isPrime == rhs.isPrime
            && lhs.certainty == rhs.certainty
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(candidate)
        hasher.combine(factors)
        hasher.combine(cofactor)
        hasher.combine(cofactorStatus)
        hasher.combine(complete)
        hasher.combine(isPrime)
        hasher.combine(certainty)
    }

    private enum CodingKeys: String, CodingKey {
        case candidate, factors, cofactor, cofactorStatus, complete, isPrime, certainty
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storedCandidate = try container.decode(String.self, forKey: .candidate)
        storedFactors = .list(try container.decode([PrimeFactor].self, forKey: .factors))
        cofactor = try container.decode(String.self, forKey: .cofactor)
        cofactorStatus = try container.decode(CofactorStatus.self, forKey: .cofactorStatus)
        complete = try container.decode(Bool.self, forKey: .complete)
        isPrime = try container.decodeIfPresent(Bool.self, forKey: .isPrime)
        certainty = try container.decode(Certainty.self, forKey: .certainty)
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
