import PrimeKit
import Synchronization
import Testing

/// Jobs of one priority share the workers: a long job takes its turn after each slice, new jobs never wait for it
/// to end, and a stream of new jobs never starves it.
@Suite(.timeLimit(.minutes(3))) struct FairnessTests {
    @Test func tinyJobsFinishInOrderBeforeALongJobOfTheirPriority() async throws {
        let queue = JobQueue.testing(workers: 1)
        let long = try queue.submit(Slow.endless.progressInterval(.zero))
        let (sliced, slice) = AsyncStream<Void>.makeStream()
        long.onProgress { _ in slice.yield() }
        // The long job has had a slice: it is between slices or on a later one when the tiny jobs come.
        var slices = sliced.makeAsyncIterator()
        _ = await slices.next()
        let order = Recorder<Int>()
        var tiny: [Job] = []
        for index in 0..<5 {
            let job = try queue.submit(.isPrime(UInt64(1_000_003 + 2 * index)))
            job.onSuccess { _ in order.append(index) }
            tiny.append(job)
        }
        for job in tiny { _ = try await job.result }
        #expect(long.state == .running, "the tiny jobs waited for the long one to end")
        #expect(order.values == Array(0..<5))
        long.cancel()
        #expect(await long.wait(until: .cancelled) == .cancelled)
    }

    @Test func longJobsOfOnePriorityTakeTurnsSliceBySlice() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        let (sliced, slice) = AsyncStream<Int>.makeStream()
        var jobs: [Job] = []
        for index in 0..<3 {
            let job = try queue.submit(Slow.endless.progressInterval(.zero))
            // One worker: the handlers run on it one slice after another, in the order of the slices.
            job.onProgress { _ in slice.yield(index) }
            jobs.append(job)
        }
        queue.resume()
        var order: [Int] = []
        for await index in sliced {
            order.append(index)
            if order.count == 9 { break }
        }
        #expect(order == [0, 1, 2, 0, 1, 2, 0, 1, 2])
        queue.cancelAll()
        for job in jobs { #expect(await job.wait(until: .cancelled) == .cancelled) }
    }

    @Test func aStreamOfTinyJobsDoesNotStarveALongJob() async throws {
        let queue = JobQueue.testing(workers: 1) { $0.agingSlices = 4 }
        let long = try queue.submit(Slow.endless.progressInterval(.zero))
        let events = Recorder<String>()
        let (firstSlice, sliced) = AsyncStream<Void>.makeStream()
        long.onProgress { _ in
            events.append("long")
            sliced.yield()
        }
        var slices = firstSlice.makeAsyncIterator()
        _ = await slices.next()
        let flood = 200
        let counter = Atomic<Int>(0)
        let (done, finished) = AsyncStream<Void>.makeStream()
        // Three tiny jobs wait at all times: each one, as it finishes, submits the next.
        @Sendable func submitTiny() {
            let index = counter.add(1, ordering: .relaxed).newValue
            guard index <= flood else {
                if index == flood + 3 { finished.finish() }
                return
            }
            guard let job = try? queue.submit(.isPrime(UInt64(2_000_003 + 2 * index))) else { return }
            job.onSuccess { _ in
                events.append("tiny")
                submitTiny()
            }
        }
        for _ in 0..<3 { submitTiny() }
        for await _ in done {}
        let log = events.values
        let firstTiny = log.firstIndex(of: "tiny")!, lastTiny = log.lastIndex(of: "tiny")!
        let longSlicesDuringFlood = log[firstTiny...lastTiny].filter { $0 == "long" }.count
        #expect(longSlicesDuringFlood >= flood / 20, "the long job had \(longSlicesDuringFlood) slices in the flood")
        #expect(long.state == .running)
        long.cancel()
        #expect(await long.wait(until: .cancelled) == .cancelled)
    }

    @Test func aNewJobCutsALongSliceShortWhenEveryWorkerRunsOne() async throws {
        let queue = JobQueue.testing(workers: 2)
        var longs: [Job] = []
        var firstSlices: [AsyncStream<Void>] = []
        for _ in 0..<2 {
            let job = try queue.submit(Slow.endless.progressInterval(.zero))
            let (sliced, slice) = AsyncStream<Void>.makeStream()
            job.onProgress { _ in slice.yield() }
            longs.append(job)
            firstSlices.append(sliced)
        }
        // Both have had their first slice (never cut); from now on slices of an hour: a tiny job that had to wait
        // for a slice to end would wait until a long job ended.
        for sliced in firstSlices {
            var slices = sliced.makeAsyncIterator()
            _ = await slices.next()
        }
        queue.sliceDuration = .seconds(3600)
        for index in 0..<3 {
            let tiny = try queue.submit(.factor(UInt64(600_851_475_143 + index)))
            _ = try await tiny.result
            #expect(longs.allSatisfy { $0.state == .running }, "tiny job \(index) waited for a long job to end")
        }
        queue.cancelAll()
        for job in longs { #expect(await job.wait(until: .cancelled) == .cancelled) }
    }

    @Test @available(macOS 26.0, iOS 26.0, tvOS 26.0, watchOS 26.0, visionOS 26.0, *)  // Task.immediate
    func resetListsExactlyTheJobsThatEndCancelled() async throws {
        let queue = JobQueue.testing(workers: 1)
        queue.suspend()
        // One worker takes the tiny jobs a batch at a time; the first job's callback runs on the worker after it
        // took the next batch and before it runs it, so the reset's cancellation meets jobs that will succeed.
        let first = try queue.submit(.isPrime(1_000_003))
        let rest = try queue.submit(contentsOf: (0..<600).map { JobRequest.isPrime(UInt64(2_000_000 + $0)) })
        let resetStarted = Atomic<Bool>(false)
        let succeededAfterReset = Atomic<Int>(0)
        for job in rest {
            job.onSuccess { _ in
                if resetStarted.load(ordering: .sequentiallyConsistent) { succeededAfterReset.add(1, ordering: .relaxed) }
            }
        }
        let reset = Mutex<Task<[JobID], Never>?>(nil)
        first.onSuccess { _ in
            resetStarted.store(true, ordering: .sequentiallyConsistent)
            // Runs on this thread up to its first wait: the cancellation happens before the worker goes on.
            let task = Task.immediate { await queue.reset() }
            reset.withLock { $0 = task }
        }
        queue.resume()
        _ = try await first.result
        let task = try #require(reset.withLock { $0 })
        let cancelled = await task.value
        #expect(succeededAfterReset.load(ordering: .relaxed) > 0, "no job was on the worker when the reset came")
        let endedCancelled = ([first] + rest).filter { $0.state == .cancelled }.map(\.id)
        #expect(cancelled == endedCancelled)
        #expect(([first] + rest).allSatisfy { $0.state == .cancelled || $0.state == .succeeded })
    }
}
