/// The little decimal arithmetic a range job needs for numbers of any size: its ends are canonical decimal text,
/// its positions offsets below 2^128 from its first number.
enum RangeDecimal {
    /// 2^64, the range sieve's limit.
    static let sieveLimit = UInt128(1) << 64

    /// Compares two canonical decimals.
    static func less(_ a: String, _ b: String) -> Bool {
        let (x, y) = (a.utf8.count, b.utf8.count)
        return x != y ? x < y : a < b
    }

    /// `text + offset`, canonical decimal.
    static func adding(_ text: String, _ offset: UInt128) -> String {
        if let value = UInt128(text), value <= UInt128.max - offset { return String(value + offset) }
        var digits = Array(text.utf8)
        var carry = offset
        var index = digits.count - 1
        while carry > 0 {
            if index < 0 {
                digits.insert(UInt8(ascii: "0"), at: 0)
                index = 0
            }
            let sum = UInt128(digits[index] - UInt8(ascii: "0")) + carry % 10
            carry = carry / 10 + sum / 10
            digits[index] = UInt8(ascii: "0") + UInt8(sum % 10)
            index -= 1
        }
        return String(decoding: digits, as: UTF8.self)
    }

    /// `b - a` for canonical decimals with a <= b, or nil when it is 2^128 or more.
    static func difference(from a: String, to b: String) -> UInt128? {
        if let x = UInt128(a), let y = UInt128(b) { return y - x }
        var high = Array(b.utf8)
        let low = Array(a.utf8)
        var borrow: UInt8 = 0
        for offset in 0..<high.count {
            let index = high.count - 1 - offset
            let subtrahend = (offset < low.count ? low[low.count - 1 - offset] - UInt8(ascii: "0") : 0) + borrow
            let digit = high[index] - UInt8(ascii: "0")
            borrow = digit < subtrahend ? 1 : 0
            high[index] = UInt8(ascii: "0") + digit + 10 * borrow - subtrahend
        }
        let text = String(decoding: high.drop { $0 == UInt8(ascii: "0") }, as: UTF8.self)
        return text.isEmpty ? 0 : UInt128(text)
    }
}
