/// Checks on decimal text and the arithmetic the engine needs to plan a job's divisor range.
package enum CandidateText {
    /// True for `^(0|[1-9][0-9]*)$`: the one rule for option text (`from`, `bound`).
    package static func isCanonical(_ text: some StringProtocol) -> Bool {
        var iterator = text.utf8.makeIterator()
        guard let first = iterator.next(), (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        if first == UInt8(ascii: "0") { return iterator.next() == nil }
        while let byte = iterator.next() {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return false }
        }
        return true
    }

    /// Validates a candidate the way the kernel will, so bad input fails at submission. One pass over the
    /// digits, which also reads the value when it fits in 64 bits (nil otherwise). The one rule for candidate text:
    /// the tool and the bridge explain a refusal in words, but what is refused is decided here.
    package static func validateCandidate(_ text: String, maxDigits: Int) throws(PrimeKitError) -> UInt64? {
        var value: UInt64? = 0
        var count = 0
        var leadingZero = false
        for byte in text.utf8 {
            let digit = byte &- UInt8(ascii: "0")
            guard digit < 10, !leadingZero else {
                throw PrimeKitError(code: .invalidCandidate,
                                    message: "candidate \"\(text.prefix(40))\" is not a canonical decimal integer")
            }
            leadingZero = count == 0 && digit == 0
            count += 1
            if let current = value {
                let (times10, overflow1) = current.multipliedReportingOverflow(by: 10)
                let (next, overflow2) = times10.addingReportingOverflow(UInt64(digit))
                value = overflow1 || overflow2 ? nil : next
            }
        }
        if count == 0 {
            throw PrimeKitError(code: .invalidCandidate, message: "candidate \"\" is not a canonical decimal integer")
        }
        try checkSize(value: value, digits: count, maxDigits: maxDigits)
        return value
    }

    /// Checks a candidate submitted as an integer against the same rules as text.
    static func validateCandidate(_ value: UInt64, maxDigits: Int) throws(PrimeKitError) {
        // Every 64-bit integer has at most 20 digits: its length matters only under a lower limit.
        if value >= 2 && maxDigits >= 20 { return }
        try checkSize(value: value, digits: decimalLength(value), maxDigits: maxDigits)
    }

    /// At most `maxDigits` digits, and at least 2 (`value` is nil above 64 bits).
    private static func checkSize(value: UInt64?, digits: Int, maxDigits: Int) throws(PrimeKitError) {
        if digits > maxDigits {
            throw PrimeKitError(code: .candidateTooLarge,
                                message: "candidate has \(digits) digits, more than the limit \(maxDigits)")
        }
        if let value, value < 2 {
            throw PrimeKitError(code: .candidateOutOfRange, message: "candidate \(value) is below 2")
        }
    }

    /// Validates a `from` or `bound` option.
    static func validateOption(_ text: String?, name: String) throws(PrimeKitError) {
        guard let text else { return }
        guard isCanonical(text) else {
            throw PrimeKitError(code: .invalidOptions, message: "\(name) \"\(text.prefix(40))\" is not a canonical decimal integer")
        }
        // The first divisor trial division tries is 2: a `from` of 0 or 1 is a mistake, not a synonym for 2.
        if name == "from" && (text == "0" || text == "1") {
            throw PrimeKitError(code: .invalidOptions, message: "from \(text) is below 2, the first divisor tried")
        }
    }

    /// The value of decimal text clamped to `UInt64.max`.
    static func clampedValue(_ text: String) -> UInt64 {
        UInt64(text) ?? UInt64.max
    }

    /// floor(sqrt(n)).
    static func integerSquareRoot(_ n: UInt64) -> UInt64 {
        // Below 2^48 the correctly rounded square root never reaches the next integer (k² − 1 for every k ≤ 2^24
        // checked; the rounding is monotonic), so truncating it is exact.
        if n < 1 << 48 { return UInt64(Double(n).squareRoot()) }
        var root = UInt64(Double(n).squareRoot())
        while root > 0, root.multipliedReportingOverflow(by: root).overflow || root * root > n { root -= 1 }
        while true {
            let next = root + 1
            let (square, overflow) = next.multipliedReportingOverflow(by: next)
            if overflow || square > n { break }
            root = next
        }
        return root
    }

    /// The divisor range a fresh job will cover, as the kernel chooses it: from `from` (default 2) to `bound`
    /// (default floor(sqrt(n)) capped at 2^32), never beyond floor(sqrt(n)).
    /// - Parameter value: The candidate's value, nil above 64 bits.
    static func effectiveRange(value: UInt64?, from: String?, bound: String?) -> ClosedRange<UInt64>? {
        let root: UInt64 = value.map(integerSquareRoot) ?? UInt64.max
        let low = from.map(clampedValue) ?? 2
        let high = min(bound.map(clampedValue) ?? KernelLimits.defaultBoundCap, root)
        return low <= high ? low...high : nil
    }

    /// Approximate kernel work units per trial divisor for a candidate of this many digits.
    static func unitsPerDivisor(digits: Int) -> Double {
        let bits = Double(digits) * 3.3219280948873626
        return bits <= 64 ? 1 : bits <= 128 ? 2 : (bits / 64).rounded(.up)
    }
}

/// A job's candidate as it was submitted: decimal text, an integer that fits 64 bits, or both. An integer
/// submitted as one is written out as text only when somebody reads it, and nothing parses it back.
struct JobCandidate: Sendable {
    /// The text as submitted; empty when the candidate was submitted as an integer.
    let text: String
    /// The value when it fits 64 bits.
    let value: UInt64?

    /// The candidate, decimal.
    var decimal: String { text.isEmpty ? value.map { String($0) } ?? "" : text }

    /// Its number of decimal digits.
    var digits: Int { text.isEmpty ? value.map(CandidateText.decimalLength) ?? 0 : text.utf8.count }

    /// Approximate kernel work units per trial divisor (``CandidateText/unitsPerDivisor(digits:)``).
    var unitsPerDivisor: Double {
        // Up to 20 digits only the 20th changes the answer: an integer's length need not be counted.
        guard text.isEmpty, let value else { return CandidateText.unitsPerDivisor(digits: digits) }
        return CandidateText.unitsPerDivisor(digits: value >= 10_000_000_000_000_000_000 ? 20 : 19)
    }

    /// The value when it is below 2^128 (parsed from the text when it does not fit 64 bits).
    var wordValue: UInt128? {
        if let value { return UInt128(value) }
        guard text.utf8.count <= 39 else { return nil }
        return UInt128(text)
    }

    /// A candidate read from text (a checkpoint's), not validated here.
    init(text: String) {
        self.text = text
        self.value = text.utf8.count <= 20 ? UInt64(text) : nil
    }

    init(text: String, value: UInt64?) {
        self.text = text
        self.value = value
    }
}

extension CandidateText {
    /// The number of decimal digits of `value`.
    static func decimalLength(_ value: UInt64) -> Int {
        // Powers of ten by multiplication (a division per digit costs ten times as much); 10^19 is the largest
        // that fits, and a value at or above it has 20 digits.
        var digits = 1
        var power: UInt64 = 10
        while digits < 20, value >= power {
            digits += 1
            power &*= 10
        }
        return digits
    }
}
