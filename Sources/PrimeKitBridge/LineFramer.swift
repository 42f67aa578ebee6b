/// Splits a byte stream into protocol lines: `\n` ends a line, a `\r` before it is dropped, blank lines are
/// skipped. A line longer than the limit is reported once and its bytes are dropped as they arrive — never
/// buffered whole.
package struct LineFramer {
    /// The longest line kept, in bytes (without its line ending).
    package let maxLineBytes: Int
    private var partial: [UInt8] = []
    private var discarding = false

    package init(maxLineBytes: Int) {
        self.maxLineBytes = maxLineBytes
    }

    /// Feeds the next chunk of input.
    /// - Parameters:
    ///   - chunk: Bytes as read.
    ///   - line: Called with each complete, non-blank line (a view valid only during the call).
    ///   - tooLong: Called once per over-long line, as soon as it passes the limit.
    package mutating func feed(_ chunk: UnsafeBufferPointer<UInt8>, line: (UnsafeBufferPointer<UInt8>) -> Void,
                              tooLong: () -> Void) {
        var start = 0
        while start < chunk.count {
            let rest = UnsafeBufferPointer(rebasing: chunk[start...])
            guard let newline = rest.firstIndex(of: 0x0A) else {
                append(rest, tooLong: tooLong)
                return
            }
            let piece = UnsafeBufferPointer(rebasing: rest[..<newline])
            start += newline + 1
            if discarding {
                discarding = false
                continue
            }
            if partial.isEmpty {
                guard piece.count <= maxLineBytes + 1 else {  // + 1: a trailing \r does not count
                    tooLong()
                    continue
                }
                emit(piece, line: line, tooLong: tooLong)
            } else {
                append(piece, tooLong: tooLong)
                if discarding {
                    discarding = false
                    continue
                }
                let whole = partial
                partial.removeAll(keepingCapacity: whole.count <= 1 << 20)
                whole.withUnsafeBufferPointer { emit($0, line: line, tooLong: tooLong) }
            }
        }
    }

    /// The input ended: a last line without a newline is still a line.
    package mutating func finish(line: (UnsafeBufferPointer<UInt8>) -> Void, tooLong: () -> Void) {
        defer {
            partial = []
            discarding = false
        }
        guard !discarding, !partial.isEmpty else { return }
        partial.withUnsafeBufferPointer { emit($0, line: line, tooLong: tooLong) }
    }

    private mutating func append(_ bytes: UnsafeBufferPointer<UInt8>, tooLong: () -> Void) {
        guard !discarding else { return }
        if partial.count + bytes.count > maxLineBytes + 1 {
            partial.removeAll()
            discarding = true
            tooLong()
            return
        }
        partial.append(contentsOf: bytes)
    }

    private func emit(_ piece: UnsafeBufferPointer<UInt8>, line: (UnsafeBufferPointer<UInt8>) -> Void,
                      tooLong: () -> Void) {
        var end = piece.count
        if end > 0, piece[end - 1] == 0x0D { end -= 1 }
        if end > maxLineBytes {
            tooLong()
            return
        }
        let trimmed = UnsafeBufferPointer(rebasing: piece[..<end])
        if trimmed.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return }  // blank
        line(trimmed)
    }
}
