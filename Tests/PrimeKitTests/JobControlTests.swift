@testable import PrimeKit
import Synchronization
import PrimeKitTestSupport
import Testing

@Suite(.timeLimit(.minutes(3))) struct JobControlTests {
    @Test func transitionTableIsTheDocumentedOne() {
        let allowed: Set<[JobState]> = [
            [.pending, .ready], [.pending, .cancelled],
            [.ready, .running], [.ready, .paused], [.ready, .pending], [.ready, .cancelled],
            [.running, .paused], [.running, .succeeded], [.running, .failed], [.running, .cancelled],
            [.paused, .ready], [.paused, .cancelled],
        ]
        for from in JobState.allCases {
            for to in JobState.allCases {
                #expect(from.canTransition(to: to) == allowed.contains([from, to]), "\(from) → \(to)")
            }
        }
        for state in JobState.allCases where state.isFinished {
            #expect(!JobState.allCases.contains { state.canTransition(to: $0) })
        }
    }

    @Test func aJobWalksThroughEveryStateToSuccess() async throws {
        let queue = JobQueue.testing(workers: 1)
        let blocker = try queue.submit(Slow.endless)
        let job = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(blocker))
        #expect(job.state == .pending)
        await blocker.wait(until: .running)
        let checkpoint = try await blocker.pause()
        #expect(blocker.state == .paused)
        #expect(!checkpoint.text.isEmpty)
        try blocker.resume()
        #expect(blocker.state == .ready || blocker.state == .running)
        blocker.cancel()
        #expect(await blocker.wait(until: .cancelled) == .cancelled)
        #expect(await job.wait(until: .cancelled) == .cancelled)  // propagated after the blocker's own transition
        #expect(job.cancellationReason == .dependencyCancelled(blocker.id, .requested))

        // A complete job no machine finishes, ended by its time limit (which counts the time its slices take): the
        // pause must land before the limit. A machine busy enough to hold this test back longer than that gets the
        // walk again with a limit twice as long.
        var limit = Duration.seconds(1)
        var second = try queue.submit(.factor(Slow.semiprime100).effort(timeLimit: limit))
        while true {
            await second.wait(until: .running)
            do {
                _ = try await second.pause()
                break
            } catch let error as PrimeKitError where error.code == .invalidState && second.state == .succeeded {
                try #require(limit < .seconds(120), "the pause never landed before the time limit")
                limit *= 2
                second = try queue.submit(.factor(Slow.semiprime100).effort(timeLimit: limit))
            }
        }
        #expect(second.state == .paused)
        try second.resume()
        // Back in the queue, or already ended: a pause that landed late leaves little of the time limit, and on a
        // busy machine the worker can spend it before this line reads the state (the checks below still hold).
        #expect([.ready, .running, .succeeded].contains(second.state))
        let result = try #require(try await second.result.factorization)
        #expect(!result.complete && result.parts.map(\.value) == [Slow.semiprime100])
        #expect(second.state == .succeeded)
        #expect(throws: PrimeKitError.self) { try second.resume() }
        await #expect(throws: PrimeKitError.self) { try await second.pause() }
    }

    @Test func pauseReturnsACheckpointAndNoProgressFollowsUntilResume() async throws {
        let queue = JobQueue.testing(workers: 2)
        let job = try queue.submit(Slow.endless.progressInterval(.zero))
        let paused = Atomic<Bool>(false)
        let duringPause = Atomic<Int>(0)
        let seen = Recorder<UInt64>()
        let firstSnapshot = AsyncStream<Void>.makeStream()
        let consumer = Task {
            for await snapshot in job.progressUpdates {
                if paused.load(ordering: .sequentiallyConsistent) { duringPause.add(1, ordering: .relaxed) }
                seen.append(snapshot.seq)
                firstSnapshot.continuation.yield()
            }
        }
        for await _ in firstSnapshot.stream { break }
        let checkpoint = try await job.pause()
        paused.store(true, ordering: .sequentiallyConsistent)
        let seqAtPause = job.progress.seq
        #expect(job.state == .paused)
        #expect(checkpoint.kind == .isPrime)
        #expect(try await job.checkpoint() == checkpoint)
        // Let the other worker do real work meanwhile: the paused job must stay silent.
        for candidate in [Medium.semiprime, "999999999989", "600851475143"] {
            _ = try await queue.submit(.factor(candidate)).result
        }
        #expect(job.progress.seq == seqAtPause)
        paused.store(false, ordering: .sequentiallyConsistent)
        #expect(duringPause.load(ordering: .relaxed) == 0)
        try job.resume()
        for await _ in firstSnapshot.stream { if seen.values.last! > seqAtPause { break } }
        job.cancel()
        await consumer.value
        #expect(seen.values == seen.values.sorted())
        #expect(Set(seen.values).count == seen.values.count)
    }

    @Test func cancellingARunningJobStopsItWithACheckpoint() async throws {
        let queue = JobQueue.testing(workers: 1)
        let job = try queue.submit(Slow.endlessFactor)
        let failures = Recorder<JobFailure>()
        job.onFailure { failures.append($0) }
        await job.wait(until: .running)
        job.cancel()
        await #expect(throws: CancellationError.self) { try await job.result }
        #expect(job.state == .cancelled)
        #expect(job.cancellationReason == .requested)
        #expect(failures.values == [.cancelled(.requested)])
        let checkpoint = try await job.checkpoint()
        #expect(checkpoint.kind == .factor)
        job.cancel()  // a second cancel does nothing
        #expect(queue.counts.cancelled == 1)
    }

    @Test func cancellingTheAwaitingTaskCancelsTheJob() async throws {
        let queue = JobQueue.testing(workers: 1)
        let job = try queue.submit(Slow.endless)
        let task = Task { try await job.result }
        await job.wait(until: .running)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(await job.wait(until: .cancelled) == .cancelled)
        #expect(job.cancellationReason == .taskCancelled)
    }

    @Test func progressEndsWithOneHundredBeforeSuccess() async throws {
        let queue = JobQueue.testing(workers: 1) { $0.sliceDuration = .microseconds(200) }
        queue.suspend()  // subscribe before the job can start
        let job = try queue.submit(.factor(Medium.semiprime).trialDivision().progressInterval(.zero))
        var iterator = job.progressUpdates.makeAsyncIterator()
        let callbackProgress = Recorder<Double>()
        job.onProgress { callbackProgress.append($0.percent) }
        let successes = Recorder<String>()
        job.onSuccess { successes.append($0.candidate) }
        queue.resume()
        var snapshots: [JobProgress] = []
        while let snapshot = await iterator.next() { snapshots.append(snapshot) }
        _ = try await job.result
        #expect(!snapshots.isEmpty)
        #expect(snapshots.last?.percent == 100)
        #expect(snapshots.map(\.percent) == snapshots.map(\.percent).sorted())
        #expect(snapshots.last?.factors == Medium.semiprimeFactors)
        #expect(callbackProgress.values.last == 100)
        #expect(successes.values == [Medium.semiprime])
    }

    @Test func progressIsCoalescedToTheInterval() async throws {
        let queue = JobQueue.testing(workers: 1) { $0.sliceDuration = .microseconds(100) }
        queue.suspend()
        let job = try queue.submit(Slow.endless.progressInterval(.milliseconds(50)))
        let times = Recorder<ContinuousClock.Instant>()
        job.onProgress { _ in times.append(.now) }
        queue.resume()
        var iterator = job.progressUpdates.makeAsyncIterator()
        var received = 0
        while received < 4, await iterator.next() != nil { received += 1 }
        job.cancel()
        _ = try? await job.result
        let stamps = times.values
        #expect(stamps.count >= 4)
        // Snapshots are taken at least 50 ms apart; callbacks run a little after, so allow some jitter at the ends.
        if let first = stamps.first, let last = stamps.last {
            #expect(first.duration(to: last) >= .milliseconds(50 * (stamps.count - 1) - 20))
        }
    }

    /// Property: pausing and resuming at random slices, or moving the job through a checkpoint, never changes the
    /// answer.
    @Test func pausedAndResumedJobsGiveTheUninterruptedAnswer() async throws {
        let queue = JobQueue.testing(workers: 2) { $0.sliceDuration = .microseconds(100) }
        var generator = SplitMix(seed: 0x5EED)
        var totalPauses = 0
        let candidates: [(String, String)] = [
            (Medium.semiprime, "20000000"),
            ("999999999999999989", "20000000"),
            ("24000000000000888", "20000000"),
            ("340282366920938463463374607431768211457", "5000000"),
            (Slow.digits100, "500000"),
        ]
        for (candidate, bound) in candidates {
            for kind in [JobKind.factor, .isPrime] {
                let request = kind == .factor ? JobRequest.factor(candidate, bound: bound)
                                              : JobRequest.isPrime(candidate, bound: bound)
                let expected = try await queue.submit(request).result
                var job = try queue.submit(request.progressInterval(.zero))
                var pauses = 0
                var iterator = job.progressUpdates.makeAsyncIterator()
                var target = UInt64.random(in: 1...6, using: &generator)
                while let snapshot = await iterator.next() {
                    guard snapshot.seq >= target, pauses < 3 else { continue }
                    pauses += 1
                    target = snapshot.seq + UInt64.random(in: 1...6, using: &generator)
                    guard let checkpoint = try? await job.pause() else { break }
                    if Bool.random(using: &generator) {
                        job.cancel()
                        job = try queue.submit(.restore(checkpoint).progressInterval(.zero))
                        iterator = job.progressUpdates.makeAsyncIterator()
                        target = 1
                    } else {
                        try job.resume()
                    }
                }
                #expect(try await job.result == expected, "\(candidate) \(kind) after \(pauses) pauses")
                totalPauses += pauses
            }
        }
        #expect(totalPauses >= candidates.count)
    }
}


@Suite(.timeLimit(.minutes(3))) struct JobWaitingTests {
    @Test func waitingForTheEndSeesTheEndsCallbacksDone() async throws {
        // `wait(until:)` on a finished state, like `result`, returns after the job's callbacks have run: a caller
        // can count on what its callbacks recorded. Many jobs, so that a wrong order would show.
        let queue = JobQueue.testing(workers: 2) { $0.failureInjection = .failing(["12": "injected failure"]) }
        for round in 0..<200 {
            let job = try queue.submit(round % 2 == 0 ? .isPrime(UInt64(10_007 + round)) : .factor("12"))
            let seen = Recorder<Bool>()
            job.onSuccess { _ in seen.append(true) }
            job.onFailure { _ in seen.append(false) }
            let state = await job.wait(until: .succeeded, .failed)
            #expect(seen.values == [state == .succeeded], "round \(round): \(state), callbacks \(seen.values)")
        }
    }

    @Test func cancellingAWaitingTaskReturnsWithoutTouchingTheJobOrOtherWaiters() async throws {
        let queue = JobQueue.testing(workers: 1)
        let blocker = try queue.submit(Slow.endless)
        let job = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(blocker))
        let cancelled = Task { await job.wait(until: .succeeded) }
        let patient = Task { await job.wait(until: .running, .succeeded) }
        cancelled.cancel()
        #expect(await cancelled.value == .pending)
        #expect(job.state == .pending)
        blocker.cancel()
        #expect(await patient.value == .cancelled)
    }

    @Test func sliceDurationCanChangeWhileTheQueueRuns() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.sliceDuration = .milliseconds(2)
        #expect(queue.sliceDuration == .milliseconds(2))
        _ = try await queue.submit(.factor(Medium.semiprime).trialDivision()).result
    }
}
