import PrimeKit

/// checkpoint/split and checkpoint/merge (protocol minor 3): a complete job's ECM curves as share checkpoints that
/// run on other servers, and back (docs/protocol.md).
extension BridgeServer {
    /// `{checkpoint, count}` → `{shares}`: the job's checkpoint cut into `count` ECM share checkpoints.
    func splitCheckpoint(_ params: Params) throws(RPCError) -> Answer {
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

    /// `{shares}` → `{checkpoint, merged}`: one set of share checkpoints as the job they stand for.
    func mergeCheckpoints(_ params: Params) throws(RPCError) -> Answer {
        guard let value = params["shares"] else { throw RPCError.invalidParams("shares", "is required", got: nil) }
        guard case .array(let items) = value, (2...Checkpoint.maxEcmShares).contains(items.count) else {
            throw RPCError.invalidParams("shares", "must be an array of 2 to \(Checkpoint.maxEcmShares) checkpoints",
                                         got: value)
        }
        var shares: [Checkpoint] = []
        for (index, item) in items.enumerated() {
            guard case .string(let text) = item else {
                throw RPCError.invalidParams("shares", "item \(index + 1) must be a checkpoint's text", got: item)
            }
            do {
                shares.append(try Checkpoint(text: text))
            } catch {
                throw RPCError.from(PrimeKitError(code: error.code,
                                                  message: "share \(index + 1) of \(items.count): \(error.message)"),
                                    field: "shares")
            }
        }
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
}
