import PrimeKit
import Synchronization
import Testing

@Suite(.timeLimit(.minutes(3))) struct SchedulingTests {
    @Test func higherPrioritiesStartFirstAndEqualOnesInOrder() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        let order = Recorder<String>()
        let plan: [(String, JobPriority)] = [
            ("low-1", .low), ("normal-1", .normal), ("veryHigh-1", .veryHigh), ("veryLow-1", .veryLow),
            ("high-1", .high), ("normal-2", .normal), ("veryHigh-2", .veryHigh), ("low-2", .low), ("high-2", .high),
        ]
        var jobs: [Job] = []
        for (index, (name, priority)) in plan.enumerated() {
            let job = try queue.submit(.isPrime(UInt64(1_000_003 + 2 * index)).priority(priority))
            job.onSuccess { _ in order.append(name) }
            jobs.append(job)
        }
        queue.resume()
        await queue.waitUntilIdle()
        #expect(order.values == [
            "veryHigh-1", "veryHigh-2", "high-1", "high-2", "normal-1", "normal-2", "low-1", "low-2", "veryLow-1",
        ])
    }

    @Test func agingLetsAVeryLowJobRunDuringAFloodOfHighOnes() async throws {
        let queue = JobQueue.testing(workers: 1) { $0.agingSlices = 2 }
        let finished = Recorder<String>()
        let flood = 80
        let counter = Atomic<Int>(0)
        // Three high jobs stay queued at all times: each one, as it finishes, submits the next.
        @Sendable func submitHigh() {
            let index = counter.add(1, ordering: .relaxed).newValue
            guard index <= flood,
                  let job = try? queue.submit(.isPrime(UInt64(2_000_003 + 2 * index)).priority(.high))
            else { return }
            job.onSuccess { _ in
                finished.append("high")
                submitHigh()
            }
        }
        queue.suspend()
        for _ in 0..<3 { submitHigh() }
        let low = try queue.submit(.isPrime(3_000_017).priority(.veryLow))
        low.onSuccess { _ in finished.append("veryLow") }
        queue.resume()
        _ = try await low.result
        let highsBefore = finished.values.prefix { $0 == "high" }.count
        #expect(highsBefore < flood / 2, "the veryLow job waited for \(highsBefore) high jobs")
        #expect(highsBefore >= 3, "aging should not beat high jobs submitted with it")
        await queue.waitUntilIdle()
    }

    @Test func aVeryHighJobStartsWhileLongLowJobsRun() async throws {
        let queue = JobQueue.testing(workers: 2)
        let lows = try (0..<2).map { _ in try queue.submit(Slow.endless.priority(.low)) }
        for low in lows { await low.wait(until: .running) }
        let urgent = try queue.submit(.factor(Medium.semiprime).trialDivision().priority(.veryHigh))
        _ = try await urgent.result
        #expect(lows.allSatisfy { $0.state == .running })
        queue.cancelAll()
        for low in lows { #expect(await low.wait(until: .cancelled) == .cancelled) }
    }

    @Test func suspendPausesRunningJobsAndResumeContinuesThem() async throws {
        // The third job is of lower priority (and aging too slow to matter): it waits while the other two run.
        let queue = JobQueue.testing(workers: 2) { $0.agingSlices = 1_000_000_000 }
        let jobs = try (0..<3).map { try queue.submit(Slow.endless.priority($0 < 2 ? .normal : .low)) }
        await jobs[0].wait(until: .running)
        await jobs[1].wait(until: .running)
        queue.suspend()
        #expect(queue.isSuspended)
        for job in jobs[0...1] { #expect(await job.wait(until: .paused) == .paused) }
        #expect(jobs[2].state == .ready)
        #expect(queue.counts.running == 0)
        #expect(queue.counts.paused == 2)
        #expect(queue.counts.ready == 1)
        let checkpoint = try await jobs[0].checkpoint()
        #expect(checkpoint.kind == .isPrime)
        queue.resume()
        for job in jobs[0...1] { #expect(await job.wait(until: .running) == .running) }
        queue.cancelAll()
        for job in jobs { #expect(await job.wait(until: .cancelled) == .cancelled) }
        #expect(queue.counts.cancelled == 3)
    }

    @Test func aJobPausedByTheUserStaysPausedWhenTheQueueResumes() async throws {
        let queue = JobQueue.testing(workers: 1)
        let job = try queue.submit(Slow.endless)
        await job.wait(until: .running)
        queue.suspend()
        await job.wait(until: .paused)
        _ = try await job.pause()  // now paused by the user too
        queue.resume()
        let other = try queue.submit(.isPrime(1_000_003))
        _ = try await other.result
        #expect(job.state == .paused)
        try job.resume()
        #expect(await job.wait(until: .running) == .running)
        job.cancel()
    }

    @Test func waitUntilIdleAndCountsReflectTheQueue() async throws {
        let queue = JobQueue.testing(workers: 2)
        let jobs = try queue.submit(contentsOf: (0..<200).map { JobRequest.isPrime(UInt64(1_000_000 + $0)) })
        await queue.waitUntilIdle()
        #expect(jobs.allSatisfy { $0.state == .succeeded })
        let counts = queue.counts
        #expect(counts.succeeded == 200)
        #expect(counts.unfinished == 0)
        #expect(queue.jobs.isEmpty)
    }

    @Test func raisingMaxConcurrentJobsAddsWorkers() async throws {
        let queue = JobQueue.testing(workers: 1)
        let first = try queue.submit(Slow.endless)
        await first.wait(until: .running)
        queue.maxConcurrentJobs = 2
        let second = try queue.submit(Slow.endless.priority(.veryLow))
        #expect(await second.wait(until: .running) == .running)
        #expect(first.state == .running)
        queue.cancelAll()
        await queue.waitUntilIdle()
    }
}

@Suite(.timeLimit(.minutes(3))) struct ManySmallJobsTests {
    @Test func cancellingAFloodOfSmallJobsLeavesEveryOneFinishedOnce() async throws {
        let queue = JobQueue.testing(workers: 2)
        let finishedTwice = Recorder<JobID>()
        let requests = (0..<2_000).map { JobRequest.isPrime(UInt64(10_000 + $0)) }
        let jobs = try queue.submit(contentsOf: requests)
        for job in jobs.prefix(50) {
            let seen = Recorder<Int>()
            job.onSuccess { _ in seen.append(1); if seen.values.count > 1 { finishedTwice.append(job.id) } }
            job.onFailure { _ in seen.append(1); if seen.values.count > 1 { finishedTwice.append(job.id) } }
        }
        let cancelled = queue.cancelAll()
        await queue.waitUntilIdle()
        let counts = queue.counts
        #expect(counts.succeeded + counts.cancelled == 2_000)
        #expect(counts.cancelled <= cancelled.count)  // a job already in its slice may still succeed
        #expect(jobs.allSatisfy { $0.state == .succeeded || $0.state == .cancelled })
        #expect(finishedTwice.values.isEmpty)
        // The queue still works.
        #expect(try await queue.submit(.isPrime(1_000_003)).result.isPrime == true)
    }
}
