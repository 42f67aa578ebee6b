import Foundation
@testable import PrimeKit
import Synchronization
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

    /// The engine files a job's end in the queue's tap: a result asked for after the job ended, but before the tap has
    /// seen that end, waits for it (so `await job.result` then `store.persistNow()` always includes the job).
    @Test func aResultAskedBeforeTheTapHasSeenTheEndWaitsForIt() async throws {
        let queue = JobQueue.testing()
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let tapDone = Atomic(false)
        queue.scheduler.setTap(QueueTap(holdsResults: true) { finished, _ in
            guard !finished.isEmpty else { return }
            entered.signal()
            release.wait()
            tapDone.store(true, ordering: .sequentiallyConsistent)
        }, progress: false)
        let job = try queue.submit(.isPrime(1_301_081))
        // The worker has ended the job and now waits inside the tap.
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                entered.wait()
                continuation.resume()
            }
        }
        #expect(job.state == .succeeded)
        let answered = Atomic(false)
        let asking = Task {
            let result = try await job.result
            answered.store(true, ordering: .sequentiallyConsistent)
            return (result, tapDone.load(ordering: .sequentiallyConsistent))
        }
        // Release the tap once the result is awaited (or, wrongly, already answered).
        while !answered.load(ordering: .sequentiallyConsistent)
            && job.core.withLock(anchoredTo: job, { $0.resultWaiters.isEmpty }) {
            await Task.yield()
        }
        release.signal()
        let (result, sawTheTap) = try await asking.value
        #expect(sawTheTap)
        #expect(result.isPrime == KernelRoundTripTests.bruteForceIsPrime(1_301_081))
    }

    @Test(arguments: ["0", "1"]) func aFromBelowTwoIsRefused(from: String) async throws {
        let queue = JobQueue.testing()
        for request in [JobRequest.factor("30", from: from, bound: nil), .isPrime("31", from: from, bound: "5"),
                        .factor("600851475143000000000000000034248534083151", from: from, bound: "200000000")] {
            do {
                _ = try queue.submit(request)
                Issue.record("from \(from) was accepted")
            } catch {
                #expect(error.code == .invalidOptions)
                #expect(error.message == "from \(from) is below 2, the first divisor tried")
            }
        }
        #expect(queue.counts.unfinished == 0)
        #expect(try await queue.submit(.factor("30", from: "2", bound: nil)).result.factorization?.factors.map(\.prime)
                == ["2", "3", "5"])
    }

    @Test func anUndecidedIsPrimeAnswerIsNotComplete() async throws {
        // Too long for BPSW (above bpswDigits) and no divisor below the bound: the question stays open.
        let queue = JobQueue.testing { $0.bpswDigits = 20 }
        let prime = "1000000000000000000000000000057"
        let open = try #require(try await queue.submit(.isPrime(prime, from: nil, bound: "1000")).result.primality)
        #expect(open.isPrime == nil)
        #expect(!open.complete)
        #expect(open.progress == 100)
        // Answered: complete, whichever way.
        let decided = JobQueue.testing()
        let probable = try #require(try await decided.submit(.isPrime(prime, from: nil, bound: "1000")).result.primality)
        #expect(probable.isPrime == true && probable.complete)
        let composite = try #require(try await queue.submit(.isPrime("3" + prime.dropFirst(), from: nil, bound: "1000"))
            .result.primality)
        #expect(composite.isPrime == false && composite.complete)
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
    /// same range) makes a kernel job. Both must give the same answer, the final progress included. (Trial
    /// division, so that the mode is the same; a complete job below 2^32 takes the same one-call path.)
    @Test func smallCandidatesAnswerAsKernelJobsDo() async throws {
        let queue = JobQueue.testing()
        var candidates: [UInt64] = Array(2...3_000)
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<500 { candidates.append(UInt64.random(in: 3_000...UInt64(UInt32.max), using: &generator)) }
        candidates += [4_294_967_291, 4_294_967_295, 4_294_836_225, 3_491_888_400, 2_147_483_648, 4_294_967_296]
        for kind in [JobKind.factor, .isPrime] {
            func request(_ candidate: UInt64, from: String? = nil) -> JobRequest {
                (kind == .factor ? JobRequest.factor(String(candidate), from: from) : .isPrime(String(candidate), from: from))
                    .trialDivision()
            }
            let fast = try queue.submit(contentsOf: candidates.map { request($0) })
            let kernel = try queue.submit(contentsOf: candidates.map { request($0, from: "2") })
            // Submitted as integers: never written out as text unless read.
            let integers = try queue.submit(contentsOf: candidates.map {
                (kind == .factor ? JobRequest.factor($0) : .isPrime($0)).trialDivision()
            })
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            for (index, candidate) in candidates.enumerated() {
                let (a, b) = (try await fast[index].result, try await kernel[index].result)
                #expect(a == b, "\(kind) \(candidate): \(a) vs \(b)")
                let c = try await integers[index].result
                #expect(c == b && c.candidate == String(candidate) && integers[index].candidate == String(candidate))
                #expect(c.factorization?.factors == b.factorization?.factors && c.primality?.factors == b.primality?.factors)
                switch (b, c) {
                case (.primality(let x), .primality(let y)):
                    #expect(try encoder.encode(x) == encoder.encode(y), "\(candidate)")
                case (.factorization(let x), .factorization(let y)):
                    #expect(try encoder.encode(x) == encoder.encode(y), "\(candidate)")
                default:
                    Issue.record("\(candidate): different kinds of answer")
                }
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

    /// The planner's floor(sqrt(n)) (which bounds a job's divisor range) is exact on both sides of every boundary
    /// where a shortcut could slip: around squares near 2^24, 2^26 and 2^32, and near 2^48 and 2^64.
    @Test func integerSquareRootIsExactAroundSquares() {
        func isRoot(_ r: UInt64, of n: UInt64) -> Bool {
            let (square, overflow) = r.multipliedReportingOverflow(by: r)
            let (next, nextOverflow) = (r + 1).multipliedReportingOverflow(by: r + 1)
            return !overflow && square <= n && (nextOverflow || next > n)
        }
        var roots: [UInt64] = [1, 2, 3, 1 << 24 - 1, 1 << 24, 1 << 24 + 1, 1 << 26 + 5, 1 << 32 - 1]
        roots += (0..<64).map { _ in UInt64.random(in: 1...(1 << 32 - 1)) }
        for k in roots {
            for n in [k * k - 1, k * k, k * k + 1, k * k + 2 * k] {
                #expect(isRoot(CandidateText.integerSquareRoot(n), of: n), "isqrt(\(n))")
            }
        }
        for n: UInt64 in [1 << 48 - 1, 1 << 48, 1 << 48 + 1, .max, .max - 1, 0, 1, 2, 4] {
            #expect(isRoot(CandidateText.integerSquareRoot(n), of: n), "isqrt(\(n))")
        }
    }

    /// A candidate given as an integer meets the same rules as one given as text, and setting `candidate` replaces
    /// it.
    @Test func integerCandidatesMeetTheSameRules() async throws {
        var configuration = JobQueue.Configuration()
        configuration.maxDigits = 5
        let queue = JobQueue(configuration: configuration)
        for request in [JobRequest.isPrime(123_456 as UInt64), .isPrime("123456"), .factor(Int64(100_000))] {
            #expect { try queue.submit(request) } throws: { error in
                (error as? PrimeKitError)?.code == .candidateTooLarge
            }
        }
        for request in [JobRequest.factor(UInt8(1)), .isPrime(0 as UInt64), .factor("1")] {
            #expect { try queue.submit(request) } throws: { error in
                (error as? PrimeKitError)?.code == .candidateOutOfRange
            }
        }
        var request = JobRequest.isPrime(97 as UInt64)
        #expect(request.candidate == "97")
        request.candidate = "91"
        let job = try queue.submit(request)
        #expect(job.candidate == "91")
        #expect(try await job.result.primality?.factors == ["1", "7", "13", "91"])
        // Beyond 64 bits an integer is kept as text.
        let wideQueue = JobQueue.testing(workers: 1)
        let wide = try wideQueue.submit(.factor(UInt128(1) << 70, bound: 1_000))
        #expect(wide.candidate == "1180591620717411303424")
        #expect(try await wide.result.factorization?.factors == [PrimeFactor(prime: "2", exponent: 70)])
        #expect(try await queue.submit(.factor(99_991 as UInt32)).result.isPrime == true)
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
