import PrimeKit

/// checkpoint/split and checkpoint/merge (protocol minor 3): a complete job's ECM curves as share checkpoints that
/// run on other servers, and back; (minor 4) a trial-division job's divisor range as piece checkpoints, and back to
/// the one job's answer (docs/protocol.md).
extension BridgeServer {
    /// `{checkpoint, count}` → `{shares}`: the job's checkpoint cut into `count` ECM share checkpoints;
    /// with `pieces`, divisor pieces (``splitDivisorRange(_:)``).
    func splitCheckpoint(_ params: Params) throws(RPCError) -> Answer {
        if params["pieces"] != nil { return try splitDivisorRange(params) }
        let text = try params.requiredString("checkpoint")
        guard let count = try params.integer("count", in: 2...Checkpoint.maxEcmShares) else {
            throw RPCError.invalidParams("count", "is required", got: nil)
        }
        let shares: [Checkpoint]
        do {
            shares = try Checkpoint(text: text).ecmShares(count: count)
        } catch {
            throw RPCError.from(error, field: "checkpoint")
        }
        return .ok { out in
            out.key("shares")
            out.array { out in for share in shares { out.string(share.text) } }
        }
    }

    /// `{shares}` → `{checkpoint, merged}`: one set of share checkpoints as the job they stand for; with
    /// `pieces`, divisor pieces (``mergeDivisorPieces(_:)``).
    func mergeCheckpoints(_ params: Params) throws(RPCError) -> Answer {
        if params["pieces"] != nil {
            if params["shares"] != nil {
                throw RPCError.invalidParams("shares", "does not go with pieces (ECM shares or divisor pieces)",
                                             got: params["shares"])
            }
            return try mergeDivisorPieces(params)
        }
        let shares = try Self.checkpoints(params, "shares", in: 2...Checkpoint.maxEcmShares, each: "share")
        let merged: Checkpoint
        let layout: Checkpoint.EcmShareLayout
        do {
            merged = try Checkpoint.mergingEcmShares(shares)
            layout = try merged.ecmShareLayout()
        } catch {
            throw RPCError.from(error, field: "shares")
        }
        return .ok { out in
            out.member("checkpoint", string: merged.text)
            if case .shares = layout { out.member("merged", bool: false) } else { out.member("merged", bool: true) }
        }
    }

    /// `{candidate, from?, bound?, pieces}` or `{checkpoint, pieces}` → `{from, bound, pieces: [{from, bound,
    /// checkpoint}]}`: a trial-division factor job's range cut into divisor piece checkpoints.
    private func splitDivisorRange(_ params: Params) throws(RPCError) -> Answer {
        guard let count = try params.integer("pieces", in: 1...Checkpoint.maxDivisorPieces) else {
            throw RPCError.invalidParams("pieces", "is required", got: nil)
        }
        if params["count"] != nil {
            throw RPCError.invalidParams("count", "does not go with pieces (ECM shares or divisor pieces)",
                                         got: params["count"])
        }
        let pieces: [Checkpoint]
        if let value = params["checkpoint"] {
            for field in ["candidate", "from", "bound"] where params[field] != nil {
                throw RPCError.invalidParams(field, "not allowed with a checkpoint (it holds the job's own)",
                                             got: params[field])
            }
            guard case .string(let text) = value else {
                throw RPCError.invalidParams("checkpoint", "must be the checkpoint's text", got: value)
            }
            do {
                pieces = try Checkpoint(text: text).divisorPieces(count: count)
            } catch {
                throw RPCError.from(error, field: "checkpoint")
            }
        } else {
            let candidate = try candidate(params)
            let from = try params.decimal("from")
            let bound = try params.decimal("bound")
            do {
                pieces = try Checkpoint.divisorPieces(candidate: candidate, from: from, bound: bound, count: count,
                                                      maxDigits: min(limits.maxDigits, engine.settings.effective.maxDigits))
            } catch where error.code == .invalidOptions {
                let field = params["bound"] != nil ? "bound" : (params["from"] != nil ? "from" : "candidate")
                throw RPCError.invalidParams(field, error.message, got: params[field])
            } catch {
                throw RPCError.from(error, field: "candidate")
            }
        }
        return .ok { out in
            out.member("from", string: pieces.first?.divisorRange?.from ?? "2")
            out.member("bound", string: pieces.last?.divisorRange?.bound ?? "1")
            out.key("pieces")
            out.array { out in
                for piece in pieces {
                    out.object { out in
                        out.member("from", string: piece.divisorRange?.from ?? "2")
                        out.member("bound", string: piece.divisorRange?.bound ?? "1")
                        out.member("checkpoint", string: piece.text)
                    }
                }
            }
        }
    }

    /// `{pieces}` → `{checkpoint, merged, result | needed}`: divisor piece checkpoints of one job as that job; its
    /// answer when they decide it, else the ranges of the pieces still needed.
    private func mergeDivisorPieces(_ params: Params) throws(RPCError) -> Answer {
        let pieces = try Self.checkpoints(params, "pieces", in: 1...Checkpoint.maxDivisorPieces, each: "piece")
        let merge: Checkpoint.DivisorMerge
        do {
            merge = try Checkpoint.mergingDivisorPieces(pieces)
        } catch {
            throw RPCError.from(error, field: "pieces")
        }
        return .ok { out in
            out.member("checkpoint", string: merge.checkpoint.text)
            out.member("merged", bool: merge.result != nil)
            if let result = merge.result {
                out.key("result")
                WireFormat.write(result, into: &out)
            } else {
                out.key("needed")
                out.array { out in
                    for range in merge.needed {
                        out.object { out in
                            out.member("from", string: String(range.from))
                            out.member("bound", string: String(range.bound))
                        }
                    }
                }
            }
        }
    }

    /// The array of checkpoint texts in `field`, `range` of them, each read (its error names its place: `each` i of n).
    private static func checkpoints(_ params: Params, _ field: String, in range: ClosedRange<Int>, each: String)
        throws(RPCError) -> [Checkpoint]
    {
        guard let value = params[field] else { throw RPCError.invalidParams(field, "is required", got: nil) }
        guard case .array(let items) = value, range.contains(items.count) else {
            throw RPCError.invalidParams(field, "must be an array of \(range.lowerBound) to \(range.upperBound) "
                                         + "checkpoints", got: value)
        }
        var out: [Checkpoint] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                throw RPCError.invalidParams(field, "item \(index + 1) must be a checkpoint's text", got: item)
            }
            do {
                out.append(try Checkpoint(text: text))
            } catch {
                throw RPCError.from(PrimeKitError(code: error.code,
                                                  message: "\(each) \(index + 1) of \(items.count): \(error.message)"),
                                    field: field)
            }
        }
        return out
    }
}
