import Foundation
@testable import PrimeKit
import Testing

/// Candidates whose trial division takes long enough to pause or cancel them mid-way.
enum Slow {
    /// The largest prime below 2^64: trial division to 2^32 takes a few seconds in a debug build, a tenth of one
    /// in a release build. Too quick to be sure a test sees it running: long jobs are `endless`.
    static let prime64 = "18446744073709551557"
    /// A 100-digit number without small factors: with bound 10^9 the GMP path takes a long time.
    static let digits100 = "2074722246773485207821695222107608587480996474721117292752992589912196684750549658310084416732550077"
    /// With `digits100`, a bound no machine reaches within a test however loaded it is (the GMP path to 10^18):
    /// for a job that must still be running when the test looks.
    static let endlessBound = "1000000000000000000"
    /// A product of two 50-digit primes (RSA-100): a complete job on it does not end within a test but by a limit.
    static let semiprime100 = "1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139"
    /// A 31-digit prime, 10^30 + 57: trial division takes the 128-bit path (polled every few microseconds).
    static let prime31 = "1000000000000000000000000000057"
    /// Trial division of `prime31` to 10^13 (hours of work on any machine): for tests that pause,
    /// cancel or watch a job while it runs and never need its answer. Split, no piece starts where the sieve's
    /// set-up alone is long.
    static var endless: JobRequest { .isPrime(prime31, from: nil, bound: "10000000000000") }
    static var endlessFactor: JobRequest { .factor(prime31, from: nil, bound: "10000000000000") }
}

/// Candidates that take a few milliseconds: enough slices to watch, quick even under ThreadSanitizer.
enum Medium {
    /// 1000003 * 10000019: trial division runs to 10^6.
    static let semiprime = "10000049000057"
    static let semiprimeFactors = ["1000003", "10000019"]
}

extension JobQueue {
    /// A queue with `workers` workers and short slices, for tests.
    static func testing(workers: Int = 2, configure: (inout Configuration) -> Void = { _ in }) -> JobQueue {
        var configuration = Configuration()
        configuration.maxConcurrentJobs = workers
        configuration.sliceDuration = .milliseconds(5)
        configuration.splitThreshold = .max  // split tests turn splitting on themselves
        configure(&configuration)
        return JobQueue(configuration: configuration)
    }
}

extension Job {
    /// How many pieces the job has now (a split job's until they merge, ECM shares while they run).
    var pieceCount: Int { core.withLock { $0.pieces.count } }
}

/// A thread-safe log of values, for callbacks and blocks (an NSLock, which ThreadSanitizer understands).
final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []

    func append(_ value: Value) { lock.withLock { storage.append(value) } }
    var values: [Value] { lock.withLock { storage } }
}
