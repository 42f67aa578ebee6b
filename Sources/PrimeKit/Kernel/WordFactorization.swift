/// Complete factorizations of many numbers below 2^128 at once, through the kernel's batch calls: no job, no
/// scheduling and no allocation per number. Meant for tools that answer long lists of word-size numbers (the
/// command-line `factor`); it runs on the calling thread, so callers spread chunks over their own threads.
///
/// ```swift
/// try WordFactorization.factor([12, 97]) { index, factors in print(index, factors.count) }
/// ```
public enum WordFactorization {
    /// The answer for one number, valid only inside the `visit` closure.
    public struct Factors {
        /// The distinct primes, ascending.
        public let primes: UnsafeBufferPointer<UInt128>
        /// Their exponents.
        public let exponents: UnsafeBufferPointer<UInt8>
        /// Whether each prime is probable (a BPSW pass above 2^64) rather than proven.
        public let probable: UnsafeBufferPointer<Bool>

        /// The number of distinct primes.
        public var count: Int { primes.count }
    }

    /// Factors every number completely, in order.
    /// - Parameters:
    ///   - numbers: Numbers with 2 <= n < 2^128.
    ///   - visit: Receives each number's index and answer, in order.
    /// - Throws: ``PrimeKitError`` (`candidateOutOfRange` for a number below 2); then nothing was visited.
    public static func factor(_ numbers: [UInt128], _ visit: (Int, Factors) -> Void) throws(PrimeKitError) {
        try KernelBatch.factor(numbers) { index, primes, exponents, probable in
            visit(index, Factors(primes: primes, exponents: exponents, probable: probable))
        }
    }
}
