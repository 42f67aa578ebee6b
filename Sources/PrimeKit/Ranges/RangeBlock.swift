/// One prime factor of a number below 2^64 of a range job: the prime and its exponent.
public struct RangeFactor: Sendable, Hashable {
    /// The prime (proven: the number is below 2^64).
    public let prime: UInt64
    /// Its exponent, at least 1.
    public let exponent: Int

    public init(prime: UInt64, exponent: Int) {
        self.prime = prime
        self.exponent = exponent
    }
}

/// Consecutive numbers of a range job with their complete factorizations, in order: the numbers `first`,
/// `first + 1`, …, `first + count - 1` (below 2^64 one sieve segment, at most 8,192 numbers; from 2^64 to 2^128 at
/// most 64 numbers, one batch call; from 2^128 on one number). Compact: the primes of all the numbers share one array.
///
/// A block never straddles 2^64. Below 2^64 every API works and every prime is proven. A block from 2^64 on
/// (``isBeyondUInt64``) is read with ``firstText``, ``number(at:)``, ``factors(at:)`` (each prime with its
/// certainty: a prime above 2^64 is probable, a BPSW pass), ``isPrime(at:)``, ``count``, ``primeCount`` and
/// ``lines``; its ``first``, ``last``, ``factorization(at:)`` and ``factorizations`` (64-bit values) stop the program
/// with a message rather than answer a wrong value.
public struct RangeBlock: Sendable, Hashable {
    /// The first number, below 2^64 (0 for a block from 2^64 on).
    private let word: UInt64
    /// Every number's primes, ascending within a number, one number after the other.
    let primes: [UInt64]
    /// The exponent of each entry of `primes`.
    let exponents: [UInt8]
    /// Where each number's primes end in `primes` (exclusive).
    let ends: [UInt32]
    /// How many numbers of the block are prime.
    public let primeCount: Int
    /// A block from 2^64 on: its first number and every number's factors.
    private let wide: Wide?
    /// The block's first number minus the range job's first (set by the job).
    var offset: UInt128 = 0

    private struct Wide: Sendable, Hashable {
        let first: String
        let factors: [[PrimeFactor]]
    }

    init(first: UInt64, primes: [UInt64], exponents: [UInt8], ends: [UInt32], primeCount: Int) {
        self.word = first
        self.primes = primes
        self.exponents = exponents
        self.ends = ends
        self.primeCount = primeCount
        self.wide = nil
    }

    /// A block from 2^64 on: `first` canonical decimal, each number's factors ascending.
    init(first: String, factors: [[PrimeFactor]]) {
        self.word = 0
        self.primes = []
        self.exponents = []
        self.ends = []
        self.primeCount = factors.count { $0.count == 1 && $0[0].exponent == 1 }
        self.wide = Wide(first: first, factors: factors)
    }

    /// Blocks are equal when they hold the same numbers with the same factors (whichever job made them).
    public static func == (lhs: RangeBlock, rhs: RangeBlock) -> Bool {
        lhs.word == rhs.word && lhs.wide == rhs.wide && lhs.ends == rhs.ends && lhs.primes == rhs.primes
            && lhs.exponents == rhs.exponents
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(word)
        hasher.combine(wide)
        hasher.combine(ends)
        hasher.combine(primes)
        hasher.combine(exponents)
    }

    /// Whether the block's numbers are 2^64 or more (then read it with ``firstText`` and ``factors(at:)``).
    public var isBeyondUInt64: Bool { wide != nil }

    /// The block's first number, below 2^64. A block from 2^64 on stops the program: read ``firstText``.
    public var first: UInt64 {
        precondition(wide == nil, "RangeBlock.first: the block's numbers are 2^64 or more; read firstText")
        return word
    }

    /// The block's first number as canonical decimal (every block).
    public var firstText: String { wide?.first ?? String(word) }

    /// The block's last number as canonical decimal (every block).
    public var lastText: String { number(at: count - 1) }

    /// The number `first + index` as canonical decimal.
    /// - Parameter index: 0 ..< ``count``.
    public func number(at index: Int) -> String {
        guard let wide else { return String(word + UInt64(index)) }
        return RangeDecimal.adding(wide.first, UInt128(index))
    }

    /// The factorization of the number `first + index` (every block): primes ascending, product equal to the
    /// number, each `.proven` below 2^64 and `.probable` above it (BPSW).
    /// - Parameter index: 0 ..< ``count``.
    public func factors(at index: Int) -> [PrimeFactor] {
        if let wide { return wide.factors[index] }
        return factorization(at: index).map { PrimeFactor(prime: String($0.prime), exponent: $0.exponent) }
    }

    /// How many numbers the block holds.
    public var count: Int { wide?.factors.count ?? ends.count }

    /// The block's last number, below 2^64. A block from 2^64 on stops the program: read ``lastText``.
    public var last: UInt64 { first + UInt64(count - 1) }

    /// The factorization of the number `first + index`: primes ascending, product equal to the number. A block
    /// from 2^64 on stops the program: read ``factors(at:)``.
    /// - Parameter index: 0 ..< ``count``.
    public func factorization(at index: Int) -> [RangeFactor] {
        precondition(wide == nil, "RangeBlock.factorization(at:): the block's numbers are 2^64 or more; read factors(at:)")
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return (start..<Int(ends[index])).map { RangeFactor(prime: primes[$0], exponent: Int(exponents[$0])) }
    }

    /// Every number's factorization, in order.
    public var factorizations: [[RangeFactor]] { (0..<count).map(factorization(at:)) }

    /// Whether the number `first + index` is prime.
    public func isPrime(at index: Int) -> Bool {
        if let wide { return wide.factors[index].count == 1 && wide.factors[index][0].exponent == 1 }
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return Int(ends[index]) - start == 1 && exponents[start] == 1
    }


    /// The numbers' lines as the `factor` command prints them, a prime repeated for its exponent: "12: 2 2 3";
    /// from 2^64 on as `primekit factor` prints them, each probable prime named again at the end:
    /// "N: p q [q: probable prime]".
    public var lines: [String] {
        if let wide {
            return wide.factors.enumerated().map { index, factors in
                var line = RangeDecimal.adding(wide.first, UInt128(index)) + ":"
                for factor in factors {
                    for _ in 0..<factor.exponent { line += " " + factor.prime }
                }
                for factor in factors where factor.certainty == .probable { line += " [\(factor.prime): probable prime]" }
                return line
            }
        }
        var result: [String] = []
        result.reserveCapacity(count)
        var start = 0
        for index in 0..<count {
            var line = String(first + UInt64(index)) + ":"
            for slot in start..<Int(ends[index]) {
                let prime = " " + String(primes[slot])
                for _ in 0..<exponents[slot] { line += prime }
            }
            start = Int(ends[index])
            result.append(line)
        }
        return result
    }
}

/// The answer of a finished range job: what was factored, not the table itself (that came as ``RangeBlock``s).
///
/// `first`, `last` and `count` are the values when they are below 2^64; a value of 2^64 or more reads as
/// `UInt64.max` there, and the text fields (``firstText``, ``lastText``, ``countText``, exact for every range) say
/// what it is (``isBeyondUInt64``).
public struct RangeSummary: Sendable, Hashable, Codable {
    /// The range's first number (`UInt64.max` when it is 2^64 or more: read ``firstText``).
    public let first: UInt64
    /// The range's last number (`UInt64.max` when it is 2^64 or more: read ``lastText``).
    public let last: UInt64
    /// Numbers factored: `last - first + 1` (`UInt64.max` when it is 2^64 or more: read ``countText``).
    public let count: UInt64
    /// How many of them are prime (proven below 2^64, probable above it).
    public let primeCount: UInt64
    /// The exact ends and count when one of them is 2^64 or more (absent otherwise, also when encoded).
    private let wide: Texts?

    private struct Texts: Sendable, Hashable, Codable {
        let first: String
        let last: String
        let count: String
    }

    public init(first: UInt64, last: UInt64, count: UInt64, primeCount: UInt64) {
        self.first = first
        self.last = last
        self.count = count
        self.primeCount = primeCount
        self.wide = nil
    }

    /// A summary from canonical decimal ends and count of any size.
    public init(firstText: String, lastText: String, countText: String, primeCount: UInt64) {
        let values = (UInt64(firstText), UInt64(lastText), UInt64(countText))
        self.first = values.0 ?? .max
        self.last = values.1 ?? .max
        self.count = values.2 ?? .max
        self.primeCount = primeCount
        self.wide = values.0 != nil && values.1 != nil && values.2 != nil
            ? nil : Texts(first: firstText, last: lastText, count: countText)
    }

    /// Whether an end or the count is 2^64 or more.
    public var isBeyondUInt64: Bool { wide != nil }
    /// The range's first number as canonical decimal.
    public var firstText: String { wide?.first ?? String(first) }
    /// The range's last number as canonical decimal.
    public var lastText: String { wide?.last ?? String(last) }
    /// The count as canonical decimal.
    public var countText: String { wide?.count ?? String(count) }
}

extension RangeSummary {
    /// The text a range job shows where other jobs show their candidate: "first-last".
    static func candidate(first: String, last: String) -> String { "\(first)-\(last)" }
}
