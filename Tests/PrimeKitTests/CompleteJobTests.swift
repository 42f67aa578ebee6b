import Foundation
import Testing
@testable import PrimeKit

/// Numbers with known factorizations for complete jobs.
enum Known {
    /// 2^137 - 1 = p20 · p22, above 2^128: a kernel job (not the batch call), split by ECM or the sieve.
    static let m137 = "174224571863520493293247799005065324265471"
    static let m137Factors = ["32032215596496435569", "5439042183600204290159"]
    /// Two primes of about 2^40 (both above the 2^32 cap of the default trial-division bound).
    static let p40a: UInt64 = 1_099_511_627_791
    static let p40b: UInt64 = 1_099_511_628_401
    /// p20 · p50, 232 bits: above the sieve's 230 bits, so ECM alone splits it.
    static let ecm232 = "4895841559427691305519056411393168738288827017746639020019027103300857"
    static let ecm232Factors = ["61302151512852928831", "79864106537944326930115269711540229808411056251847"]
    /// p25 · p45, 231 bits: no curve of the 15-digit level finds the 25-digit prime.
    static let hard231 = "2378203187852473718319942737020954422639460830405365442961921382940233"
    static let hard231Factors = ["3801323113462116379766471", "625625109170603174605489107675141125745613423"]
}

/// The product of the factors and parts of a result, each to its exponent, decimal (through the kernel: every
/// factor power divides the candidate and leaves the parts' product).
func multipliedBack(_ result: FactorResult) throws -> Bool {
    let factors = result.factors + result.parts.map { PrimeFactor(prime: $0.value, exponent: $0.exponent) }
    let (_, cofactor) = try KernelJob.cofactorRoot(candidate: result.candidate, factors: factors)
    return cofactor == 1
}

@Suite(.timeLimit(.minutes(5))) struct CompleteJobTests {
    @Test func factorAnswersCompletelyByDefault() async throws {
        let queue = JobQueue.testing()
        let result = try #require(try await queue.submit(.factor(Known.m137)).result.factorization)
        #expect(result.mode == .complete)
        #expect(result.complete && result.cofactor == "1" && result.cofactorStatus == .one)
        #expect(result.factors.map(\.prime) == Known.m137Factors)
        #expect(result.factors.allSatisfy { $0.exponent == 1 && $0.certainty == .probable })
        #expect(result.certainty == .probable && result.isPrime == false && result.parts.isEmpty)
        #expect(try multipliedBack(result))
    }

    @Test func aBoundOrTrialDivisionKeepsTrialDivision() async throws {
        let queue = JobQueue.testing()
        let n = UInt128(Known.p40a) * UInt128(Known.p40b)
        // A bound below both primes: trial division finds nothing and classifies the remainder.
        let bounded = try #require(try await queue.submit(.factor(n, bound: 1000)).result.factorization)
        #expect(bounded.mode == .trialDivision && bounded.factors.isEmpty && bounded.cofactor == String(n))
        #expect(bounded.cofactorStatus == .composite && !bounded.complete && bounded.parts.isEmpty)
        let complete = try #require(try await queue.submit(.factor(n)).result.factorization)
        #expect(complete.mode == .complete && complete.complete && complete.cofactor == "1")
        #expect(complete.factors == [PrimeFactor(prime: String(Known.p40a), exponent: 1),
                                     PrimeFactor(prime: String(Known.p40b), exponent: 1)])
        // `.trialDivision()` is the default range given explicitly (from 2 to the default bound), as before.
        for candidate in [Medium.semiprime, "600851475143", "999999999989"] {
            let trial = try await queue.submit(.factor(candidate).trialDivision()).result
            let explicit = try await queue.submit(.factor(candidate, from: "2")).result
            #expect(trial == explicit && trial.factorization?.mode == .trialDivision)
        }
    }

    @Test func wordSizeAnswersEqualAKernelJobs() async throws {
        // Below 2^128 the batch call answers; a checkpoint taken before the first slice is a kernel job's, which
        // restores to the same answer.
        let queue = JobQueue.testing()
        let candidates: [String] = ["18446744073709551557", String(UInt128(Known.p40a) * UInt128(Known.p40b)),
                                    "340282366920938463463374607431768211297", "1208925819614629174706176",
                                    String(UInt128(Known.p40a) * UInt128(Known.p40a) * 7)]
        for candidate in candidates {
            let direct = try await queue.submit(.factor(candidate)).result
            queue.suspend()
            let held = try queue.submit(.factor(candidate))
            let checkpoint = try await held.pause()
            held.cancel()
            queue.resume()
            let restored = try await queue.submit(.restore(checkpoint)).result
            #expect(direct == restored, "\(candidate)")
            let factorization = try #require(direct.factorization)
            #expect(factorization.complete && factorization.mode == .complete)
            #expect(try multipliedBack(factorization))
        }
    }

    @Test func isPrimeListsEveryDivisorFromTheCompleteFactorization() async throws {
        let queue = JobQueue.testing()
        // Below 2^128 (the batch call) and above it (a kernel job).
        let word = UInt128(Known.p40a) * UInt128(Known.p40a) * UInt128(Known.p40b)
        let small = try #require(try await queue.submit(.isPrime(String(word))).result.primality)
        let a = UInt128(Known.p40a), b = UInt128(Known.p40b)
        #expect(small.isPrime == false && small.complete)
        #expect(small.factors == [1, a, b, a * a, a * b, a * a * b].map { String($0) })
        let big = try #require(try await queue.submit(.isPrime(Known.m137)).result.primality)
        #expect(big.factors == ["1"] + Known.m137Factors + [Known.m137])
        let prime = try #require(try await queue.submit(.isPrime("18446744073709551557")).result.primality)
        #expect(prime.isPrime == true && prime.factors == [])
        // 2^100 has 101 divisors; 2^20·3^20·5^20 below 2^128 has 9,261, all listed in order.
        let many = UInt128(1) << 20 * UInt128(3486784401) * UInt128(95367431640625)
        let listed = try #require(try await queue.submit(.isPrime(String(many))).result.primality)
        let numbers = try #require(listed.factors).map { UInt128($0)! }
        #expect(numbers.count == 9261 && numbers == numbers.sorted() && numbers.allSatisfy { many % $0 == 0 })
    }

    @Test func anEcmLevelLimitGivesThePartialAnswer() async throws {
        let queue = JobQueue.testing()
        let result = try #require(try await queue.submit(.factor(Known.hard231).effort(ecmDigits: 15)).result
            .factorization)
        #expect(result.mode == .complete && !result.complete && result.cofactorStatus == .composite)
        #expect(result.factors.isEmpty && result.cofactor == Known.hard231)
        let part = try #require(result.parts.first)
        #expect(result.parts.count == 1 && part.value == Known.hard231 && part.exponent == 1)
        #expect(part.method == "ecm" && part.ecmDigits >= 15 && part.curves >= 25 && part.b1 >= 2000 && part.work > 0)
        #expect(try multipliedBack(result))
    }

    @Test func aWorkLimitGivesThePartialAnswer() async throws {
        let queue = JobQueue.testing()
        let result = try #require(try await queue.submit(.factor(Known.hard231).effort(workLimit: 1_000_000)).result
            .factorization)
        #expect(!result.complete && result.parts.map(\.value) == [Known.hard231] && result.factors.isEmpty)
    }

    @Test func aTimeLimitEndsWithThePartialAnswer() async throws {
        let queue = JobQueue.testing()
        let result = try #require(try await queue.submit(.factor(Known.hard231).effort(timeLimit: .milliseconds(50)))
            .result.factorization)
        #expect(result.mode == .complete && !result.complete && result.cofactorStatus == .composite)
        #expect(result.factors.isEmpty && result.parts.map(\.value) == [Known.hard231])
        #expect(try multipliedBack(result))
    }

    @Test func aCheckpointCarriesTheTimeLimitAndTheRunningTimeUsed() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factor(Known.hard231).effort(timeLimit: .seconds(3600)).progressInterval(.zero))
        let inEcm = AsyncStream<Void>.makeStream()
        job.onProgress { if $0.stage == "ecm" { inEcm.continuation.yield() } }
        for await _ in inEcm.stream { break }
        let checkpoint = try await job.pause()
        job.cancel()
        let parsed = try Checkpoint(text: checkpoint.text)
        #expect(parsed.timeLimit == 3_600_000_000_000 && parsed.runningTime > 0)
        #expect(checkpoint.text.contains("\ntime 3600000000000 \(parsed.runningTime)\n"))
        // Restored with a limit already used up: the first slice concludes.
        let restored = try queue.submit(.restore(checkpoint).effort(timeLimit: .nanoseconds(1)))
        let result = try #require(try await restored.result.factorization)
        #expect(!result.complete && result.parts.map(\.value) == [Known.hard231])
    }

    @Test func badEffortLimitsAreRefused() throws {
        let queue = JobQueue.testing()
        for request in [JobRequest.factor(Known.hard231).effort(ecmDigits: 0),
                        .factor(Known.hard231).effort(ecmDigits: 71), .factor(Known.hard231).effort(workLimit: 0),
                        .factor(Known.hard231).effort(timeLimit: .zero)] {
            #expect(throws: PrimeKitError.self) { try queue.submit(request) }
        }
        #expect(queue.counts == JobCounts())
    }

    @Test func progressNamesTheStagesAndNeverGoesBack() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factor(Known.ecm232).progressInterval(.zero))
        let seen = Recorder<JobProgress>()
        job.onProgress { seen.append($0) }
        let result = try #require(try await job.result.factorization)
        #expect(result.factors.map(\.prime) == Known.ecm232Factors)
        let snapshots = seen.values
        #expect(snapshots.contains { $0.stage == "ecm" })
        #expect(snapshots.last?.stage == "done" && snapshots.last?.percent == 100)
        #expect(zip(snapshots, snapshots.dropFirst()).allSatisfy { $0.percent <= $1.percent })
        #expect(snapshots.allSatisfy { (0...1).contains($0.stageFraction) && $0.partsLeft >= 0 })
        // In ECM, and only there, the position: a curve of the level's expected count, at the level's B1 (the
        // first level aims at 15 digits with B1 = 2000).
        #expect(snapshots.allSatisfy { ($0.stage == "ecm") == ($0.ecm != nil) })
        #expect(snapshots.compactMap(\.ecm).allSatisfy {
            $0.curve >= 1 && $0.curves >= 1 && $0.b1 >= 2000 && $0.digits >= 15
        })
    }

    @Test func aJobPausedInEcmRestoresThroughTheStoreToTheSameAnswer() async throws {
        // Uninterrupted.
        let referenceQueue = JobQueue.testing()
        let reference = try await referenceQueue.submit(.factor(Known.ecm232)).result
        // Paused while ECM runs, stored, and recovered by a new engine (as another process would).
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paused: Checkpoint
        do {
            let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(60))
            let job = try engine.submit(.factor(Known.ecm232).progressInterval(.zero))
            let inEcm = AsyncStream<Void>.makeStream()
            job.onProgress { if $0.stage == "ecm" && $0.stageFraction > 0 { inEcm.continuation.yield() } }
            for await _ in inEcm.stream { break }
            paused = try await engine.pause(job)
            _ = await engine.shutdown()
        }
        let restoredJob = try Checkpoint(text: paused.text)
        #expect(restoredJob.mode == .complete && paused.text.contains("\nsplit ecm "))
        let engine = await Engine.testing(stateDirectory: directory)
        let recovered = try #require(engine.recoveredJobs.first?.job)
        #expect(recovered.state == .paused && recovered.progress.stage == "ecm")
        try recovered.resume()
        let answer = try await recovered.result
        _ = await engine.shutdown()
        #expect(answer == reference)
        let factorization = try #require(answer.factorization)
        #expect(factorization.factors.map(\.prime) == Known.ecm232Factors)
        #expect(try multipliedBack(factorization))
    }

    @Test func codableResultsWrittenBeforeCompleteAnswersStillDecode() throws {
        let old = #"{"candidate":"12","factors":[{"prime":"2","exponent":2},{"prime":"3","exponent":1}],"cofactor":"1","cofactorStatus":"one","complete":true,"isPrime":false,"certainty":"proven"}"#
        let decoded = try JSONDecoder().decode(FactorResult.self, from: Data(old.utf8))
        #expect(decoded.mode == .trialDivision && decoded.parts.isEmpty)
        #expect(decoded.factors == [PrimeFactor(prime: "2", exponent: 2), PrimeFactor(prime: "3", exponent: 1)])
        #expect(decoded.factors.allSatisfy { $0.certainty == .proven })
        let partial = FactorResult(
            candidate: "35", factors: [], cofactor: "35", cofactorStatus: .composite, complete: false, isPrime: false,
            certainty: .proven,
            parts: [CompositePart(value: "35", exponent: 1, trialFrom: "2", trialBound: "3", work: 7, curves: 1,
                                  b1: 2000, b2: 147_396, ecmDigits: 0, method: "ecm")],
            mode: .complete)
        let text = String(decoding: try JSONEncoder().encode(partial), as: UTF8.self)
        #expect(text.contains(#""mode":"complete""#) && text.contains(#""method":"ecm""#))
        #expect(try JSONDecoder().decode(FactorResult.self, from: Data(text.utf8)) == partial)
    }
}
