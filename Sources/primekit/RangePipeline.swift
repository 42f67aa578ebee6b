// The part of a `factor --range` run below 2^128, on one plain thread per core. The numbers are cut into parts (the
// kernel's range sieve below 2^64, cut with pk_range_split; the batch calls from 2^64 on); each thread takes the
// next part, and the calling thread writes the parts' lines in order as they come, in large writes, holding at
// most a few parts' lines at a time. An interrupt stops every thread at its next segment (or batch); the part
// being written is written up to where its thread stopped, and nothing after it.

import Foundation
import PrimeKit
import Synchronization

/// A stretch of a range, below 2^128, in the order it is written.
enum RangePiece {
    /// A sub-range restored from its kernel checkpoint (one part, on one thread).
    case restored(KernelRange)
    /// [first, last] below 2^64: the kernel's range sieve.
    case sieve(first: UInt64, last: UInt64)
    /// [first, last] from 2^64 to below 2^128: the kernel's batch calls.
    case words(first: UInt128, last: UInt128)
}

/// How the lines are written.
struct RangeFormat: Sendable {
    var json = false
    var exponents = false
}

final class RangePipeline: @unchecked Sendable {
    /// Where an interrupted pipeline stopped: every line before it is written, none after.
    enum Stop {
        /// Inside a sieved sub-range: its kernel checkpoint, and the first number after the sub-range.
        case kernel(checkpoint: String, after: UInt128)
        /// At this number (neither it nor anything after it is written).
        case at(UInt128)
    }

    private struct Plan {
        let piece: RangePiece
        let parts: UInt128
    }

    /// A part's lines on their way to the writer.
    private final class Slot {
        let first: UInt128
        let last: UInt128
        var handle: KernelRange?
        var chunks: [(lines: ByteWriter, numbers: Int)] = []
        var finished = false
        var stopped = false
        /// Numbers of this part written out (by the writer).
        var written: UInt128 = 0

        init(first: UInt128, last: UInt128) {
            self.first = first
            self.last = last
        }
    }

    private let plans: [Plan]
    private let totalParts: UInt128
    private let format: RangeFormat
    private let threads: Int
    /// Parts taken ahead of the one being written, at most.
    private let window: UInt128
    private let condition = NSCondition()
    private var slots: [UInt128: Slot] = [:]
    private var next: UInt128 = 0
    private var writing: UInt128 = 0
    private var running = 0
    private let stopping = Atomic<Bool>(false)
    private var failure: String?
    /// Buffers written out, for the threads to fill again (no fresh pages for every chunk).
    private var spare: [ByteWriter] = []
    /// Numbers written so far.
    let done = Atomic<UInt64>(0)

    /// A chunk of lines is handed to the writer once it holds this many bytes.
    private static let chunkBytes = 1 << 20
    /// Numbers per sieved part, and per batch-call part and batch.
    private static let sievePart: UInt64 = 1 << 18
    private static let largeSievePart: UInt64 = 1 << 20
    private static let jsonSievePart: UInt64 = 1 << 16
    /// The kernel's segment length: no part is made shorter.
    private static let segment: UInt64 = 8192
    private static let wordsPart: UInt128 = 2048
    private static let wordsBatch: UInt128 = 64

    /// - Parameters:
    ///   - pieces: The work, in order.
    ///   - threads: Threads that factor (one per core).
    init(pieces: [RangePiece], format: RangeFormat, threads: Int) {
        var plans: [Plan] = []
        for piece in pieces {
            let parts: UInt128
            switch piece {
            case .restored:
                parts = 1
            case .sieve(let first, let last):
                // Numbers this large take long enough that a longer part pays for its sieve's set-up.
                let count = last - first + 1  // first >= 2: no overflow
                // A short range is still cut into a part per thread.
                let most = format.json ? Self.jsonSievePart : first >> 40 != 0 ? Self.largeSievePart : Self.sievePart
                let size = min(most, max(Self.segment, count / UInt64(max(1, threads)) + 1))
                parts = UInt128(count / size + (count % size == 0 ? 0 : 1))
            case .words(let first, let last):
                let count = last - first + 1
                parts = count / Self.wordsPart + (count % Self.wordsPart == 0 ? 0 : 1)
            }
            plans.append(Plan(piece: piece, parts: parts))
        }
        self.plans = plans
        totalParts = plans.reduce(0) { $0 + $1.parts }
        self.format = format
        self.threads = max(1, threads)
        window = UInt128(2 * max(1, threads))
    }

    /// Makes every thread stop at its next segment or batch. Safe from any thread.
    func interrupt() {
        condition.withLock {
            stopping.store(true, ordering: .relaxed)
            for slot in slots.values { slot.handle?.interrupt() }
            condition.broadcast()
        }
    }

    /// Factors and writes everything, or up to an interrupt.
    /// - Returns: nil when everything is written, else where it stopped; with the message of a kernel failure, if
    ///   one stopped it.
    func run() -> (stop: Stop?, failure: String?) {
        running = threads
        for _ in 0..<threads {
            Thread.detachNewThread { [self] in work() }
        }
        var stop: Stop?
        while writing < totalParts {
            condition.lock()
            var slot = slots[writing]
            while !(slot.map { !$0.chunks.isEmpty || $0.finished || $0.stopped } ?? stopping.load(ordering: .relaxed)) {
                condition.wait()
                slot = slots[writing]
            }
            guard let slot else {
                condition.unlock()
                stop = .at(describe(writing).first)
                break
            }
            let chunks = slot.chunks
            slot.chunks = []
            let finished = slot.finished
            let stopped = slot.stopped
            condition.unlock()
            var writeError: Int32 = 0
            var emptied: [ByteWriter] = []
            for chunk in chunks {
                if writeError == 0 {
                    writeError = chunk.lines.write(to: 1)
                    if writeError == 0 {
                        slot.written += UInt128(chunk.numbers)
                        done.add(UInt64(chunk.numbers), ordering: .relaxed)
                    }
                }
                emptied.append(chunk.lines)
            }
            if !emptied.isEmpty { condition.withLock { for lines in emptied { recycleLocked(lines) } } }
            if writeError != 0 {
                // A closed pipe (`| head`) or a full disk: nothing more can be delivered.
                condition.withLock {
                    if failure == nil { failure = "cannot write to standard output: \(String(cString: strerror(writeError)))" }
                }
                stop = .at(slot.first + slot.written)
                break
            }
            if finished {
                condition.withLock {
                    slots[writing] = nil
                    writing += 1
                    condition.broadcast()
                }
            } else if stopped {
                if let handle = slot.handle, let text = try? handle.checkpoint() {
                    stop = .kernel(checkpoint: text, after: slot.last + 1)
                } else {
                    stop = .at(slot.first + slot.written)
                }
                break
            }
        }
        // The threads end at their next poll; nothing they did after the stop is written.
        condition.withLock {
            stopping.store(true, ordering: .relaxed)
            for slot in slots.values { slot.handle?.interrupt() }
            condition.broadcast()
            while running > 0 { condition.wait() }
            for slot in slots.values {
                for chunk in slot.chunks { chunk.lines.deallocate() }
            }
            slots = [:]
            for lines in spare { lines.deallocate() }
            spare = []
        }
        return (stop, failure)
    }

    /// The part with this index: what it is and its first and last numbers.
    private func describe(_ index: UInt128) -> (piece: RangePiece, first: UInt128, last: UInt128) {
        var index = index
        for plan in plans {
            guard index >= plan.parts else {
                switch plan.piece {
                case .restored(let handle):
                    let progress = handle.progress()
                    return (plan.piece, UInt128(progress.first + progress.done), UInt128(progress.last))
                case .sieve(let first, let last):
                    guard let part = try? KernelRange.split(first: first, last: last, parts: UInt64(plan.parts),
                                                            index: UInt64(index)) else {
                        // The range and the part count were checked when the plan was made.
                        fatalError("pk_range_split refused a checked range")
                    }
                    return (.sieve(first: part.first, last: part.last), UInt128(part.first), UInt128(part.last))
                case .words(let first, let last):
                    let start = first + index * Self.wordsPart
                    let end = last - start < Self.wordsPart - 1 ? last : start + Self.wordsPart - 1
                    return (.words(first: start, last: end), start, end)
                }
            }
            index -= plan.parts
        }
        fatalError("a part beyond the plan")
    }

    /// One factoring thread: takes parts in order until none is left or the run stops.
    private func work() {
        while true {
            condition.lock()
            while !stopping.load(ordering: .relaxed), next < totalParts, next >= writing + window { condition.wait() }
            guard !stopping.load(ordering: .relaxed), next < totalParts else {
                running -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let index = next
            next += 1
            let (piece, first, last) = describe(index)
            let slot = Slot(first: first, last: last)
            slots[index] = slot
            if case .restored(let handle) = piece { slot.handle = handle }
            condition.unlock()
            switch piece {
            case .restored(let handle): sieve(handle, slot)
            case .sieve(let first, let last):
                do {
                    let handle = try KernelRange(first: first, last: last)
                    condition.withLock {
                        slot.handle = handle
                        if stopping.load(ordering: .relaxed) { handle.interrupt() }
                    }
                    sieve(handle, slot)
                } catch {
                    fail("the range sieve failed: \(error.message)", slot)
                }
            case .words(let first, let last): words(first, last, slot)
            }
        }
    }

    private func push(_ lines: inout ByteWriter, _ numbers: inout Int, _ slot: Slot) {
        guard numbers > 0 else { return }
        let reused = condition.withLock {
            slot.chunks.append((lines, numbers))
            condition.broadcast()
            return spare.popLast()
        }
        lines = reused ?? Self.buffer()
        numbers = 0
    }

    /// A fresh buffer for a chunk.
    private static func buffer() -> ByteWriter {
        ByteWriter(capacity: chunkBytes + (1 << 19))
    }

    /// Keeps an empty buffer for reuse (a few), or frees it. Called with the lock held.
    private func recycleLocked(_ lines: ByteWriter) {
        var lines = lines
        lines.reset()
        if spare.count < 2 * threads { spare.append(lines) } else { lines.deallocate() }
    }

    /// A thread's buffer when it is done with a part.
    private func recycle(_ lines: ByteWriter) {
        condition.withLock { recycleLocked(lines) }
    }

    /// A buffer for a thread starting a part.
    private func takeBuffer() -> ByteWriter {
        condition.withLock { spare.popLast() } ?? Self.buffer()
    }

    private func end(_ slot: Slot, finished: Bool) {
        condition.withLock {
            if finished { slot.finished = true } else { slot.stopped = true }
            condition.broadcast()
        }
    }

    private func fail(_ message: String, _ slot: Slot) {
        condition.withLock {
            if failure == nil { failure = message }
        }
        interrupt()
        end(slot, finished: false)
    }

    /// Steps a sieved sub-range to its end or to an interrupt, handing its lines over segment by segment.
    private func sieve(_ handle: KernelRange, _ slot: Slot) {
        var lines = takeBuffer()
        var numbers = 0
        var finished = false
        do {
            while !stopping.load(ordering: .relaxed) {
                let status = try handle.step(budget: 1 << 20)
                if status == .interrupted { break }
                let segment = handle.segment
                if segment.count > 0 {
                    try append(handle, segment.count, to: &lines)
                    numbers += segment.count
                    if lines.count >= Self.chunkBytes { push(&lines, &numbers, slot) }
                }
                if status == .done {
                    finished = true
                    break
                }
            }
        } catch {
            // The lines of the segments before the failure are still written.
            push(&lines, &numbers, slot)
            recycle(lines)
            return fail("the range sieve failed: \(error.message)", slot)
        }
        push(&lines, &numbers, slot)
        recycle(lines)
        end(slot, finished: finished)
    }

    /// The delivered segment's lines: the kernel's own (coreutils factor's) format, or exponents, or JSON.
    private func append(_ handle: KernelRange, _ count: Int, to lines: inout ByteWriter) throws(PrimeKitError) {
        if !format.json && !format.exponents {
            var index = 0
            while index < count {
                var written = (bytes: 0, lines: 0, complete: false)
                try lines.appendInPlace(room: 1 << 19) { (buffer) throws(PrimeKitError) -> Int in
                    written = try handle.format(from: index, into: buffer)
                    return written.bytes
                }
                index += written.lines
                if written.complete { break }
            }
            return
        }
        let json = format.json
        try handle.answers(from: 0, count: count) { n, primes, exponents in
            if json {
                var factors: [PrimeFactor] = []
                for slot in 0..<primes.count {
                    factors.append(PrimeFactor(prime: String(primes[slot]), exponent: Int(exponents[slot]),
                                               certainty: .proven))
                }
                let result = FactorResult(candidate: String(n), factors: factors, cofactor: "1", cofactorStatus: .one,
                                          complete: true, isPrime: primes.count == 1 && exponents[0] == 1,
                                          certainty: .proven, parts: [], mode: .complete)
                lines.append(AnswerFormat.json(result))
                return
            }
            lines.reserve(KernelRange.lineMax)
            lines.decimal(n)
            lines.byte(UInt8(ascii: ":"))
            for slot in 0..<primes.count {
                lines.byte(0x20)
                lines.decimal(primes[slot])
                if exponents[slot] > 1 {
                    lines.byte(UInt8(ascii: "^"))
                    lines.decimal(UInt64(exponents[slot]))
                }
            }
            lines.byte(0x0A)
        }
    }

    /// Factors [first, last] (from 2^64 on) with the batch calls, a batch at a time, handing the lines over.
    private func words(_ first: UInt128, _ last: UInt128, _ slot: Slot) {
        var lines = takeBuffer()
        var numbers = 0
        var start = first
        var handed: UInt128 = 0
        let json = format.json
        let exponents = format.exponents
        while handed < last - first + 1, !stopping.load(ordering: .relaxed) {
            let end = last - start < Self.wordsBatch - 1 ? last : start + Self.wordsBatch - 1
            let values = Array(start...end)
            do {
                try WordFactorization.factor(values) { index, factors in
                    var text = String(values[index])
                    text.withUTF8 { text in
                        if json {
                            lines.append(AnswerFormat.json(BatchChunk.result(String(decoding: text, as: UTF8.self),
                                                                             factors)))
                        } else {
                            BatchChunk.appendLine(text, factors, exponents: exponents, to: &lines)
                        }
                    }
                }
            } catch {
                push(&lines, &numbers, slot)
                recycle(lines)
                return fail("the batch factorization failed: \(error.message)", slot)
            }
            numbers += values.count
            handed += UInt128(values.count)
            push(&lines, &numbers, slot)
            start = end &+ 1
        }
        recycle(lines)
        end(slot, finished: handed == last - first + 1)
    }
}
