@testable import PrimeKit
import Testing

@Suite(.timeLimit(.minutes(3))) struct DependencyTests {
    @Test func aDependentStartsOnlyAfterItsDependenciesSucceed() async throws {
        let queue = JobQueue.testing(workers: 2)
        let order = Recorder<String>()
        let a = try queue.submit(.factor(Medium.semiprime).trialDivision())
        let b = try queue.submit(.factor(Medium.semiprime).trialDivision())
        let c = try queue.submit(.isPrime(1_000_003).dependsOn(a, b))
        a.onSuccess { _ in order.append("a") }
        b.onSuccess { _ in order.append("b") }
        c.onSuccess { _ in order.append("c") }
        _ = try await c.result
        #expect(order.values.last == "c")
        #expect(Set(order.values) == ["a", "b", "c"])
        #expect(c.dependencies == [a, b])
    }

    @Test func failurePropagatesDownAThreeDeepChainWithTheCause() async throws {
        let queue = JobQueue.testing(workers: 2) { $0.failureInjection = .failing(["600851475143": "boom"]) }
        let jobs = try queue.chain([
            JobRequest.factor("600851475143").trialDivision(), .factor(Medium.semiprime).trialDivision(), .isPrime(1_000_003),
        ])
        await #expect(throws: PrimeKitError.self) { try await jobs[0].result }
        await #expect(throws: CancellationError.self) { try await jobs[2].result }
        let error = try #require(jobs[0].error)
        #expect(error.message == "boom")
        #expect(jobs[0].state == .failed)
        #expect(jobs[1].state == .cancelled)
        #expect(jobs[2].state == .cancelled)
        #expect(jobs[1].cancellationReason == .dependencyFailed(jobs[0].id, error))
        #expect(jobs[2].cancellationReason == .dependencyCancelled(jobs[1].id, .dependencyFailed(jobs[0].id, error)))
        #expect(jobs[2].cancellationReason?.rootCause == .dependencyFailed(jobs[0].id, error))
        let counts = queue.counts
        #expect(counts.failed == 1)
        #expect(counts.cancelled == 2)
    }

    @Test func cancellationPropagatesDownAChain() async throws {
        let queue = JobQueue.testing(workers: 1)
        let jobs = try queue.chain([Slow.endless, .factor(Medium.semiprime).trialDivision(), .factor(Medium.semiprime).trialDivision()])
        await jobs[0].wait(until: .running)
        #expect(jobs[1].state == .pending)
        jobs[0].cancel()
        #expect(await jobs[2].wait(until: .cancelled) == .cancelled)
        #expect(jobs[1].cancellationReason == .dependencyCancelled(jobs[0].id, .requested))
        #expect(jobs[2].cancellationReason == .dependencyCancelled(jobs[1].id, .dependencyCancelled(jobs[0].id, .requested)))
    }

    @Test func aDiamondIsCancelledOnceWhenItsRootFails() async throws {
        let queue = JobQueue.testing(workers: 2) { $0.failureInjection = .failing(["600851475143": "injected failure"]) }
        let failures = Recorder<JobFailure>()
        let root = try queue.submit(.factor("600851475143").trialDivision())
        let left = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(root))
        let right = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(root))
        let bottom = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(left, right))
        bottom.onFailure { failures.append($0) }
        #expect(await bottom.wait(until: .cancelled) == .cancelled)
        #expect(left.state == .cancelled && right.state == .cancelled)
        #expect(failures.values.count == 1)
        let error = try #require(root.error)
        #expect(bottom.cancellationReason?.rootCause == .dependencyFailed(root.id, error))
    }

    @Test func aDiamondRunsItsBottomAfterBothSides() async throws {
        let queue = JobQueue.testing(workers: 2)
        let order = Recorder<String>()
        let root = try queue.submit(.factor(Medium.semiprime).trialDivision())
        let left = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(root))
        let right = try queue.submit(.isPrime(1_000_003).dependsOn(root))
        let bottom = try queue.submit(.isPrime(1_000_033).dependsOn(left, right))
        for (name, job) in [("root", root), ("left", left), ("right", right), ("bottom", bottom)] {
            job.onSuccess { _ in order.append(name) }
        }
        _ = try await bottom.result
        #expect(order.values.first == "root")
        #expect(order.values.last == "bottom")
        #expect(order.values.count == 4)
    }

    @Test func aDependencyOnAFinishedJobActsAtOnce() async throws {
        let queue = JobQueue.testing(workers: 1) { $0.failureInjection = .failing(["1000039": "injected failure"]) }
        let done = try queue.submit(.isPrime(1_000_003))
        _ = try await done.result
        let after = try queue.submit(.isPrime(1_000_033).dependsOn(done))
        _ = try await after.result
        let failed = try queue.submit(.isPrime(1_000_039))
        _ = try? await failed.result
        let doomed = try queue.submit(.isPrime(1_000_033).dependsOn(failed))
        #expect(doomed.state == .cancelled)
        #expect(doomed.cancellationReason == .dependencyFailed(failed.id, failed.error!))
    }

    @Test func cyclesAreRejected() async throws {
        let queue = JobQueue.testing(workers: 1)
        let blocker = try queue.submit(Slow.endless)
        let a = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(blocker))
        let b = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(a))
        let c = try queue.submit(.factor(Medium.semiprime).trialDivision().dependsOn(b))
        #expect { try a.addDependency(c) } throws: { ($0 as? PrimeKitError)?.code == .dependencyCycle }
        #expect { try a.addDependency(a) } throws: { ($0 as? PrimeKitError)?.code == .dependencyCycle }
        #expect { try queue.chain([c, b]) } throws: { ($0 as? PrimeKitError)?.code == .dependencyCycle }
        #expect(a.dependencies == [blocker])
        // A valid late edge: c also waits for a fresh job d.
        let d = try queue.submit(.isPrime(1_000_003).dependsOn(blocker))
        try c.addDependency(d)
        #expect(c.dependencies == [b, d])
        let other = JobQueue.testing(workers: 1)
        let foreign = try other.submit(.isPrime(1_000_003))
        #expect { try a.addDependency(foreign) } throws: { ($0 as? PrimeKitError)?.code == .foreignJob }
        #expect { try queue.submit(.isPrime(7).dependsOn(foreign)) } throws: {
            ($0 as? PrimeKitError)?.code == .foreignJob
        }
        blocker.cancel()
        #expect(await c.wait(until: .cancelled) == .cancelled)
        #expect(c.cancellationReason?.rootCause == .requested)
    }

    @Test func aReadyJobThatGainsADependencyWaitsAgain() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        let first = try queue.submit(.factor(Medium.semiprime).trialDivision())
        let second = try queue.submit(.factor(Medium.semiprime).trialDivision())
        #expect(second.state == .ready)
        try queue.chain([second, first])  // first now waits for second
        #expect(first.state == .pending)
        let order = Recorder<JobID>()
        first.onSuccess { _ in order.append(first.id) }
        second.onSuccess { _ in order.append(second.id) }
        queue.resume()
        _ = try await first.result
        #expect(order.values == [second.id, first.id])
    }
}
