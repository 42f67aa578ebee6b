@testable import PrimeKit
import Testing

/// A request keeps its rarely set fields in a shared box: copies must still behave as independent values, a plain
/// request must stay plain, and the fields must read back as set.
@Suite struct JobRequestTests {
    @Test func copiesAreIndependentValues() {
        let original = JobRequest.factor(UInt64(600_851_475_143), bound: 10_000).priority(.high)
        var copy = original
        copy.bound = "20000"
        copy.from = "7"
        copy.ecmDigits = 30
        copy.timeLimit = .seconds(3)
        copy.progressInterval = .milliseconds(5)
        #expect(original.bound == "10000")
        #expect(original.from == nil)
        #expect(original.ecmDigits == nil)
        #expect(original.timeLimit == nil)
        #expect(original.progressInterval == .milliseconds(250))
        #expect(original.chosenProgressInterval == nil)
        #expect(copy.bound == "20000")
        #expect(copy.from == "7")
        #expect(copy.ecmDigits == 30)
        #expect(copy.timeLimit == .seconds(3))
        #expect(copy.progressInterval == .milliseconds(5))
        #expect(copy.chosenProgressInterval == .milliseconds(5))
        #expect(copy.priority == .high)
        #expect(copy.mode == .trialDivision)
    }

    @Test func plainRequestsStayPlain() {
        #expect(JobRequest.isPrime(UInt64(1_301_081)).isPlain)
        #expect(JobRequest.factor("1301081").priority(.low).splitting(false).trialDivision().isPlain)
        #expect(JobRequest.factor(UInt64(97)).complete().isPlain)
        #expect(JobRequest.factor(UInt64(97)).mode == .complete)
        #expect(JobRequest.factor(UInt64(97)).trialDivision().mode == .trialDivision)
        #expect(!JobRequest.factor(UInt64(97), from: 3).isPlain)
        #expect(!JobRequest.factor(UInt64(97)).complete(ecmDigits: 25).isPlain)
        #expect(!JobRequest.factor(UInt64(97)).progressInterval(.milliseconds(250)).isPlain)
        #expect(!JobRequest.factorRange(2, 10).isPlain)
    }

    @Test func effortAndRangeFieldsReadBack() {
        let limited = JobRequest.factor("123456789012345678901").effort(ecmDigits: 20, workLimit: 5, timeLimit: .seconds(1))
        #expect(limited.ecmDigits == 20)
        #expect(limited.workLimit == 5)
        #expect(limited.timeLimit == .seconds(1))
        #expect(limited.mode == .complete)
        // A limit left nil keeps the value set before.
        let again = limited.effort(workLimit: 9)
        #expect(again.ecmDigits == 20 && again.workLimit == 9 && again.timeLimit == .seconds(1))
        #expect(limited.workLimit == 5)
        let range = JobRequest.factorRange("10", "20")
        #expect(range.range?.first == "10" && range.range?.last == "20")
        #expect(range.kind == .factorRange)
    }

    @Test func dependenciesBelongToTheCopyTheyWereAddedTo() throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        let first = try queue.submit(.isPrime(UInt64(97)))
        let base = JobRequest.isPrime(UInt64(101))
        let dependent = base.dependsOn(first)
        #expect(base.dependencies.isEmpty)
        #expect(base.isPlain)
        #expect(dependent.dependencies == [first])
        let job = try queue.submit(dependent)
        #expect(job.dependencies == [first])
        #expect(job.state == .pending)
        queue.cancelAll()
    }

    /// The digit count that every integer candidate is checked with, at each power of ten and around it.
    @Test func aJobKeepsItsProgressIntervalToTheNanosecond() throws {
        let queue = JobQueue(maxConcurrentJobs: 1)
        queue.suspend()
        let cases: [(Duration, Duration)] = [
            (.milliseconds(250), .milliseconds(250)), (.zero, .zero), (.nanoseconds(1), .nanoseconds(1)),
            (.seconds(86_400 * 365), .seconds(86_400 * 365)), (.nanoseconds(123_456_789), .nanoseconds(123_456_789)),
            (.seconds(1.5), .milliseconds(1_500)),
            // Below a nanosecond toward zero; beyond 2^63 nanoseconds (292 years) saturated.
            (.nanoseconds(7) + .seconds(1e-10), .nanoseconds(7)), (.seconds(Int64.max), .nanoseconds(Int64.max)),
            (.seconds(Int64.min), .nanoseconds(Int64.min)),
        ]
        for (given, kept) in cases {
            let job = try queue.submit(.isPrime(97).progressInterval(given))
            #expect(job.progressInterval == kept, "\(given)")
        }
    }

    @Test func aSmallJobReportsItsFinalProgressFromItsAnswer() async throws {
        // Below 2^32 a job is answered in one kernel call and keeps no progress of its own: what it reports when it
        // finishes, and whenever it is read afterwards, comes from its answer.
        let queue = JobQueue(maxConcurrentJobs: 2)
        for n: UInt64 in [2, 3, 4, 97, 1_000_001, 600_851, 4_294_967_291, 4_294_967_295] {
            for request in [JobRequest.isPrime(n), .factor(n), .factor(String(n))] {
                let job = try queue.submit(request.progressInterval(.zero))
                let updates = Recorder<JobProgress>()
                job.onProgress { updates.append($0) }
                _ = try await job.result
                let progress = job.progress
                #expect(progress.percent == 100 && progress.stage == "done" && progress.stageFraction == 1)
                // The kernel's own count for the number (pk_small_factor), tested divisors and all.
                let kernel = try #require(SmallAnswer(value: n, mode: job.mode)).progressAndFactors().progress
                #expect(progress.divisorsTested == kernel.divisorsTested && progress.workDone == kernel.workDone)
                #expect(progress.nextDivisor == kernel.nextDivisor)
                #expect(n < 97 || progress.divisorsTested > 0)
                var primes: [String] = []
                var rest = n
                var divisor: UInt64 = 2
                while divisor * divisor <= rest {
                    if rest % divisor == 0 { primes.append(String(divisor)) }
                    while rest % divisor == 0 { rest /= divisor }
                    divisor += 1
                }
                if rest > 1 { primes.append(String(rest)) }
                #expect(progress.factors == primes, "\(n)")
                #expect(job.progress.divisorsTested == progress.divisorsTested)
                if let last = updates.values.last {
                    #expect(last.percent == 100 && last.factors == primes && last.divisorsTested == progress.divisorsTested)
                }
            }
        }
    }

    @Test func decimalLengthAtPowersOfTen() {
        #expect(CandidateText.decimalLength(0) == 1)
        #expect(CandidateText.decimalLength(9) == 1)
        var power: UInt64 = 10
        for digits in 2...20 {
            #expect(CandidateText.decimalLength(power - 1) == digits - 1)
            #expect(CandidateText.decimalLength(power) == digits)
            #expect(CandidateText.decimalLength(power + 1) == digits)
            if digits < 20 { power *= 10 }
        }
        #expect(CandidateText.decimalLength(UInt64.max) == 20)
        #expect(CandidateText.decimalLength(UInt64.max) == String(UInt64.max).count)
    }
}
