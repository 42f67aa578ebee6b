import Testing
@_spi(Benchmarks) import PrimeKit

/// The direct kernel calls the engine benchmark sets the engine against (`KernelBaseline`) give true answers: on the
/// one-call path below 2^32 and through a kernel job above it, with and without reading a composite's divisors.
@Suite struct KernelBaselineTests {
    /// The oracle: trial division by every d with d² <= n.
    private static func bruteForceIsPrime(_ n: UInt64) -> Bool { KernelRoundTripTests.bruteForceIsPrime(n) }

    @Test func isPrimeAgreesWithBruteForceBelow2To32() {
        let candidates = Array(UInt64(0)...3_000) + [4_294_967_291, 4_294_967_295, 4_294_836_225, 65_521 * 65_521]
        for n in candidates {
            let expected = Self.bruteForceIsPrime(n)
            #expect(KernelBaseline.isPrime(n, divisors: true) == expected, "n = \(n)")
            #expect(KernelBaseline.isPrime(n, divisors: false) == expected, "n = \(n)")
        }
    }

    @Test func isPrimeAgreesWithBruteForceAbove2To32() {
        // 2^32 + 15 is prime; 2^32 + 1 = 641 · 6700417; 1000003^2 is a prime's square; 2^34 a power of two.
        let candidates: [UInt64] = [4_294_967_311, 4_294_967_297, 1_000_006_000_009, 1 << 34, 1_000_000_000_039]
        for n in candidates {
            let expected = Self.bruteForceIsPrime(n)
            #expect(KernelBaseline.isPrime(n, divisors: true) == expected, "n = \(n)")
            #expect(KernelBaseline.isPrime(n, divisors: false) == expected, "n = \(n)")
        }
        #expect(KernelBaseline.isPrime(18_446_744_073_709_551_557, divisors: false))
        #expect(!KernelBaseline.isPrime(18_446_744_073_709_551_615, divisors: true))
    }

    @Test func factorRangeDeliversEveryNumberOnce() {
        #expect(KernelBaseline.factorRange(first: 2, last: 1_000) == 999)
        #expect(KernelBaseline.factorRange(first: 1_000_000_000_000, last: 1_000_000_099_999) == 100_000)
    }
}
