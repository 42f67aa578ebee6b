// The answers the tool must print, computed in this process by the engine (and so by the kernel).

import PrimeKit

enum Expected {
    static let queue = JobQueue(maxConcurrentJobs: 1)

    static func factorization(_ candidate: String, bound: String? = nil) async throws -> FactorResult {
        let job = try queue.submit(.factor(candidate, bound: bound))
        return try await job.result.factorization!
    }

    static func primality(_ candidate: String) async throws -> PrimalityResult {
        let job = try queue.submit(.isPrime(candidate))
        return try await job.result.primality!
    }

    /// `N: p p p`, written here independently of the tool's formatter.
    static func line(_ result: FactorResult) -> String {
        var words = [result.candidate + ":"]
        for factor in result.factors {
            words += Array(repeating: factor.prime, count: factor.exponent)
        }
        return words.joined(separator: " ")
    }
}
