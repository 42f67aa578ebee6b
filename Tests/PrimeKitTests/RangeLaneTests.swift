@testable import PrimeKit
import PrimeKitTestSupport
import Testing

/// A range job split over the workers (its lanes, one per worker, taking chunks in turn): the same blocks in the
/// same order as one lane gives, across pause, checkpoint and restore, with bounded buffers; and checkpoints
/// written before a checkpoint held its position itself (with a `redo` line) still restore.
@Suite(.timeLimit(.minutes(3))) struct RangeLaneTests {
    /// Ten chunks of 2^16 numbers (the queues below are configured so): two lanes on two workers.
    static let first: UInt64 = 1_000_000
    static let last: UInt64 = 1_600_000
    static let chunk: UInt64 = 1 << 16

    static func queue(workers: Int = 2) -> JobQueue {
        JobQueue.testing(workers: workers) { $0.rangeChunk = chunk }
    }

    /// Every block of a job, in order, and its summary.
    static func run(_ job: Job) async throws -> (blocks: [RangeBlock], summary: RangeSummary?) {
        var blocks: [RangeBlock] = []
        for try await block in job.rangeBlocks { blocks.append(block) }
        return (blocks, try await job.result.rangeSummary)
    }

    /// The blocks tile [first, last] in order.
    static func tiles(_ blocks: [RangeBlock], _ first: UInt64, _ last: UInt64) -> Bool {
        var next = first
        for block in blocks {
            guard block.first == next else { return false }
            next = block.last &+ 1
        }
        return next == last &+ 1
    }

    @Test func twoLanesGiveWhatOneLaneGives() async throws {
        let one = Self.queue(workers: 1)
        let single = try one.submit(.factorRange(Self.first, Self.last))
        #expect(single.pieceCount == 1)
        let reference = try await Self.run(single)
        #expect(Self.tiles(reference.blocks, Self.first, Self.last))

        let two = Self.queue()
        let split = try two.submit(.factorRange(Self.first, Self.last))
        #expect(split.pieceCount == 2)
        let answer = try await Self.run(split)
        #expect(answer.blocks == reference.blocks)
        #expect(answer.summary == reference.summary)
        #expect(split.progress.numbersDone == Self.last - Self.first + 1 && split.progress.percent == 100)
        // Not splitting keeps one lane; a range of one chunk gets one lane on any number of workers.
        #expect(try two.submit(.factorRange(Self.first, Self.last).splitting(false)).pieceCount == 1)
        #expect(try two.submit(.factorRange(Self.first, Self.first + Self.chunk - 1)).pieceCount == 1)
        two.cancelAll()

        // The default chunks (2^20 numbers): a range of three of them, near 10^12, on two lanes.
        let first: UInt64 = 1_000_000_000_000
        let last = first + 3 * (1 << 20) - 5
        let defaults = JobQueue.testing()
        let big = try defaults.submit(.factorRange(first, last))
        #expect(big.pieceCount == 2)
        let bigAnswer = try await Self.run(big)
        #expect(Self.tiles(bigAnswer.blocks, first, last))
        let bigReference = try await Self.run(try one.submit(.factorRange(first, last)))
        #expect(bigAnswer.blocks == bigReference.blocks)
        #expect(bigAnswer.summary == bigReference.summary)
    }

    /// Pauses at random blocks, moves the job through its checkpoint into a new two-worker queue (cancelling the
    /// old one), and compares the concatenation with one lane's uninterrupted run.
    @Test func pauseAndRestoreOfASplitJobGiveExactlyTheUninterruptedBlocks() async throws {
        let one = Self.queue(workers: 1)  // kept: releasing a queue cancels its jobs
        let reference = try await Self.run(try one.submit(.factorRange(Self.first, Self.last)))
        var random = SplitMix(seed: 11)
        for _ in 0..<3 {
            let (blocks, summary) = try await RangeJobTests.readMovingAtRandomBlocks(
                .factorRange(Self.first, Self.last), most: 24, random: &random, makeQueue: { Self.queue() }
            ) { restored, before in
                // The rest of the range has two lanes while it holds two chunks.
                #expect(restored.pieceCount == (before.last!.last + 1 <= Self.last - Self.chunk ? 2 : 1))
            }
            #expect(blocks == reference.blocks)
            #expect(summary == reference.summary)
        }
    }

    /// With nobody reading, a split job stops once its lanes can do nothing more: at most one chunk computed past
    /// the buffer's four blocks, and the queue's other jobs run meanwhile.
    @Test func aSplitJobThatNobodyReadsWaitsWithBoundedBuffers() async throws {
        let queue = Self.queue()
        let job = try queue.submit(.factorRange(Self.first, Self.first + 10_000_000))
        #expect(job.pieceCount == 2)
        await job.waitUntilWaitingForConsumer()
        #expect(job.isWaitingForConsumer)
        let computed = job.progress.numbersDone
        #expect(computed >= UInt64(RangeRun.capacity) * 8_192)
        #expect(computed <= Self.chunk + UInt64(RangeRun.capacity) * 8_192)
        let other = try queue.submit(.factor(600_851_475_143))
        #expect(try await other.result.factorization?.factors.map(\.prime) == ["71", "839", "1471", "6857"])
        // Reading on wakes it: the next blocks follow in order.
        var iterator = job.rangeBlocks.makeAsyncIterator()
        var next = Self.first
        for _ in 0..<40 {
            let block = try #require(try await iterator.next())
            #expect(block.first == next)
            next = block.last + 1
        }
        job.cancel()
    }

    /// A checkpoint of the earlier form: the sieve past the committed position, a `redo` line saying where to go
    /// on, and the primes before it. The restored job gives exactly the numbers from `redo` on.
    @Test func aCheckpointWithARedoLineStillRestores() async throws {
        let redo = Self.first + 3 * 8_192
        let sieve = try KernelRange(first: Self.first, last: Self.last)
        try sieve.seek(done: 6 * 8_192)
        let one = Self.queue(workers: 1)
        let reference = try await Self.run(try one.submit(.factorRange(Self.first, Self.last)))
        let before = reference.blocks.prefix(3)
        #expect(before.last?.last == redo - 1)
        let primesBefore = UInt64(before.reduce(0) { $0 + $1.primeCount })
        let envelope = Checkpoint(kind: .factorRange,
                                  pieces: [.init(from: String(Self.first), bound: String(Self.last),
                                                 kernelText: try sieve.checkpoint())],
                                  rangePrimes: primesBefore, rangeRedo: redo)
        let two = Self.queue()
        let job = try two.submit(.restore(try Checkpoint(text: envelope.text)))
        #expect(job.pieceCount == 2)
        let rest = try await Self.run(job)
        #expect(Array(before) + rest.blocks == reference.blocks)
        #expect(rest.summary == reference.summary)
    }
}
