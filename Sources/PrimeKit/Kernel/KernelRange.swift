// The kernel's range sieve (`pk_range_*`): every number of a range [first, last] below 2^64 factored in order, one
// segment per step. Part of the layer through which PrimeKit calls the C kernel (see Kernel.swift); `package` so
// the command-line tool and the engine use the one wrapper. Nothing here prints or decides policy.

internal import CPrimeKit

/// A Swift copy of `pk_range_progress`.
package struct KernelRangeProgress: Sendable, Hashable {
    package var first: UInt64
    package var last: UInt64
    /// Numbers delivered: the next one is `first + done`.
    package var done: UInt64
    /// `last - first + 1`.
    package var total: UInt64
    /// The sieve's largest prime bound.
    package var limit: UInt64
}

/// Owns one `pk_range` and frees it in `deinit`.
///
/// Thread safety follows the kernel: one thread at a time may use a `KernelRange`, except ``interrupt()``, which is
/// safe from any thread while the caller holds a reference. Callers keep the one-thread rule, hence
/// `@unchecked Sendable`.
package final class KernelRange: @unchecked Sendable {
    private let handle: OpaquePointer

    /// The longest line ``format(from:into:)`` writes, newline included (a buffer this long always takes a line).
    package static let lineMax = Int(PK_RANGE_LINE_MAX)

    private init(handle: OpaquePointer) {
        self.handle = handle
    }

    deinit {
        pk_range_destroy(handle)
    }

    /// A range [first, last], 2 <= first <= last < 2^64; the sieve is set up by the first steps.
    /// - Throws: ``PrimeKitError`` (`candidateOutOfRange` when first < 2, `invalidOptions` when first > last,
    ///   `outOfMemory`).
    package convenience init(first: UInt64, last: UInt64) throws(PrimeKitError) {
        var out: OpaquePointer?
        let status = pk_range_create(first, last, &out)
        try self.init(status: status, out)
    }

    /// A range rebuilt from ``checkpoint()`` text; its first step goes on at the saved position.
    /// - Throws: ``PrimeKitError`` (`invalidCheckpoint`, `unsupportedCheckpointVersion`, `inconsistentCheckpoint`,
    ///   `outOfMemory`).
    package convenience init(checkpoint text: String) throws(PrimeKitError) {
        var out: OpaquePointer?
        var text = text
        let status = text.withUTF8 { bytes in
            bytes.withMemoryRebound(to: CChar.self) { pk_range_restore($0.baseAddress, $0.count, &out) }
        }
        try self.init(status: status, out)
    }

    private convenience init(status: Int32, _ out: OpaquePointer?) throws(PrimeKitError) {
        guard status == rangeCode(PK_OK), let out else {
            pk_range_destroy(out)
            throw PrimeKitError(kernelStatus: status < 0 ? status : rangeCode(PK_E_INTERNAL))
        }
        self.init(handle: out)
    }

    /// The `index`-th of `parts` contiguous sub-ranges of [first, last], as equal as can be; their lines
    /// concatenated in index order are the whole range's.
    /// - Throws: ``PrimeKitError`` (a bad range, parts 0 or above the count of numbers, index >= parts).
    package static func split(first: UInt64, last: UInt64, parts: UInt64, index: UInt64) throws(PrimeKitError)
        -> (first: UInt64, last: UInt64)
    {
        var subFirst: UInt64 = 0
        var subLast: UInt64 = 0
        let status = pk_range_split(first, last, parts, index, &subFirst, &subLast)
        guard status == rangeCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        return (subFirst, subLast)
    }

    /// Does at most about `budget` units of work (numbers sieved), delivering at most one segment.
    package func step(budget: UInt64) throws(PrimeKitError) -> KernelStep {
        let status = pk_range_step(handle, budget)
        switch status {
        case rangeCode(PK_MORE): return .more
        case rangeCode(PK_DONE): return .done
        case rangeCode(PK_INTERRUPTED): return .interrupted
        default: throw PrimeKitError(kernelStatus: status)
        }
    }

    /// Makes the running or the next step return ``KernelStep/interrupted``. Safe from any thread.
    /// Moves the handle so that its first `done` numbers count as delivered (`pk_range_seek`).
    package func seek(done: UInt64) throws(PrimeKitError) {
        let status = pk_range_seek(handle, done)
        guard status == rangeCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
    }

    package func interrupt() {
        pk_range_interrupt(handle)
    }

    /// The segment the last step delivered: its first number and its count (0: nothing delivered).
    package var segment: (first: UInt64, count: Int) {
        var first: UInt64 = 0
        var count = 0
        _ = pk_range_segment(handle, &first, &count)
        return (first, count)
    }

    /// Hands the factorizations of the delivered segment's numbers `index ..< index + count` to `visit`, in order,
    /// as (number, primes ascending, exponents); the buffers are valid only during the call. Every prime is proven.
    /// - Throws: ``PrimeKitError`` (`internalError` for numbers beyond the segment); then nothing was visited.
    package func answers(from index: Int, count: Int,
                         _ visit: (UInt64, UnsafeBufferPointer<UInt64>, UnsafeBufferPointer<UInt8>) -> Void)
        throws(PrimeKitError)
    {
        guard count > 0 else { return }
        let answers = UnsafeMutableBufferPointer<pk_u64_answer>.allocate(capacity: count)
        defer { answers.deallocate() }
        let status = pk_range_answers(handle, index, count, answers.baseAddress, MemoryLayout<pk_u64_answer>.size)
        guard status == rangeCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        for slot in 0..<count {
            let answer = answers.baseAddress! + slot
            let factors = Int(answer.pointee.factor_count)
            let n = answer.pointee.n
            withUnsafePointer(to: &answer.pointee.primes) { primes in
                withUnsafePointer(to: &answer.pointee.exponents) { exponents in
                    primes.withMemoryRebound(to: UInt64.self, capacity: factors) { primes in
                        exponents.withMemoryRebound(to: UInt8.self, capacity: factors) { exponents in
                            visit(n, UnsafeBufferPointer(start: primes, count: factors),
                                  UnsafeBufferPointer(start: exponents, count: factors))
                        }
                    }
                }
            }
        }
    }

    /// Writes the delivered segment's lines from number `index` on, as coreutils factor prints them
    /// (`12: 2 2 3`), whole lines only, as many as fit in `buffer`.
    /// - Returns: The bytes and lines written, and whether they reach the end of the segment (when not, call
    ///   again from `index + lines`).
    /// - Throws: ``PrimeKitError`` (`internalError`: not even one line fits, or `index` is beyond the segment).
    package func format(from index: Int, into buffer: UnsafeMutableRawBufferPointer) throws(PrimeKitError)
        -> (bytes: Int, lines: Int, complete: Bool)
    {
        var length = 0
        var lines = 0
        let status = pk_range_format(handle, index, buffer.baseAddress?.assumingMemoryBound(to: CChar.self),
                                     buffer.count, &length, &lines)
        switch status {
        case rangeCode(PK_OK): return (length, lines, true)
        case rangeCode(PK_MORE): return (length, lines, false)
        default: throw PrimeKitError(kernelStatus: status)
        }
    }

    /// Numbers done and total.
    package func progress() -> KernelRangeProgress {
        var raw = pk_range_progress()
        raw.size = MemoryLayout<pk_range_progress>.size
        _ = pk_range_progress_of(handle, &raw)
        return KernelRangeProgress(first: raw.first, last: raw.last, done: raw.done, total: raw.total,
                                   limit: raw.limit)
    }

    /// The position as kernel checkpoint text (delivered segments count as done: write their lines out first).
    package func checkpoint() throws(PrimeKitError) -> String {
        var length = 0
        var buffer = [CChar](repeating: 0, count: 256)
        var status = pk_range_checkpoint(handle, &buffer, buffer.count, &length)
        if status == rangeCode(PK_E_BUFFER) {
            buffer = [CChar](repeating: 0, count: length + 1)
            status = pk_range_checkpoint(handle, &buffer, buffer.count, &length)
        }
        guard status == rangeCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        return buffer.withUnsafeBufferPointer { raw in
            raw.withMemoryRebound(to: UInt8.self) { String(decoding: $0[..<min(length, $0.count)], as: UTF8.self) }
        }
    }
}

/// The raw value of a `pk_status` constant as the `int` the kernel's functions return.
private func rangeCode(_ status: pk_status) -> Int32 {
    Int32(truncatingIfNeeded: status.rawValue)
}
