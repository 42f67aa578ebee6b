import PrimeKit
import PrimeKitTestSupport
import Testing

/// Range jobs (`JobRequest.factorRange`): every number's factorization against an oracle of the test's own, blocks
/// in order across pause, checkpoint and restore, cancel, backpressure, bad input.
@Suite(.timeLimit(.minutes(3))) struct RangeJobTests {
    /// A range that is never finished within a test: a job on it runs until the test stops it (and with nobody
    /// reading, it waits for its consumer after a few blocks).
    static let longFirst: UInt64 = 1_000_000_000_000
    static let longLast: UInt64 = 1_000_000_000_000 + 10_000_000_000

    // MARK: - Oracles

    /// Factorization by trial division (for numbers whose square root is small).
    static func trialDivision(_ n: UInt64) -> [RangeFactor] {
        var factors: [RangeFactor] = []
        var rest = n
        var divisor: UInt64 = 2
        while divisor <= rest / divisor {
            var exponent = 0
            while rest % divisor == 0 {
                rest /= divisor
                exponent += 1
            }
            if exponent > 0 { factors.append(RangeFactor(prime: divisor, exponent: exponent)) }
            divisor += divisor == 2 ? 1 : 2
        }
        if rest > 1 { factors.append(RangeFactor(prime: rest, exponent: 1)) }
        return factors
    }

    /// Deterministic Miller-Rabin for 64-bit numbers (PrimeOracle's bases decide every n < 2^64).
    static func isPrime64(_ n: UInt64) -> Bool { PrimeOracle.isPrime(UInt128(n)) }

    /// Primes ascending, each proven by the test's own Miller-Rabin, product n.
    static func isFactorization(_ factors: [RangeFactor], of n: UInt64) -> Bool {
        var product: UInt128 = 1
        for (index, factor) in factors.enumerated() {
            guard factor.exponent >= 1, isPrime64(factor.prime) else { return false }
            if index > 0, factor.prime <= factors[index - 1].prime { return false }
            for _ in 0..<factor.exponent { product *= UInt128(factor.prime) }
        }
        return product == UInt128(n)
    }

    /// Every block of `job`, in order.
    static func collect(_ job: Job) async throws -> [RangeBlock] {
        var blocks: [RangeBlock] = []
        for try await block in job.rangeBlocks { blocks.append(block) }
        return blocks
    }

    /// The blocks tile [first, last] in order, with nothing doubled or skipped.
    static func expectTiles(_ blocks: [RangeBlock], _ first: UInt64, _ last: UInt64) {
        var next = first
        for block in blocks {
            #expect(block.first == next, "a block starts at \(block.first), expected \(next)")
            next = block.last &+ 1
        }
        #expect(next == last &+ 1)
    }

    // MARK: - Answers

    @Test func everyNumberFrom2To100000MatchesTrialDivision() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factorRange(2, 100_000))
        #expect(job.kind == .factorRange)
        let blocks = try await Self.collect(job)
        Self.expectTiles(blocks, 2, 100_000)
        var primes: UInt64 = 0
        for block in blocks {
            await Task.yield()  // the oracle is synchronous work: let other suites' tasks run between blocks
            for index in 0..<block.count {
                let n = block.first + UInt64(index)
                let expected = Self.trialDivision(n)
                #expect(block.factorization(at: index) == expected, "\(n)")
                if expected.count == 1 && expected[0].exponent == 1 { primes += 1 }
            }
        }
        let summary = try #require(try await job.result.rangeSummary)
        #expect(summary == RangeSummary(first: 2, last: 100_000, count: 99_999, primeCount: primes))
        #expect(primes == 9_592)  // π(10^5), a check of the oracle itself
        #expect(job.progress.numbersDone == 99_999 && job.progress.numbersTotal == 99_999)
        #expect(job.progress.percent == 100)
        // The lines are the factor command's, a prime repeated for its exponent.
        #expect(blocks[0].lines.prefix(11) == ["2: 2", "3: 3", "4: 2 2", "5: 5", "6: 2 3", "7: 7", "8: 2 2 2", "9: 3 3",
                                                "10: 2 5", "11: 11", "12: 2 2 3"])
    }

    @Test func randomRangesNear2To40MatchTrialDivision() async throws {
        var random = SplitMix(seed: 40)
        let queue = JobQueue.testing()
        // Two ranges of 100 (up to 2^19 divisions a number: seconds of a debug build's CPU, shared with every suite).
        for _ in 0..<2 {
            let first = (UInt64(1) << 40) + random.next() % (UInt64(1) << 39)
            let last = first + 99
            let blocks = try await Self.collect(try queue.submit(.factorRange(first, last)))
            Self.expectTiles(blocks, first, last)
            for block in blocks {
                for index in 0..<block.count {
                    await Task.yield()  // up to 2^20 divisions each: let other suites' tasks run
                    let n = block.first + UInt64(index)
                    #expect(block.factorization(at: index) == Self.trialDivision(n), "\(n)")
                }
            }
        }
    }

    @Test func randomRangesNear2To63AreProvenFactorizationsEqualToFactorJobs() async throws {
        var random = SplitMix(seed: 63)
        let queue = JobQueue.testing()
        for _ in 0..<2 {
            let first = (UInt64(1) << 63) + random.next() % (UInt64(1) << 62)
            let last = first + 99
            let blocks = try await Self.collect(try queue.submit(.factorRange(String(first), String(last))))
            Self.expectTiles(blocks, first, last)
            for block in blocks {
                for index in 0..<block.count {
                    await Task.yield()
                    let n = block.first + UInt64(index)
                    let factors = block.factorization(at: index)
                    #expect(Self.isFactorization(factors, of: n), "\(n)")
                    // The per-number path (the kernel's batch call) is another code path: same answer.
                    let single = try #require(try await queue.submit(.factor(n)).result.factorization)
                    #expect(single.factors.map(\.prime) == factors.map { String($0.prime) })
                    #expect(single.factors.map(\.exponent) == factors.map(\.exponent))
                }
            }
        }
    }

    @Test func theLastNumberBelow2To64IsInRange() async throws {
        let queue = JobQueue.testing()
        let last = UInt64.max
        let blocks = try await Self.collect(try queue.submit(.factorRange(last - 20, last)))
        Self.expectTiles(blocks, last - 20, last)
        for block in blocks {
            for index in 0..<block.count {
                #expect(Self.isFactorization(block.factorization(at: index), of: block.first + UInt64(index)))
            }
        }
    }

    // MARK: - Pause, checkpoint, restore

    /// Reads a range job's blocks, pausing after a random number of them (1 to `most`) and moving the job through
    /// its checkpoint into a new queue from `makeQueue` (cancelling the old one), until it ends; every block read
    /// and the summary. `check` sees each restored job and the blocks read before it.
    static func readMovingAtRandomBlocks(_ request: JobRequest, most: UInt64, random: inout SplitMix,
                                         makeQueue: () -> JobQueue, check: (Job, [RangeBlock]) -> Void = { _, _ in })
        async throws -> (blocks: [RangeBlock], summary: RangeSummary?)
    {
        var queues = [makeQueue()]  // kept: releasing a queue cancels its jobs
        var job = try queues[0].submit(request)
        var received: [RangeBlock] = []
        while true {
            var iterator = job.rangeBlocks.makeAsyncIterator()
            for _ in 0..<(1 + random.next() % most) {
                guard let block = try await iterator.next() else { return (received, try await job.result.rangeSummary) }
                received.append(block)
            }
            let checkpoint: Checkpoint
            do {
                checkpoint = try await job.pause()
            } catch {
                // It finished before the pause landed: the rest is in its buffer.
                while let block = try await iterator.next() { received.append(block) }
                return (received, try await job.result.rangeSummary)
            }
            #expect(checkpoint.kind == .factorRange)
            // Cancelling drops what the paused job had computed past its checkpoint: the next read throws.
            job.cancel()
            await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
            queues.append(makeQueue())
            job = try queues.last!.submit(.restore(try Checkpoint(text: checkpoint.text)))
            #expect(job.progress.numbersDone == received.reduce(0) { $0 + UInt64($1.count) })
            check(job, received)
        }
    }

    /// Pauses at random blocks, moves the job through its checkpoint into a new queue (cancelling the old one),
    /// and compares the concatenation with the uninterrupted run.
    @Test func pauseAndRestoreMidRangeGiveExactlyTheUninterruptedSequence() async throws {
        let first: UInt64 = 1_000_000_000_000
        let last = first + 150_000
        let queue = JobQueue.testing()
        let reference = try await Self.collect(try queue.submit(.factorRange(first, last)))
        let referenceSummary = RangeSummary(first: first, last: last, count: last - first + 1,
                                            primeCount: UInt64(reference.reduce(0) { $0 + $1.primeCount }))
        var random = SplitMix(seed: 7)
        for _ in 0..<3 {
            let (received, summary) = try await Self.readMovingAtRandomBlocks(
                .factorRange(first, last), most: 6, random: &random, makeQueue: { JobQueue.testing() })
            Self.expectTiles(received, first, last)
            #expect(received == reference)
            #expect(summary == referenceSummary)
        }
    }

    @Test func pausingAndResumingInOneQueueDeliversEveryBlockOnce() async throws {
        let first: UInt64 = 5_000_000
        let last = first + 120_000
        let queue = JobQueue.testing(workers: 1)
        let job = try queue.submit(.factorRange(first, last))
        var received: [RangeBlock] = []
        var iterator = job.rangeBlocks.makeAsyncIterator()
        while let block = try await iterator.next() {
            received.append(block)
            if received.count % 3 == 1, let _ = try? await job.pause() { try job.resume() }
        }
        Self.expectTiles(received, first, last)
        for block in received {
            await Task.yield()
            for index in 0..<block.count {
                #expect(block.factorization(at: index) == Self.trialDivision(block.first + UInt64(index)))
            }
        }
    }

    @Test func aRangeCheckpointIsCheckedWhole() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factorRange(Self.longFirst, Self.longLast))
        await job.waitUntilWaitingForConsumer()
        let checkpoint = try await job.checkpoint()
        job.cancel()
        #expect(checkpoint.text.contains("kind factorRange\n"))
        #expect(checkpoint.text.contains("\nprimes "))
        #expect(try Checkpoint(text: checkpoint.text) == checkpoint)
        // Changing any digit of the envelope is refused (its checksum, or the kernel's).
        let bytes = Array(checkpoint.text.utf8)
        var random = SplitMix(seed: 11)
        for _ in 0..<200 {
            var changed = bytes
            let index = Int(random.next() % UInt64(bytes.count))
            changed[index] = changed[index] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
            if changed == bytes { continue }
            #expect(throws: PrimeKitError.self) { try Checkpoint(text: String(decoding: changed, as: UTF8.self)) }
        }
    }

    /// A checkpoint continues with the first block the consumer had not taken: blocks computed before it and read
    /// after it come again from the restored job (never a number skipped).
    @Test func blocksReadAfterACheckpointComeAgainFromTheRestoredJob() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factorRange(Self.longFirst, Self.longLast))
        var iterator = job.rangeBlocks.makeAsyncIterator()
        let taken = try #require(try await iterator.next())
        await job.waitUntilWaitingForConsumer()  // four more blocks computed, not taken
        let checkpoint = try await job.checkpoint()
        let afterCheckpoint = [try #require(try await iterator.next()), try #require(try await iterator.next())]
        job.cancel()
        let restoredQueue = JobQueue.testing()
        let restored = try restoredQueue.submit(.restore(try Checkpoint(text: checkpoint.text)))
        #expect(restored.progress.numbersDone == UInt64(taken.count))
        var again = restored.rangeBlocks.makeAsyncIterator()
        let repeated = [try #require(try await again.next()), try #require(try await again.next())]
        #expect(repeated == afterCheckpoint)
        #expect(repeated[0].first == taken.last + 1)
        // The restored job computed the uncommitted blocks again with a sieve of their own, then goes on with the
        // saved one: the blocks after them follow without a gap.
        var next = repeated[1].last + 1
        for _ in 0..<6 {
            let block = try #require(try await again.next())
            #expect(block.first == next)
            for index in 0..<block.count where index % 97 == 0 {
                #expect(Self.isFactorization(block.factorization(at: index), of: block.first + UInt64(index)))
            }
            next = block.last + 1
        }
        restored.cancel()
    }

    // MARK: - Cancel and backpressure

    @Test func cancelEndsTheBlocksWithCancellationErrorAfterTheDeliveredOnes() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factorRange(Self.longFirst, Self.longLast))
        var iterator = job.rangeBlocks.makeAsyncIterator()
        let firstBlock = try #require(try await iterator.next())
        #expect(firstBlock.first == Self.longFirst)
        await job.waitUntilWaitingForConsumer()
        job.cancel()
        // The blocks computed past the cancel's checkpoint are dropped: the next read throws.
        await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
        await #expect(throws: CancellationError.self) { try await job.result }
        let checkpoint = try await job.checkpoint()
        // It continues after the one block read: its sieve stands there.
        #expect(checkpoint.text.contains("\ndone \(firstBlock.last + 1 - Self.longFirst)\n"))
        #expect(job.state == .cancelled)
    }

    @Test func aConsumerThatReadsNothingStopsTheJobNotTheQueue() async throws {
        let queue = JobQueue.testing(workers: 1)
        let job = try queue.submit(.factorRange(Self.longFirst, Self.longLast))
        await job.waitUntilWaitingForConsumer()
        #expect(job.isWaitingForConsumer)
        #expect(job.state == .running)
        // Waiting on no worker and in no deque, it is still one of the queue's jobs, found by id and held by a
        // suspension.
        #expect(queue.jobs.map(\.id) == [job.id])
        #expect(queue.job(job.id) === job)
        queue.suspend()
        #expect(await job.wait(until: .paused) == .paused)
        queue.resume()
        await job.waitUntilWaitingForConsumer()
        let held = job.progress.numbersDone
        #expect(held > 0 && held <= UInt64(4 * 8_192))
        // The one worker is free for other jobs meanwhile.
        let other = try queue.submit(.factor(Medium.semiprime).trialDivision())
        #expect(try await other.result.factorization?.factors.map(\.prime) == Medium.semiprimeFactors)
        #expect(job.progress.numbersDone == held)
        // Reading one block lets exactly one more segment through before it waits again.
        var iterator = job.rangeBlocks.makeAsyncIterator()
        let block = try #require(try await iterator.next())
        #expect(block.first == Self.longFirst)
        await job.waitUntilWaitingForConsumer()
        let after = job.progress.numbersDone
        #expect(after > held && after - held <= 8_192)
        // A paused job that waited for its consumer resumes into waiting again.
        _ = try await job.pause()
        try job.resume()
        await job.waitUntilWaitingForConsumer()
        #expect(job.progress.numbersDone == after)
        job.cancel()
    }

    // MARK: - Bad input

    @Test func badRangesAreRefusedAndSubmitNothing() throws {
        let queue = JobQueue.testing()
        func code(_ request: JobRequest) -> PrimeKitError? {
            do {
                _ = try queue.submit(request)
                return nil
            } catch {
                return error
            }
        }
        #expect(code(.factorRange("1", "10"))?.code == .candidateOutOfRange)
        #expect(code(.factorRange("0", "10"))?.code == .candidateOutOfRange)
        #expect(code(.factorRange("11", "10"))?.code == .invalidOptions)
        #expect(code(.factorRange("010", "20"))?.code == .invalidOptions)
        #expect(code(.factorRange("10", "2x"))?.code == .invalidOptions)
        #expect(code(.factorRange("10", ""))?.code == .invalidOptions)
        // Past 2^64 (RangeBigTests): the same checks on ends of any size.
        #expect(code(.factorRange("1", "18446744073709551620"))?.code == .candidateOutOfRange)
        #expect(code(.factorRange("18446744073709551621", "18446744073709551620"))?.code == .invalidOptions)
        #expect(code(.factorRange("018446744073709551616", "18446744073709551620"))?.code == .invalidOptions)
        #expect(code(.factorRange("18446744073709551616", "18446744073709551620 "))?.code == .invalidOptions)
        #expect(queue.jobs.isEmpty)
        #expect(try queue.submit(.factorRange("18446744073709551615", "18446744073709551615")).kind == .factorRange)
    }

    @Test func otherJobsHaveNoBlocks() async throws {
        let queue = JobQueue.testing()
        let job = try queue.submit(.factor(91))
        var count = 0
        for try await _ in job.rangeBlocks { count += 1 }
        #expect(count == 0)
        await job.waitUntilWaitingForConsumer()
        #expect(!job.isWaitingForConsumer)
    }
}
