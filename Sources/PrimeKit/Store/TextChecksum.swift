/// The last line of PrimeKit's text formats (job checkpoints, the command-line tool's checkpoint file; the kernel's
/// own checkpoints use the same sum): `checksum <16 lower-case hex digits>`, the FNV-1a 64 hash of every byte
/// before that line. Any one changed byte changes the sum.
public enum TextChecksum {
    /// FNV-1a 64 of `bytes`.
    static func hash(_ bytes: some Sequence<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// The checksum line (with its newline) for a text of `bytes`.
    /// - Parameter bytes: Everything the checksum line follows.
    /// - Returns: `checksum <hex>\n`.
    public static func line(for bytes: some Sequence<UInt8>) -> String {
        let hex = String(hash(bytes), radix: 16)
        return "checksum " + String(repeating: "0", count: 16 - hex.utf8.count) + hex + "\n"
    }

    /// Checks the checksum line that ends `bytes`.
    /// - Parameter bytes: A text that ends with a checksum line.
    /// - Returns: The length of the text before the checksum line.
    /// - Throws: A description of what is wrong: no checksum line, or a sum that does not match.
    public static func verify(_ bytes: [UInt8]) throws(TextChecksumError) -> Int {
        guard bytes.last == UInt8(ascii: "\n") else { throw TextChecksumError(reason: "it does not end in a checksum line") }
        let start = (bytes.dropLast().lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
        let last = bytes[start..<(bytes.count - 1)]
        let prefix = Array("checksum ".utf8)
        guard last.count == prefix.count + 16, last.starts(with: prefix) else {
            throw TextChecksumError(reason: "it does not end in a checksum line")
        }
        guard Array(line(for: bytes[..<start]).utf8) == Array(bytes[start...]) else {
            throw TextChecksumError(reason: "its checksum does not match its contents (it was changed or damaged)")
        }
        return start
    }
}

/// Why ``TextChecksum/verify(_:)`` refused a text.
public struct TextChecksumError: Error, Sendable {
    /// What is wrong, as the end of a sentence ("its checksum does not match …").
    public let reason: String
}
