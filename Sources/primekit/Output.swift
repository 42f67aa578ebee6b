// Standard output and standard error, and the text and JSON shapes of the answers.

import Foundation
import PrimeKit
import PrimeKitBridge

/// A buffered writer on a file descriptor. Used from one thread at a time.
final class OutputStream: @unchecked Sendable {
    private let descriptor: Int32
    private var buffer: [UInt8] = []

    init(descriptor: Int32) {
        self.descriptor = descriptor
        buffer.reserveCapacity(1 << 16)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    func flush() {
        // EPIPE and friends: nothing sensible is left to do with this output.
        _ = writeAll(descriptor, buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}

/// Writes all of `bytes` to `descriptor`, going on after short writes and EINTR.
/// - Returns: 0, or the `errno` of the write that failed.
func writeAll(_ descriptor: Int32, _ bytes: [UInt8]) -> Int32 {
    bytes.withUnsafeBytes { writeAll(descriptor, $0) }
}

/// Writes all of `bytes` to `descriptor`, going on after short writes and EINTR.
/// - Returns: 0, or the `errno` of the write that failed.
func writeAll(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32 {
    var offset = 0
    while offset < bytes.count {
        let result = Foundation.write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
        if result < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if result == 0 { return EIO }
        offset += result
    }
    return 0
}

/// Writes one line to standard error at once, unbuffered: `primekit: <message>`.
func reportError(_ message: String) {
    _ = writeAll(2, Array("primekit: \(message)\n".utf8))
}

enum AnswerFormat {
    /// The factor result of docs/protocol.md, "Factor result", keys in the protocol's order, one line.
    static func json(_ result: FactorResult) -> [UInt8] { WireFormat.line(.factorization(result)) }

    /// The plugin-shaped isPrime answer: candidate, isPrime, complete, progress, then factors or divisorCount.
    static func json(_ result: PrimalityResult) -> [UInt8] { WireFormat.line(.primality(result)) }

    /// The error line of a bad input in `--json` mode: `{"candidate":"2.54","error":{"code":…,"message":…}}`.
    static func jsonError(candidate: String, code: String, message: String) -> [UInt8] {
        var out = JSONWriter()
        out.object { out in
            out.member("candidate", string: candidate)
            out.key("error")
            out.object { out in
                out.member("code", string: code)
                out.member("message", string: message)
            }
        }
        return out.bytes + [0x0A]
    }

    /// `N: p p p`, or with exponents `N: p^e q`, then the cofactor when trial division did not finish.
    /// - Parameters:
    ///   - complete: The answer is a complete factorization's (no divisor range given): its probable primes are
    ///     named at the end (`[p: probable prime]`), and a composite cofactor is a part an effort limit left.
    ///   - ecmDigits: The ECM effort limit the run gave, if any.
    ///   - timeLimit: The time limit per number the run gave (`--time-limit` as written), if any.
    static func text(_ result: FactorResult, exponents: Bool, complete: Bool = false, ecmDigits: Int? = nil,
                     timeLimit: String? = nil) -> String {
        var line = result.candidate + ":"
        for factor in result.factors {
            if exponents {
                line += " " + factor.prime
                if factor.exponent > 1 { line += "^\(factor.exponent)" }
            } else {
                for _ in 0..<factor.exponent { line += " " + factor.prime }
            }
        }
        if complete, result.certainty == .probable {
            // Only primes above 2^64 can be probable (below it the kernel's test has no exception).
            for factor in result.factors where factor.prime.utf8.count > 20 || UInt64(factor.prime) == nil {
                line += " [\(factor.prime): probable prime]"
            }
        }
        switch result.cofactorStatus {
        case .one:
            break
        case .composite where complete:
            let why = switch (ecmDigits, timeLimit) {
            case let (digits?, nil): "no factor found by ECM to about \(digits) digits (--ecm-digits)"
            case let (nil, seconds?): "not split within the time limit (--time-limit \(seconds))"
            case let (digits?, seconds?):
                "not split within the effort limits (--ecm-digits \(digits), --time-limit \(seconds))"
            case (nil, nil): "not split"
            }
            line += " [cofactor \(result.cofactor): composite, \(why)\(tried(result.parts))]"
        case .probablePrime:
            line += " [cofactor \(result.cofactor): probable prime]"
        case .composite:
            line += " [cofactor \(result.cofactor): composite, its factors are outside the divisor range tried]"
        case .unknown:
            line += " [cofactor \(result.cofactor): not classified, too long for a primality test]"
        }
        return line + "\n"
    }

    /// What was tried on the parts an effort limit left: `; tried: trial division to B, C ECM curves (B1 = …)`,
    /// each part named when there are several.
    static func tried(_ parts: [CompositePart]) -> String {
        guard !parts.isEmpty else { return "" }
        let each = parts.map { part in
            var steps = ["trial division to \(part.trialBound)"]
            if part.curves > 0 {
                steps.append("\(part.curves) ECM curve\(part.curves == 1 ? "" : "s") (last B1 = \(part.b1), B2 = \(part.b2)"
                             + (part.ecmDigits > 0 ? ", about \(part.ecmDigits) digits)" : ")"))
            } else if part.method == "qs" {
                steps.append("the quadratic sieve, unfinished")
            }
            let name = parts.count > 1 ? part.value + (part.exponent > 1 ? "^\(part.exponent)" : "") + ": " : ""
            return name + steps.joined(separator: ", ")
        }
        return "; tried: " + each.joined(separator: "; ")
    }

    /// `N: prime`, `N: probable prime`, `N: not prime; divisors: 1 … N`, `N: unknown …`.
    static func text(_ result: PrimalityResult) -> String {
        var line = result.candidate + ": "
        switch result.isPrime {
        case true?:
            line += result.factorization?.certainty == .probable ? "probable prime" : "prime"
        case false?:
            line += "not prime"
            if let divisors = result.factors {
                line += "; divisors: " + divisors.joined(separator: " ")
            } else if let count = result.divisorCount {
                line += "; \(count) divisors"
            } else if let factorization = result.factorization, let smallest = factorization.factors.first {
                line += "; divisible by \(smallest.prime) (factorization incomplete)"
            }
        case nil:
            line += "unknown; no factor found and the remainder is too long for a primality test"
        }
        return line + "\n"
    }
}
