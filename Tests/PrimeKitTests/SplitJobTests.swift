@testable import PrimeKit
import Testing

@Suite(.timeLimit(.minutes(3))) struct SplitJobTests {
    private func splittingQueue() -> JobQueue {
        JobQueue.testing(workers: 2) {
            $0.splitThreshold = 1000
            $0.splitPieces = 3
            $0.sliceDuration = .microseconds(200)
        }
    }

    static let cases: [(String, String?)] = [
        (Medium.semiprime, nil),                                   // the factor lies in the first piece
        ("999999999999999989", "5000000"),                          // nothing found anywhere
        ("6000061000180000153", "3100000"),                         // 1000003 * 2000003 * 3000017: one per piece
        ("960004704005472", nil),                                // small factors and a large prime part
        ("340282366920938463463374607431768211457", "3000000"),     // the 128-bit path
    ]

    @Test(arguments: cases)
    func splitJobsMergeToTheUnsplitAnswer(_ candidate: String, _ bound: String?) async throws {
        let queue = splittingQueue()
        for kind in [JobKind.factor, .isPrime] {
            // Without a bound: trial division to the default bound (a complete job runs unsplit).
            let request = (kind == .factor ? JobRequest.factor(candidate, bound: bound)
                                           : JobRequest.isPrime(candidate, bound: bound)).trialDivision()
            let whole = try await queue.submit(request.splitting(false)).result
            queue.suspend()  // checkpoint it before it can finish
            let split = try queue.submit(request.progressInterval(.zero))
            let checkpoint = try await split.checkpoint()
            #expect(checkpoint.text.contains("pieces 3"))
            queue.resume()
            let answer = try await split.result
            #expect(answer == whole, "\(candidate) \(kind)")
        }
    }

    @Test func piecesOfOneJobRunOnSeveralWorkersAtOnce() async throws {
        let queue = splittingQueue()
        let job = try queue.submit(Slow.endless.progressInterval(.zero))
        var bothBusy = false
        for await _ in job.progressUpdates {
            let slots = queue.scheduler.state.withLock(anchoredTo: queue.scheduler) { $0.slots }
            if slots.count == 2, slots.allSatisfy({ $0.count == 1 && $0[0] === job }) {
                bothBusy = true
                break
            }
        }
        job.cancel()
        #expect(bothBusy)
    }

    @Test func aSplitJobHasOneProgressEndingAtOneHundred() async throws {
        let queue = splittingQueue()
        queue.suspend()
        let job = try queue.submit(.factor("6000061000180000153", bound: "3100000").progressInterval(.zero))
        var iterator = job.progressUpdates.makeAsyncIterator()
        queue.resume()
        var snapshots: [JobProgress] = []
        while let snapshot = await iterator.next() { snapshots.append(snapshot) }
        #expect(snapshots.map(\.percent) == snapshots.map(\.percent).sorted())
        #expect(snapshots.map(\.seq) == snapshots.map(\.seq).sorted())
        #expect(snapshots.last?.percent == 100)
        #expect(snapshots.last?.factors == ["1000003", "2000003", "3000017"])
        let result = try #require(try await job.result.factorization)
        #expect(result.factors.map(\.prime) == ["1000003", "2000003", "3000017"])
    }

    @Test func aSplitJobPausesAndRestoresFromOneCheckpoint() async throws {
        let queue = splittingQueue()
        let request = JobRequest.isPrime("6000061000180000153", bound: "3100000")
        let whole = try await queue.submit(request.splitting(false)).result
        let job = try queue.submit(Slow.endless.progressInterval(.zero))
        var iterator = job.progressUpdates.makeAsyncIterator()
        _ = await iterator.next()
        let checkpoint = try await job.pause()
        #expect(job.state == .paused)
        #expect(checkpoint.text.contains("pieces 3"))
        job.cancel()
        let restored = try queue.submit(.restore(checkpoint))
        #expect(restored.candidate == Slow.prime31)
        let restoredCheckpoint = try await restored.pause()
        #expect(restoredCheckpoint.text.contains("pieces 3"))
        restored.cancel()

        // A split job moved through a checkpoint mid-way still gets the unsplit answer.
        let moving = try queue.submit(request.progressInterval(.zero))
        var movingIterator = moving.progressUpdates.makeAsyncIterator()
        _ = await movingIterator.next()
        if let midway = try? await moving.pause() {
            moving.cancel()
            #expect(try await queue.submit(.restore(midway)).result == whole)
        } else {
            #expect(try await moving.result == whole)
        }
    }
}
