// What the engine's range jobs need of the kernel's range sieve beyond the wrapper in KernelRange.swift: the
// delivered segment as one Swift block, the position, and how a range checkpoint is told apart.

extension KernelRange {
    /// Where the sieve stands: numbers delivered so far and the range.
    func position() -> (first: UInt64, last: UInt64, done: UInt64, total: UInt64) {
        let progress = progress()
        return (progress.first, progress.last, progress.done, progress.total)
    }

    /// The factorizations of the segment the last step delivered, as one block; nil when it delivered none.
    func deliveredBlock() throws(PrimeKitError) -> RangeBlock? {
        let (first, count) = segment
        guard count > 0 else { return nil }
        var primes: [UInt64] = []
        var exponents: [UInt8] = []
        var ends: [UInt32] = []
        primes.reserveCapacity(count * 3)
        exponents.reserveCapacity(count * 3)
        ends.reserveCapacity(count)
        var primeCount = 0
        try answers(from: 0, count: count) { _, factorPrimes, factorExponents in
            if factorPrimes.count == 1 && factorExponents[0] == 1 { primeCount += 1 }
            primes.append(contentsOf: factorPrimes)
            exponents.append(contentsOf: factorExponents)
            ends.append(UInt32(primes.count))
        }
        return RangeBlock(first: first, primes: primes, exponents: exponents, ends: ends, primeCount: primeCount)
    }

    /// Whether text looks like a range checkpoint (its header), before the kernel checks it.
    static func isRangeCheckpoint(_ text: String) -> Bool {
        text.hasPrefix("primekit-range ")
    }
}
