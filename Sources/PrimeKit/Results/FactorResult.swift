/// A distinct prime factor and its exponent.
public struct PrimeFactor: Sendable, Hashable, Codable {
    /// The prime, as a canonical decimal string.
    public let prime: String
    /// How many times it divides the candidate.
    public let exponent: Int
    /// How the prime is known: `.proven` (trial division, or a deterministic test below 2^64) or `.probable` (a
    /// BPSW pass above 2^64, listed only by complete jobs).
    public let certainty: Certainty

    /// Creates a factor.
    public init(prime: String, exponent: Int, certainty: Certainty = .proven) {
        self.prime = prime
        self.exponent = exponent
        self.certainty = certainty
    }

    private enum CodingKeys: String, CodingKey {
        case prime, exponent, certainty
    }

    /// Decodes a factor; a missing `certainty` (a result written before it existed) reads as `.proven`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        prime = try container.decode(String.self, forKey: .prime)
        exponent = try container.decode(Int.self, forKey: .exponent)
        certainty = try container.decodeIfPresent(Certainty.self, forKey: .certainty) ?? .proven
    }
}

/// How a factor result was computed.
public enum FactorMode: String, Sendable, Hashable, Codable {
    /// Complete factorization: trial division, then perfect powers, primality and splitting of every part.
    case complete
    /// Trial division over a range only; the remainder is classified, not split.
    case trialDivision = "trial"
}

/// A composite part a complete job left at an effort limit, and what was tried on it.
public struct CompositePart: Sendable, Hashable, Codable {
    /// The part, decimal.
    public var value: String
    /// The part divides the candidate to this power.
    public var exponent: Int
    /// No prime in [trialFrom, trialBound] divides the part (decimal).
    public var trialFrom: String
    public var trialBound: String
    /// Kernel work units spent splitting it.
    public var work: UInt64
    /// ECM curves completed on it (every B1 together).
    public var curves: UInt64
    /// B1 and B2 of the last completed curve (0: none).
    public var b1: UInt64
    public var b2: UInt64
    /// The largest ECM level (digits) whose expected curves are all done: a factor that long would have been found
    /// with probability about 1 - 1/e (0: no level done).
    public var ecmDigits: Int
    /// The last splitting method used: "split" (word-size), "ecm", "qs" or "none".
    public var method: String

    /// Creates a part.
    public init(value: String, exponent: Int, trialFrom: String, trialBound: String, work: UInt64, curves: UInt64,
                b1: UInt64, b2: UInt64, ecmDigits: Int, method: String) {
        self.value = value
        self.exponent = exponent
        self.trialFrom = trialFrom
        self.trialBound = trialBound
        self.work = work
        self.curves = curves
        self.b1 = b1
        self.b2 = b2
        self.ecmDigits = ecmDigits
        self.method = method
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

/// What a job that ran one ECM share alone (a share checkpoint submitted as a job) ended with: its place in the
/// set, whether it found a factor, and its final checkpoint, which ``Checkpoint/mergingEcmShares(_:)`` combines with
/// the other shares' into the job they stand for.
public struct EcmShareOutcome: Sendable, Hashable, Codable {
    /// The share's index, 0 ..< count.
    public let index: Int
    /// How many shares the set has.
    public let count: Int
    /// The share found a factor of the part (the other shares may then be stopped and merged).
    public let found: Bool
    /// The share's checkpoint as it ended (``Checkpoint/text``).
    public let checkpoint: String

    /// Creates an outcome.
    public init(index: Int, count: Int, found: Bool, checkpoint: String) {
        self.index = index
        self.count = count
        self.found = found
        self.checkpoint = checkpoint
    }
}

/// The answer of a `factor` job (docs/protocol.md, "Factor result").
public struct FactorResult: Sendable, Hashable, Codable {
    /// The candidate, decimal.
    public var candidate: String {
        if case .small(let answer) = storedFactors { return answer.candidate }
        return storedCandidate
    }
    /// The candidate as given (empty for the kernel's answer below 2^32, which knows it).
    private let storedCandidate: String
    /// Prime factors, ascending: proven for trial division; for a complete job each says its ``PrimeFactor/certainty``.
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
    /// The composite parts a complete job left at an effort limit, ascending, with what was tried on each; their
    /// product (each to its exponent) is ``cofactor``. Empty for a complete answer and for trial division.
    public let parts: [CompositePart]
    /// How the answer was computed.
    public let mode: FactorMode
    /// Set only for a job that ran one ECM share alone: the share is over. The result then holds the factors known
    /// when the shares were made and the cofactor as it stood, `complete` false; the answer comes from merging.
    public let ecmShare: EcmShareOutcome?
    /// Set only for a trial-division job submitted with ``JobRequest/keepsFinalCheckpoint``: the job's checkpoint
    /// as it finished (``Checkpoint/text``), one piece of a divisor range for ``Checkpoint/mergingDivisorPieces(_:)``.
    public let finalCheckpoint: String?

    /// Creates a result.
    public init(candidate: String, factors: [PrimeFactor], cofactor: String, cofactorStatus: CofactorStatus,
                complete: Bool, isPrime: Bool?, certainty: Certainty, parts: [CompositePart] = [],
                mode: FactorMode = .trialDivision, ecmShare: EcmShareOutcome? = nil, finalCheckpoint: String? = nil) {
        self.storedCandidate = candidate
        self.storedFactors = .list(factors)
        self.cofactor = cofactor
        self.cofactorStatus = cofactorStatus
        self.complete = complete
        self.isPrime = isPrime
        self.certainty = certainty
        self.parts = parts
        self.mode = mode
        self.ecmShare = ecmShare
        self.finalCheckpoint = finalCheckpoint
    }

    /// This result with the job's final checkpoint.
    func keeping(finalCheckpoint text: String) -> FactorResult {
        FactorResult(candidate: candidate, factors: factors, cofactor: cofactor, cofactorStatus: cofactorStatus,
                     complete: complete, isPrime: isPrime, certainty: certainty, parts: parts, mode: mode,
                     ecmShare: ecmShare, finalCheckpoint: text)
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
        self.parts = []
        self.mode = answer.mode
        self.ecmShare = nil
        self.finalCheckpoint = nil
    }

    public static func == (lhs: FactorResult, rhs: FactorResult) -> Bool {
        lhs.candidate == rhs.candidate && lhs.factors == rhs.factors && lhs.cofactor == rhs.cofactor
            && lhs.cofactorStatus == rhs.cofactorStatus && lhs.complete == rhs.complete && lhs.isPrime == rhs.isPrime
            && lhs.certainty == rhs.certainty && lhs.parts == rhs.parts && lhs.mode == rhs.mode
            && lhs.ecmShare == rhs.ecmShare && lhs.finalCheckpoint == rhs.finalCheckpoint
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(candidate)
        hasher.combine(factors)
        hasher.combine(cofactor)
        hasher.combine(cofactorStatus)
        hasher.combine(complete)
        hasher.combine(isPrime)
        hasher.combine(certainty)
        hasher.combine(parts)
        hasher.combine(mode)
        hasher.combine(ecmShare)
        hasher.combine(finalCheckpoint)
    }

    private enum CodingKeys: String, CodingKey {
        case candidate, factors, cofactor, cofactorStatus, complete, isPrime, certainty, parts, mode, ecmShare
        case finalCheckpoint = "checkpoint"
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
        // Results written before complete answers have neither key: trial division, no parts.
        parts = try container.decodeIfPresent([CompositePart].self, forKey: .parts) ?? []
        mode = try container.decodeIfPresent(FactorMode.self, forKey: .mode) ?? .trialDivision
        ecmShare = try container.decodeIfPresent(EcmShareOutcome.self, forKey: .ecmShare)
        finalCheckpoint = try container.decodeIfPresent(String.self, forKey: .finalCheckpoint)
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
        try container.encode(parts, forKey: .parts)
        try container.encode(mode, forKey: .mode)
        try container.encodeIfPresent(ecmShare, forKey: .ecmShare)
        try container.encodeIfPresent(finalCheckpoint, forKey: .finalCheckpoint)
    }
}
