/// A job's resumable state as portable, versioned text. It can be stored, sent to another process or machine, and
/// submitted again with ``JobRequest/restore(_:)``.
///
/// The text wraps one kernel checkpoint per piece of the job's divisor range (one piece unless the job was split
/// over several workers), so one checkpoint restores the whole job:
/// ```
/// primekit-job-checkpoint 1
/// kind isPrime
/// pieces 2
/// piece 2 2147483643 <length>
/// <kernel checkpoint text, exactly length bytes>
/// piece 2147483644 4294967285 <length>
/// <kernel checkpoint text>
/// ```
/// A bare kernel checkpoint (as the C API writes it) is accepted too, as a one-piece `factor` job.
public struct Checkpoint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// One piece of the divisor range and its kernel checkpoint.
    struct Piece: Sendable, Hashable {
        var from: String?
        var bound: String?
        var kernelText: String
    }

    static let header = "primekit-job-checkpoint 1"

    /// The checkpoint text.
    public let text: String
    /// What the restored job computes.
    public let kind: JobKind
    let pieces: [Piece]

    /// Parses checkpoint text. The kernel checks each piece's contents (checksum, consistency) when the checkpoint
    /// is submitted.
    /// - Parameter text: Text from ``text`` or a bare kernel checkpoint.
    /// - Throws: ``PrimeKitError`` with code `invalidCheckpoint` or `unsupportedCheckpointVersion`.
    public init(text: String) throws(PrimeKitError) {
        self.text = text
        if text.hasPrefix("primekit-job-checkpoint ") {
            (kind, pieces) = try Self.parse(Array(text.utf8))
        } else {
            guard !text.isEmpty else { throw Self.malformed("empty checkpoint") }
            kind = .factor
            pieces = [Piece(from: nil, bound: nil, kernelText: text)]
        }
    }

    init(kind: JobKind, pieces: [Piece]) {
        var text = Self.header + "\nkind \(kind.rawValue)\npieces \(pieces.count)\n"
        for piece in pieces {
            text += "piece \(piece.from ?? "-") \(piece.bound ?? "-") \(piece.kernelText.utf8.count)\n"
            text += piece.kernelText + "\n"
        }
        self.text = text
        self.kind = kind
        self.pieces = pieces
    }

    public var description: String { text }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        try self.init(text: text)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(text)
    }

    public static func == (lhs: Checkpoint, rhs: Checkpoint) -> Bool { lhs.text == rhs.text }
    public func hash(into hasher: inout Hasher) { hasher.combine(text) }

    private static func malformed(_ reason: String) -> PrimeKitError {
        PrimeKitError(code: .invalidCheckpoint, message: "checkpoint is malformed: \(reason)")
    }

    /// Reads the envelope: a byte cursor over the UTF-8 text.
    private static func parse(_ bytes: [UInt8]) throws(PrimeKitError) -> (JobKind, [Piece]) {
        var position = 0
        func line() throws(PrimeKitError) -> [Substring] {
            guard let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n")) else {
                throw malformed("truncated")
            }
            let text = String(decoding: bytes[position..<end], as: UTF8.self)
            position = end + 1
            return text.split(separator: " ", omittingEmptySubsequences: false)
        }
        let header = try line()
        guard header.count == 2, header[0] == "primekit-job-checkpoint" else { throw malformed("bad header") }
        guard header[1] == "1" else {
            throw PrimeKitError(code: .unsupportedCheckpointVersion,
                                message: "checkpoint format version \(header[1]) is not supported")
        }
        let kindLine = try line()
        guard kindLine.count == 2, kindLine[0] == "kind", let kind = JobKind(rawValue: String(kindLine[1])) else {
            throw malformed("bad kind line")
        }
        let countLine = try line()
        guard countLine.count == 2, countLine[0] == "pieces", let count = Int(countLine[1]), (1...4096).contains(count)
        else { throw malformed("bad pieces line") }
        var pieces: [Piece] = []
        for _ in 0..<count {
            let pieceLine = try line()
            guard pieceLine.count == 4, pieceLine[0] == "piece", let length = Int(pieceLine[3]), length >= 0,
                  position + length < bytes.count, bytes[position + length] == UInt8(ascii: "\n")
            else { throw malformed("bad piece") }
            func range(_ field: Substring) throws(PrimeKitError) -> String? {
                if field == "-" { return nil }
                guard CandidateText.isCanonical(field) else { throw malformed("bad piece range") }
                return String(field)
            }
            let kernelText = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
            position += length + 1
            pieces.append(Piece(from: try range(pieceLine[1]), bound: try range(pieceLine[2]), kernelText: kernelText))
        }
        guard position == bytes.count else { throw malformed("trailing data") }
        return (kind, pieces)
    }
}
