/// One prime factor of a number of a range job: the prime and its exponent.
public struct RangeFactor: Sendable, Hashable {
    /// The prime (proven: every number of a range is below 2^64).
    public let prime: UInt64
    /// Its exponent, at least 1.
    public let exponent: Int

    public init(prime: UInt64, exponent: Int) {
        self.prime = prime
        self.exponent = exponent
    }
}

/// Consecutive numbers of a range job with their complete factorizations, in order: the numbers `first`,
/// `first + 1`, …, `first + count - 1` (one sieve segment, at most 8,192 numbers). Compact: the primes of all the
/// numbers share one array.
public struct RangeBlock: Sendable, Hashable {
    /// The block's first number.
    public let first: UInt64
    /// Every number's primes, ascending within a number, one number after the other.
    let primes: [UInt64]
    /// The exponent of each entry of `primes`.
    let exponents: [UInt8]
    /// Where each number's primes end in `primes` (exclusive).
    let ends: [UInt32]
    /// How many numbers of the block are prime.
    public let primeCount: Int

    init(first: UInt64, primes: [UInt64], exponents: [UInt8], ends: [UInt32], primeCount: Int) {
        self.first = first
        self.primes = primes
        self.exponents = exponents
        self.ends = ends
        self.primeCount = primeCount
    }

    /// How many numbers the block holds.
    public var count: Int { ends.count }

    /// The block's last number.
    public var last: UInt64 { first + UInt64(count - 1) }

    /// The factorization of the number `first + index`: primes ascending, product equal to the number.
    /// - Parameter index: 0 ..< ``count``.
    public func factorization(at index: Int) -> [RangeFactor] {
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return (start..<Int(ends[index])).map { RangeFactor(prime: primes[$0], exponent: Int(exponents[$0])) }
    }

    /// Every number's factorization, in order.
    public var factorizations: [[RangeFactor]] { (0..<count).map(factorization(at:)) }

    /// Whether the number `first + index` is prime.
    public func isPrime(at index: Int) -> Bool {
        let start = index == 0 ? 0 : Int(ends[index - 1])
        return Int(ends[index]) - start == 1 && exponents[start] == 1
    }


    /// The numbers' lines as the `factor` command prints them, a prime repeated for its exponent: "12: 2 2 3".
    public var lines: [String] {
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
public struct RangeSummary: Sendable, Hashable, Codable {
    /// The range's first number.
    public let first: UInt64
    /// The range's last number.
    public let last: UInt64
    /// Numbers factored: `last - first + 1`.
    public let count: UInt64
    /// How many of them are prime.
    public let primeCount: UInt64

    public init(first: UInt64, last: UInt64, count: UInt64, primeCount: UInt64) {
        self.first = first
        self.last = last
        self.count = count
        self.primeCount = primeCount
    }
}

extension RangeSummary {
    /// The text a range job shows where other jobs show their candidate: "first-last".
    static func candidate(first: UInt64, last: UInt64) -> String { "\(first)-\(last)" }
}
