// The kernel's range sieve (`pk_range_*`) for the engine's range jobs. Every `pk_range_` call of the engine is
// in this file; the types it hands out are Swift's.

internal import CPrimeKit

/// Owns one `pk_range` (a segmented sieve over [first, last]) and frees it in `deinit`.
///
/// Thread safety follows the kernel: one thread at a time steps and reads it, except ``interrupt()``, which is safe
/// from any thread while the caller holds a reference. The engine keeps the one-thread rule through its scheduling
/// state (a piece is stepped only by the worker that owns it), hence `@unchecked Sendable`.
final class RangeSieve: @unchecked Sendable {
    private let handle: OpaquePointer

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        pk_range_destroy(handle)
    }

    /// A sieve over [first, last] (2 <= first <= last < 2^64).
    /// - Throws: `candidateOutOfRange` (first < 2), `invalidOptions` (first > last), `outOfMemory`.
    static func create(first: UInt64, last: UInt64) throws(PrimeKitError) -> RangeSieve {
        var out: OpaquePointer?
        let status = pk_range_create(first, last, &out)
        return try wrap(status, out)
    }

    /// A sieve from ``checkpoint()`` text; its first step goes on at the saved position.
    /// - Throws: `invalidCheckpoint`, `unsupportedCheckpointVersion`, `inconsistentCheckpoint`, `outOfMemory`.
    static func restore(_ text: String) throws(PrimeKitError) -> RangeSieve {
        var out: OpaquePointer?
        var utf8 = Array(text.utf8)
        let status = utf8.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: max(1, buffer.count)) {
                pk_range_restore($0, buffer.count, &out)
            }
        }
        return try wrap(status, out)
    }

    private static func wrap(_ status: Int32, _ out: OpaquePointer?) throws(PrimeKitError) -> RangeSieve {
        guard status == code(PK_OK), let out else {
            throw PrimeKitError(kernelStatus: status == code(PK_OK) ? code(PK_E_INTERNAL) : status)
        }
        return RangeSieve(handle: out)
    }

    /// Sieves at most about `budget` numbers (one segment at most; a segment is never cut).
    func step(budget: UInt64) throws(PrimeKitError) -> KernelStep {
        let status = pk_range_step(handle, budget)
        switch status {
        case code(PK_MORE): return .more
        case code(PK_DONE): return .done
        case code(PK_INTERRUPTED): return .interrupted
        default: throw PrimeKitError(kernelStatus: status)
        }
    }

    /// Makes the running or the next step return early. Safe from any thread.
    func interrupt() {
        pk_range_interrupt(handle)
    }

    /// Where the sieve stands: numbers delivered so far and the range.
    func position() -> (first: UInt64, last: UInt64, done: UInt64, total: UInt64) {
        var raw = pk_range_progress()
        raw.size = MemoryLayout<pk_range_progress>.size
        guard pk_range_progress_of(handle, &raw) == code(PK_OK) else { return (0, 0, 0, 0) }
        return (raw.first, raw.last, raw.done, raw.total)
    }

    /// The factorizations of the segment the last step delivered, as one block; nil when it delivered none.
    func deliveredBlock() throws(PrimeKitError) -> RangeBlock? {
        var first: UInt64 = 0
        var count = 0
        let status = pk_range_segment(handle, &first, &count)
        guard status == code(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        guard count > 0 else { return nil }
        let answers = UnsafeMutableBufferPointer<pk_u64_answer>.allocate(capacity: count)
        defer { answers.deallocate() }
        let read = pk_range_answers(handle, 0, count, answers.baseAddress, MemoryLayout<pk_u64_answer>.size)
        guard read == code(PK_OK) else { throw PrimeKitError(kernelStatus: read) }
        var primes: [UInt64] = []
        var exponents: [UInt8] = []
        var ends: [UInt32] = []
        primes.reserveCapacity(count * 3)
        exponents.reserveCapacity(count * 3)
        ends.reserveCapacity(count)
        var primeCount = 0
        for index in 0..<count {
            let answer = answers.baseAddress! + index
            let factors = Int(answer.pointee.factor_count)
            if factors == 1 && answer.pointee.exponents.0 == 1 { primeCount += 1 }
            withUnsafePointer(to: &answer.pointee.primes) { raw in
                raw.withMemoryRebound(to: UInt64.self, capacity: factors) { list in
                    for slot in 0..<factors { primes.append(list[slot]) }
                }
            }
            withUnsafePointer(to: &answer.pointee.exponents) { raw in
                raw.withMemoryRebound(to: UInt8.self, capacity: factors) { list in
                    for slot in 0..<factors { exponents.append(list[slot]) }
                }
            }
            ends.append(UInt32(primes.count))
        }
        return RangeBlock(first: first, primes: primes, exponents: exponents, ends: ends, primeCount: primeCount)
    }

    /// The sieve's position as kernel checkpoint text ("primekit-range 1"); delivered segments count as done.
    func checkpoint() throws(PrimeKitError) -> String {
        var length = 0
        var status = pk_range_checkpoint(handle, nil, 0, &length)
        guard status == code(PK_OK) || status == code(PK_E_BUFFER) else { throw PrimeKitError(kernelStatus: status) }
        var buffer = [CChar](repeating: 0, count: length + 1)
        status = buffer.withUnsafeMutableBufferPointer { pk_range_checkpoint(handle, $0.baseAddress, $0.count, &length) }
        guard status == code(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }

    /// Whether text looks like a range checkpoint (its header), before the kernel checks it.
    static func isRangeCheckpoint(_ text: String) -> Bool {
        text.hasPrefix("primekit-range ")
    }
}

private func code(_ status: pk_status) -> Int32 {
    Int32(truncatingIfNeeded: status.rawValue)
}
