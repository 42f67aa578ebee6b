import Foundation
import Testing
@testable import PrimeKit

/// One complete job in ECM on every worker: its curves run as shares (ordinary queue entries of the job), merged
/// back into one job when a share finds a factor or all are over (docs/queue.md, "One big job on all cores").
@Suite(.timeLimit(.minutes(5))) struct EcmShareTests {
    /// The most shares of the job that were on workers at once.
    private func peakShares(_ job: Job) -> Int { Int(job.core.withLock { $0.peakSharesOnWorkers }) }

    /// Waits for a progress update in ECM while the job runs as shares.
    private func waitForShares(_ job: Job) async {
        for await update in job.progressUpdates where update.stage == "ecm" && job.pieceCount > 1 { break }
    }

    @Test func twoWorkersRunTheSharesAndGiveTheOneWorkerAnswer() async throws {
        let one = JobQueue.testing(workers: 1)
        let two = JobQueue.testing(workers: 2)
        let alone = try one.submit(.factor(Known.ecm232))
        let shared = try two.submit(.factor(Known.ecm232))
        let (a, b) = (try await alone.result, try await shared.result)
        #expect(a == b)
        #expect(b.factorization?.factors.map(\.prime) == Known.ecm232Factors)
        #expect(b.factorization?.complete == true)
        // One worker never shares; on two, both workers stepped a share at the same time.
        #expect(peakShares(alone) == 0)
        #expect(peakShares(shared) == 2)
        #expect(shared.pieceCount == 1)
    }

    @Test func progressNeverGoesBackAndSaysEcmWhileShared() async throws {
        let queue = JobQueue.testing(workers: 2)
        let job = try queue.submit(.factor(Known.ecm232).progressInterval(.zero))
        var last: JobProgress?
        var sawShares = false
        for await update in job.progressUpdates {
            if let last {
                #expect(update.percent >= last.percent, "\(last.percent) -> \(update.percent)")
                if update.stage == last.stage && update.partsLeft == last.partsLeft && update.factors == last.factors {
                    #expect(update.stageFraction >= last.stageFraction,
                            "\(update.stage): \(last.stageFraction) -> \(update.stageFraction)")
                }
            }
            if update.stage == "ecm" && job.pieceCount > 1 { sawShares = true }
            last = update
        }
        #expect(sawShares)
        #expect(try await job.result.factorization?.factors.map(\.prime) == Known.ecm232Factors)
    }

    @Test func pauseCheckpointRestoreInEcmGivesTheSameAnswer() async throws {
        let queue = JobQueue.testing(workers: 2)
        let job = try queue.submit(.factor(Known.ecm232).progressInterval(.zero))
        await waitForShares(job)
        let checkpoint = try await job.pause()
        job.cancel()
        // One checkpoint holds both shares, each a version-3 kernel checkpoint.
        #expect(checkpoint.text.contains("pieces 2\n"))
        #expect(checkpoint.text.components(separatedBy: "primekit-checkpoint 3\n").count == 3)
        // It restores through its text, on two workers and on one (both shares on the one worker).
        let parsed = try Checkpoint(text: checkpoint.text)
        for workers in [2, 1] {
            let other = JobQueue.testing(workers: workers)
            let restored = try other.submit(.restore(parsed))
            let answer = try await restored.result
            #expect(answer.factorization?.factors.map(\.prime) == Known.ecm232Factors, "\(workers) workers")
            #expect(answer.factorization?.complete == true)
        }
    }

    @Test func aCheckpointWithAShareMissingOrTwiceIsRefused() async throws {
        let queue = JobQueue.testing(workers: 2)
        let job = try queue.submit(.factor(Known.ecm232).progressInterval(.zero))
        await waitForShares(job)
        let checkpoint = try await job.pause()
        job.cancel()
        let pieces = try Checkpoint(text: checkpoint.text).pieces
        #expect(pieces.count == 2)
        for broken in [[pieces[0], pieces[0]], [pieces[1], pieces[1]]] {
            let text = Checkpoint(kind: .factor, pieces: broken).text
            #expect(throws: PrimeKitError.self) { try Checkpoint(text: text) }
        }
        // One share alone is a job of its own (Checkpoint.ecmShares(count:)), but only as a factor job.
        let alone = try Checkpoint(text: Checkpoint(kind: .factor, pieces: [pieces[1]]).text)
        #expect(try alone.ecmShareLayout() == .share(index: 1, count: 2))
        #expect(throws: PrimeKitError.self) { try Checkpoint(text: Checkpoint(kind: .isPrime, pieces: [pieces[1]]).text) }
        // The two in the other order are one set.
        #expect(throws: Never.self) { try Checkpoint(text: Checkpoint(kind: .factor, pieces: [pieces[1], pieces[0]]).text) }
    }

    @Test func cancelWhileSharedEndsTheJob() async throws {
        let queue = JobQueue.testing(workers: 2)
        let job = try queue.submit(.factor(Known.hard231).progressInterval(.zero))
        await waitForShares(job)
        job.cancel()
        await #expect(throws: CancellationError.self) { try await job.result }
        #expect(job.state == .cancelled)
        #expect(peakShares(job) >= 1)
    }

    @Test func anEffortLimitCountsEveryShare() async throws {
        // p25 · p45 at the 15-digit level: no curve finds the p25; the part is left after the level's curves,
        // counted over both shares, as one worker leaves it.
        let one = JobQueue.testing(workers: 1)
        let two = JobQueue.testing(workers: 2)
        let request = JobRequest.factor(Known.hard231).effort(ecmDigits: 15)
        let a = try await one.submit(request).result
        let shared = try two.submit(request)
        let b = try await shared.result
        // The same answer and record (the work units may differ a little: stage 1 ran in other chunks).
        func record(_ result: JobResult) -> [String] {
            (result.factorization?.parts ?? []).map { "\($0.value) \($0.curves) \($0.b1) \($0.b2) \($0.ecmDigits) \($0.method)" }
        }
        #expect(a.factorization?.factors == b.factorization?.factors && record(a) == record(b))
        #expect(peakShares(shared) >= 1)
        let part = try #require(b.factorization?.parts.first)
        #expect(b.factorization?.parts.count == 1 && part.value == Known.hard231)
        #expect(part.curves == 25 && part.ecmDigits == 15)
    }
}
