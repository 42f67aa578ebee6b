import CPrimeKit
import Testing

/// The C API used directly, the way the engine's kernel layer uses it: create, step to done, read the answer.
@Suite struct KernelRoundTripTests {
    private func finishedJob(_ candidate: String) throws -> OpaquePointer {
        var job: OpaquePointer?
        #expect(pk_job_create(candidate, nil, &job) == 0)
        let handle = try #require(job)
        var status: Int32 = 1
        while status == 1 { status = pk_job_step(handle, 1 << 20) }
        #expect(status == 2)
        return handle
    }

    private func isPrime(_ candidate: String) throws -> Int32 {
        let job = try finishedJob(candidate)
        defer { pk_job_destroy(job) }
        var result = pk_result()
        result.size = MemoryLayout<pk_result>.size
        #expect(pk_job_result(job, &result) == 0)
        return result.is_prime
    }

    @Test func isPrimeOfTheDocumentedCandidates() throws {
        #expect(try isPrime("179402471") == (Self.bruteForceIsPrime(179_402_471) ? PK_PRIME_YES : PK_PRIME_NO))
        #expect(try isPrime("1301081") == (Self.bruteForceIsPrime(1_301_081) ? PK_PRIME_YES : PK_PRIME_NO))
    }

    @Test func divisorsOf12354962MatchBruteForce() throws {
        let job = try finishedJob("12354962")
        defer { pk_job_destroy(job) }
        var length = 0
        var count = 0
        #expect(pk_job_divisors(job, 1000, nil, 0, &length, &count) == PK_E_BUFFER.rawValue)
        var buffer = [CChar](repeating: 0, count: length + 1)
        #expect(pk_job_divisors(job, 1000, &buffer, buffer.count, &length, &count) == 0)
        let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        let divisors = text.split(separator: " ").map { UInt64($0)! }
        let expected = Self.bruteForceDivisors(12_354_962)
        #expect(divisors == expected)
        #expect(count == expected.count)
    }

    static func bruteForceDivisors(_ n: UInt64) -> [UInt64] {
        var low: [UInt64] = []
        var high: [UInt64] = []
        var d: UInt64 = 1
        while d * d <= n {
            if n % d == 0 {
                low.append(d)
                if d * d != n { high.append(n / d) }
            }
            d += 1
        }
        return low + high.reversed()
    }

    static func bruteForceIsPrime(_ n: UInt64) -> Bool {
        if n < 2 { return false }
        var d: UInt64 = 2
        while d * d <= n {
            if n % d == 0 { return false }
            d += 1
        }
        return true
    }
}
