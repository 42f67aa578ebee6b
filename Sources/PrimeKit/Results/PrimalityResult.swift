/// The answer of an `isPrime` job (docs/protocol.md, "isPrime result"):
/// `{candidate, isPrime, complete, progress: 100, factors}`.
public struct PrimalityResult: Sendable, Hashable, Codable {
    /// The most divisors listed in `factors`; beyond it only `divisorCount` is given.
    public static let maxListedDivisors = 100_000

    /// The candidate, decimal.
    public var candidate: String {
        switch divisors {
        case .small(let answer): answer.candidate
        default: storedCandidate
        }
    }
    /// The candidate as given (empty for the kernel's answer below 2^32, which knows it).
    private let storedCandidate: String
    /// True, false, or nil when the remainder above the bound could not be classified.
    public let isPrime: Bool?
    /// True when the question is answered: false exactly when ``isPrime`` is nil (nothing found below the bound and
    /// the remainder too long to test), although the job finished (``progress`` 100).
    public let complete: Bool
    /// Always 100 for a finished job.
    public let progress: Double
    /// Every divisor, ascending, 1 and the candidate included; `[]` for a prime; nil when the factorization is
    /// incomplete or has more than ``maxListedDivisors`` divisors.
    ///
    /// The engine keeps the kernel's text ("1 2 3 6") and splits it when this is read; for a candidate below 2^32 it
    /// keeps only the candidate and lists the divisors (one kernel call) when this is read: most small jobs'
    /// answers are never read, and a list costs far more to build than the answer itself.
    public var factors: [String]? {
        switch divisors {
        case nil: nil
        case .list(let list): list
        case .text(let text): Self.split(text)
        case .small(let answer): answer.isPrime ? [] : Self.split(answer.divisorText())
        }
    }
    /// The number of divisors when `factors` is nil because there are too many (nil when unknown).
    public let divisorCount: Int?
    /// The factorization the answer was derived from (not part of the wire shape).
    public var factorization: FactorResult? = nil

    /// The divisors as given (an array) or as the kernel's space-separated text.
    enum Divisors: Sendable {
        case list([String])
        case text(String)
        /// A candidate below 2^32: a composite's divisors follow from its factorization, a prime lists none.
        case small(SmallAnswer)
    }
    private let divisors: Divisors?

    /// Creates a result.
    public init(candidate: String, isPrime: Bool?, complete: Bool = true, progress: Double = 100,
                factors: [String]?, divisorCount: Int?, factorization: FactorResult? = nil) {
        self.storedCandidate = candidate
        self.isPrime = isPrime
        self.complete = complete
        self.progress = progress
        self.divisors = factors.map(Divisors.list)
        self.divisorCount = divisorCount
        self.factorization = factorization
    }

    /// The engine's result: the divisors as the kernel's text, split on first read.
    init(candidate: String, isPrime: Bool?, divisorText: String?, divisorCount: Int?, factorization: FactorResult?) {
        self.storedCandidate = candidate
        self.isPrime = isPrime
        self.complete = isPrime != nil
        self.progress = 100
        self.divisors = divisorText.map(Divisors.text)
        self.divisorCount = divisorCount
        self.factorization = factorization
    }

    /// The engine's result below 2^32: a composite's divisors are listed from `answer` when read.
    init(small answer: SmallAnswer, factorization: FactorResult) {
        self.storedCandidate = ""
        self.isPrime = answer.isPrime
        self.complete = true
        self.progress = 100
        self.divisors = .small(answer)
        self.divisorCount = nil
        self.factorization = factorization
    }

    /// "1 2 3" → ["1", "2", "3"], on UTF-8 bytes.
    static func split(_ text: String) -> [String] {
        var text = text
        return text.withUTF8 { bytes in
            var numbers: [String] = []
            var start = 0
            for index in 0...bytes.count where index == bytes.count || bytes[index] == UInt8(ascii: " ") {
                if index > start {
                    numbers.append(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
                }
                start = index + 1
            }
            return numbers
        }
    }

    public static func == (lhs: PrimalityResult, rhs: PrimalityResult) -> Bool {
        lhs.candidate == rhs.candidate && lhs.isPrime == rhs.isPrime && lhs.complete == rhs.complete
            && lhs.progress == rhs.progress && lhs.factors == rhs.factors && lhs.divisorCount == rhs.divisorCount
            && lhs.factorization == rhs.factorization
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(candidate)
        hasher.combine(isPrime)
        hasher.combine(complete)
        hasher.combine(progress)
        hasher.combine(factors)
        hasher.combine(divisorCount)
        hasher.combine(factorization)
    }

    private enum CodingKeys: String, CodingKey {
        case candidate, isPrime, complete, progress, factors, divisorCount
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        storedCandidate = try container.decode(String.self, forKey: .candidate)
        isPrime = try container.decodeIfPresent(Bool.self, forKey: .isPrime)
        complete = try container.decode(Bool.self, forKey: .complete)
        progress = try container.decode(Double.self, forKey: .progress)
        divisors = try container.decodeIfPresent([String].self, forKey: .factors).map(Divisors.list)
        divisorCount = try container.decodeIfPresent(Int.self, forKey: .divisorCount)
        factorization = nil
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
