@testable import PrimeKit
import Testing

/// A changed job checkpoint is refused whole, or it restores to the same answer — never to another one.
@Suite(.timeLimit(.minutes(5)), .serialized) struct CheckpointIntegrityTests {
    /// 71 · 839 · 1471 · 6857 · (10^30 + 57).
    static let fourSmallFactors = "600851475143000000000000000034248534083151"

    private func splittingQueue(workers: Int = 2) -> JobQueue {
        JobQueue.testing(workers: workers) {
            $0.splitThreshold = 1000
            $0.sliceDuration = .microseconds(500)
        }
    }

    /// Real checkpoints: a split `factor` job taken from the queue before it ran (8 pieces), the same candidate in
    /// three pieces part-way with factors found, and a one-piece `isPrime` job part-way (kernel jobs stepped by fixed
    /// budgets and wrapped as the engine wraps them, so the states do not depend on timing).
    private func realCheckpoints() async throws -> [(Checkpoint, JobResult)] {
        let queue = splittingQueue()
        let split = JobRequest.factor(Self.fourSmallFactors, bound: "200000000")
        queue.suspend()
        let fresh = try queue.submit(split)
        #expect(fresh.pieceCount == 8)
        let freshCheckpoint = try await fresh.pause()
        fresh.cancel()
        queue.resume()
        let splitAnswer = try await queue.submit(split.splitting(false)).result

        var pieces: [Checkpoint.Piece] = []
        for (from, bound) in [("2", "50000000"), ("50000001", "100000000"), ("100000001", "200000000")] {
            let kernel = try KernelJob.create(candidate: Self.fourSmallFactors, from: from, bound: bound,
                                              limits: .defaults)
            _ = try kernel.step(budget: 3_000_000)
            pieces.append(try Checkpoint.Piece(kernel))
        }
        #expect(pieces[0].kernelText.contains("factor 6857 1"))
        let partWay = Checkpoint(kind: .factor, pieces: pieces)

        let prime = "1000000000000000003"
        let kernel = try KernelJob.create(candidate: prime, from: nil, bound: "100000000", limits: .defaults)
        _ = try kernel.step(budget: 5_000_000)
        let primeCheckpoint = Checkpoint(kind: .isPrime, pieces: [try Checkpoint.Piece(kernel)])
        let primeAnswer = try await queue.submit(.isPrime(prime, bound: "100000000")).result
        return [(freshCheckpoint, splitAnswer), (partWay, splitAnswer), (primeCheckpoint, primeAnswer)]
    }

    /// Submits `text` if it parses: nil when refused, else the restored job's answer.
    private func outcome(of text: String, on queue: JobQueue) async throws -> JobResult? {
        guard let checkpoint = try? Checkpoint(text: text) else { return nil }
        guard let job = try? queue.submit(.restore(checkpoint)) else { return nil }
        return try? await job.result
    }

    @Test func everySingleCharacterChangeIsRefusedOrChangesNothing() async throws {
        let queue = splittingQueue()
        var refused = 0
        var accepted = 0
        var edits = 0
        for (checkpoint, answer) in try await realCheckpoints() {
            #expect(try Checkpoint(text: checkpoint.text) == checkpoint)
            #expect(try await outcome(of: checkpoint.text, on: queue) == answer)
            let bytes = Array(checkpoint.text.utf8)
            for index in bytes.indices {
                let byte = bytes[index]
                // A different character of the same sort, another sort, a deletion and a duplication.
                let replacement: UInt8 = switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "8"): byte + 1
                case UInt8(ascii: "9"): UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "y"): byte + 1
                default: UInt8(ascii: "x")
                }
                var changed = [bytes, bytes, bytes, bytes]
                changed[0][index] = replacement
                changed[1][index] = byte == UInt8(ascii: "\n") ? UInt8(ascii: " ") : UInt8(ascii: "\n")
                changed[2].remove(at: index)
                changed[3].insert(byte, at: index)
                for edit in changed {
                    edits += 1
                    if let result = try await outcome(of: String(decoding: edit, as: UTF8.self), on: queue) {
                        #expect(result == answer, "changed at byte \(index) and accepted with another answer")
                        accepted += 1
                    } else {
                        refused += 1
                    }
                }
            }
        }
        #expect(accepted == 0)
        #expect(refused == edits)
    }

    /// The lines of an envelope: header lines, then each piece's `piece` line and kernel text, then the checksum.
    private struct Envelope {
        var head: [String]
        var pieces: [(line: String, kernel: String)]

        init(_ text: String) {
            let bytes = Array(text.utf8)
            var position = 0
            func line() -> String {
                let end = bytes[position...].firstIndex(of: UInt8(ascii: "\n"))!
                defer { position = end + 1 }
                return String(decoding: bytes[position..<end], as: UTF8.self)
            }
            head = [line(), line(), line()]
            pieces = []
            while true {
                let start = position
                let pieceLine = line()
                guard pieceLine.hasPrefix("piece ") else {
                    position = start
                    break
                }
                let length = Int(pieceLine.split(separator: " ")[3])!
                pieces.append((pieceLine, String(decoding: bytes[position..<(position + length)], as: UTF8.self)))
                position += length + 1
            }
        }

        /// The text with `pieces N` updated; with a fresh checksum when `checksummed`.
        func text(checksummed: Bool, oldChecksum: String) -> String {
            var text = head[0] + "\n" + head[1] + "\npieces \(pieces.count)\n"
            for piece in pieces { text += piece.line + "\n" + piece.kernel + "\n" }
            return text + (checksummed ? TextChecksum.line(for: text.utf8) : oldChecksum)
        }
    }

    @Test func pieceLevelEditsAreRefused() async throws {
        let queue = splittingQueue()
        for (checkpoint, answer) in try await realCheckpoints() {
            let envelope = Envelope(checkpoint.text)
            let oldChecksum = String(checkpoint.text.split(separator: "\n").last!) + "\n"
            #expect(envelope.text(checksummed: true, oldChecksum: oldChecksum) == checkpoint.text)
            let count = envelope.pieces.count
            var edits: [(String, Envelope)] = []
            for index in 0..<count {
                var dropped = envelope
                dropped.pieces.remove(at: index)
                if !dropped.pieces.isEmpty { edits.append(("drop piece \(index + 1)", dropped)) }
                var duplicated = envelope
                duplicated.pieces.insert(envelope.pieces[index], at: index)
                edits.append(("duplicate piece \(index + 1)", duplicated))
                var kept = envelope
                kept.pieces = [envelope.pieces[index]]
                if count > 1 { edits.append(("keep only piece \(index + 1)", kept)) }
                if index + 1 < count {
                    var swapped = envelope
                    swapped.pieces.swapAt(index, index + 1)
                    edits.append(("swap pieces \(index + 1) and \(index + 2)", swapped))
                    var kernelsSwapped = envelope
                    kernelsSwapped.pieces[index].kernel = envelope.pieces[index + 1].kernel
                    kernelsSwapped.pieces[index + 1].kernel = envelope.pieces[index].kernel
                    edits.append(("swap the kernel texts of pieces \(index + 1) and \(index + 2)", kernelsSwapped))
                }
            }
            if count > 2 {
                var reversed = envelope
                reversed.pieces.reverse()
                edits.append(("reverse the pieces", reversed))
            }
            var kind = envelope
            kind.head[1] = kind.head[1] == "kind factor" ? "kind isPrime" : "kind factor"
            edits.append(("change the kind", kind))
            for (name, edit) in edits {
                // As a person with an editor would leave it: the checksum no longer matches.
                #expect(try await outcome(of: edit.text(checksummed: false, oldChecksum: oldChecksum), on: queue)
                            == nil, "\(name) was accepted")
            }
            // With the checksum made to match again, what is inconsistent is still refused: gaps, overlaps, order.
            for (name, edit) in edits where name.hasPrefix("duplicate") || name.hasPrefix("swap") || name.hasPrefix("reverse")
                || (name.hasPrefix("drop") && name != "drop piece 1" && name != "drop piece \(count)")
            {
                let text = edit.text(checksummed: true, oldChecksum: oldChecksum)
                #expect(throws: PrimeKitError.self, "\(name) with a matching checksum") { try Checkpoint(text: text) }
            }
            // A piece line that disagrees with its kernel checkpoint, the ranges still tiling.
            if count > 1 {
                var moved = envelope
                var first = moved.pieces[0].line.split(separator: " ").map(String.init)
                var second = moved.pieces[1].line.split(separator: " ").map(String.init)
                let cut = UInt64(first[2])! - 1
                first[2] = String(cut)
                second[1] = String(cut + 1)
                moved.pieces[0].line = first.joined(separator: " ")
                moved.pieces[1].line = second.joined(separator: " ")
                let text = moved.text(checksummed: true, oldChecksum: oldChecksum)
                let error = #expect(throws: PrimeKitError.self) { try Checkpoint(text: text) }
                #expect(error?.code == .inconsistentCheckpoint)
            }
            _ = answer
        }
    }

    @Test func aSplitCheckpointWithoutItsFirstPieceIsRefusedAtOnce() async throws {
        // Submitted to a suspended queue with the default configuration (8 pieces on 2 workers), paused, the first
        // piece deleted and `pieces 8` made `pieces 7`: once accepted, and answered with no factors at all.
        var configuration = JobQueue.Configuration()
        configuration.maxConcurrentJobs = 2
        let queue = JobQueue(configuration: configuration)
        queue.suspend()
        let job = try queue.submit(.factor(Self.fourSmallFactors, bound: "200000000"))
        let checkpoint = try await job.pause()
        job.cancel()
        var envelope = Envelope(checkpoint.text)
        #expect(envelope.pieces.count == 8)
        envelope.pieces.removeFirst()
        let oldChecksum = String(checkpoint.text.split(separator: "\n").last!) + "\n"
        let text = envelope.text(checksummed: false, oldChecksum: oldChecksum)
        #expect(text.contains("\npieces 7\n"))
        let error = #expect(throws: PrimeKitError.self) { try Checkpoint(text: text) }
        #expect(error?.code == .invalidCheckpoint)
        #expect(error?.message.contains("checksum") == true)
    }

    @Test func versionOneEnvelopesAreRefusedAndBareKernelCheckpointsAccepted() async throws {
        let queue = splittingQueue()
        queue.suspend()
        let job = try queue.submit(.factor(Medium.semiprime, bound: "100000"))
        let checkpoint = try await job.pause()
        job.cancel()
        queue.resume()
        var lines = checkpoint.text.split(separator: "\n", omittingEmptySubsequences: false)
        lines[0] = "primekit-job-checkpoint 1"
        lines.removeLast(2)  // the checksum line and the empty string after its newline
        let old = lines.joined(separator: "\n") + "\n"
        let error = #expect(throws: PrimeKitError.self) { try Checkpoint(text: old) }
        #expect(error?.code == .unsupportedCheckpointVersion)
        #expect(error?.message.contains("no checksum") == true)
        // The kernel checkpoint inside, on its own, is the one-piece factor job it describes.
        let bare = Envelope(checkpoint.text).pieces[0].kernel
        let restored = try queue.submit(.restore(try Checkpoint(text: bare)))
        let answer = try #require(try await restored.result.factorization)
        #expect(answer.factors.isEmpty && answer.cofactor == Medium.semiprime && answer.cofactorStatus == .composite)
    }
}
