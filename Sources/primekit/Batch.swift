// The batch path of `factor`: numbers below 2^128 (with no divisor range given) are gathered into chunks in input
// order and factored completely by the kernel's batch calls on a few plain threads, one per core; each chunk's
// answer lines are written out in one piece when its turn comes. No job per number.

import Foundation
import PrimeKit

/// A run of consecutive numbers below 2^128 and, once a pool thread has factored them, their answer lines.
final class BatchChunk: @unchecked Sendable {
    /// The numbers as written (canonical decimal, one after the other) and where each ends, and their values.
    private var digits: [UInt8] = []
    private var ends: [Int] = []
    private var values: [UInt128] = []
    /// Estimated work, so a chunk of hard numbers is short and one of easy numbers long.
    private(set) var weight = 0
    private let lock = NSLock()
    private var lines: [UInt8]?

    /// A chunk is handed to the pool once its estimated work reaches this (about 4,000 numbers below 2^32).
    static let fullWeight = 4096

    var isFull: Bool { weight >= Self.fullWeight }
    var isEmpty: Bool { values.isEmpty }

    init() {}

    /// A chunk gathered elsewhere: the numbers' digits one after the other, where each ends, their values.
    init(digits: [UInt8], ends: [Int], values: [UInt128], weight: Int) {
        self.digits = digits
        self.ends = ends
        self.values = values
        self.weight = weight
    }

    /// The estimated work of factoring `value`, in units of a number below 2^32.
    static func weight(of value: UInt128) -> Int {
        value >> 32 == 0 ? 1 : value >> 50 == 0 ? 4 : value >> 64 == 0 ? 32 : 512
    }

    func append(_ text: String, _ value: UInt128) {
        digits += text.utf8
        add(value)
    }

    func append(_ text: UnsafeBufferPointer<UInt8>, _ value: UInt128) {
        digits.append(contentsOf: text)
        add(value)
    }

    private func add(_ value: UInt128) {
        ends.append(digits.count)
        values.append(value)
        weight += Self.weight(of: value)
    }

    /// The numbers as written.
    var texts: [String] {
        var start = 0
        return ends.map { end in
            defer { start = end }
            return String(decoding: digits[start..<end], as: UTF8.self)
        }
    }

    /// The answer lines, once computed.
    var output: [UInt8]? { lock.withLock { lines } }

    /// Factors the chunk and keeps its answer lines (run on a pool thread).
    func compute(json: Bool, exponents: Bool) {
        let digits = self.digits
        let ends = self.ends
        var out = ByteWriter(capacity: digits.count + ends.count * 16 + 512)
        do {
            try digits.withUnsafeBufferPointer { digits in
                try WordFactorization.factor(values) { index, factors in
                    let text = UnsafeBufferPointer(rebasing: digits[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
                    if json {
                        out.append(AnswerFormat.json(Self.result(String(decoding: text, as: UTF8.self), factors)))
                    } else {
                        Self.appendLine(text, factors, exponents: exponents, to: &out)
                    }
                }
            }
        } catch {
            // Every value was checked to be at least 2 when it was added; this cannot happen.
            fatalError("batch factorization refused a checked number: \(error)")
        }
        let bytes = out.finish()
        lock.withLock { lines = bytes }
    }

    /// `N: p p q`, or with exponents `N: p^2 q`; probable primes (above 2^64) are named at the end,
    /// `N: p q [q: probable prime]`, so a line without brackets is proven in full.
    static func appendLine(_ text: UnsafeBufferPointer<UInt8>, _ factors: WordFactorization.Factors, exponents: Bool,
                           to out: inout ByteWriter) {
        // The longest line below 2^128: 39 digits, then at most 127 primes (2^127) or 27 distinct primes of at most
        // 39 digits with exponents, then at most one probable prime named again.
        out.reserve(text.count + 400 + 8 * 42 + 64)
        out.append(text)
        out.byte(UInt8(ascii: ":"))
        for index in 0..<factors.count {
            let exponent = Int(factors.exponents[index])
            let prime = factors.primes[index]
            if exponents {
                out.byte(0x20)
                out.decimal(prime)
                if exponent > 1 {
                    out.byte(UInt8(ascii: "^"))
                    out.decimal(UInt128(exponent))
                }
            } else {
                for _ in 0..<exponent {
                    out.byte(0x20)
                    out.decimal(prime)
                }
            }
        }
        for index in 0..<factors.count where factors.probable[index] {
            out.byte(0x20)
            out.byte(UInt8(ascii: "["))
            out.decimal(factors.primes[index])
            out.append(": probable prime]")
        }
        out.byte(0x0A)
    }

    /// The factor result a complete job gives for the same number.
    static func result(_ text: String, _ factors: WordFactorization.Factors) -> FactorResult {
        var list: [PrimeFactor] = []
        for index in 0..<factors.count {
            list.append(PrimeFactor(prime: String(factors.primes[index]), exponent: Int(factors.exponents[index]),
                                    certainty: factors.probable[index] ? .probable : .proven))
        }
        let isPrime = factors.count == 1 && factors.exponents[0] == 1
        return FactorResult(candidate: text, factors: list, cofactor: "1", cofactorStatus: .one, complete: true,
                            isPrime: isPrime, certainty: factors.probable.contains(true) ? .probable : .proven,
                            parts: [], mode: .complete)
    }

    /// The value of a canonical decimal number with 2 <= n < 2^128, else nil (such tokens take the other path).
    static func value(_ text: String) -> UInt128? {
        var text = text
        return text.withUTF8 { parse($0) }
    }

    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt128? {
        guard let first = bytes.first, bytes.count <= 39, first != UInt8(ascii: "0") else { return nil }
        if bytes.count <= 19 {
            var value: UInt64 = 0
            for byte in bytes {
                let digit = byte &- 0x30
                guard digit < 10 else { return nil }
                value = value &* 10 &+ UInt64(digit)
            }
            return value >= 2 ? UInt128(value) : nil
        }
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
        return value
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

/// A growing byte buffer written through a raw pointer (the batch path writes tens of megabytes of digits).
struct ByteWriter {
    private var base: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 64)
        base = .allocate(capacity: self.capacity)
    }

    /// Makes room for `more` bytes.
    mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        let grown = max(capacity * 2, count + more)
        let next = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        next.update(from: base, count: count)
        base.deallocate()
        base = next
        capacity = grown
    }

    mutating func byte(_ value: UInt8) {
        base[count] = value
        count += 1
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        reserve(bytes.count)
        (base + count).update(from: bytes.baseAddress!, count: bytes.count)
        count += bytes.count
    }

    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// The decimal digits of `value` (room must have been reserved: at most 39).
    mutating func decimal(_ value: UInt128) {
        if value >> 64 == 0 { return decimal(UInt64(truncatingIfNeeded: value)) }
        let base19: UInt128 = 10_000_000_000_000_000_000  // 10^19
        decimal(value / base19)
        var low = UInt64(truncatingIfNeeded: value % base19)
        for position in stride(from: count + 18, through: count, by: -1) {
            base[position] = UInt8(truncatingIfNeeded: low % 10) &+ 0x30
            low /= 10
        }
        count += 19
    }

    mutating func decimal(_ value: UInt64) {
        var length = 1
        var probe = value
        while probe >= 100 {
            probe /= 100
            length += 2
        }
        if probe >= 10 { length += 1 }
        // Two digits at a time, from a table of "00" to "99".
        let pairs = Self.digitPairs.utf8Start
        var rest = value
        var position = count + length
        while rest >= 100 {
            let pair = Int(truncatingIfNeeded: rest % 100) &* 2
            rest /= 100
            position -= 2
            base[position] = pairs[pair]
            base[position + 1] = pairs[pair + 1]
        }
        if rest >= 10 {
            let pair = Int(truncatingIfNeeded: rest) &* 2
            base[position - 2] = pairs[pair]
            base[position - 1] = pairs[pair + 1]
        } else {
            base[position - 1] = UInt8(truncatingIfNeeded: rest) &+ 0x30
        }
        count += length
    }

    private static let digitPairs: StaticString = """
        00010203040506070809101112131415161718192021222324252627282930313233343536373839\
        40414243444546474849505152535455565758596061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899
        """

    /// Lets `body` write at most `room` bytes at the end, in place; it returns how many it wrote.
    mutating func appendInPlace<E: Error>(room: Int, _ body: (UnsafeMutableRawBufferPointer) throws(E) -> Int) throws(E) {
        reserve(room)
        count += try body(UnsafeMutableRawBufferPointer(start: base + count, count: room))
    }

    /// Forgets what was written, keeping the room.
    mutating func reset() {
        count = 0
    }

    /// Writes what was written to `descriptor` (see ``writeAll(_:_:)``).
    /// - Returns: 0, or the `errno` of the write that failed.
    @discardableResult
    func write(to descriptor: Int32) -> Int32 {
        writeAll(descriptor, UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Frees the buffer; the writer must not be used afterwards.
    func deallocate() {
        base.deallocate()
    }

    /// The bytes written; the writer must not be used afterwards.
    func finish() -> [UInt8] {
        defer { base.deallocate() }
        return Array(UnsafeBufferPointer(start: base, count: count))
    }
}
