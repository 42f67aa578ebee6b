// The batch path of `factor`: numbers below 2^128 (with no divisor range given) are gathered into chunks in input
// order and factored completely by the kernel's batch calls on a few plain threads, one per core; each chunk's
// answer lines are written out in one piece when its turn comes. No job per number.

import Foundation
import PrimeKit

/// A run of consecutive numbers below 2^128 and, once a pool thread has factored them, their answer lines.
final class BatchChunk: @unchecked Sendable {
    /// The numbers as written (canonical decimal), and their values.
    private(set) var texts: [String] = []
    private var values: [UInt128] = []
    /// Estimated work, so a chunk of hard numbers is short and one of easy numbers long.
    private(set) var weight = 0
    private let lock = NSLock()
    private var lines: [UInt8]?

    /// A chunk is handed to the pool once its estimated work reaches this (about 4,000 numbers below 2^32).
    static let fullWeight = 4096

    var isFull: Bool { weight >= Self.fullWeight }

    func append(_ text: String, _ value: UInt128) {
        texts.append(text)
        values.append(value)
        weight += value >> 32 == 0 ? 1 : value >> 50 == 0 ? 4 : value >> 64 == 0 ? 32 : 512
    }

    /// The answer lines, once computed.
    var output: [UInt8]? { lock.withLock { lines } }

    /// Factors the chunk and keeps its answer lines (run on a pool thread).
    func compute(json: Bool, exponents: Bool) {
        var out: [UInt8] = []
        out.reserveCapacity(texts.count * 24)
        do {
            try WordFactorization.factor(values) { index, factors in
                if json {
                    out += AnswerFormat.json(Self.result(texts[index], factors))
                } else {
                    Self.appendLine(texts[index], factors, exponents: exponents, to: &out)
                }
            }
        } catch {
            // Every value was checked to be at least 2 when it was added; this cannot happen.
            fatalError("batch factorization refused a checked number: \(error)")
        }
        lock.withLock { lines = out }
    }

    /// `N: p p q`, or with exponents `N: p^2 q`; probable primes (above 2^64) are named at the end,
    /// `N: p q [q: probable prime]`, so a line without brackets is proven in full.
    static func appendLine(_ text: String, _ factors: WordFactorization.Factors, exponents: Bool,
                           to out: inout [UInt8]) {
        out += text.utf8
        out.append(UInt8(ascii: ":"))
        for index in 0..<factors.count {
            let exponent = Int(factors.exponents[index])
            if exponents {
                out.append(0x20)
                Decimal.append(factors.primes[index], to: &out)
                if exponent > 1 {
                    out.append(UInt8(ascii: "^"))
                    Decimal.append(UInt128(exponent), to: &out)
                }
            } else {
                for _ in 0..<exponent {
                    out.append(0x20)
                    Decimal.append(factors.primes[index], to: &out)
                }
            }
        }
        for index in 0..<factors.count where factors.probable[index] {
            out += " [".utf8
            Decimal.append(factors.primes[index], to: &out)
            out += ": probable prime]".utf8
        }
        out.append(0x0A)
    }

    /// The factor result a complete job gives for the same number.
    static func result(_ text: String, _ factors: WordFactorization.Factors) -> FactorResult {
        var list: [PrimeFactor] = []
        for index in 0..<factors.count {
            list.append(PrimeFactor(prime: String(factors.primes[index]), exponent: Int(factors.exponents[index])))
        }
        let isPrime = factors.count == 1 && factors.exponents[0] == 1
        return FactorResult(candidate: text, factors: list, cofactor: "1", cofactorStatus: .one, complete: true,
                            isPrime: isPrime, certainty: factors.probable.contains(true) ? .probable : .proven)
    }

    /// The value of a canonical decimal number with 2 <= n < 2^128, else nil (such tokens take the other path).
    static func value(_ text: String) -> UInt128? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    private static func parse<C: Collection>(_ bytes: C) -> UInt128? where C.Element == UInt8 {
        guard let first = bytes.first, bytes.count <= 39, first != UInt8(ascii: "0") else { return nil }
        var value: UInt128 = 0
        for byte in bytes {
            let digit = byte &- 0x30
            guard digit < 10 else { return nil }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            guard !overflow else { return nil }
            let (sum, carry) = times.addingReportingOverflow(UInt128(digit))
            guard !carry else { return nil }
            value = sum
        }
        return value >= 2 ? value : nil
    }
}

/// Plain threads (one per core) that factor chunks in the order they are handed over. The threads live as long
/// as the process; they block in C, so they are kept off Swift's cooperative pool.
final class BatchPool: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [(BatchChunk, @Sendable () -> Void)] = []
    private var head = 0
    private var started = false
    private let json: Bool
    private let exponents: Bool

    init(json: Bool, exponents: Bool) {
        self.json = json
        self.exponents = exponents
    }

    /// Queues `chunk`; `done` is called on a pool thread once its answer lines are ready.
    func submit(_ chunk: BatchChunk, done: @escaping @Sendable () -> Void) {
        condition.lock()
        if !started {
            started = true
            for _ in 0..<max(1, ProcessInfo.processInfo.activeProcessorCount) {
                let thread = Thread { [self] in work() }
                thread.stackSize = 1 << 20
                thread.start()
            }
        }
        queue.append((chunk, done))
        condition.signal()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while head == queue.count { condition.wait() }
            let (chunk, done) = queue[head]
            head += 1
            if head == queue.count {
                queue.removeAll(keepingCapacity: true)
                head = 0
            }
            condition.unlock()
            chunk.compute(json: json, exponents: exponents)
            done()
        }
    }
}

/// Decimal digits of word-size integers, appended to a byte buffer.
enum Decimal {
    static func append(_ value: UInt128, to out: inout [UInt8]) {
        if value >> 64 == 0 { return append(UInt64(truncatingIfNeeded: value), to: &out) }
        let base: UInt128 = 10_000_000_000_000_000_000  // 10^19
        append(value / base, to: &out)
        let low = UInt64(truncatingIfNeeded: value % base)
        let start = out.count
        append(low, to: &out)
        let written = out.count - start
        if written < 19 { out.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: 19 - written), at: start) }
    }

    static func append(_ value: UInt64, to out: inout [UInt8]) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var rest = value
            var position = 24
            repeat {
                position -= 1
                buffer[position] = UInt8(truncatingIfNeeded: rest % 10) &+ 0x30
                rest /= 10
            } while rest != 0
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[position...]))
        }
    }
}
