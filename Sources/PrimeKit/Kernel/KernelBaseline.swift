// The kernel's own calls with no engine around them: what the engine benchmark (Tests/Benchmarks/engine) sets the
// engine's figures against. Part of the layer through which PrimeKit calls the C kernel (see Kernel.swift); SPI,
// not API: `@_spi(Benchmarks) import PrimeKit` reaches it, and nothing here is a promise to users.

internal import CPrimeKit

/// The kernel work of the engine's jobs done directly on the calling thread, for benchmarks.
@_spi(Benchmarks)
public enum KernelBaseline {
    /// The kernel options every direct call starts from: `pk_options_init` once, as the engine does (it reads the
    /// environment, which is not the per-job work being compared).
    nonisolated(unsafe) private static let options: pk_options = {
        var options = pk_options()
        pk_options_init(&options)
        return options
    }()

    /// The kernel work of one tiny factor or isPrime job and an answer of the same content: below 2^32 the one-call
    /// path the engine takes too (which keeps the answer in machine words, so nothing is written out); above it a
    /// kernel job is created, stepped to done and read (every factor and the cofactor as text, and with `divisors`
    /// the divisors' text of a composite, which the engine keeps as text until somebody reads the list).
    /// - Parameters:
    ///   - n: The candidate.
    ///   - divisors: Read a composite's divisors too (what an isPrime job's answer holds).
    /// - Returns: Whether `n` is prime (false for 0, 1 and when a kernel call fails).
    public static func isPrime(_ n: UInt64, divisors: Bool) -> Bool {
        if n >= 2, n <= UInt64(UInt32.max) { return isPrimeSmall(UInt32(n)) }
        var job: OpaquePointer?
        var kernelOptions = options
        guard String(n).withCString({ pk_job_create($0, &kernelOptions, &job) }) == 0, let job else { return false }
        defer { pk_job_destroy(job) }
        while pk_job_step(job, 1 << 22) == 1 {}
        var result = pk_result()
        result.size = MemoryLayout<pk_result>.size
        _ = pk_job_result(job, &result)
        var factors: [(String, UInt64)] = []
        factors.reserveCapacity(result.factor_count)
        for index in 0..<result.factor_count {
            var exponent: UInt64 = 0
            factors.append((readString { pk_job_factor(job, index, $0, $1, $2, &exponent) }, exponent))
        }
        let cofactor = readString { pk_job_cofactor(job, $0, $1, $2) }
        if divisors && result.is_prime != 1 {
            var count = 0
            let text = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 2048) { buffer -> String in
                var length = 0
                if pk_job_divisors(job, 100_000, buffer.baseAddress, buffer.count, &length, &count) == 0 {
                    return String(cString: buffer.baseAddress!)
                }
                var heap = [CChar](repeating: 0, count: length + 1)
                _ = pk_job_divisors(job, 100_000, &heap, heap.count, &length, &count)
                return String(cString: heap)
            }
            return count == 2 && !text.isEmpty
        }
        return factors.count == 1 && factors[0].1 == 1 && cofactor == "1"
    }

    /// The same for a candidate below 2^32, through the kernel's one-call path (`pk_small_factor`).
    private static func isPrimeSmall(_ n: UInt32) -> Bool {
        var answer = pk_small_answer()
        answer.size = MemoryLayout<pk_small_answer>.size
        guard pk_small_factor(n, &answer) == 0 else { return false }
        return answer.factor_count == 1 && answer.exponents.0 == 1
    }

    /// Reads a string in the kernel's caller-buffer convention (the answers of tiny jobs fit 64 bytes).
    @inline(__always)
    private static func readString(
        _ call: (UnsafeMutablePointer<CChar>?, Int, UnsafeMutablePointer<Int>) -> Int32
    ) -> String {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 64) { buffer in
            var length = 0
            if call(buffer.baseAddress, buffer.count, &length) == 0 { return String(cString: buffer.baseAddress!) }
            var heap = [CChar](repeating: 0, count: length + 1)
            _ = call(&heap, heap.count, &length)
            return String(cString: heap)
        }
    }

    /// Factors every number of [first, last] with the kernel's range sieve (`pk_range_*`) on the calling thread: one
    /// segment per step with the budget the engine's slices have at most, every answer copied out (what the engine
    /// does before it builds a block). Stops the process when a kernel call fails or an answer is empty.
    /// - Returns: The count of numbers delivered.
    public static func factorRange(first: UInt64, last: UInt64) -> Int {
        var range: OpaquePointer?
        precondition(pk_range_create(first, last, &range) == 0)
        defer { pk_range_destroy(range) }
        let answers = UnsafeMutableBufferPointer<pk_u64_answer>.allocate(capacity: 8192)
        defer { answers.deallocate() }
        var numbers = 0
        while true {
            let status = pk_range_step(range, 1 << 20)
            var segment = 0
            pk_range_segment(range, nil, &segment)
            if segment > 0 {
                precondition(pk_range_answers(range, 0, segment, answers.baseAddress,
                                              MemoryLayout<pk_u64_answer>.size) == 0)
                precondition(answers[segment - 1].factor_count > 0)
                numbers += segment
            }
            if status == Int32(PK_DONE.rawValue) { break }
            precondition(status >= 0)
        }
        return numbers
    }
}
