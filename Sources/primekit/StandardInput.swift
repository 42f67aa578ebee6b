// Reads whitespace-separated tokens from standard input on a thread of its own, so a number typed at a terminal is
// answered at once, a million-digit number is read in chunks, and a huge file is read no faster than it is used.

import Dispatch
import Foundation
import PrimeKitBridge

final class StandardInput: @unchecked Sendable {
    /// A token, possibly cut short: a token longer than the longest candidate is kept only up to that length.
    struct Token: Sendable {
        var text: String
        var fullLength: Int?
    }

    /// How many tokens may be read ahead of their use.
    private let permits = DispatchSemaphore(value: 4096)
    private let keep = CandidateCheck.maxDigits + 1

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

    /// One permit per token handed over; the consumer returns them as it uses tokens.
    func used(_ count: Int) {
        for _ in 0..<count { permits.signal() }
    }

    private func read(deliver: @Sendable ([Token]) -> Void, finish: @Sendable (String?) -> Void) {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var current: [UInt8] = []
        var currentLength = 0
        var batch: [Token] = []
        func endToken() {
            guard currentLength > 0 else { return }
            let text = String(decoding: current, as: UTF8.self)
            batch.append(Token(text: text, fullLength: currentLength > current.count ? currentLength : nil))
            current.removeAll(keepingCapacity: currentLength < 1 << 20)
            currentLength = 0
        }
        func flushBatch() {
            // One permit per token. When none is free, hand over what is held first: the consumer returns
            // permits only for tokens it has received.
            var ready: [Token] = []
            for token in batch {
                if permits.wait(timeout: .now()) == .timedOut {
                    if !ready.isEmpty {
                        deliver(ready)
                        ready.removeAll()
                    }
                    permits.wait()
                }
                ready.append(token)
            }
            if !ready.isEmpty { deliver(ready) }
            batch.removeAll()
        }
        while true {
            let count = chunk.withUnsafeMutableBytes { Foundation.read(0, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                endToken()
                flushBatch()
                finish("cannot read standard input: \(String(cString: strerror(errno)))")
                return
            }
            if count == 0 { break }
            for byte in chunk[0..<count] {
                switch byte {
                case 0x20, 0x09, 0x0A, 0x0B, 0x0C, 0x0D:
                    endToken()
                default:
                    if current.count < keep { current.append(byte) }
                    currentLength += 1
                }
            }
            flushBatch()
        }
        endToken()
        flushBatch()
        finish(nil)
    }
}
