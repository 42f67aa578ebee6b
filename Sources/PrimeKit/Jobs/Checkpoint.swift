/// A job's resumable state as portable, versioned text. It can be stored, sent to another process or machine, and
/// submitted again with ``JobRequest/restore(_:)``.
///
/// The text wraps one kernel checkpoint per piece of the job's divisor range (one piece unless the job was split
/// over several workers), so one checkpoint restores the whole job, and ends with a checksum of everything before it:
/// ```
/// primekit-job-checkpoint 2
/// kind isPrime
/// pieces 2
/// piece 2 2147483643 <length>
/// <kernel checkpoint text, exactly length bytes>
/// piece 2147483644 4294967285 <length>
/// <kernel checkpoint text>
/// time <limit ns> <running ns>        (only for a complete job with a time limit)
/// checksum <16 hex digits: FNV-1a 64 of every byte before this line>
/// ```
/// Each `piece` line gives the range of the kernel checkpoint after it. A checkpoint is accepted only whole and
/// consistent: the checksum matches, the pieces tile one range in order (no gap, no overlap), each `piece` line agrees
/// with its kernel checkpoint (which the kernel checks on its own), every piece is of the same candidate, and the
/// factors the pieces found agree. Anything else is refused with a message saying what is wrong; a changed checkpoint
/// never restores to a different answer.
///
/// Version 1 (without the checksum line, written by earlier versions) is refused: nothing in it would reveal a dropped
/// first or last piece, or a changed `kind`. A bare kernel checkpoint (as the C API writes it, with its own checksum)
/// is accepted as the one-piece `factor` job it describes.
public struct Checkpoint: Sendable, Hashable, Codable, CustomStringConvertible {
    /// One piece of the divisor range and its kernel checkpoint.
    struct Piece: Sendable, Hashable {
        /// The first divisor (the kernel's resolved range), or nil for a bare kernel checkpoint.
        var from: String?
        /// The last divisor, or nil for a bare kernel checkpoint.
        var bound: String?
        var kernelText: String

        init(from: String?, bound: String?, kernelText: String) {
            self.from = from
            self.bound = bound
            self.kernelText = kernelText
        }

        /// The piece of a kernel job at rest: its checkpoint text and the range the kernel resolved.
        init(_ kernel: KernelJob) throws(PrimeKitError) {
            let range = kernel.range()
            self.init(from: String(range.from), bound: String(range.bound), kernelText: try kernel.checkpoint())
        }
    }

    static let header = "primekit-job-checkpoint 2"
    /// The first line of a kernel checkpoint of an ECM share (`pk_job_ecm_share`).
    static let shareHeader = "primekit-checkpoint 3\n"

    /// The checkpoint text.
    public let text: String
    /// What the restored job computes.
    public let kind: JobKind
    let pieces: [Piece]
    /// A complete job's time limit in nanoseconds, if it has one.
    let timeLimit: Int64?
    /// The running time the job had used of its time limit, in nanoseconds (0 without one).
    let runningTime: Int64
    /// A range job's count of primes among the numbers delivered before the checkpoint (its `primes` line).
    let rangePrimes: UInt64
    /// A range job's first number not committed by its consumer, when the sieve had computed past it (its `redo`
    /// line): a restored job computes from there again.
    let rangeRedo: UInt64?

    /// Parses checkpoint text and checks it whole: the envelope's checksum and consistency, and every kernel
    /// checkpoint in it (restored once by the kernel, which checks its checksum and state).
    /// - Parameter text: Text from ``text`` or a bare kernel checkpoint.
    /// - Throws: ``PrimeKitError`` with code `invalidCheckpoint`, `unsupportedCheckpointVersion` or
    ///   `inconsistentCheckpoint`, and a message saying what is wrong.
    public init(text: String) throws(PrimeKitError) {
        self.text = text
        if text.hasPrefix("primekit-job-checkpoint ") {
            (kind, pieces, timeLimit, runningTime, rangePrimes, rangeRedo) = try Self.parse(Array(text.utf8))
        } else {
            rangePrimes = 0
            rangeRedo = nil
            guard !text.isEmpty else { throw Self.malformed("empty checkpoint") }
            kind = .factor
            pieces = [Piece(from: nil, bound: nil, kernelText: text)]
            timeLimit = nil
            runningTime = 0
        }
        if kind == .factorRange {
            try Self.checkRange(pieces, redo: rangeRedo)
            return
        }
        let limits = KernelLimits(maxDigits: Int.max, bpswDigits: KernelLimits.defaults.bpswDigits)
        var kernels: [KernelJob] = []
        for (index, piece) in pieces.enumerated() {
            do {
                kernels.append(try KernelJob.restore(piece.kernelText, limits: limits))
            } catch {
                if pieces.count == 1 { throw error }
                throw PrimeKitError(code: error.code, message: "piece \(index + 1) of \(pieces.count): \(error.message)")
            }
        }
        _ = try Self.check(pieces, kernels: kernels)
        if kind != .factor, kernels.count == 1, kernels[0].shareInfo() != nil {
            throw Self.inconsistent("an ECM share alone is a factor job, not \(kind.rawValue)")
        }
    }

    /// The piece text of a range job reaching 2^64 (no sieve covers it): its ends and the first number not
    /// delivered, all canonical decimal, under the envelope's checksum.
    static func widePosition(first: String, last: String, next: String) -> String {
        "primekit-range-wide 1\nfirst \(first)\nlast \(last)\nnext \(next)\n"
    }

    /// Reads a wide range position: nil when the text is not one (a sieve's checkpoint), else its ends and next
    /// number, checked (2 <= first <= last, last >= 2^64, fewer than 2^128 numbers, first <= next <= last + 1).
    static func parseWidePosition(_ text: String) throws(PrimeKitError)
        -> (first: String, last: String, next: String)?
    {
        guard text.hasPrefix("primekit-range-wide ") else { return nil }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count == 5, lines[0] == "primekit-range-wide 1", lines[4].isEmpty else {
            throw malformed("bad wide range position")
        }
        var values: [String] = []
        for (line, key) in zip(lines[1...3], ["first", "last", "next"]) {
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0] == key, CandidateText.isCanonical(parts[1]) else {
                throw malformed("bad \(key) line in a wide range position")
            }
            values.append(String(parts[1]))
        }
        let (first, last, next) = (values[0], values[1], values[2])
        guard UInt64(last) == nil else { throw inconsistent("a wide range position below 2^64") }
        do {
            try JobPlan.checkWideRange(first: first, last: last)
        } catch {
            throw inconsistent(error.message)
        }
        guard !RangeDecimal.less(next, first), !RangeDecimal.less(RangeDecimal.adding(last, 1), next) else {
            throw inconsistent("next \(next.prefix(40)) is not in the range")
        }
        return (first, last, next)
    }

    /// Checks a range job's one piece: the sieve restores from it (the kernel checks its own checksum) and its
    /// range is the one the `piece` line gives.
    static func checkRange(_ pieces: [Piece], redo: UInt64?) throws(PrimeKitError) {
        guard pieces.count == 1 else { throw inconsistent("a range job has one piece, not \(pieces.count)") }
        if let wide = try parseWidePosition(pieces[0].kernelText) {
            guard pieces[0].from == wide.first, pieces[0].bound == wide.last else {
                throw inconsistent("the piece says \(pieces[0].from ?? "-")...\(pieces[0].bound ?? "-"), its position "
                    + "\(wide.first.prefix(40))...\(wide.last.prefix(40))")
            }
            guard redo == nil else { throw malformed("a redo line with a wide range position") }
            return
        }
        let sieve = try KernelRange(checkpoint: pieces[0].kernelText)
        let position = sieve.position()
        guard pieces[0].from == String(position.first), pieces[0].bound == String(position.last) else {
            throw inconsistent("the piece says \(pieces[0].from ?? "-")...\(pieces[0].bound ?? "-"), its range "
                + "checkpoint \(position.first)...\(position.last)")
        }
        if let redo, redo < position.first || redo - position.first >= position.done {
            throw inconsistent("redo \(redo) is not among the numbers the range checkpoint has computed")
        }
    }

    /// Checks that restored kernel jobs agree with the pieces they came from and with each other.
    /// - Returns: The candidate and every factor the pieces found (each prime once).
    static func check(_ pieces: [Piece], kernels: [KernelJob]) throws(PrimeKitError)
        -> (candidate: String, factors: [PrimeFactor])
    {
        var candidate: String?
        var found: [String: Int] = [:]
        var factors: [PrimeFactor] = []
        for (index, (piece, kernel)) in zip(pieces, kernels).enumerated() {
            let name = "piece \(index + 1) of \(pieces.count)"
            let range = kernel.range()
            if let from = piece.from, let bound = piece.bound, from != String(range.from) || bound != String(range.bound) {
                throw inconsistent("\(name) says \(from)...\(bound), its kernel checkpoint \(range.from)...\(range.bound)")
            }
            let pieceCandidate = try kernel.candidate()
            if let candidate, candidate != pieceCandidate {
                throw inconsistent("\(name) is of another candidate than piece 1")
            }
            candidate = pieceCandidate
            for factor in try kernel.factors(count: kernel.progress().factorsFound) {
                if let exponent = found[factor.prime] {
                    guard exponent == factor.exponent else {
                        throw inconsistent("the pieces disagree on the exponent of \(factor.prime)")
                    }
                    continue
                }
                found[factor.prime] = factor.exponent
                factors.append(factor)
            }
        }
        // ECM shares: one set, each index once (the kernel's merge checks that they are of one state); or one share
        // alone, run as a job of its own (Checkpoint.ecmShares(count:)).
        if let first = kernels.first?.shareInfo(), kernels.count > 1 {
            var seen = Set<Int>()
            for kernel in kernels {
                guard let info = kernel.shareInfo(), info.count == kernels.count, seen.insert(info.index).inserted else {
                    throw inconsistent("the ECM shares are not one set of \(kernels.count)")
                }
            }
            guard first.count == kernels.count else { throw inconsistent("the ECM shares are not one set") }
        }
        let text = candidate ?? ""
        if pieces.count > 1 {
            do {
                _ = try KernelJob.cofactorRoot(candidate: text, factors: factors)
            } catch {
                throw inconsistent("the factors of the pieces do not divide the candidate together")
            }
        }
        return (text, factors)
    }

    /// The checkpoint of a job's pieces at rest (each made with ``Piece/init(_:)``).
    /// - Parameters:
    ///   - timeLimit: A complete job's time limit in nanoseconds, with the running time it has used.
    init(kind: JobKind, pieces: [Piece], timeLimit: Int64? = nil, runningTime: Int64 = 0, rangePrimes: UInt64? = nil,
         rangeRedo: UInt64? = nil) {
        var text = Self.header + "\nkind \(kind.rawValue)\npieces \(pieces.count)\n"
        for piece in pieces {
            text += "piece \(piece.from ?? "-") \(piece.bound ?? "-") \(piece.kernelText.utf8.count)\n"
            text += piece.kernelText + "\n"
        }
        if let timeLimit { text += "time \(timeLimit) \(max(0, runningTime))\n" }
        if let rangePrimes { text += "primes \(rangePrimes)\n" }
        if let rangeRedo { text += "redo \(rangeRedo)\n" }
        text += TextChecksum.line(for: text.utf8)
        self.text = text
        self.kind = kind
        self.pieces = pieces
        self.timeLimit = timeLimit
        self.runningTime = timeLimit == nil ? 0 : max(0, runningTime)
        self.rangePrimes = rangePrimes ?? 0
        self.rangeRedo = rangeRedo
    }

    public var description: String { text }

    /// What the restored job computes: a complete job's kernel checkpoint (format version 2) says `mode 0`.
    var mode: FactorMode {
        guard kind != .factorRange else { return .trialDivision }
        guard let first = pieces.first else { return .trialDivision }
        return KernelJob.isComplete(checkpointText: first.kernelText) ? .complete : .trialDivision
    }

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

    static func malformed(_ reason: String) -> PrimeKitError {
        PrimeKitError(code: .invalidCheckpoint, message: "checkpoint is malformed: \(reason)")
    }

    static func inconsistent(_ reason: String) -> PrimeKitError {
        PrimeKitError(code: .inconsistentCheckpoint, message: "checkpoint is inconsistent: \(reason)")
    }

    /// Reads the envelope: a byte cursor over the UTF-8 text.
    private static func parse(_ bytes: [UInt8]) throws(PrimeKitError)
        -> (JobKind, [Piece], Int64?, Int64, UInt64, UInt64?)
    {
        var position = 0
        func line(_ end: Int) throws(PrimeKitError) -> [Substring] {
            guard let newline = bytes[position..<end].firstIndex(of: UInt8(ascii: "\n")) else {
                throw malformed("truncated")
            }
            let text = String(decoding: bytes[position..<newline], as: UTF8.self)
            position = newline + 1
            return text.split(separator: " ", omittingEmptySubsequences: false)
        }
        let header = try line(bytes.count)
        guard header.count == 2, header[0] == "primekit-job-checkpoint" else { throw malformed("bad header") }
        guard header[1] == "2" else {
            let reason = header[1] == "1"
                ? "checkpoint format version 1 has no checksum, so it cannot be validated; it is no longer accepted"
                : "checkpoint format version \(header[1]) is not supported"
            throw PrimeKitError(code: .unsupportedCheckpointVersion, message: reason)
        }
        let end: Int
        do {
            end = try TextChecksum.verify(bytes)
        } catch {
            throw malformed(error.reason)
        }
        let kindLine = try line(end)
        guard kindLine.count == 2, kindLine[0] == "kind", let kind = JobKind(rawValue: String(kindLine[1])) else {
            throw malformed("bad kind line")
        }
        let countLine = try line(end)
        guard countLine.count == 2, countLine[0] == "pieces", let count = Int(countLine[1]), (1...4096).contains(count),
              String(count) == countLine[1]
        else { throw malformed("bad pieces line") }
        var pieces: [Piece] = []
        var next: UInt64?
        for index in 0..<count {
            let pieceLine = try line(end)
            guard pieceLine.count == 4, pieceLine[0] == "piece", let length = Int(pieceLine[3]), length >= 0,
                  String(length) == pieceLine[3], length < end - position,
                  bytes[position + length] == UInt8(ascii: "\n")
            else { throw malformed("piece \(index + 1) of \(count): bad piece line or length") }
            guard CandidateText.isCanonical(pieceLine[1]), CandidateText.isCanonical(pieceLine[2]) else {
                throw malformed("piece \(index + 1) of \(count): bad range")
            }
            guard let from = UInt64(pieceLine[1]), let bound = UInt64(pieceLine[2]) else {
                // A range job reaching 2^64: one piece, its ends checked with its position (checkRange).
                guard kind == .factorRange, count == 1 else {
                    throw malformed("piece \(index + 1) of \(count): bad range")
                }
                let kernelText = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
                position += length + 1
                pieces.append(Piece(from: String(pieceLine[1]), bound: String(pieceLine[2]), kernelText: kernelText))
                continue
            }
            let kernelText = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
            // ECM shares of a complete job (kernel checkpoint version 3) all have the job's range.
            let share = kernelText.hasPrefix(Self.shareHeader)
            if index > 0, share != pieces[0].kernelText.hasPrefix(Self.shareHeader) {
                throw inconsistent("piece \(index + 1) of \(count) is \(share ? "" : "not ")an ECM share, piece 1 "
                    + "\(share ? "is not" : "is")")
            }
            if share, index > 0, String(pieceLine[1]) != pieces[0].from || String(pieceLine[2]) != pieces[0].bound {
                throw inconsistent("ECM share \(index + 1) of \(count) has another range than share 1")
            }
            // One range in order: each piece starts right after the one before. Only a one-piece job of 2 or 3 has
            // an empty range (2...1).
            if !share, let next, from != next {
                throw inconsistent(from < next
                    ? "piece \(index + 1) of \(count) overlaps the one before (it starts at \(from), not \(next))"
                    : "the pieces leave a gap from \(next) to \(from - 1)")
            }
            guard from <= bound || (count == 1 && from == 2 && bound == 1) else {
                throw malformed("piece \(index + 1) of \(count): empty range \(from)...\(bound)")
            }
            next = bound &+ 1
            position += length + 1
            pieces.append(Piece(from: String(pieceLine[1]), bound: String(pieceLine[2]), kernelText: kernelText))
        }
        var timeLimit: Int64?
        var running: Int64 = 0
        var primes: UInt64 = 0
        var redo: UInt64?
        if kind == .factorRange {
            let primesLine = try line(end)
            guard primesLine.count == 2, primesLine[0] == "primes", CandidateText.isCanonical(primesLine[1]),
                  let count = UInt64(primesLine[1])
            else { throw malformed("a range job's primes line is missing or bad") }
            primes = count
            if position < end {
                let redoLine = try line(end)
                guard redoLine.count == 2, redoLine[0] == "redo", CandidateText.isCanonical(redoLine[1]),
                      let number = UInt64(redoLine[1])
                else { throw malformed("data after a range job's primes line") }
                redo = number
            }
        } else if position < end {
            let timeLine = try line(end)
            guard timeLine.count == 3, timeLine[0] == "time", CandidateText.isCanonical(timeLine[1]),
                  CandidateText.isCanonical(timeLine[2]), let limit = Int64(timeLine[1]), limit >= 1,
                  let used = Int64(timeLine[2])
            else { throw malformed("data after the last piece") }
            guard KernelJob.isComplete(checkpointText: pieces[0].kernelText),
                  pieces.count == 1 || pieces[0].kernelText.hasPrefix(Self.shareHeader)
            else {
                throw inconsistent("a time limit on a trial-division job")
            }
            timeLimit = limit
            running = used
        }
        guard position == end else { throw malformed("data after the last piece") }
        return (kind, pieces, timeLimit, running, primes, redo)
    }
}
