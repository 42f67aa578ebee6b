@testable import PrimeKit
import Synchronization
import Testing

/// Jobs submitted one at a time while every worker is busy go through the scheduler's intake (registered by the
/// workers later, some taken straight from it). These tests keep the one worker busy with a long job so that the
/// intake is used — each checks that it was — and then look at the queue the ways a caller can.
@Suite(.timeLimit(.minutes(3))) struct IntakeTests {
    /// A one-worker queue running a long job of high priority, and `count` tiny jobs of normal priority submitted
    /// behind it (they wait for it: it outranks them, and aging is too slow to matter here). Fails the test unless
    /// most of them were still in the intake when their submission returned.
    private func busyQueue(tinyJobs count: Int) async throws -> (JobQueue, long: Job, tiny: [Job]) {
        let queue = JobQueue.testing(workers: 1) { $0.agingSlices = 1_000_000_000 }
        let long = try queue.submit(Slow.endless.splitting(false).priority(.high))
        await long.wait(until: .running)
        var tiny: [Job] = []
        var viaIntake = 0
        for index in 0..<count {
            let job = try queue.submit(.isPrime(UInt64(1_000 + index)))
            if job.core.withLock({ $0.inIntake }) { viaIntake += 1 }
            tiny.append(job)
        }
        #expect(viaIntake > count / 2, "only \(viaIntake) of \(count) submissions used the intake")
        return (queue, long, tiny)
    }

    @Test func jobsInTheIntakeAreCountedAndReadyAsSoonAsSubmitted() async throws {
        let (queue, long, tiny) = try await busyQueue(tinyJobs: 300)
        #expect(tiny.allSatisfy { $0.state == .ready })
        let counts = queue.counts
        #expect(counts.ready == 300 && counts.running == 1 && counts.pending == 0, "\(counts)")
        #expect(Set(queue.jobs.map(\.id)).isSuperset(of: tiny.map(\.id)))
        long.cancel()
        await queue.waitUntilIdle()
        #expect(queue.counts.succeeded == 300)
    }

    @Test func jobsLeaveTheIntakeInSubmissionOrderAndIdleWaitsForThem() async throws {
        let (queue, long, tiny) = try await busyQueue(tinyJobs: 500)
        let order = Recorder<JobID>()
        for job in tiny { job.onSuccess { _ in order.append(job.id) } }
        long.cancel()
        await queue.waitUntilIdle()
        // Idle means every intake job ran: none is left unfinished, none ran twice, one worker ran them in order.
        for job in tiny {
            let answer = try await job.result
            #expect(answer.isPrime == isPrimeByDivision(UInt64(job.candidate)!))
        }
        #expect(order.values == tiny.map(\.id))
        #expect(queue.counts.succeeded == 500 && queue.counts.cancelled == 1)
    }

    @Test func cancellingOrResettingWhileJobsWaitInTheIntakeLosesNone() async throws {
        let (queue, long, tiny) = try await busyQueue(tinyJobs: 200)
        tiny[7].cancel()
        #expect(tiny[7].state == .cancelled)
        await queue.reset()
        #expect(long.state == .cancelled)
        #expect(tiny.allSatisfy { $0.state == .cancelled })
        // The queue still works, through the intake and around it.
        let again = try queue.submit(.factor("600851475143"))
        #expect(try await again.result.factorization?.factors.map(\.prime) == ["71", "839", "1471", "6857"])
    }

    @Test func aHigherPriorityJobDoesNotWaitBehindTheIntake() async throws {
        let (queue, long, tiny) = try await busyQueue(tinyJobs: 100)
        let finished = Recorder<JobID>()
        for job in tiny { job.onSuccess { _ in finished.append(job.id) } }
        // It outranks the running job: it preempts it and is done while every normal job submitted before it
        // still waits (behind the long job, which outranks them).
        let urgent = try queue.submit(.isPrime("1000003").priority(.veryHigh))
        #expect(try await urgent.result.isPrime == true)
        #expect(finished.values.isEmpty)
        #expect(long.state == .running || long.state == .ready)
        long.cancel()
        await queue.waitUntilIdle()
        #expect(finished.values == tiny.map(\.id))
    }

    @Test func aBatchWaitsInTheIntakeOfAHeldQueueAndRunsInOrderOnResume() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        // Once the worker has parked, nothing looks at the intake until somebody looks at the queue (a worker still
        // watching for work would register it, as any reader does).
        while queue.scheduler.parkedWorkers.load(ordering: .sequentiallyConsistent) < 1 { await Task.yield() }
        let jobs = try queue.submit(contentsOf: (0..<2_000).map { JobRequest.isPrime(UInt64(3_000 + $0)) })
        // Nothing registered them yet: the submission only handed them over.
        #expect(jobs.allSatisfy { $0.core.withLock { $0.inIntake } })
        #expect(queue.scheduler.intakeCount.load(ordering: .sequentiallyConsistent) == 2_000)
        // Looking at the queue sees them as registered when submitted.
        #expect(queue.counts.ready == 2_000)
        #expect(jobs.allSatisfy { $0.state == .ready })
        let order = Recorder<JobID>()
        for job in jobs { job.onSuccess { _ in order.append(job.id) } }
        queue.resume()
        await queue.waitUntilIdle()
        for job in jobs {
            #expect(try await job.result.isPrime == isPrimeByDivision(UInt64(job.candidate)!))
        }
        #expect(order.values == jobs.map(\.id))
    }

    @Test func aBatchWakesParkedWorkersWithoutAnybodyLookingAtTheQueue() async throws {
        let queue = JobQueue.testing(workers: 2)
        // Both workers park once they find nothing to do (the engine's own state, polled without sleeping).
        while queue.scheduler.parkedWorkers.load(ordering: .sequentiallyConsistent) < 2 { await Task.yield() }
        let jobs = try queue.submit(contentsOf: (0..<5_000).map { JobRequest.factor(UInt64(10_000 + $0)) })
        #expect(jobs.contains { $0.core.withLock { $0.inIntake } } || jobs.allSatisfy { $0.core.withLock { $0.state.isFinished } })
        // Awaiting a result takes only the job's lock (never registers the intake): the workers must have been
        // woken, and must have woken each other, by the submission alone.
        for job in jobs.reversed() {
            let factors = try await job.result.factorization!.factors
            var product: UInt64 = 1
            for factor in factors { for _ in 0..<factor.exponent { product *= UInt64(factor.prime)! } }
            #expect(product == UInt64(job.candidate)! && factors.allSatisfy { isPrimeByDivision(UInt64($0.prime)!) })
        }
        #expect(queue.counts.succeeded == 5_000)
    }

    @Test func batchesAndSingleJobsLeaveTheIntakeInTheOrderTheyCame() async throws {
        // The intake keeps a batch as the array its submitter got back and gathers single jobs in arrays of its
        // own: submitted interleaved while the one worker is busy, they must still run in submission order, each
        // once, and a submitter's array must stay as it was returned.
        let (queue, long, first) = try await busyQueue(tinyJobs: 40)
        var expected = first
        var batches: [[Job]] = []
        for round in 0..<4 {
            let batch = try queue.submit(contentsOf: (0..<(25 + round)).map { JobRequest.isPrime(UInt64(50_000 + 100 * round + $0)) })
            batches.append(batch)
            expected += batch
            for index in 0..<(7 * round) { expected.append(try queue.submit(.isPrime(UInt64(90_000 + 100 * round + index)))) }
        }
        #expect(expected.filter { $0.core.withLock { $0.inIntake } }.count > expected.count / 2)
        let order = Recorder<JobID>()
        for job in expected { job.onSuccess { _ in order.append(job.id) } }
        long.cancel()
        await queue.waitUntilIdle()
        #expect(order.values == expected.map(\.id))
        for (round, batch) in batches.enumerated() {
            #expect(batch.map(\.candidate) == (0..<(25 + round)).map { String(50_000 + 100 * round + $0) })
        }
        for job in expected { #expect(try await job.result.isPrime == isPrimeByDivision(UInt64(job.candidate)!)) }
    }

    @Test func aBatchWithDependenciesOrAboveTheRunningPriorityIsRegisteredAtOnce() async throws {
        let (queue, long, _) = try await busyQueue(tinyJobs: 10)
        let first = try queue.submit(.isPrime(97))
        let dependent = try queue.submit(contentsOf: [.isPrime(101).dependsOn(first), .isPrime(103)])
        #expect(dependent.allSatisfy { !$0.core.withLock { $0.inIntake } })
        let urgent = try queue.submit(contentsOf: [.isPrime(1_000_003).priority(.veryHigh), .isPrime(107)])
        #expect(urgent.allSatisfy { !$0.core.withLock { $0.inIntake } })
        #expect(try await urgent[0].result.isPrime == true)
        long.cancel()
        await queue.waitUntilIdle()
        #expect(try await dependent[0].result.isPrime == true)
    }
}

private func isPrimeByDivision(_ n: UInt64) -> Bool {
    guard n >= 2 else { return false }
    var d: UInt64 = 2
    while d * d <= n {
        if n % d == 0 { return false }
        d += 1
    }
    return true
}
