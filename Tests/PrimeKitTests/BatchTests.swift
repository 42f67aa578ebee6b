@testable import PrimeKit
import Testing

@Suite(.timeLimit(.minutes(3))) struct BatchTests {
    @Test func aBatchAggregatesProgressResultsAndFailures() async throws {
        let queue = JobQueue.testing(workers: 2) { $0.failureInjection = .failing(["600851475143": "injected failure"]) }
        queue.suspend()
        let requests: [JobRequest] = [
            .isPrime(1_000_003), .factor(Medium.semiprime).trialDivision(), .factor("600851475143"), .isPrime(12_354_962),
            .factor("1000036000099", bound: "1000"),
        ]
        let batch = try queue.submitBatch(requests, progressInterval: .zero)
        var iterator = batch.progressUpdates.makeAsyncIterator()
        let completions = Recorder<Int>()
        batch.onCompletion { completions.append($0.results.count) }
        let callbackProgress = Recorder<BatchProgress>()
        batch.onProgress { callbackProgress.append($0) }
        queue.resume()
        var snapshots: [BatchProgress] = []
        while let snapshot = await iterator.next() { snapshots.append(snapshot) }
        let outcome = await batch.outcome

        #expect(outcome.results.count == 4)
        #expect(outcome.failed == [batch.jobs[2]])
        #expect(outcome.cancelled.isEmpty)
        #expect(outcome.results[batch.jobs[3].id]?.primality?.isPrime == false)
        #expect(completions.values == [4])

        let last = try #require(snapshots.last)
        #expect(last.finished == 5 && last.total == 5)
        #expect(last.succeeded == 4 && last.failed == 1 && last.cancelled == 0)
        #expect(last.fractionOfJobs == 1)
        #expect(last.fractionOfWork == 1)
        #expect(snapshots.map(\.finished) == snapshots.map(\.finished).sorted())
        #expect(snapshots.map(\.seq) == snapshots.map(\.seq).sorted())
        #expect(callbackProgress.values.last?.finished == 5)
        #expect(batch.progress.finished == 5)
    }

    @Test func workWeightedProgressCountsBigJobsMore() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        // The big job takes minutes (trial division of 100 digits to 2^32), so however long this test waits for its
        // turn on a loaded machine, the big job cannot get far.
        let batch = try queue.submitBatch([.isPrime(1_000_003), .isPrime(Slow.digits100).trialDivision()], progressInterval: .zero)
        var iterator = batch.progressUpdates.makeAsyncIterator()
        queue.resume()
        // Wait for the small job to finish: half the jobs, but almost none of the work.
        while let snapshot = await iterator.next(), snapshot.finished < 1 {}
        let progress = batch.progress
        #expect(progress.finished == 1)
        #expect(progress.fractionOfJobs == 0.5)
        // Work-weighted, the batch is far from half done (the big job keeps running meanwhile).
        #expect(progress.fractionOfWork < 0.25)
        batch.cancel()
        let outcome = await batch.outcome
        #expect(outcome.cancelled == [batch.jobs[1]])
        #expect(outcome.results.count == 1)
    }

    @Test func aRefusedBatchSubmitsNothingAndUsesNoIds() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        let first = try queue.submit(.isPrime(101))
        let requests: [JobRequest] = [.isPrime(103), .factor("600851475143"), .isPrime("12x"), .isPrime(107)]
        #expect { try queue.submit(contentsOf: requests) } throws: { error in
            (error as? PrimeKitError)?.code == .invalidCandidate
        }
        #expect { try queue.submit(contentsOf: [.isPrime(109), .factor("30", from: "7", bound: "3x")]) } throws: { _ in true }
        #expect(queue.counts.unfinished == 1 && queue.jobs == [first])
        // The next job gets the id after the last one that was submitted.
        let next = try queue.submit(contentsOf: [.isPrime(113), .isPrime(127)])
        #expect(next.map(\.id.rawValue) == [first.id.rawValue + 1, first.id.rawValue + 2])
        queue.resume()
        #expect(try await next[1].result.isPrime == true)
    }

    @Test func anEmptyBatchIsCompleteAtOnce() async throws {
        let queue = JobQueue.testing(workers: 1)
        let batch = try queue.submitBatch([])
        let outcome = await batch.outcome
        #expect(outcome.results.isEmpty && outcome.failed.isEmpty)
        #expect(batch.progress.fractionOfJobs == 1)
    }
}
