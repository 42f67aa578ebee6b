// Checks a candidate (command line or bridge) the way a person would want to hear about it: which token is wrong, and why.

import PrimeKit

/// Why a piece of text is not a candidate, in words.
package struct InvalidCandidate: Error, Sendable {
    /// The offending text (possibly cut short: see ``shown``).
    package let text: String
    /// Its length in characters, when `text` was cut short while reading.
    package let fullLength: Int?
    /// Why it is not a candidate, e.g. "not a whole number".
    package let reason: String

    /// The text as it appears in messages: at most 40 characters, control characters replaced.
    package var shown: String {
        var shown = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == 40 { break }
            shown.unicodeScalars.append(scalar.properties.generalCategory == .control ? "?" : scalar)
            count += 1
        }
        let length = fullLength ?? text.count
        if length > 40 { shown += "… (\(length) characters)" }
        return shown
    }

    /// `invalid candidate "2.54": not a whole number`
    package var message: String { "invalid candidate \"\(shown)\": \(reason)" }
}

package enum CandidateCheck {
    /// The kernel's default limit on candidate length (the engine's default setting, read from the kernel).
    package static let maxDigits = EngineSettings().maxDigits

    /// Returns nil for a canonical decimal integer of at least 2 and at most `maxDigits` digits, else the problem.
    /// - Parameters:
    ///   - text: The token as written.
    ///   - fullLength: The token's real length when `text` was cut short.
    /// The engine's rule decides (``CandidateText``); this only says why in words.
    package static func problem(with text: String, fullLength: Int? = nil, maxDigits: Int = maxDigits) -> InvalidCandidate? {
        if fullLength == nil {
            do {
                _ = try CandidateText.validateCandidate(text, maxDigits: maxDigits)
                return nil
            } catch {}
        }
        let reason = reason(text, fullLength: fullLength, maxDigits: maxDigits) ?? "not a decimal number"
        return InvalidCandidate(text: text, fullLength: fullLength, reason: reason)
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func reason(_ text: String, fullLength: Int?, maxDigits: Int) -> String? {
        let bytes = Array(text.utf8)
        guard let first = bytes.first else { return "empty, expected a whole number of at least 2" }
        if bytes.allSatisfy(isDigit) {
            let length = fullLength ?? bytes.count
            if bytes.count > 1, first == UInt8(ascii: "0") { return "leading zeros are not allowed" }
            if length > maxDigits { return "\(length) digits, more than the limit of \(maxDigits)" }
            if bytes.count == 1, first <= UInt8(ascii: "1") { return "must be at least 2" }
            return nil
        }
        let hasDigit = bytes.contains(where: isDigit)
        if first == UInt8(ascii: "-") {
            let rest = String(text.dropFirst())
            if rest.utf8.first.map({ isDigit($0) || $0 == UInt8(ascii: ".") }) == true {
                return "negative numbers are not accepted, a candidate is at least 2"
            }
            return "not a number"
        }
        if first == UInt8(ascii: "+") { return "no sign is accepted, write the digits only" }
        if bytes.count >= 2, first == UInt8(ascii: "0") {
            switch bytes[1] {
            case UInt8(ascii: "x"), UInt8(ascii: "X"): return "hexadecimal is not accepted, write the number in decimal"
            case UInt8(ascii: "b"), UInt8(ascii: "B"): return "binary is not accepted, write the number in decimal"
            case UInt8(ascii: "o"), UInt8(ascii: "O"): return "octal is not accepted, write the number in decimal"
            default: break
            }
        }
        if hasDigit, bytes.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }),
           bytes.filter({ $0 == UInt8(ascii: ".") }).count == 1
        {
            return "not a whole number"
        }
        if hasDigit, let e = bytes.firstIndex(where: { $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }), e > 0,
           bytes[..<e].allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ".") }),
           bytes[(e + 1)...].drop(while: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }).allSatisfy(isDigit),
           e + 1 < bytes.count
        {
            return "exponent notation is not accepted, write all the digits"
        }
        if hasDigit, bytes.allSatisfy({ isDigit($0) || $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "_")
                                        || $0 == UInt8(ascii: "'") || $0 == UInt8(ascii: " ") })
        {
            return "digit separators are not accepted, write the digits only"
        }
        return "not a decimal number"
    }

    /// Checks a `--from` value: an option (below) of at least 2, the first divisor trial division tries (the engine
    /// refuses 0 and 1 too, with `invalidOptions`).
    package static func fromProblem(_ text: String) -> String? {
        optionProblem(text) ?? (text == "0" || text == "1" ? "must be at least 2, the first divisor tried" : nil)
    }

    /// Checks a `--from` or `--bound` value: a canonical decimal integer (any size). The engine's rule decides
    /// (``CandidateText/isCanonical(_:)``); this only says why in words.
    package static func optionProblem(_ text: String) -> String? {
        if CandidateText.isCanonical(text) { return nil }
        let bytes = Array(text.utf8)
        guard let first = bytes.first else { return "empty, expected a whole number" }
        if bytes.count >= 2, first == UInt8(ascii: "-"), isDigit(bytes[1]) || bytes[1] == UInt8(ascii: ".") { return "negative numbers are not accepted" }
        return reason(text, fullLength: nil, maxDigits: Int.max) ?? "not a decimal number"
    }
}
