import Foundation
import PrimeKit
import PrimeKitTestSupport
import Testing

/// Range jobs past 2^64: the batch calls up to 2^128, complete jobs from there on; blocks in order across pause,
/// checkpoint and restore; the checkpoint's wide position checked whole; bad ends refused.
@Suite(.timeLimit(.minutes(3))) struct RangeBigTests {
    static let two64 = UInt128(1) << 64

    // MARK: - Oracles

    /// Miller-Rabin (PrimeOracle): a proof below 2^64, a strong probable-prime test above.
    static func isPrime128(_ n: UInt128) -> Bool { PrimeOracle.isPrime(n) }

    /// Decimal product of decimal numbers (schoolbook, for the numbers past 2^128).
    static func product(_ numbers: [String]) -> String {
        var digits: [Int] = [1]  // little-endian
        for number in numbers {
            let other = number.utf8.reversed().map { Int($0) - 48 }
            var result = [Int](repeating: 0, count: digits.count + other.count)
            for (i, a) in digits.enumerated() {
                for (j, b) in other.enumerated() { result[i + j] += a * b }
            }
            var carry = 0
            for index in result.indices {
                let value = result[index] + carry
                result[index] = value % 10
                carry = value / 10
            }
            while result.count > 1, result.last == 0 { result.removeLast() }
            digits = result
        }
        return String(digits.reversed().map { Character(String($0)) })
    }

    /// Primes ascending, product n, each proven (below 2^64) or probable (above) as the test's own check finds.
    static func expectFactorization(_ factors: [PrimeFactor], of n: String) {
        var primes: [String] = []
        for (index, factor) in factors.enumerated() {
            #expect(factor.exponent >= 1)
            if index > 0 {
                let previous = factors[index - 1].prime
                #expect((previous.utf8.count, previous) < (factor.prime.utf8.count, factor.prime))
            }
            if let small = UInt64(factor.prime) {
                #expect(RangeJobTests.isPrime64(small), "\(factor.prime) of \(n)")
                #expect(factor.certainty == .proven)
            } else if let value = UInt128(factor.prime) {
                #expect(isPrime128(value), "\(factor.prime) of \(n)")
                #expect(factor.certainty == (value < two64 ? .proven : .probable), "\(factor.prime) of \(n)")
            } else {
                #expect(factor.certainty == .probable)
            }
            primes += Array(repeating: factor.prime, count: factor.exponent)
        }
        #expect(product(primes) == n, "\(n)")
    }

    /// Every block of `job`, in order.
    static func collect(_ job: Job) async throws -> [RangeBlock] {
        var blocks: [RangeBlock] = []
        for try await block in job.rangeBlocks { blocks.append(block) }
        return blocks
    }

    /// Every number of the blocks, in order (their decimal text).
    static func numbers(_ blocks: [RangeBlock]) -> [String] {
        blocks.flatMap { block in (0..<block.count).map { block.number(at: $0) } }
    }

    /// Checks that the blocks tile [first, last] and each number's factors; compares with factor jobs.
    static func expectAnswers(_ blocks: [RangeBlock], first: UInt128, last: UInt128, queue: JobQueue,
                              compareEvery: Int = 1) async throws {
        let expected = (first...last).map { String($0) }
        #expect(numbers(blocks) == expected)
        var seen = 0
        for block in blocks {
            #expect(block.isBeyondUInt64 == (UInt128(block.firstText)! >= two64))
            #expect(block.lines.count == block.count)
            if !block.isBeyondUInt64 {
                // Below 2^64 the 64-bit API and the text one agree.
                #expect(block.firstText == String(block.first) && block.lastText == String(block.last))
                for index in 0..<block.count {
                    #expect(block.factors(at: index) == block.factorization(at: index).map {
                        PrimeFactor(prime: String($0.prime), exponent: $0.exponent, certainty: .proven)
                    })
                }
            }
            for index in 0..<block.count {
                let n = block.number(at: index)
                let factors = block.factors(at: index)
                expectFactorization(factors, of: n)
                #expect(block.isPrime(at: index) == (factors.count == 1 && factors[0].exponent == 1))
                // The tool's line: the primes repeated for their exponents, each probable prime named again.
                var line = n + ":"
                for factor in factors { for _ in 0..<factor.exponent { line += " " + factor.prime } }
                for factor in factors where factor.certainty == .probable { line += " [\(factor.prime): probable prime]" }
                #expect(block.lines[index] == line)
                if seen % compareEvery == 0 {
                    // A factor job answers through another path (one job, not the range's batches).
                    let single = try #require(try await queue.submit(.factor(n)).result.factorization)
                    #expect(single.factors == factors, "\(n)")
                }
                seen += 1
            }
        }
    }

    // MARK: - Answers

    @Test func aRangeStraddling2To64IsSievedThenBatched() async throws {
        let queue = JobQueue.testing()
        let first = Self.two64 - 50
        let last = Self.two64 + 50
        let job = try queue.submit(.factorRange(String(first), String(last)))
        #expect(job.candidate == "\(first)-\(last)")
        let blocks = try await Self.collect(job)
        // No block straddles 2^64: the sieve's below, the batch calls' from it.
        #expect(blocks.contains { !$0.isBeyondUInt64 && $0.last == UInt64.max })
        #expect(blocks.allSatisfy { $0.isBeyondUInt64 || $0.count <= 8192 })
        try await Self.expectAnswers(blocks, first: first, last: last, queue: queue)
        let summary = try #require(try await job.result.rangeSummary)
        #expect(summary.isBeyondUInt64)
        #expect(summary.firstText == String(first) && summary.lastText == String(last) && summary.countText == "101")
        #expect(summary.first == UInt64(first) && summary.last == UInt64.max && summary.count == 101)
        #expect(summary.primeCount == UInt64(blocks.reduce(0) { $0 + $1.primeCount }))
        #expect(summary.primeCount == UInt64((first...last).count { $0 < Self.two64 ? RangeJobTests.isPrime64(UInt64($0)) : Self.isPrime128($0) }))
        #expect(job.progress.numbersDone == 101 && job.progress.numbersTotal == 101)
    }

    @Test func aRangeNear2To100IsFactoredWithProbablePrimesMarked() async throws {
        let queue = JobQueue.testing(workers: 2) { $0.rangeChunk = 8192 }
        let first = (UInt128(1) << 100) + 12_345
        let last = first + 199
        let blocks = try await Self.collect(try queue.submit(.factorRange(String(first), String(last))))
        #expect(blocks.allSatisfy { $0.isBeyondUInt64 && $0.count <= 64 })
        #expect(blocks.contains { block in (0..<block.count).contains { block.isPrime(at: $0) } })
        try await Self.expectAnswers(blocks, first: first, last: last, queue: queue, compareEvery: 7)
    }

    @Test func aRangeOf40DigitNumbersRunsOneCompleteJobEach() async throws {
        let queue = JobQueue.testing()
        let first = "1000000000000000000000000000000000000000"
        let last = "1000000000000000000000000000000000000004"
        let job = try queue.submit(.factorRange(first, last))
        let blocks = try await Self.collect(job)
        #expect(blocks.map(\.count) == [1, 1, 1, 1, 1])
        #expect(Self.numbers(blocks) == (0...4).map { "100000000000000000000000000000000000000\($0)" })
        for block in blocks {
            #expect(block.isBeyondUInt64)
            Self.expectFactorization(block.factors(at: 0), of: block.firstText)
            let single = try #require(try await queue.submit(.factor(block.firstText)).result.factorization)
            #expect(single.factors == block.factors(at: 0))
        }
        let summary = try #require(try await job.result.rangeSummary)
        #expect(summary.firstText == first && summary.lastText == last && summary.countText == "5")
        #expect(summary.first == UInt64.max && summary.count == 5)
    }

    @Test func aSummaryKeepsItsTextsThroughCodable() throws {
        let wide = RangeSummary(firstText: "18446744073709551610", lastText: "18446744073709551620", countText: "11",
                                primeCount: 1)
        #expect(wide.isBeyondUInt64 && wide.first == 18_446_744_073_709_551_610 && wide.last == UInt64.max)
        let decoded = try JSONDecoder().decode(RangeSummary.self, from: try JSONEncoder().encode(wide))
        #expect(decoded == wide && decoded.lastText == "18446744073709551620")
        // A summary below 2^64 encodes as before (no text fields) and old encodings decode.
        let narrow = RangeSummary(first: 2, last: 12, count: 11, primeCount: 5)
        #expect(RangeSummary(firstText: "2", lastText: "12", countText: "11", primeCount: 5) == narrow)
        let old = Data(#"{"first":2,"last":12,"count":11,"primeCount":5}"#.utf8)
        #expect(try JSONDecoder().decode(RangeSummary.self, from: old) == narrow)
        #expect(String(decoding: try JSONEncoder().encode(narrow), as: UTF8.self).contains("wide") == false)
    }

    // MARK: - Pause, checkpoint, restore

    /// Reads, pausing after 1 to `most` blocks, moving the job through its checkpoint text into a new queue.
    static func readMoving(_ request: JobRequest, most: UInt64, seed: UInt64, workers: Int) async throws
        -> (blocks: [RangeBlock], summary: RangeSummary?, moves: Int)
    {
        var random = SplitMix(seed: seed)
        let makeQueue = { JobQueue.testing(workers: workers) { $0.rangeChunk = 8192 } }
        var queues = [makeQueue()]
        var job = try queues[0].submit(request)
        var received: [RangeBlock] = []
        var moves = 0
        while true {
            var iterator = job.rangeBlocks.makeAsyncIterator()
            for _ in 0..<(1 + random.next() % most) {
                guard let block = try await iterator.next() else {
                    return (received, try await job.result.rangeSummary, moves)
                }
                received.append(block)
            }
            let checkpoint: Checkpoint
            do {
                checkpoint = try await job.pause()
            } catch {
                while let block = try await iterator.next() { received.append(block) }
                return (received, try await job.result.rangeSummary, moves)
            }
            job.cancel()
            await #expect(throws: CancellationError.self) { _ = try await iterator.next() }
            queues.append(makeQueue())
            job = try queues.last!.submit(.restore(try Checkpoint(text: checkpoint.text)))
            #expect(job.progress.numbersDone == received.reduce(0) { $0 + UInt64($1.count) })
            moves += 1
        }
    }

    @Test(arguments: [1, 2]) func pauseAndRestorePast2To64GiveExactlyTheUninterruptedBlocks(workers: Int)
        async throws
    {
        // Sieved numbers, then batch calls, then (past 2^128) complete jobs. Each range is long enough (95 and 23
        // blocks) that the job cannot finish before its first pause, whatever the timing: blocks read (at most 4),
        // the buffer (4) and a lane's chunk ahead (at most 32 blocks of a batch chunk, one number past 2^128)
        // hold fewer.
        let cases: [(String, String)] = [
            (String(Self.two64 - 100), String(Self.two64 + 6_000)),
            (String(UInt128.max - 70), "340282366920938463463374607431768211476"),
        ]
        for (index, (first, last)) in cases.enumerated() {
            let queue = JobQueue.testing(workers: workers) { $0.rangeChunk = 8192 }
            let reference = try await Self.collect(try queue.submit(.factorRange(first, last)))
            let (received, summary, moves) = try await Self.readMoving(
                .factorRange(first, last), most: 4, seed: UInt64(13 + index + 10 * workers), workers: workers)
            #expect(moves > 0)
            #expect(received == reference)
            #expect(summary?.firstText == first && summary?.lastText == last)
            #expect(summary?.primeCount == UInt64(reference.reduce(0) { $0 + $1.primeCount }))
        }
    }

    @Test func aWideRangeCheckpointIsCheckedWhole() async throws {
        let queue = JobQueue.testing()
        let first = String(Self.two64 - 100)
        let last = String(Self.two64 + 100_000)
        let job = try queue.submit(.factorRange(first, last))
        var iterator = job.rangeBlocks.makeAsyncIterator()
        _ = try #require(try await iterator.next())
        _ = try #require(try await iterator.next())
        await job.waitUntilWaitingForConsumer()
        let checkpoint = try await job.checkpoint()
        job.cancel()
        #expect(checkpoint.text.contains("kind factorRange\n"))
        #expect(checkpoint.text.contains("primekit-range-wide 1\nfirst \(first)\nlast \(last)\nnext "))
        #expect(try Checkpoint(text: checkpoint.text) == checkpoint)
        // Every single-byte change is refused.
        let bytes = Array(checkpoint.text.utf8)
        for index in bytes.indices {
            for replacement in [UInt8(ascii: "1"), UInt8(ascii: "9"), UInt8(ascii: " ")] where bytes[index] != replacement {
                var changed = bytes
                changed[index] = replacement
                #expect(throws: PrimeKitError.self) { try Checkpoint(text: String(decoding: changed, as: UTF8.self)) }
            }
        }
        // Restored, it goes on after the two blocks read, in a new queue.
        let restoredQueue = JobQueue.testing()
        let restored = try restoredQueue.submit(.restore(try Checkpoint(text: checkpoint.text)))
        var again = restored.rangeBlocks.makeAsyncIterator()
        let next = try #require(try await again.next())
        #expect(next.isBeyondUInt64)
        #expect(next.firstText == String(Self.two64 + 64))
        restored.cancel()
    }

    // MARK: - Bad input

    @Test func badWideRangesAreRefusedAndSubmitNothing() throws {
        let queue = JobQueue.testing { $0.maxDigits = 50 }
        func code(_ first: String, _ last: String) -> PrimeKitError.Code? {
            do {
                _ = try queue.submit(.factorRange(first, last))
                return nil
            } catch {
                return error.code
            }
        }
        let big = "1000000000000000000000000000000000000000"
        #expect(code("1", big) == .candidateOutOfRange)
        #expect(code("0", big) == .candidateOutOfRange)
        #expect(code(big + "1", big) == .invalidOptions)
        #expect(code("18446744073709551617", "18446744073709551616") == .invalidOptions)
        #expect(code("0" + big, big + "5") == .invalidOptions)
        #expect(code(big, "+" + big) == .invalidOptions)
        #expect(code(big, big + "x") == .invalidOptions)
        #expect(code(big, String(repeating: "9", count: 51)) == .candidateTooLarge)
        // 2^128 numbers or more.
        #expect(code("2", big) == .invalidOptions)
        #expect(queue.jobs.isEmpty)
    }
}
