@testable import PrimeKit
import Testing

/// The pieces of a split job share what they find: a factor found in one piece lowers the others' limit to the
/// square root of what is left, and pieces whose range lies above it end without work.
@Suite(.timeLimit(.minutes(3))) struct CooperatingPiecesTests {
    /// 3 · (10^12 + 39): after 3, trial division needs divisors up to about 10^6 only.
    static let smallFactorEarly = "3000000000117"
    /// 3 · (10^18 + 3): the same after 3, up to 10^9 — a second or more, long enough to pause after 3 was found.
    static let smallFactorEarlyLong = "3000000000000000009"

    /// One worker, so the pieces run in order (each to its end) and the figures do not depend on timing.
    private func oneWorkerSplitting(pieces: Int = 4) -> JobQueue {
        JobQueue.testing(workers: 1) {
            $0.splitThreshold = 1000
            $0.splitPieces = pieces
            $0.sliceDuration = .microseconds(500)
        }
    }

    @Test func aFactorFoundInTheFirstPieceEndsThePiecesAboveTheNewLimit() async throws {
        let queue = oneWorkerSplitting()
        let bound = "64000000"
        let whole = try queue.submit(.factor(Self.smallFactorEarly, bound: bound).splitting(false))
        let wholeAnswer = try await whole.result
        let split = try queue.submit(.factor(Self.smallFactorEarly, bound: bound))
        #expect(split.pieceCount == 4)
        let answer = try await split.result
        #expect(answer == wholeAnswer)
        #expect(answer.factorization?.factors.map(\.prime) == ["3", "1000000000039"])
        // Unshared, the pieces above 16·10^6 would test millions of divisors; shared, they end at their first slice.
        let tested = split.progress.divisorsTested
        #expect(tested <= whole.progress.divisorsTested + 10_000,
                "split tested \(tested), unsplit \(whole.progress.divisorsTested)")
    }

    @Test(arguments: [
        (smallFactorEarly, "64000000"),                                     // 3 first, then the root of the rest
        ("6000061000180000153", "3100000"),                                 // one factor per piece
        ("4951760154835678088235319297", "4000000"),                        // (2^31-1)(2^61-1): nothing below 4·10^6
        ("999999999999999989", "5000000"),                                  // prime: nothing found anywhere
        ("600851475143000000000000000034248534083151", "2000000"),          // four small factors, a 31-digit rest
        ("340282366920938463463374607431768211457", "3000000"),             // 2^128+1, the 128-bit path
    ])
    func cooperatingPiecesGiveTheUnsplitAnswerFromTwoAndAbove(_ candidate: String, _ bound: String) async throws {
        let queue = JobQueue.testing(workers: 2) {
            $0.splitThreshold = 1000
            $0.splitPieces = 5
            $0.sliceDuration = .microseconds(200)
        }
        for from in [nil, "3", "1000"] as [String?] {
            for kind in [JobKind.factor, .isPrime] {
                let request = kind == .factor ? JobRequest.factor(candidate, from: from, bound: bound)
                                              : JobRequest.isPrime(candidate, from: from, bound: bound)
                let whole = try await queue.submit(request.splitting(false)).result
                let split = try queue.submit(request)
                #expect(split.pieceCount == 5)
                #expect(try await split.result == whole, "\(candidate) from \(from ?? "-") \(kind)")
            }
        }
    }

    @Test func aCheckpointOfCooperatingPiecesRestoresToTheSameAnswerWithoutRedoingTheirWork() async throws {
        let queue = oneWorkerSplitting()
        let request = JobRequest.factor(Self.smallFactorEarlyLong, bound: "4294967296")
        queue.suspend()
        let job = try queue.submit(request.progressInterval(.zero))
        // The report of the factor 3 holds the queue before the worker's next slice, so the job is still running
        // when it is paused, however busy the machine.
        let (found, signal) = AsyncStream<Void>.makeStream()
        job.onProgress { update in
            if update.factors.contains("3") {
                queue.suspend()
                signal.yield()
            }
        }
        queue.resume()
        for await _ in found { break }
        let checkpoint = try await job.pause()
        job.cancel()
        #expect(checkpoint.text.contains("pieces 4"))
        // Restored elsewhere: the factor 3 in the first piece's checkpoint limits every piece again at once.
        let other = oneWorkerSplitting()
        let restored = try other.submit(.restore(checkpoint))
        let answer = try await restored.result
        #expect(answer.factorization?.factors.map(\.prime) == ["3", "1000000000000000003"])
        #expect(answer.factorization?.cofactorStatus == .one)
        #expect(answer.factorization?.certainty == .proven)
        // Nothing above the limit (10^9) was tried: far fewer divisors than the 4.3·10^9 of the whole range (of
        // which a wheel tries about a quarter).
        #expect(restored.progress.divisorsTested < 400_000_000, "\(restored.progress.divisorsTested)")
    }
}
