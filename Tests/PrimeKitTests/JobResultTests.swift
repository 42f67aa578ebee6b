import Foundation
import PrimeKit
import Testing

@Suite(.timeLimit(.minutes(3))) struct JobResultTests {
    @Test func isPrimeAnswersInThePluginShape() async throws {
        let queue = JobQueue.testing()
        let prime = try await queue.submit(.isPrime(1_301_081)).result
        let primality = try #require(prime.primality)
        #expect(primality.candidate == "1301081")
        #expect(primality.isPrime == KernelRoundTripTests.bruteForceIsPrime(1_301_081))
        #expect(primality.complete)
        #expect(primality.progress == 100)

        let composite = try #require(try await queue.submit(.isPrime("12354962")).result.primality)
        #expect(composite.isPrime == false)
        #expect(composite.factors == KernelRoundTripTests.bruteForceDivisors(12_354_962).map(String.init))
        #expect(composite.divisorCount == nil)

        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(composite)) as! [String: Any]
        #expect(Set(json.keys) == ["candidate", "isPrime", "complete", "progress", "factors"])
    }

    @Test func aPrimeHasNoListedDivisors() async throws {
        let queue = JobQueue.testing()
        let answer = try #require(try await queue.submit(.isPrime(UInt64(179_402_471))).result.primality)
        if KernelRoundTripTests.bruteForceIsPrime(179_402_471) {
            #expect(answer.isPrime == true)
            #expect(answer.factors == [])
        } else {
            #expect(answer.isPrime == false)
            #expect(answer.factors == KernelRoundTripTests.bruteForceDivisors(179_402_471).map(String.init))
        }
    }

    @Test func factorJobsMatchBruteForce() async throws {
        let queue = JobQueue.testing()
        let candidates: [UInt64] = [2, 3, 4, 12, 97, 1024, 600_851_475_143, 999_999_999_989, 1_000_000_007 * 3]
        let jobs = try queue.submit(contentsOf: candidates.map { JobRequest.factor($0) })
        for (candidate, job) in zip(candidates, jobs) {
            let result = try #require(try await job.result.factorization)
            #expect(result.candidate == String(candidate))
            var product: UInt64 = 1
            for factor in result.factors {
                #expect(KernelRoundTripTests.bruteForceIsPrime(UInt64(factor.prime)!))
                for _ in 0..<factor.exponent { product *= UInt64(factor.prime)! }
            }
            #expect(product == candidate)
            #expect(result.cofactor == "1")
            #expect(result.complete)
            #expect(result.isPrime == (result.factors.count == 1 && result.factors[0].exponent == 1))
        }
    }

    /// Candidates below 2^32 with the default range are answered by the kernel's one-call path; `from: "2"` (the
    /// same range) makes a kernel job. Both must give the same answer, the final progress included.
    @Test func smallCandidatesAnswerAsKernelJobsDo() async throws {
        let queue = JobQueue.testing()
        var candidates: [UInt64] = Array(2...3_000)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 { candidates.append(UInt64.random(in: 3_000...UInt64(UInt32.max), using: &generator)) }
        candidates += [4_294_967_291, 4_294_967_295, 4_294_836_225, 3_491_888_400, 2_147_483_648, 4_294_967_296]
        for kind in [JobKind.factor, .isPrime] {
            func request(_ candidate: UInt64, from: String? = nil) -> JobRequest {
                kind == .factor ? .factor(String(candidate), from: from) : .isPrime(String(candidate), from: from)
            }
            let fast = try queue.submit(contentsOf: candidates.map { request($0) })
            let kernel = try queue.submit(contentsOf: candidates.map { request($0, from: "2") })
            for (index, candidate) in candidates.enumerated() {
                let (a, b) = (try await fast[index].result, try await kernel[index].result)
                #expect(a == b, "\(kind) \(candidate): \(a) vs \(b)")
                let (p, q) = (fast[index].progress, kernel[index].progress)
                #expect(p.percent == 100 && q.percent == 100 && p.factors == q.factors, "\(candidate)")
            }
        }
    }

    @Test(arguments: ["", "-15", "twelve", "12.5", "0x1G", "007", "1e9", " 12"])
    func invalidCandidatesAreRejectedAtSubmission(_ candidate: String) {
        let queue = JobQueue.testing(workers: 1)
        #expect { try queue.submit(.factor(candidate)) } throws: { error in
            (error as? PrimeKitError)?.code == .invalidCandidate
        }
    }

    @Test func candidatesBelowTwoAreOutOfRange() {
        let queue = JobQueue.testing(workers: 1)
        for candidate in ["0", "1"] {
            #expect { try queue.submit(.isPrime(candidate)) } throws: { error in
                (error as? PrimeKitError)?.code == .candidateOutOfRange
            }
        }
        #expect { try queue.submit(.isPrime(-7)) } throws: { error in
            (error as? PrimeKitError)?.code == .invalidCandidate
        }
    }

    @Test func invalidOptionsAreRejectedAtSubmission() {
        let queue = JobQueue.testing(workers: 1)
        #expect { try queue.submit(.factor("1000000", from: "500", bound: "10")) } throws: { error in
            (error as? PrimeKitError)?.code == .invalidOptions
        }
        #expect { try queue.submit(.factor("1000000", bound: "ten")) } throws: { error in
            (error as? PrimeKitError)?.code == .invalidOptions
        }
    }

    @Test func aBoundLeavesTheCofactorClassified() async throws {
        let queue = JobQueue.testing()
        // 1000003 * 1000033: nothing below 1000 divides it.
        let result = try #require(try await queue.submit(.factor("1000036000099", bound: "1000")).result.factorization)
        #expect(result.factors.isEmpty)
        #expect(result.cofactor == "1000036000099")
        #expect(result.cofactorStatus == .composite)
        #expect(result.complete == false)
        #expect(result.isPrime == false)
    }
}
