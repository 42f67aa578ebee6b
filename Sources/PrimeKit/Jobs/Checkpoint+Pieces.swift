/// Cutting a trial-division `factor` job's divisor range into piece checkpoints that run anywhere, and merging the
/// pieces' checkpoints into the one job's answer (docs/protocol.md, `checkpoint/split` and `checkpoint/merge`).
///
/// A divisor piece is an ordinary one-piece checkpoint of a trial-division job over a sub-range; submitted with
/// ``JobRequest/keepsFinalCheckpoint`` it finishes with its final checkpoint in ``FactorResult/finalCheckpoint``.
/// The merge puts the pieces into one checkpoint (the envelope a job split over several workers has, so it is
/// checked the same way: one candidate, ranges that tile one range in order, factors that agree) and, when the
/// pieces decide the answer, merges their kernel jobs (`pk_job_merge`): the answer is the unsplit job's.
extension Checkpoint {
    /// The most divisor pieces a job is cut into, or merged from (as many as a checkpoint holds).
    public static let maxDivisorPieces = 4096

    /// The pieces of a new trial-division `factor` job, not started.
    /// - Parameters:
    ///   - candidate: The candidate, canonical decimal.
    ///   - from: The first divisor (nil: 2).
    ///   - bound: The last divisor (nil: the kernel's default, ⌊√candidate⌋ capped at 2^32).
    ///   - count: How many pieces (1 to ``maxDivisorPieces``); fewer when the range has fewer divisors.
    ///   - maxDigits: The longest candidate accepted.
    /// - Returns: One-piece checkpoints over sub-ranges that tile the job's range in order. A range that starts at 2
    ///   ends at ⌊√candidate⌋ at the most: no divisor above it changes the answer.
    /// - Throws: ``PrimeKitError`` as ``JobQueue/submit(_:)`` refuses the job (`invalidCandidate`,
    ///   `candidateOutOfRange`, `candidateTooLarge`, `invalidOptions` for a bad or empty range or `count`).
    public static func divisorPieces(candidate: String, from: String?, bound: String?, count: Int,
                                     maxDigits: Int) throws(PrimeKitError)
        -> [Checkpoint]
    {
        try checkPieceCount(count)
        _ = try CandidateText.validateCandidate(candidate, maxDigits: maxDigits)
        try CandidateText.validateOption(from, name: "from")
        try CandidateText.validateOption(bound, name: "bound")
        let limits = KernelLimits(maxDigits: maxDigits, bpswDigits: KernelLimits.defaults.bpswDigits)
        let whole = try KernelJob.create(candidate: candidate, from: from, bound: bound, limits: limits)
        return try cut(whole, candidate: candidate, count: count, limits: limits)
    }

    /// This checkpoint's pieces, each alone: a trial-division `factor` job that has not started is cut into
    /// `count` pieces (as ``divisorPieces(candidate:from:bound:count:maxDigits:)`` cuts it); a job in several pieces
    /// (split over a server's workers, or a ``mergingDivisorPieces(_:)`` not decided yet) gives its pieces, however
    /// many, whatever `count` says.
    /// - Throws: ``PrimeKitError`` `invalidOptions` when the checkpoint is not of a trial-division `factor` job or
    ///   `count` is out of range; `invalidState` when the job is in one piece and has started (or finished).
    public func divisorPieces(count: Int) throws(PrimeKitError) -> [Checkpoint] {
        try Self.checkPieceCount(count)
        guard kind == .factor else {
            throw PrimeKitError(code: .invalidOptions, message: "only a factor job is cut into divisor pieces, not \(kind.rawValue)")
        }
        guard mode == .trialDivision else {
            throw PrimeKitError(code: .invalidOptions, message: "a complete job is cut into ECM shares (count), not divisor pieces")
        }
        if pieces.count > 1 { return pieces.map { Checkpoint(kind: .factor, pieces: [$0]) } }
        let limits = Self.readLimits
        let kernel = try KernelJob.restore(pieces[0].kernelText, limits: limits)
        let progress = kernel.progress()
        guard !progress.done, progress.workDone == 0, progress.factorsFound == 0 else {
            throw PrimeKitError(code: .invalidState, message: progress.done
                ? "the job has finished: there is nothing to cut"
                : "the job has started (next divisor \(progress.nextDivisor)): only a job not started is cut")
        }
        return try Self.cut(kernel, candidate: try kernel.candidate(), count: count, limits: limits)
    }

    /// The divisor range of a one-piece checkpoint of a job over a range (nil for a bare kernel checkpoint).
    public var divisorRange: (from: String, bound: String)? {
        guard pieces.count == 1, let from = pieces[0].from, let bound = pieces[0].bound else { return nil }
        return (from, bound)
    }

    /// What ``mergingDivisorPieces(_:)`` gives.
    public struct DivisorMerge: Sendable {
        /// The pieces as one job: one finished piece when ``result`` is set, else every piece as it stands.
        public let checkpoint: Checkpoint
        /// The job's answer when the pieces decide it — exactly the unsplit job's — else nil (submit ``checkpoint``
        /// to finish the pieces that are not over).
        public let result: FactorResult?
        /// Without a result: the ranges of the pieces that still need divisors, in order (the others have none left
        /// below the limit the factors found so far set, and never will: it only goes down).
        public let needed: [(from: UInt64, bound: UInt64)]
    }

    /// Puts divisor pieces of one trial-division `factor` job together (each a checkpoint of one or more pieces, in
    /// any order: from ``divisorPieces(count:)``, a paused piece job, or a piece job's
    /// ``FactorResult/finalCheckpoint``). The pieces decide the answer when every one has finished, or the factors
    /// they found leave a cofactor c such that no piece still needs a divisor (none above ⌊√c⌋ for a range from 2,
    /// none above c otherwise): the pieces' kernel jobs are then merged (`pk_job_merge`), and the answer is the one
    /// job's over the whole range.
    /// - Throws: ``PrimeKitError`` `invalidCheckpoint` for a changed checkpoint; `inconsistentCheckpoint` when a
    ///   checkpoint is not of a trial-division factor job, or the pieces are not of one candidate, leave a gap,
    ///   overlap, or disagree on a factor.
    public static func mergingDivisorPieces(_ checkpoints: [Checkpoint]) throws(PrimeKitError) -> DivisorMerge {
        guard (1...maxDivisorPieces).contains(checkpoints.count) else {
            throw inconsistent("a merge takes 1 to \(maxDivisorPieces) checkpoints, not \(checkpoints.count)")
        }
        var all: [(from: UInt64, piece: Piece, kernel: KernelJob)] = []
        for (position, checkpoint) in checkpoints.enumerated() {
            let name = "checkpoint \(position + 1) of \(checkpoints.count)"
            guard checkpoint.kind == .factor, checkpoint.mode == .trialDivision, checkpoint.timeLimit == nil else {
                throw inconsistent("\(name) is not of a trial-division factor job")
            }
            for piece in checkpoint.pieces {
                let kernel = try KernelJob.restore(piece.kernelText, limits: readLimits)
                let range = kernel.range()
                all.append((range.from, Piece(from: String(range.from), bound: String(range.bound),
                                              kernelText: piece.kernelText), kernel))
            }
        }
        guard all.count <= maxDivisorPieces else {
            throw inconsistent("\(all.count) pieces, more than \(maxDivisorPieces)")
        }
        all.sort { $0.from < $1.from }
        // The checks a job's checkpoint of these pieces passes (parse, check): one range in order, without gap or
        // overlap; then one candidate, and factors that agree and divide the candidate together.
        for (index, (low, high)) in zip(all, all.dropFirst()).enumerated() {
            let range = low.kernel.range()
            // Only a one-piece job of 2 or 3 has an empty range (2...1).
            guard range.from <= range.bound else {
                throw malformed("piece \(index + 1) of \(all.count): empty range \(range.from)...\(range.bound)")
            }
            let next = range.bound &+ 1
            guard high.from == next else {
                throw inconsistent(high.from < next
                    ? "piece \(index + 2) of \(all.count) overlaps the one before (it starts at \(high.from), not \(next))"
                    : "the pieces leave a gap from \(next) to \(high.from - 1)")
            }
        }
        let kernels = all.map(\.kernel)
        let (candidate, factors) = try check(all.map(\.piece), kernels: kernels)
        let envelope = Checkpoint(kind: .factor, pieces: all.map(\.piece))
        // The limit the pieces of one job share (SharedCofactor): no divisor above it changes the answer.
        let (root, cofactor) = try KernelJob.cofactorRoot(candidate: candidate, factors: factors)
        let limit = kernels[0].range().from <= 2 ? root : cofactor
        var needed: [(from: UInt64, bound: UInt64)] = []
        for kernel in kernels {
            let progress = kernel.progress()
            if progress.done { continue }
            let range = kernel.range()
            let next = progress.nextDivisor != 0 || progress.workDone != 0 ? progress.nextDivisor : range.from
            if next > limit {
                // Nothing left below the limit: the piece ends at its next step without trying a divisor.
                kernel.limit(limit)
                if try kernel.step(budget: 1) == .done { continue }
            }
            needed.append(range)
        }
        guard needed.isEmpty else { return DivisorMerge(checkpoint: envelope, result: nil, needed: needed) }
        let merged = try KernelJob.merge(kernels)
        guard case .factorization(let result) = try Scheduler.buildResult(kind: .factor, kernel: merged,
                                                                         candidate: candidate)
        else { throw PrimeKitError(code: .internalError, message: "a merged factor job gave no factor result") }
        return DivisorMerge(checkpoint: Checkpoint(kind: .factor, pieces: [try Piece(merged)]), result: result,
                            needed: [])
    }

    /// Cuts a kernel job that has not started into `count` pieces over its range (from 2: up to ⌊√candidate⌋).
    private static func cut(_ whole: KernelJob, candidate: String, count: Int, limits: KernelLimits)
        throws(PrimeKitError) -> [Checkpoint]
    {
        let range = whole.range()
        var top = range.bound
        if range.from <= 2 { top = min(top, try KernelJob.cofactorRoot(candidate: candidate, factors: []).root) }
        // A range of 2 or 3 (2...1), or one wholly above the root: the job itself, in one piece.
        guard top >= range.from, count > 1 || top != range.bound else {
            return [Checkpoint(kind: .factor, pieces: [try Piece(whole)])]
        }
        let width = UInt128(top - range.from) + 1
        let pieces = UInt128(min(UInt64(count), UInt64(min(width, UInt128(UInt64.max)))))
        var out: [Checkpoint] = []
        for index in 0..<pieces {
            let low = UInt64(UInt128(range.from) + width * index / pieces)
            let high = UInt64(UInt128(range.from) + width * (index + 1) / pieces - 1)
            let kernel = try KernelJob.create(candidate: candidate, from: String(low), bound: String(high),
                                              limits: limits)
            out.append(Checkpoint(kind: .factor, pieces: [try Piece(kernel)]))
        }
        return out
    }

    private static func checkPieceCount(_ count: Int) throws(PrimeKitError) {
        guard (1...maxDivisorPieces).contains(count) else {
            throw PrimeKitError(code: .invalidOptions, message: "a job is cut into 1 to \(maxDivisorPieces) divisor pieces, not \(count)")
        }
    }

    /// Limits for reading checkpoints here: any length (the checkpoint was accepted), the default BPSW limit.
    private static var readLimits: KernelLimits {
        KernelLimits(maxDigits: Int.max, bpswDigits: KernelLimits.defaults.bpswDigits)
    }
}
