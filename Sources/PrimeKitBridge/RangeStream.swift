import PrimeKit
import Synchronization

/// Sends one range job's blocks as `job/rangeBlock` notifications, in order, under the client's credit
/// (docs/protocol.md, "job/rangeBlock" and "job/ack"): block `seq` goes out only once the client has acknowledged
/// block `seq - window` (`job/ack`). While it waits, it does not read the job's blocks, so the engine's buffer fills
/// and the job stops being scheduled: a client that does not acknowledge holds at most `window` blocks in the
/// outbox, the engine's four in its buffer and one here.
///
/// A block is committed to the job (a checkpoint continues after it) when the client acknowledges it, so a job
/// restored from a checkpoint repeats the blocks sent but not acknowledged, and skips none. When the job fails or
/// is cancelled nothing more is sent (blocks past the checkpoint are dropped) and its `job/finished` follows.
/// After a success the credit rule holds to the last block.
final class RangeStream: Sendable {
    /// Blocks the server sends beyond the last one acknowledged.
    static let window: UInt64 = 4

    let job: Job
    private let outbox: Outbox
    private let ended: @Sendable (JobID) -> Void

    private struct State {
        var sent: UInt64 = 0
        var acknowledged: UInt64 = 0
        /// Blocks sent and not acknowledged, in order (at most `window`): committed to the job when acknowledged.
        var unacknowledged: [RangeBlock] = []
        var waiter: CheckedContinuation<Void, Never>?
        /// The job failed or was cancelled: what is left is sent without credit.
        var stopped = false
    }

    private let state = Mutex(State())

    /// - Parameter ended: Called once the last block (and the job's end) is queued.
    init(job: Job, outbox: Outbox, ended: @escaping @Sendable (JobID) -> Void) {
        self.job = job
        self.outbox = outbox
        self.ended = ended
    }

    /// Starts sending (the job's `job/finished` now waits for the last block).
    func start() {
        outbox.startRange(job.id)
        job.onFailure { [self] _ in stop() }
        Task { await run() }
    }

    /// `job/ack`: the client has read every block up to `seq`.
    /// - Returns: The blocks sent so far, or nil when `seq` is above that.
    func acknowledge(_ seq: UInt64) -> UInt64? {
        let (accepted, waiter, committed): (UInt64?, CheckedContinuation<Void, Never>?, [RangeBlock]) =
            state.withLock(anchoredTo: self) { s in
                guard seq <= s.sent else { return (nil, nil, []) }
                let newly = Int(seq > s.acknowledged ? seq - s.acknowledged : 0)
                s.acknowledged = max(s.acknowledged, seq)
                let committed = Array(s.unacknowledged.prefix(newly))
                s.unacknowledged.removeFirst(committed.count)
                defer { s.waiter = nil }
                return (s.sent, s.waiter, committed)
            }
        for block in committed { job.commitRangeBlock(block) }
        waiter?.resume()
        return accepted
    }

    private func stop() {
        let waiter = state.withLock(anchoredTo: self) { s in
            s.stopped = true
            defer { s.waiter = nil }
            return s.waiter
        }
        waiter?.resume()
    }

    private func run() async {
        var seq: UInt64 = 0
        do {
            for try await block in job.uncommittedRangeBlocks {
                seq += 1
                await waitForCredit(seq)
                if state.withLock(anchoredTo: self, { $0.stopped }) { break }
                var out = JSONWriter()
                out.object { out in
                    out.member("jsonrpc", string: "2.0")
                    out.member("method", string: "job/rangeBlock")
                    out.key("params")
                    out.object { out in
                        out.member("jobId", string: job.id.description)
                        WireFormat.writeRangeBlockMembers(block, seq: seq, into: &out)
                    }
                }
                state.withLock(anchoredTo: self) { s in
                    s.sent = seq
                    s.unacknowledged.append(block)
                }
                outbox.rangeBlock(job.id, out.bytes + [0x0A])
            }
        } catch {
            // The job failed or was cancelled: its job/finished says why.
        }
        ended(job.id)
        outbox.endRange(job.id)
    }

    /// Returns once block `seq` may be sent: within the window, or the job stopped.
    private func waitForCredit(_ seq: UInt64) async {
        while true {
            let wait: Bool = state.withLock(anchoredTo: self) { s in !(s.stopped || seq <= s.acknowledged + Self.window) }
            guard wait else { return }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock(anchoredTo: self) { s -> Bool in
                    if s.stopped || seq <= s.acknowledged + Self.window { return true }
                    s.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        }
    }
}
