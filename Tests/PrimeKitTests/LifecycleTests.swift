import PrimeKit
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3))) struct LifecycleTests {
    @Test func backgroundCheckpointsAndPausesRunningJobsAndForegroundContinuesThem() async throws {
        // The waiting job is of lower priority (and aging too slow to matter): it does not take a turn.
        let queue = JobQueue.testing(workers: 2) { $0.agingSlices = 1_000_000_000 }
        let running = try (0..<2).map { _ in try queue.submit(Slow.endless) }
        for job in running { await job.wait(until: .running) }
        let waiting = try queue.submit(Slow.endless.priority(.low))
        let checkpoints = await queue.enterBackground()
        #expect(!queue.isActive)
        #expect(Set(checkpoints.keys) == Set(running.map(\.id)))
        #expect(running.allSatisfy { $0.state == .paused })
        #expect(waiting.state == .ready)
        // Work submitted in the background waits too.
        let later = try queue.submit(.isPrime(1_000_003))
        #expect(later.state == .ready)
        queue.enterForeground()
        #expect(queue.isActive)
        for job in running { #expect(await job.wait(until: .running) == .running) }
        for job in running + [waiting] { job.cancel() }
        _ = try await later.result
        // A checkpoint taken in the background restores to the same job elsewhere.
        let restored = try queue.submit(.restore(checkpoints[running[0].id]!))
        #expect(restored.candidate == Slow.prime31)
        #expect(restored.kind == .isPrime)
        queue.cancelAll()
        await queue.waitUntilIdle()
    }

    @Test func resetCancelsEverythingAndLeavesAWorkingQueue() async throws {
        let queue = JobQueue.testing(workers: 1)
        let long = try queue.submit(Slow.endless)
        let queued = try queue.submit(Slow.endless)
        let dependent = try queue.submit(.isPrime(1_000_003).dependsOn(queued))
        await long.wait(until: .running)
        let dropped = Recorder<String>()
        _ = await queue.enterBackground()
        try queue.performWhenActive({ dropped.append("ran") }, onCancel: { dropped.append("dropped") })
        let cancelled = await queue.reset()
        #expect(Set(cancelled) == [long.id, queued.id, dependent.id])
        for job in [long, queued, dependent] { #expect(job.state == .cancelled) }
        #expect(long.cancellationReason == .reset)
        #expect(dropped.values == ["dropped"])
        #expect(queue.counts == JobCounts())
        queue.enterForeground()
        let fresh = try queue.submit(.factor(Medium.semiprime).trialDivision())
        #expect(try await fresh.result.factorization?.factors.map(\.prime) == Medium.semiprimeFactors)
    }

    @Test func blocksRunInOrderOnlyWhileActive() async throws {
        let queue = JobQueue.testing(workers: 1)
        let log = Recorder<Int>()
        let active = Atomic<Bool>(true)
        let wrongState = Atomic<Int>(0)
        _ = await queue.enterBackground()
        active.store(false, ordering: .sequentiallyConsistent)
        let (done, doneContinuation) = AsyncStream<Void>.makeStream()
        for index in 0..<100 {
            try queue.performWhenActive {
                if !active.load(ordering: .sequentiallyConsistent) { wrongState.add(1, ordering: .relaxed) }
                log.append(index)
                if index == 99 { doneContinuation.yield() }
            }
        }
        // Blocks are held in the background: a job round trip later, none has run.
        let other = JobQueue.testing(workers: 1)
        _ = try await other.submit(.factor(Medium.semiprime).trialDivision()).result
        active.store(true, ordering: .sequentiallyConsistent)
        #expect(log.values.isEmpty)
        queue.enterForeground()
        for await _ in done { break }
        #expect(log.values == Array(0..<100))
        #expect(wrongState.load(ordering: .relaxed) == 0)
    }

    @Test func teardownCanCancelPendingBlocks() async throws {
        let queue = JobQueue.testing(workers: 1)
        let log = Recorder<String>()
        _ = await queue.enterBackground()
        try queue.performWhenActive({ log.append("a") }, onCancel: { log.append("cancelled a") })
        try queue.performWhenActive({ log.append("b") }, onCancel: { log.append("cancelled b") })
        let job = try queue.submit(.isPrime(1_000_003))
        await queue.tearDown(.cancel)
        #expect(log.values == ["cancelled a", "cancelled b"])
        #expect(job.state == .cancelled)
        #expect(job.cancellationReason == .shutdown)
        #expect { try queue.performWhenActive {} } throws: { ($0 as? PrimeKitError)?.code == .queueShutDown }
        #expect { try queue.submit(.isPrime(7)) } throws: { ($0 as? PrimeKitError)?.code == .queueShutDown }
    }

    @Test func teardownCanDrainPendingBlocksAndJobs() async throws {
        let queue = JobQueue.testing(workers: 1)
        let log = Recorder<String>()
        _ = await queue.enterBackground()
        try queue.performWhenActive({ log.append("a") }, onCancel: { log.append("cancelled a") })
        try queue.performWhenActive({ log.append("b") }, onCancel: { log.append("cancelled b") })
        let job = try queue.submit(.isPrime(1_000_003))
        await queue.tearDown(.drain)
        #expect(log.values == ["a", "b"])
        #expect(job.state == .succeeded)
        #expect { try queue.performWhenActive {} } throws: { ($0 as? PrimeKitError)?.code == .queueShutDown }
    }

    @Test func releasingAQueueCancelsItsJobs() async throws {
        var queue: JobQueue? = JobQueue.testing(workers: 1)
        let job = try queue!.submit(Slow.endless)
        await job.wait(until: .running)
        queue = nil
        #expect(await job.wait(until: .cancelled) == .cancelled)
        #expect(job.cancellationReason == .shutdown)
    }
}
