/// Cutting a complete job's checkpoint into ECM share checkpoints that run anywhere, and putting them together again
/// (docs/queue.md, "Shares in other processes").
///
/// A share checkpoint is an ordinary job checkpoint of one piece, that piece an ECM share (kernel checkpoint version
/// 3): submitted as a job, it runs its share's curves and finishes with a factor result whose ``FactorResult/ecmShare``
/// says whether it found a factor and carries its final checkpoint.
extension Checkpoint {
    /// The most shares a checkpoint is cut into.
    public static let maxEcmShares = 64

    /// What a checkpoint holds, as far as ECM shares go.
    public enum EcmShareLayout: Sendable, Hashable {
        /// One piece that is not a share: a whole job (its stage says whether it can be cut now).
        case whole(stage: String)
        /// One ECM share alone: its index and the size of its set.
        case share(index: Int, count: Int)
        /// Every share of one set (a job the engine split over its workers, or shares put together unfinished).
        case shares(count: Int)
        /// Anything else: several pieces of a divisor range, a range job.
        case other
    }

    /// What this checkpoint holds, as far as ECM shares go.
    public func ecmShareLayout() throws(PrimeKitError) -> EcmShareLayout {
        try restoredLayout().layout
    }

    /// The layout and the first piece's kernel job, restored once for both.
    private func restoredLayout() throws(PrimeKitError) -> (layout: EcmShareLayout, kernel: KernelJob?) {
        guard kind != .factorRange, let first = pieces.first else { return (.other, nil) }
        let kernel = try KernelJob.restore(first.kernelText, limits: Self.shareLimits)
        if let info = kernel.shareInfo() {
            return (pieces.count == 1 ? .share(index: info.index, count: info.count) : .shares(count: pieces.count),
                    kernel)
        }
        return (pieces.count == 1 ? .whole(stage: kernel.progress().stage.name) : .other, kernel)
    }

    /// Cuts the checkpoint of a complete `factor` job into `count` share checkpoints that together run exactly the
    /// ECM curves the job would run next (`pk_job_ecm_share`); a checkpoint that holds a set of shares already
    /// (the engine's own, or ``mergingEcmShares(_:)``'s of shares not yet over) gives them one by one, however many.
    /// - Throws: ``PrimeKitError`` `invalidOptions` when the checkpoint is not of a complete factor job without a
    ///   time limit, or is one share already; `invalidState` when the job's next piece
    ///   is not an ECM piece (its stage is in the message): it can be cut once it stands in ECM.
    public func ecmShares(count: Int) throws(PrimeKitError) -> [Checkpoint] {
        guard (2...Self.maxEcmShares).contains(count) else {
            throw PrimeKitError(code: .invalidOptions, message: "a job is cut into 2 to \(Self.maxEcmShares) ECM shares, not \(count)")
        }
        guard kind == .factor else {
            throw PrimeKitError(code: .invalidOptions, message: "only a factor job is cut into ECM shares, not \(kind.rawValue)")
        }
        guard mode == .complete else {
            throw PrimeKitError(code: .invalidOptions, message: "a trial-division job has no ECM curves to cut into shares")
        }
        guard timeLimit == nil else {
            throw PrimeKitError(code: .invalidOptions, message: "a job with a time limit is not cut into ECM shares")
        }
        let (layout, restored) = try restoredLayout()
        switch layout {
        case .share(let index, let total):
            throw PrimeKitError(code: .invalidOptions, message: "the checkpoint is ECM share \(index + 1) of \(total) already")
        case .shares:
            // Shares in the middle of their pass cannot be cut again: they go on as they are, whatever `count` says.
            return pieces.map { Checkpoint(kind: .factor, pieces: [$0]) }
        case .other:
            throw PrimeKitError(code: .invalidOptions, message: "the checkpoint is not of one complete job")
        case .whole(let stage):
            guard let kernel = restored, let shares = try kernel.ecmShares(count: count) else {
                throw PrimeKitError(code: .invalidState, message: "the job is not at an ECM piece (its stage: \(stage))")
            }
            var out: [Checkpoint] = []
            for share in shares { out.append(Checkpoint(kind: .factor, pieces: [try Piece(share)])) }
            return out
        }
    }

    /// Puts share checkpoints of one set (one of each index, in any order; each from ``ecmShares(count:)``, a
    /// paused share job or a share's ``FactorResult/ecmShare``) together again: when a share found a factor or all
    /// are over, the one-piece checkpoint of the job they stand for, continued (`pk_job_ecm_merge`: the part is split
    /// on the factor of the earliest curve); otherwise the checkpoint of the set as one job, which runs the shares
    /// that are not over and merges them itself (and which ``ecmShares(count:)`` cuts into the same shares again).
    /// - Throws: ``PrimeKitError`` `inconsistentCheckpoint` when a checkpoint is not one share alone, or the shares
    ///   are not one set of one job's state (another count, an index missing or twice, another job or part).
    public static func mergingEcmShares(_ shares: [Checkpoint]) throws(PrimeKitError) -> Checkpoint {
        guard (2...maxEcmShares).contains(shares.count) else {
            throw inconsistent("a set has 2 to \(maxEcmShares) ECM shares, not \(shares.count)")
        }
        var kernels: [(index: Int, kernel: KernelJob, piece: Piece)] = []
        for (position, share) in shares.enumerated() {
            let name = "checkpoint \(position + 1) of \(shares.count)"
            guard share.kind == .factor, share.pieces.count == 1, share.timeLimit == nil else {
                throw inconsistent("\(name) is not one ECM share alone")
            }
            let kernel = try KernelJob.restore(share.pieces[0].kernelText, limits: shareLimits)
            guard let info = kernel.shareInfo() else { throw inconsistent("\(name) is not an ECM share") }
            guard info.count == shares.count else {
                throw inconsistent("\(name) is share \(info.index + 1) of \(info.count), not of \(shares.count)")
            }
            if kernels.contains(where: { $0.index == info.index }) {
                throw inconsistent("share \(info.index + 1) of \(info.count) is given twice")
            }
            kernels.append((info.index, kernel, share.pieces[0]))
        }
        kernels.sort { $0.index < $1.index }
        do {
            let merged = try KernelJob.mergeShares(kernels.map(\.kernel))
            return Checkpoint(kind: .factor, pieces: [try Piece(merged)])
        } catch where error.code == .notFinished {
            // No factor and a share not over: the set stays a set, one job's checkpoint.
            return Checkpoint(kind: .factor, pieces: kernels.map(\.piece))
        } catch where error.code == .invalidOptions {
            throw inconsistent("the ECM shares are not one set of one job's state")
        }
    }

    /// Limits for reading checkpoints here: any length (the checkpoint was accepted), the default BPSW limit.
    private static var shareLimits: KernelLimits {
        KernelLimits(maxDigits: Int.max, bpswDigits: KernelLimits.defaults.bpswDigits)
    }
}
