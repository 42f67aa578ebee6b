/// Arithmetic the tests check answers with, independent of the kernel: 128-bit modular products and powers, and
/// Miller-Rabin with the first 13 primes as bases (a proof below 3.3 · 10^24, a strong probable-prime test above).
public enum PrimeOracle {
    public static func mulmod(_ a: UInt128, _ b: UInt128, _ m: UInt128) -> UInt128 {
        let (high, low) = a.multipliedFullWidth(by: b)
        return m.dividingFullWidth((high: high % m, low: low)).remainder
    }

    public static func powmod(_ base: UInt128, _ exponent: UInt128, _ m: UInt128) -> UInt128 {
        var result: UInt128 = 1
        var base = base % m
        var exponent = exponent
        while exponent > 0 {
            if exponent & 1 == 1 { result = mulmod(result, base, m) }
            base = mulmod(base, base, m)
            exponent >>= 1
        }
        return result
    }

    public static func isPrime(_ n: UInt128) -> Bool {
        let bases: [UInt128] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41]
        if n < 2 { return false }
        for p in bases where n % p == 0 { return n == p }
        var d = n - 1
        var s = 0
        while d & 1 == 0 {
            d >>= 1
            s += 1
        }
        witness: for a in bases {
            var x = powmod(a, d, n)
            if x == 1 || x == n - 1 { continue }
            for _ in 0..<max(0, s - 1) {
                x = mulmod(x, x, n)
                if x == n - 1 { continue witness }
            }
            return false
        }
        return true
    }
}
