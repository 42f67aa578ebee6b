import Foundation
import PrimeKit
@testable import PrimeKitBridge
import Testing

/// `primekit serve` end to end over pipes: end of input, signals, a state directory across SIGTERM and SIGKILL,
/// over-long lines, a client that stops reading.
@Suite struct ServeProcessTests {
    private static func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("primekit-serve-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static func startLongJob(_ server: ServerProcess, id: Int = 1) async throws -> String {
        let response = try await server.request("job/submit", longJob, id: id)
        let jobID = try #require(response["result"]?["jobId"]?.text)
        _ = try await server.log.notification { $0["method"] == .string("job/progress") && $0["params"]?["jobId"] == .string(jobID) }
        return jobID
    }

    @Test func endOfInputWithRunningJobsExitsZero() async throws {
        let server = try ServerProcess()
        _ = try await Self.startLongJob(server)
        server.closeInput()
        #expect(await server.exitStatus() == 0)
        #expect(!server.log.messages.contains { $0["method"] == .string("job/finished") })
    }

    @Test func sigtermCheckpointsAndARestartListsTheJobPausedUnderItsId() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try ServerProcess(["--state-dir", directory])
        _ = try await first.request("job/submit", #"{"kind":"isPrime","candidate":"1000003"}"#, id: 1)
        _ = try await first.log.finished("j1")
        let jobID = try await Self.startLongJob(first, id: 2)
        let progressed = try await first.request("job/status", #"{"jobId":"\#(jobID)"}"#, id: 3)
        first.signal(SIGTERM)
        #expect(await first.exitStatus() == 0)

        let second = try ServerProcess(["--state-dir", directory])
        let initialize = try await second.request("initialize", id: 1)
        #expect(initialize["result"]?["capabilities"]?["stateDirectory"] == .bool(true))
        let list = try await second.request("job/list", #"{"state":"paused"}"#, id: 2)
        #expect(list["result"]?["jobs"] == .parse(#"[{"jobId":"\#(jobID)","kind":"factor","state":"paused","progress":"$any"}]"#)
                || matches(.parse(#"[{"jobId":"\#(jobID)","kind":"factor","state":"paused","progress":"$any"}]"#), list["result"]?["jobs"]))
        let status = try await second.request("job/status", #"{"jobId":"\#(jobID)"}"#, id: 3)
        #expect(status["result"]?["state"] == .string("paused"))
        #expect(status["result"]?["checkpoint"]?.text != nil)
        // It continues from where it stopped, not from the start.
        if case .string(let before)? = progressed["result"]?["tested"], case .string(let after)? = status["result"]?["tested"] {
            #expect(UInt64(after)! >= UInt64(before)!)
        }
        let finished = try await second.request("job/status", #"{"jobId":"j1"}"#, id: 4)
        #expect(finished["result"]?["result"]?["isPrime"] == .bool(true))
        let next = try await second.request("job/submit", #"{"kind":"isPrime","candidate":"7"}"#, id: 5)
        #expect(next["result"]?["jobId"] == .string("j3"), "new ids come after every id the directory remembers")
        _ = try await second.request("job/resume", #"{"jobId":"\#(jobID)"}"#, id: 6)
        _ = try await second.log.notification { $0["method"] == .string("job/progress") && $0["params"]?["jobId"] == .string(jobID) }
        second.closeInput()
        #expect(await second.exitStatus() == 0)
    }

    @Test func afterSigkillARestartRecoversUnfinishedJobsAndAnswersForFinishedOnes() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try ServerProcess(["--state-dir", directory, "--checkpoint-interval-ms", "20"])
        _ = try await first.request("plugin/subscribe", #"{"streams":["pluginData"],"tags":["primekit.store."]}"#, id: 1)
        _ = try await first.request("job/submit", #"{"kind":"factor","candidate":"600851475143"}"#, id: 2)
        let done = try await first.log.finished("j1")
        let jobID = try await Self.startLongJob(first, id: 3)
        // Wait until the store says the running job's checkpoint is durable. The store writes it on its own thread
        // every 20 ms, but with the rest of the suite running beside this server that thread can wait for a CPU far
        // longer than the usual 20 s guard (CI saw it miss it once): the guard here is against a hang only.
        _ = try await first.log.notification(timeout: .seconds(180)) {
            $0["params"]?["event"]?["data"]?["jobId"] == .string(jobID)
        }
        first.signal(SIGKILL)
        #expect(await first.exitStatus() == SIGKILL)

        let second = try ServerProcess(["--state-dir", directory])
        let list = try await second.request("job/list", id: 1)
        #expect(matches(.parse(#"[{"jobId":"j1","kind":"factor","state":"succeeded","progress":100},{"jobId":"\#(jobID)","kind":"factor","state":"paused","progress":"$any"}]"#),
                        list["result"]?["jobs"]), "\(String(decoding: list.encoded, as: UTF8.self))")
        let status = try await second.request("job/status", #"{"jobId":"j1"}"#, id: 2)
        #expect(status["result"]?["result"] == done["params"]?["result"])
        second.closeInput()
        #expect(await second.exitStatus() == 0)
    }

    /// A complete job paused in its ECM stage, then the server killed (SIGKILL) once the store has saved a
    /// checkpoint from that stage: the restart lists the job paused in that stage, and resumed it goes on from
    /// there to its end. The job is RSA-100 (two 50-digit primes) with a time limit: ECM cannot split it, and the
    /// limit (running time, kept by the checkpoint) ends it after the restart with the known partial answer.
    /// The pause must land before the limit: a test held back that long on a busy machine (its job ended first)
    /// starts again with a limit four times as long.
    @Test func afterSigkillInAnECMStageTheResumedJobGivesTheSameAnswer() async throws {
        let candidate = "1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139"
        for limit in [10_000, 40_000, 160_000] {
            let directory = try Self.temporaryDirectory()
            defer { try? FileManager.default.removeItem(atPath: directory) }
            guard let (jobID, tested) = try await Self.pauseInECMAndKill(candidate, limitMs: limit, directory) else {
                continue
            }
            let second = try ServerProcess(["--state-dir", directory])
            let status = try await second.request("job/status", #"{"jobId":"\#(jobID)"}"#, id: 1)
            #expect(status["result"]?["state"] == .string("paused"))
            #expect(status["result"]?["stage"] == .string("ecm"),
                    "recovered in \(String(describing: status["result"]?["stage"]))")
            if case .object(let ecm)? = status["result"]?["ecm"], case .number(let curve)? = ecm["curve"],
               case .string(let b1)? = ecm["b1"] {
                #expect(Int(curve)! >= 1 && UInt64(b1)! >= 2000, "recovered at \(ecm)")
            } else {
                Issue.record("no ECM position in \(String(describing: status["result"]))")
            }
            if let tested, case .string(let after)? = status["result"]?["tested"] {
                #expect(UInt64(after)! >= UInt64(tested)!, "trial division is not done again")
            }
            _ = try await second.request("job/resume", #"{"jobId":"\#(jobID)"}"#, id: 2)
            let finished = try await second.log.finished(jobID, timeout: .seconds(60 + limit / 1000 * 3))
            let result = try #require(finished["params"]?["result"])
            #expect(result["factors"] == .array([]) && result["cofactor"] == .string(candidate))
            #expect(result["complete"] == .bool(false) && result["cofactorStatus"] == .string("composite"))
            #expect(result["mode"] == .string("complete"))
            guard case .array(let parts)? = result["parts"] else { Issue.record("no parts"); return }
            #expect(parts.count == 1 && parts.first?["value"] == .string(candidate)
                    && parts.first?["method"] == .string("ecm"))
            second.closeInput()
            #expect(await second.exitStatus() == 0)
            return
        }
        Issue.record("every pause came after the job's time limit")
    }

    /// A complete job whose ECM runs as shares on the server's two workers: paused in the ECM stage, its checkpoint
    /// holds both shares in one envelope; resumed it ends with the known answer, and its checkpoint submitted as a
    /// new job gives the same answer.
    @Test func aJobPausedWhileItsEcmRunsAsSharesResumesFromTheCombinedCheckpoint() async throws {
        let candidate = "4895841559427691305519056411393168738288827017746639020019027103300857"  // p20 · p50
        let factors = ["61302151512852928831", "79864106537944326930115269711540229808411056251847"]
        @Sendable func primes(_ message: JSONValue) -> [String]? {
            guard case .array(let list)? = message["params"]?["result"]?["factors"] else { return nil }
            return list.compactMap { $0["prime"]?.text }
        }
        let server = try ServerProcess(["--workers", "2"])
        // On a loaded machine the job can find its factor before the pause reaches it (the test process held back
        // while the server runs): then it is submitted again, up to three times.
        var found: (jobID: String, checkpoint: String)?
        for attempt in 0..<3 where found == nil {
            let submitted = try await server.request(
                "job/submit", #"{"kind":"factor","candidate":"\#(candidate)","progressIntervalMs":20}"#, id: 10 * attempt + 1)
            let jobID = try #require(submitted["result"]?["jobId"]?.text)
            _ = try await server.log.notification {
                $0["method"] == .string("job/progress") && $0["params"]?["jobId"] == .string(jobID)
                    && $0["params"]?["stage"] == .string("ecm")
            }
            let paused = try await server.request("job/pause", #"{"jobId":"\#(jobID)"}"#, id: 10 * attempt + 2)
            if let checkpoint = paused["result"]?["checkpoint"]?.text {
                found = (jobID, checkpoint)
            } else {
                #expect(paused["error"]?["data"]?["state"] == .string("succeeded"),
                        "\(String(decoding: paused.encoded, as: UTF8.self))")
            }
        }
        let (jobID, checkpoint) = try #require(found, "the job finished before each of three pauses")
        #expect(checkpoint.contains("\npieces 2\n"))
        #expect(checkpoint.components(separatedBy: "primekit-checkpoint 3\n").count == 3)
        let status = try await server.request("job/status", #"{"jobId":"\#(jobID)"}"#, id: 3)
        #expect(status["result"]?["stage"] == .string("ecm"))
        _ = try await server.request("job/resume", #"{"jobId":"\#(jobID)"}"#, id: 4)
        let finished = try await server.log.finished(jobID, timeout: .seconds(300))
        #expect(primes(finished) == factors)
        let params = JSONValue.object(["checkpoint": .string(checkpoint)])
        let again = try await server.request("job/submit", String(decoding: params.encoded, as: UTF8.self), id: 5)
        let againID = try #require(again["result"]?["jobId"]?.text)
        let restored = try await server.log.finished(againID, timeout: .seconds(300))
        #expect(primes(restored) == factors)
        server.closeInput()
        #expect(await server.exitStatus() == 0)
    }

    /// Submits `candidate` to a server with a state directory, pauses it once it reports the ECM stage, waits for
    /// a save made after that, and kills the server. Returns the job's id and the `tested` count of its first ECM
    /// progress, or nil when the job ended (its time limit) before the pause landed.
    private static func pauseInECMAndKill(_ candidate: String, limitMs: Int, _ directory: String) async throws
        -> (String, String?)?
    {
        let first = try ServerProcess(["--state-dir", directory, "--checkpoint-interval-ms", "20"])
        _ = try await first.request("plugin/subscribe", #"{"streams":["pluginData"],"tags":["primekit.store."]}"#, id: 1)
        let submitted = try await first.request(
            "job/submit",
            #"{"kind":"factor","candidate":"\#(candidate)","timeLimitMs":\#(limitMs),"progressIntervalMs":50}"#, id: 2)
        let jobID = try #require(submitted["result"]?["jobId"]?.text)
        let inECM = try await first.log.notification {
            $0["method"] == .string("job/progress") && $0["params"]?["stage"] == .string("ecm")
        }
        // A checkpoint saved after the job reached ECM: the store numbers its saves (generation) in order.
        @Sendable func generation(_ message: JSONValue) -> Int? {
            guard message["params"]?["event"]?["data"]?["jobId"] == .string(jobID),
                  case .number(let text)? = message["params"]?["event"]?["data"]?["generation"] else { return nil }
            return Int(text)
        }
        let savedBefore = first.log.messages.compactMap(generation).max() ?? -1
        let paused = try await first.request("job/pause", #"{"jobId":"\#(jobID)"}"#, id: 3)
        if paused["error"]?["data"]?["state"] == .string("succeeded") {
            first.signal(SIGKILL)
            _ = await first.exitStatus()
            return nil
        }
        #expect(paused["error"] == nil, "\(String(decoding: paused.encoded, as: UTF8.self))")
        // A save after the job reached ECM (a periodic one or the pause's) is on disk: only then the kill.
        _ = try await first.log.notification { (generation($0) ?? -1) > savedBefore }
        first.signal(SIGKILL)
        #expect(await first.exitStatus() == SIGKILL)
        #expect(!first.log.messages.contains { $0["method"] == .string("job/finished") })
        return (jobID, inECM["params"]?["tested"]?.text)
    }

    /// A range job over a server with a state directory, killed (SIGKILL) after the client has read and
    /// acknowledged some blocks and the store has saved the job since: the restart lists it paused, and resumed it
    /// sends the numbers from a block boundary no later than the first one the client had not read. Together the
    /// two runs answer every number of the range, each the same way both times it came (a block read after the
    /// last save comes again; nothing is skipped).
    @Test func afterSigkillARangeJobGoesOnWithNothingSkippedOrChanged() async throws {
        let first: UInt64 = 1_000_000_000_000
        let last = first + 150_000
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try ServerProcess(["--state-dir", directory, "--checkpoint-interval-ms", "20"])
        _ = try await server.request("plugin/subscribe", #"{"streams":["pluginData"],"tags":["primekit.store."]}"#, id: 1)
        let submitted = try await server.request(
            "job/submit", #"{"kind":"factorRange","first":"\#(first)","last":"\#(last)"}"#, id: 2)
        let jobID = try #require(submitted["result"]?["jobId"]?.text)
        @Sendable func generation(_ message: JSONValue) -> Int? {
            guard message["params"]?["event"]?["data"]?["jobId"] == .string(jobID),
                  case .number(let text)? = message["params"]?["event"]?["data"]?["generation"] else { return nil }
            return Int(text)
        }
        var answers: [UInt64: String] = [:]
        var received: [UInt64] = []
        var id = 3
        for seq in 1...5 {
            let block = try await Self.rangeBlock(server.log, jobID, seq)
            for line in Self.lines(block) { received.append(Self.record(line, in: &answers)) }
            _ = try await server.request("job/ack", #"{"jobId":"\#(jobID)","seq":\#(seq)}"#, id: id)
            id += 1
        }
        // The job is on disk (a save of it was published, before or after the acknowledgements: the store writes
        // a checkpoint only when it changed, so waiting for one more could wait forever).
        _ = try await server.log.notification { generation($0) != nil }
        server.signal(SIGKILL)
        #expect(await server.exitStatus() == SIGKILL)
        // Blocks the killed server sent before it died count as read: a client may have written them.
        for message in server.log.messages where message["method"] == .string("job/rangeBlock") {
            let seq = RangeBridgeTests.int(message["params"]?["seq"]) ?? 0
            if seq > 5 { for line in Self.lines(message) { received.append(Self.record(line, in: &answers)) } }
        }
        #expect(received == Array(first..<first + UInt64(received.count)), "the first run's numbers in order")

        let second = try ServerProcess(["--state-dir", directory])
        let status = try await second.request("job/status", #"{"jobId":"\#(jobID)"}"#, id: 1)
        #expect(status["result"]?["state"] == .string("paused"))
        _ = try await second.request("job/resume", #"{"jobId":"\#(jobID)"}"#, id: 2)
        var again: [UInt64] = []
        id = 3
        var seq = 1
        while true {
            let wanted = seq
            let message = try await second.log.notification(timeout: .seconds(60), "block \(wanted) or the end") {
                ($0["method"] == .string("job/rangeBlock") && $0["params"]?["jobId"] == .string(jobID)
                    && RangeBridgeTests.int($0["params"]?["seq"]) == wanted)
                    || ($0["method"] == .string("job/finished") && $0["params"]?["jobId"] == .string(jobID))
            }
            if message["method"] == .string("job/finished") {
                #expect(message["params"]?["state"] == .string("succeeded"))
                break
            }
            for line in Self.lines(message) { again.append(Self.record(line, in: &answers)) }
            _ = try await second.request("job/ack", #"{"jobId":"\#(jobID)","seq":\#(seq)}"#, id: id)
            id += 1
            seq += 1
        }
        let restart = try #require(again.first)
        #expect((restart - first) % 8_192 == 0, "restarts at a block boundary")
        #expect(restart <= first + UInt64(received.count), "nothing skipped")
        #expect(again == Array(restart...last))
        #expect(answers.count == Int(last - first + 1))
        for n in stride(from: first, through: last, by: 997) {
            #expect(answers[n] == RangeBridgeTests.oracleLine(n))
        }
        second.closeInput()
        #expect(await second.exitStatus() == 0)
    }

    private static func rangeBlock(_ log: MessageLog, _ jobID: String, _ seq: Int) async throws -> JSONValue {
        try await log.notification("block \(seq) of \(jobID)") { message in
            message["method"] == .string("job/rangeBlock") && message["params"]?["jobId"] == .string(jobID)
                && RangeBridgeTests.int(message["params"]?["seq"]) == seq
        }
    }

    private static func lines(_ block: JSONValue) -> [String] {
        guard case .array(let values)? = block["params"]?["lines"] else { return [] }
        return values.compactMap(\.text)
    }

    /// Keeps the line under its number; a number answered twice must have the same line both times.
    private static func record(_ line: String, in answers: inout [UInt64: String]) -> UInt64 {
        let number = UInt64(line.prefix { $0 != ":" }) ?? 0
        if let earlier = answers.updateValue(line, forKey: number) {
            #expect(earlier == line, "\(number) answered two ways")
        }
        return number
    }

    @Test func aLineLongerThanTheLimitIsRefusedWithoutBufferingIt() async throws {
        let server = try ServerProcess()
        let baseline = try await server.request("ping", id: 1)
        #expect(baseline["result"] == .object([:]))
        let before = server.residentKiB
        // 40 MB in 1 MB pieces: a candidate that never ends.
        server.write(Array(#"{"jsonrpc":"2.0","id":2,"method":"job/submit","params":{"kind":"factor","candidate":""#.utf8))
        let piece = [UInt8](repeating: UInt8(ascii: "7"), count: 1 << 20)
        for _ in 0..<40 { server.write(piece) }
        server.write(Array("\"}}\n".utf8))
        let refused = try await server.log.nextResponse()
        #expect(refused["error"]?["code"] == .number("-32001"))
        #expect(refused["id"] == .null)
        let after = try await server.request("ping", id: 3)
        #expect(after["id"] == .number("3") && after["result"] == .object([:]))
        let grown = server.residentKiB - before
        // AddressSanitizer keeps freed memory in quarantine (256 MB by default): an instrumented server's resident
        // memory says nothing about buffering.
        if dlsym(UnsafeMutableRawPointer(bitPattern: 0), "__asan_init") == nil {
            #expect(grown < 24 * 1024, "resident memory grew by \(grown) KiB for a 40 MB line (limit 16 MiB)")
        }
        server.closeInput()
        #expect(await server.exitStatus() == 0)
    }

    @Test func aMillionDigitCandidateIsAcceptedAndAnswered() async throws {
        let server = try ServerProcess()
        // 10^999999 + 1: divisible by 7, 11 (twice), 13, 19, … — the oracle divides the digits by hand.
        let candidate = "1" + String(repeating: "0", count: 999_998) + "1"
        server.send(#"{"jsonrpc":"2.0","id":1,"method":"job/submit","params":{"kind":"factor","candidate":"\#(candidate)","bound":"100"}}"#)
        let response = try await server.log.nextResponse()
        let jobID = try #require(response["result"]?["jobId"]?.text)
        let finished = try await server.log.finished(jobID, timeout: .seconds(120))
        let result = try #require(finished["params"]?["result"])
        #expect(result["candidate"]?.text?.utf8.count == 1_000_000)
        let digits = Array(candidate.utf8)
        func remainder(_ modulus: UInt64) -> UInt64 {
            digits.reduce(0) { ($0 * 10 + UInt64($1 - 48)) % modulus }
        }
        var expected: [String] = []
        for p in (2..<100) where (2..<p).allSatisfy({ p % $0 != 0 }) {
            var exponent = 0, power = UInt64(p)
            while power < 1 << 40, remainder(power) == 0 {
                exponent += 1
                power *= UInt64(p)
            }
            if exponent > 0 { expected.append(#"{"prime":"\#(p)","exponent":\#(exponent),"certainty":"proven"}"#) }
        }
        #expect(expected.count >= 4)
        #expect(result["factors"] == .parse("[" + expected.joined(separator: ",") + "]"))
        #expect(result["cofactorStatus"] == .string("unknown"))
        server.closeInput()
        #expect(await server.exitStatus() == 0)
    }
}
