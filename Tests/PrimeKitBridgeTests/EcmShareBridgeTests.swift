import Foundation
import PrimeKit
@testable import PrimeKitBridge
import Testing

/// checkpoint/split and checkpoint/merge: a complete job's ECM curves as share checkpoints run as jobs of their own,
/// merged back into the job's answer; bad share sets and changed checkpoints refused without harm.
@Suite(.timeLimit(.minutes(3))) struct EcmShareBridgeTests {
    /// 3136829524542719 · 955812480096314879617956987616869321439743449: a 16-digit factor for ECM to find in a
    /// 61-digit composite.
    static let candidate = "2998220807492520471371505234470076086304473139071244400897831"
    /// 76942185603746131 · 412585865206100018964142434453152133243142601: another job of the same kind.
    static let other = "31745258218169930611112959606672427803150229187467012635026731"

    static func quoted(_ text: String) -> String {
        var out = JSONWriter()
        out.string(text)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// The prime of a factor result's first factor.
    static func firstPrime(_ result: JSONValue?) -> String? {
        guard case .array(let factors)? = result?["factors"], let first = factors.first else { return nil }
        return first["prime"]?.text
    }

    /// A JSON number's text.
    static func number(_ value: JSONValue?) -> String? {
        if case .number(let text)? = value { return text }
        return nil
    }

    static func texts(_ value: JSONValue?) -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap(\.text)
    }

    /// A one-worker session (the engine runs every job whole) and its next request id.
    static func session() async -> Session {
        var settings = EngineSettings()
        settings.maxConcurrentJobs = 1
        return await Session.start(settings: settings)
    }

    /// The checkpoint of a complete job of `candidate` stopped at an ECM piece: the job runs until its progress
    /// says `ecm`, is cancelled, and the checkpoint is cut into `count` shares; a job that had left ECM when it
    /// stopped goes on from its checkpoint and is caught at its next ECM piece. A job that ended before the cancel
    /// reached it (a loaded machine can hold the test back that long) is submitted again.
    static func ecmCheckpoint(_ session: Session, _ candidate: String, count: Int, id: inout Int)
        async throws -> (whole: String, shares: [String])
    {
        let submission = #"{"kind":"factor","candidate":"\#(candidate)","progressIntervalMs":1}"#
        id += 1
        var job = try #require(try await session.result("job/submit", submission, id: id)["jobId"]?.text)
        for _ in 0..<20 {
            let watched = job
            _ = try await session.log.notification(timeout: .seconds(60), "ECM progress of \(watched)") { message in
                message["method"] == .string("job/progress") && message["params"]?["jobId"]?.text == watched
                    && message["params"]?["stage"]?.text == "ecm"
            }
            id += 1
            let cancelled = try await session.request("job/cancel", #"{"jobId":"\#(job)"}"#, id: id)
            guard let checkpoint = cancelled["result"]?["checkpoint"]?.text else {
                id += 1
                job = try #require(try await session.result("job/submit", submission, id: id)["jobId"]?.text)
                continue
            }
            id += 1
            let split = try await session.request(
                "checkpoint/split", #"{"checkpoint":\#(quoted(checkpoint)),"count":\#(count)}"#, id: id)
            if let shares = split["result"]?["shares"] { return (checkpoint, texts(shares)) }
            #expect(number(split["error"]?["code"]) == "1002", "\(split)")
            id += 1
            job = try #require(try await session.result(
                "job/submit", #"{"checkpoint":\#(quoted(checkpoint)),"progressIntervalMs":1}"#, id: id)["jobId"]?.text)
        }
        throw TimedOut(what: "a checkpoint at an ECM piece")
    }

    /// Runs share checkpoints as jobs until one finds a factor (or all are over), cancels the others (their
    /// checkpoints say where they stopped) and returns every share's final checkpoint.
    static func runShares(_ session: Session, _ shares: [String], id: inout Int) async throws -> [String] {
        var jobs: [String] = []
        for share in shares {
            id += 1
            jobs.append(try #require(try await session.result(
                "job/submit", #"{"checkpoint":\#(quoted(share))}"#, id: id)["jobId"]?.text))
        }
        let set = Set(jobs)
        let first = try await session.log.notification(timeout: .seconds(120), "a share's end") { message in
            message["method"] == .string("job/finished") && set.contains(message["params"]?["jobId"]?.text ?? "")
        }
        let firstJob = try #require(first["params"]?["jobId"]?.text)
        let share = try #require(first["params"]?["result"]?["ecmShare"], "\(first)")
        #expect(first["params"]?["result"]?["complete"] == .bool(false))
        var finals: [String: String] = [firstJob: try #require(share["checkpoint"]?.text)]
        for job in jobs where job != firstJob {
            id += 1
            let cancelled = try await session.request("job/cancel", #"{"jobId":"\#(job)"}"#, id: id)
            if let checkpoint = cancelled["result"]?["checkpoint"]?.text {
                finals[job] = checkpoint
            } else {
                let finished = try await session.log.finished(job)
                finals[job] = try #require(finished["params"]?["result"]?["ecmShare"]?["checkpoint"]?.text)
            }
        }
        return jobs.map { finals[$0]! }
    }

    @Test func sharesRunAsJobsMergeToTheAnswerOfTheWholeJob() async throws {
        let session = await Self.session()
        var id = 1
        let (_, shares) = try await Self.ecmCheckpoint(session, Self.candidate, count: 2, id: &id)
        #expect(shares.count == 2)
        let finals = try await Self.runShares(session, shares, id: &id)
        id += 1
        // In another order: the set is the same.
        let merged = try await session.result(
            "checkpoint/merge", #"{"shares":[\#(Self.quoted(finals[1])),\#(Self.quoted(finals[0]))]}"#, id: id)
        #expect(merged["merged"] == .bool(true))
        let checkpoint = try #require(merged["checkpoint"]?.text)
        id += 1
        let resumed = try #require(try await session.result(
            "job/submit", #"{"checkpoint":\#(Self.quoted(checkpoint))}"#, id: id)["jobId"]?.text)
        let answer = try await session.log.finished(resumed, timeout: .seconds(120))["params"]?["result"]
        id += 1
        let whole = try #require(try await session.result(
            "job/submit", #"{"kind":"factor","candidate":"\#(Self.candidate)"}"#, id: id)["jobId"]?.text)
        let expected = try await session.log.finished(whole, timeout: .seconds(120))["params"]?["result"]
        #expect(answer != nil && answer == expected)
        #expect(Self.firstPrime(answer) == "3136829524542719")
        #expect(answer?["ecmShare"] == nil)
        #expect(await session.end() == 0)
    }

    @Test func sharesNotOverMergeIntoOneCheckpointThatSplitsIntoThemAgain() async throws {
        let session = await Self.session()
        var id = 1
        let (_, shares) = try await Self.ecmCheckpoint(session, Self.candidate, count: 3, id: &id)
        id += 1
        let set = try await session.result(
            "checkpoint/merge", #"{"shares":[\#(shares.map(Self.quoted).joined(separator: ","))]}"#, id: id)
        #expect(set["merged"] == .bool(false))
        let checkpoint = try #require(set["checkpoint"]?.text)
        #expect(checkpoint.contains("\npieces 3\n"))
        id += 1
        let again = try await session.result(
            "checkpoint/split", #"{"checkpoint":\#(Self.quoted(checkpoint)),"count":2}"#, id: id)
        #expect(Self.texts(again["shares"]) == shares)
        // The set is a job of its own too: it runs its shares and merges them itself.
        id += 1
        let job = try #require(try await session.result(
            "job/submit", #"{"checkpoint":\#(Self.quoted(checkpoint))}"#, id: id)["jobId"]?.text)
        let answer = try await session.log.finished(job, timeout: .seconds(120))["params"]?["result"]
        #expect(answer?["complete"] == .bool(true))
        #expect(Self.firstPrime(answer) == "3136829524542719")
        #expect(await session.end() == 0)
    }

    @Test func badRequestsAndMismatchedSharesAreRefusedAndTheServerGoesOn() async throws {
        let session = await Self.session()
        var id = 1
        let (whole, shares) = try await Self.ecmCheckpoint(session, Self.candidate, count: 2, id: &id)
        let (_, three) = try await Self.ecmCheckpoint(session, Self.candidate, count: 3, id: &id)
        let (_, foreign) = try await Self.ecmCheckpoint(session, Self.other, count: 2, id: &id)

        func code(_ method: String, _ params: String) async throws -> String? {
            id += 1
            let response = try await session.request(method, params, id: id)
            #expect(response["result"] == nil, "\(method) \(params.prefix(80)) was accepted")
            return Self.number(response["error"]?["code"])
        }
        func merge(_ texts: [String]) -> String { #"{"shares":[\#(texts.map(Self.quoted).joined(separator: ","))]}"# }

        // Sets that are not one set of one job: an index twice, another count, another job, a whole job.
        #expect(try await code("checkpoint/merge", merge([shares[0], shares[0]])) == "1003")
        #expect(try await code("checkpoint/merge", merge([shares[0], three[1]])) == "1003")
        #expect(try await code("checkpoint/merge", merge([shares[0], foreign[1]])) == "1003")
        #expect(try await code("checkpoint/merge", merge([shares[0], whole])) == "1003")
        #expect(try await code("checkpoint/merge", merge([shares[0]])) == "-32602")
        #expect(try await code("checkpoint/merge", #"{"shares":[1,2]}"#) == "-32602")
        #expect(try await code("checkpoint/merge", "{}") == "-32602")
        // Split: a share, a bad count, a trial-division job, a job not at an ECM piece.
        #expect(try await code("checkpoint/split", #"{"checkpoint":\#(Self.quoted(shares[0])),"count":2}"#) == "-32602")
        for count in ["1", "65", "\"2\""] {
            #expect(try await code("checkpoint/split", #"{"checkpoint":\#(Self.quoted(whole)),"count":\#(count)}"#)
                == "-32602")
        }
        _ = try await session.result("queue/suspend", id: { id += 1; return id }())
        for job in [#"{"kind":"factor","candidate":"\#(Self.candidate)","bound":"1000"}"#,
                    #"{"kind":"factor","candidate":"\#(Self.candidate)"}"#] {
            id += 1
            let queued = try #require(try await session.result("job/submit", job, id: id)["jobId"]?.text)
            id += 1
            let cancelled = try await session.result("job/cancel", #"{"jobId":"\#(queued)"}"#, id: id)
            let stopped = try #require(cancelled["checkpoint"]?.text)
            let expected = job.contains("bound") ? "-32602" : "1002"
            #expect(try await code("checkpoint/split", #"{"checkpoint":\#(Self.quoted(stopped)),"count":2}"#)
                == expected)
        }
        _ = try await session.result("queue/resume", id: { id += 1; return id }())

        // Every single-byte change of a share, and of the whole job's checkpoint, is refused.
        for (text, method) in [(shares[1], "merge"), (whole, "split")] {
            var bytes = Array(text.utf8)
            for index in bytes.indices {
                let original = bytes[index]
                bytes[index] = original == UInt8(ascii: "7") ? UInt8(ascii: "8") : (original ^ 0x01)
                let changed = String(decoding: bytes, as: UTF8.self)
                bytes[index] = original
                let params = method == "merge" ? merge([shares[0], changed])
                    : #"{"checkpoint":\#(Self.quoted(changed)),"count":2}"#
                let refused = try await code("checkpoint/\(method)", params)
                #expect(refused == "1003", "byte \(index) of \(bytes.count) changed: \(refused ?? "accepted")")
            }
        }
        // The server goes on: the real set still merges.
        id += 1
        let merged = try await session.result("checkpoint/merge", merge([shares[1], shares[0]]), id: id)
        #expect(merged["merged"] == .bool(false))
        #expect(await session.end() == 0)
    }
}
