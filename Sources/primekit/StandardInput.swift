// Reads whitespace-separated tokens from standard input on a thread of its own, so a number typed at a terminal is
// answered at once, a million-digit number is read in chunks, and a huge file is read no faster than it is used.
// For `factor`'s batch path, numbers below 2^128 are gathered into chunks right here, without a string each.

import Dispatch
import Foundation
import PrimeKitBridge

final class StandardInput: @unchecked Sendable {
    /// A token, possibly cut short: a token longer than the longest candidate is kept only up to that length.
    /// With batching, a run of numbers below 2^128 arrives as one token holding their chunk.
    struct Token: Sendable {
        var text: String
        var fullLength: Int?
        var chunk: BatchChunk? = nil

        /// The read-ahead permits the token holds (see ``used(_:)``).
        var permits: Int { chunk == nil ? 1 : StandardInput.chunkPermits }
    }

    /// How many permits may be held by tokens read ahead of their use: a token holds one, a chunk
    /// `chunkPermits`.
    private static let readAhead = 4096
    static let chunkPermits = 64
    private let gate = NSCondition()
    private var available = StandardInput.readAhead
    private let keep = CandidateCheck.maxDigits + 1
    private let batching: Bool
    private let prefix: StandardInputPrefix?

    /// - Parameters:
    ///   - batching: Gather numbers below 2^128 into chunks (`factor` without a divisor range).
    ///   - prefix: Input already read from the descriptor, taken first.
    init(batching: Bool = false, prefix: StandardInputPrefix? = nil) {
        self.batching = batching
        self.prefix = prefix
    }

    /// Starts the reader thread.
    /// - Parameters:
    ///   - deliver: Receives tokens in input order (several per call).
    ///   - finish: Called once at the end of input, with an error message when reading failed.
    func start(deliver: @escaping @Sendable ([Token]) -> Void, finish: @escaping @Sendable (String?) -> Void) {
        let thread = Thread { [self] in
            read(deliver: deliver, finish: finish)
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Returns the permits of tokens the consumer has used.
    func used(_ count: Int) {
        gate.lock()
        available += count
        gate.signal()
        gate.unlock()
    }

    private func read(deliver: @Sendable ([Token]) -> Void, finish: @Sendable (String?) -> Void) {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var current: [UInt8] = []
        var currentLength = 0
        var batch: [Token] = []
        // The chunk being gathered, as plain arrays (a chunk object is made when it is closed).
        var digits: [UInt8] = []
        var ends: [Int] = []
        var values: [UInt128] = []
        var weight = 0
        func closeChunk() {
            guard !values.isEmpty else { return }
            batch.append(Token(text: "", fullLength: nil,
                               chunk: BatchChunk(digits: digits, ends: ends, values: values, weight: weight)))
            digits.removeAll(keepingCapacity: true)
            ends.removeAll(keepingCapacity: true)
            values.removeAll(keepingCapacity: true)
            weight = 0
        }
        /// Takes a whole token; returns false when it is not a number for the batch path.
        func batched(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
            guard batching, let value = BatchChunk.parse(token) else { return false }
            digits.append(contentsOf: token)
            ends.append(digits.count)
            values.append(value)
            weight += BatchChunk.weight(of: value)
            if weight >= BatchChunk.fullWeight { closeChunk() }
            return true
        }
        func other(_ text: String, fullLength: Int?) {
            closeChunk()
            batch.append(Token(text: text, fullLength: fullLength))
        }
        func endToken() {
            guard currentLength > 0 else { return }
            let done = currentLength == current.count && current.withUnsafeBufferPointer { batched($0) }
            if !done {
                other(String(decoding: current, as: UTF8.self),
                      fullLength: currentLength > current.count ? currentLength : nil)
            }
            current.removeAll(keepingCapacity: currentLength < 1 << 20)
            currentLength = 0
        }
        func flushBatch() {
            // Hand over as many tokens as there are permits for; when none is left, hand over what is held
            // first (the consumer returns permits only for tokens it has received), then wait.
            var start = 0
            while start < batch.count {
                gate.lock()
                while available <= 0 { gate.wait() }
                var end = start
                while end < batch.count, available > 0 {
                    available -= batch[end].permits
                    end += 1
                }
                gate.unlock()
                deliver(Array(batch[start..<end]))
                start = end
            }
            batch.removeAll()
        }
        func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
        }
        func consume(_ buffer: UnsafeBufferPointer<UInt8>) {
            let count = buffer.count
            var position = 0
            // A token begun in an earlier read continues here.
            if currentLength > 0 {
                while position < count, !isSpace(buffer[position]) {
                    if current.count < keep { current.append(buffer[position]) }
                    currentLength += 1
                    position += 1
                }
                if position < count { endToken() }
            }
            while position < count {
                while position < count, isSpace(buffer[position]) { position += 1 }
                let start = position
                while position < count, !isSpace(buffer[position]) { position += 1 }
                guard position > start else { break }
                if position == count {
                    // It may go on in the next read.
                    current.append(contentsOf: buffer[start..<min(count, start + keep)])
                    currentLength = position - start
                    break
                }
                let token = UnsafeBufferPointer(rebasing: buffer[start..<position])
                if !batched(token) {
                    let length = position - start
                    other(String(decoding: UnsafeBufferPointer(rebasing: token.prefix(keep)), as: UTF8.self),
                          fullLength: length > keep ? length : nil)
                }
            }
            // What was read is answered now (a number typed at a terminal must not wait for more input).
            closeChunk()
            flushBatch()
        }
        var ended = false
        if let prefix {
            prefix.bytes.withUnsafeBufferPointer { consume($0) }
            ended = prefix.endsInput
        }
        while !ended {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(0, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                endToken()
                closeChunk()
                flushBatch()
                finish("cannot read standard input: \(String(cString: strerror(errno)))")
                return
            }
            if count == 0 { break }
            chunk.withUnsafeBufferPointer { consume(UnsafeBufferPointer(rebasing: $0[..<count])) }
        }
        endToken()
        closeChunk()
        flushBatch()
        finish(nil)
    }
}

/// Standard input a run has already read (the plain `factor` path hands over at the first number it does not take).
struct StandardInputPrefix: Sendable {
    var bytes: [UInt8]
    /// The end of input was reached: nothing more is read.
    var endsInput: Bool
}
