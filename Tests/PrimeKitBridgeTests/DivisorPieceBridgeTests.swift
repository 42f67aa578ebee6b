import Foundation
import PrimeKit
@testable import PrimeKitBridge
import Testing

/// checkpoint/split and checkpoint/merge with `pieces` (protocol minor 4): a trial-division job's divisor range as
/// piece checkpoints run as jobs of their own, merged back into exactly the unsplit job's answer; sets that do not
/// tile one range of one candidate, and changed or foreign checkpoints, refused without harm.
@Suite(.timeLimit(.minutes(3))) struct DivisorPieceBridgeTests {
    static let m61 = "2305843009213693951"
    static let m89 = "618970019642690137449562111"

    /// A one-worker session (the engine runs every job whole) and its next request id.
    static func session() async -> Session {
        var settings = EngineSettings()
        settings.maxConcurrentJobs = 1
        return await Session.start(settings: settings)
    }

    static func quoted(_ text: String) -> String { EcmShareBridgeTests.quoted(text) }

    static func list(_ texts: [String]) -> String { "[" + texts.map(quoted).joined(separator: ",") + "]" }

    /// `"candidate":…` with `from` and `bound` when given.
    static func job(_ candidate: String, from: String?, bound: String?) -> String {
        var text = #""candidate":"\#(candidate)""#
        if let from { text += #","from":"\#(from)""# }
        if let bound { text += #","bound":"\#(bound)""# }
        return text
    }

    /// Runs a job to its end and returns its result.
    static func run(_ session: Session, _ params: String, id: inout Int) async throws -> JSONValue {
        id += 1
        let job = try #require(try await session.result("job/submit", params, id: id)["jobId"]?.text)
        let finished = try await session.log.finished(job, timeout: .seconds(120))
        return try #require(finished["params"]?["result"], "\(finished)")
    }

    /// The pieces of a new job: their ranges and checkpoints.
    static func split(_ session: Session, _ job: String, pieces: Int, id: inout Int) async throws
        -> (from: String, bound: String, ranges: [(String, String)], checkpoints: [String])
    {
        id += 1
        let result = try await session.result("checkpoint/split", "{\(job),\"pieces\":\(pieces)}", id: id)
        guard case .array(let items)? = result["pieces"] else { throw TimedOut(what: "pieces") }
        let ranges = items.map { ($0["from"]?.text ?? "", $0["bound"]?.text ?? "") }
        return (try #require(result["from"]?.text), try #require(result["bound"]?.text), ranges,
                items.compactMap { $0["checkpoint"]?.text })
    }

    /// Each piece run as a job to its end (last first), its final checkpoint.
    static func finals(_ session: Session, _ pieces: [String], id: inout Int) async throws -> [String] {
        var out: [String] = []
        for piece in pieces.reversed() {
            let result = try await run(session, #"{"checkpoint":\#(quoted(piece)),"finalCheckpoint":true}"#, id: &id)
            out.insert(try #require(result["checkpoint"]?.text, "\(result)"), at: 0)
        }
        return out
    }

    @Test(arguments: [
        // Small factors in the first, third and fifth piece, one squared; a probable-prime cofactor above 2^64.
        ("spread", "2000000", nil as String?, "186694964880843317938960413290507669424920506838783"),
        // Two factors in the first two pieces; a composite cofactor (M61 · M89).
        ("composite", "2000000", nil, "59791034711773473549662514708410091742767002777930266721"),
        // A prime power and its neighbour in one piece, nothing left: the cofactor is 1.
        ("cube", "2000000", nil, "999991999873999567999541"),
        // Everything in the first piece (M61 listed below 2^64), the default bound (√n capped at 2^32).
        ("early", nil, nil, "830933586800246752182360"),
        // from > 2: 2 and 3 are never tried; the composite cofactor 96 is left.
        ("from", nil, "50", "57681741613728"),
        // from > 2 and a divisor above √n: 3 · 101 from 50 to 200.
        ("above", "200", "50", "303"),
        // A prime, proven by its range; and the smallest candidate.
        ("prime", nil, nil, "1000000007"),
        ("two", nil, nil, "2"),
    ] as [(String, String?, String?, String)])
    func mergedPiecesGiveTheUnsplitAnswer(_ name: String, _ bound: String?, _ from: String?, _ candidate: String)
        async throws
    {
        let session = await Self.session()
        var id = 1
        let job = Self.job(candidate, from: from, bound: bound)
        let (first, last, ranges, pieces) = try await Self.split(session, job, pieces: 5, id: &id)
        #expect(pieces.count == ranges.count && !pieces.isEmpty)
        #expect(ranges.first?.0 == first && ranges.last?.1 == last)
        for (low, high) in zip(ranges, ranges.dropFirst()) {  // the ranges tile [from, bound] in order
            #expect(UInt64(low.1).map { $0 + 1 } == UInt64(high.0))
        }
        if let from { #expect(first == from) }
        let finals = try await Self.finals(session, pieces, id: &id)
        id += 1
        let merged = try await session.result("checkpoint/merge", #"{"pieces":\#(Self.list(finals.reversed()))}"#,
                                              id: id)
        #expect(merged["merged"] == .bool(true))
        let mode = from == nil && bound == nil ? #","mode":"trial""# : ""
        let whole = try await Self.run(session, #"{"kind":"factor",\#(job)\#(mode)}"#, id: &id)
        #expect(merged["result"] == whole, "\(name): \(String(describing: merged["result"])) vs \(whole)")
        #expect(whole["checkpoint"] == nil)
        // The merged checkpoint is the finished job: submitted, it gives the answer again.
        let again = try await Self.run(session, #"{"checkpoint":\#(Self.quoted(merged["checkpoint"]?.text ?? ""))}"#,
                                       id: &id)
        #expect(again == whole)
        #expect(await session.end() == 0)
    }

    @Test func piecesDecideTheAnswerOnceTheirFactorsLeaveNothingToTry() async throws {
        let session = await Self.session()
        var id = 1
        // 2^3·3^2·5·7·11·13·M61: the first piece finds everything; the others have nothing left to try.
        let candidate = "830933586800246752182360"
        let (_, _, _, pieces) = try await Self.split(session, Self.job(candidate, from: nil, bound: nil), pieces: 8,
                                                      id: &id)
        let first = try await Self.finals(session, [pieces[0]], id: &id)
        id += 1
        let early = try await session.result("checkpoint/merge",
                                             #"{"pieces":\#(Self.list(first + pieces.dropFirst()))}"#, id: id)
        #expect(early["merged"] == .bool(true))
        let whole = try await Self.run(session, #"{"kind":"factor","candidate":"\#(candidate)","mode":"trial"}"#,
                                       id: &id)
        #expect(early["result"] == whole)

        // M89 · 1000003 to 10^7: nothing decides it before the last piece; the undecided set is one job.
        let other = Self.m89 + "000000000"
        let (_, _, _, more) = try await Self.split(session, Self.job(other, from: nil, bound: "10000000"), pieces: 4,
                                                   id: &id)
        let done = try await Self.finals(session, [more[0]], id: &id)
        id += 1
        let open = try await session.result("checkpoint/merge", #"{"pieces":\#(Self.list(done + more.dropFirst()))}"#,
                                            id: id)
        #expect(open["merged"] == .bool(false) && open["result"] == nil)
        #expect(Self.ranges(open["needed"]).count == 3)  // M89 is left: every other piece is still needed
        let set = try #require(open["checkpoint"]?.text)
        #expect(set.contains("\npieces 4\n"))
        id += 1
        let back = try await session.result("checkpoint/split", #"{"checkpoint":\#(Self.quoted(set)),"pieces":2}"#,
                                            id: id)
        guard case .array(let items)? = back["pieces"] else { throw TimedOut(what: "pieces") }
        #expect(items.compactMap { $0["checkpoint"]?.text } == done + more.dropFirst())
        let answer = try await Self.run(session, #"{"checkpoint":\#(Self.quoted(set))}"#, id: &id)
        let expected = try await Self.run(session, #"{"kind":"factor","candidate":"\#(other)","bound":"10000000"}"#,
                                          id: &id)
        #expect(answer == expected)

        // 104729 · 1200007 · 1999993 to 4·10^6: once the first piece found 104729, only the second piece (up to
        // √(1200007 · 1999993) ≈ 1.55·10^6) is still needed; merged with its end, the answer is decided.
        let third = "251350186477268279"
        let (_, _, ranges, quarter) = try await Self.split(session, Self.job(third, from: nil, bound: "4000000"),
                                                           pieces: 4, id: &id)
        let firstDone = try await Self.finals(session, [quarter[0]], id: &id)
        id += 1
        let waiting = try await session.result(
            "checkpoint/merge", #"{"pieces":\#(Self.list(firstDone + quarter.dropFirst()))}"#, id: id)
        #expect(waiting["merged"] == .bool(false))
        #expect(Self.ranges(waiting["needed"]).map { $0.0 } == [ranges[1].0])
        let secondDone = try await Self.finals(session, [quarter[1]], id: &id)
        id += 1
        let decided = try await session.result(
            "checkpoint/merge", #"{"pieces":\#(Self.list(firstDone + secondDone + quarter.dropFirst(2)))}"#, id: id)
        #expect(decided["merged"] == .bool(true) && decided["needed"] == nil)
        let unsplit = try await Self.run(session, #"{"kind":"factor","candidate":"\#(third)","bound":"4000000"}"#,
                                         id: &id)
        #expect(decided["result"] == unsplit)
        #expect(await session.end() == 0)
    }

    @Test func aPausedPieceMergesWithTheOthersAndTheSetGivesTheUnsplitAnswer() async throws {
        let session = await Self.session()
        var id = 1
        let candidate = "1000000000000000000000000000057"
        let job = Self.job(candidate, from: nil, bound: "200000000")
        let (_, _, ranges, pieces) = try await Self.split(session, job, pieces: 2, id: &id)
        // The first piece runs until its progress says it has tried divisors, and is cancelled there (a piece that
        // ended before the cancel reached it leaves its cut checkpoint: the merge is the same).
        id += 1
        let running = try #require(try await session.result(
            "job/submit", #"{"checkpoint":\#(Self.quoted(pieces[0])),"progressIntervalMs":1}"#, id: id)["jobId"]?.text)
        _ = try await session.log.notification(timeout: .seconds(60), "progress or end of \(running)") { message in
            message["params"]?["jobId"]?.text == running && (message["method"] == .string("job/finished")
                || (message["method"] == .string("job/progress") && message["params"]?["tested"]?.text != "0"))
        }
        id += 1
        let cancelled = try await session.request("job/cancel", #"{"jobId":"\#(running)"}"#, id: id)
        let paused = cancelled["result"]?["checkpoint"]?.text ?? pieces[0]
        #expect(cancelled["result"] == nil || paused != pieces[0])
        id += 1
        let merge = try await session.result("checkpoint/merge", #"{"pieces":\#(Self.list([pieces[1], paused]))}"#,
                                             id: id)
        #expect(merge["merged"] == .bool(false))
        #expect(Self.ranges(merge["needed"]).map { $0.0 } == ranges.map { $0.0 })
        let set = try #require(merge["checkpoint"]?.text)
        let answer = try await Self.run(session, #"{"checkpoint":\#(Self.quoted(set))}"#, id: &id)
        let unsplit = try await Self.run(session, #"{"kind":"factor",\#(job)}"#, id: &id)
        #expect(answer == unsplit)
        #expect(await session.end() == 0)
    }

    /// A merge's `needed`: the pieces' ranges.
    static func ranges(_ value: JSONValue?) -> [(String, String)] {
        guard case .array(let items)? = value else { return [] }
        return items.map { ($0["from"]?.text ?? "", $0["bound"]?.text ?? "") }
    }

    @Test func setsThatAreNotOneJobsPiecesAreRefusedAndTheServerGoesOn() async throws {
        let session = await Self.session()
        var id = 1
        let (_, _, _, pieces) = try await Self.split(
            session, Self.job("1000000016000000063", from: nil, bound: "3000000"), pieces: 3, id: &id)
        let (_, _, _, foreign) = try await Self.split(
            session, Self.job("1000000016000000069", from: nil, bound: "3000000"), pieces: 3, id: &id)

        func code(_ method: String, _ params: String) async throws -> String? {
            id += 1
            let response = try await session.request(method, params, id: id)
            #expect(response["result"] == nil, "\(method) \(params.prefix(80)) was accepted")
            return EcmShareBridgeTests.number(response["error"]?["code"])
        }
        func merge(_ texts: [String]) -> String { #"{"pieces":\#(Self.list(texts))}"# }

        // A gap, a piece twice, another candidate's piece, a changed checkpoint: 1003.
        #expect(try await code("checkpoint/merge", merge([pieces[0], pieces[2]])) == "1003")
        #expect(try await code("checkpoint/merge", merge([pieces[0], pieces[0], pieces[1], pieces[2]])) == "1003")
        #expect(try await code("checkpoint/merge", merge([pieces[0], foreign[1], pieces[2]])) == "1003")
        let edited = pieces[1].replacingOccurrences(of: "piece 1000001", with: "piece 1000002")
        #expect(edited != pieces[1])
        #expect(try await code("checkpoint/merge", merge([pieces[0], edited, pieces[2]])) == "1003")
        // A complete job's checkpoint is no divisor piece.
        _ = try await session.result("queue/suspend", id: { id += 1; return id }())
        id += 1
        let queued = try #require(try await session.result(
            "job/submit", #"{"kind":"factor","candidate":"1000000016000000063"}"#, id: id)["jobId"]?.text)
        id += 1
        let complete = try #require(try await session.result(
            "job/cancel", #"{"jobId":"\#(queued)"}"#, id: id)["checkpoint"]?.text)
        _ = try await session.result("queue/resume", id: { id += 1; return id }())
        #expect(try await code("checkpoint/merge", merge([complete])) == "1003")
        #expect(try await code("checkpoint/split", #"{"checkpoint":\#(Self.quoted(complete)),"pieces":2}"#)
            == "-32602")
        // Bad members: none, not strings, both kinds, counts out of range.
        #expect(try await code("checkpoint/merge", #"{"pieces":[]}"#) == "-32602")
        #expect(try await code("checkpoint/merge", #"{"pieces":[1]}"#) == "-32602")
        #expect(try await code("checkpoint/merge", #"{"pieces":["x"],"shares":["x","y"]}"#) == "-32602")
        #expect(try await code("checkpoint/split", #"{"candidate":"1001","pieces":0}"#) == "-32602")
        #expect(try await code("checkpoint/split", #"{"candidate":"1001","pieces":2,"count":2}"#) == "-32602")
        #expect(try await code("checkpoint/split", #"{"candidate":"1001","from":"50","bound":"40","pieces":2}"#)
            == "-32602")
        // A piece that has started is not cut again.
        let paused = try await Self.startedPiece(session, id: &id)
        #expect(try await code("checkpoint/split", #"{"checkpoint":\#(Self.quoted(paused)),"pieces":2}"#) == "1002")
        // The untouched pieces still merge (undecided) and the server goes on.
        id += 1
        let fine = try await session.result("checkpoint/merge", merge(pieces), id: id)
        #expect(fine["merged"] == .bool(false))
        #expect(await session.end() == 0)
    }

    /// The checkpoint of a one-piece trial-division job that has done some work: a long job, cancelled once its
    /// progress says it has tried divisors.
    static func startedPiece(_ session: Session, id: inout Int) async throws -> String {
        let submission = #"{"kind":"factor","candidate":"1000000000000000000000000000057","bound":"10000000000000","progressIntervalMs":1}"#
        id += 1
        let job = try #require(try await session.result("job/submit", submission, id: id)["jobId"]?.text)
        _ = try await session.log.notification(timeout: .seconds(60), "progress of \(job)") { message in
            message["method"] == .string("job/progress") && message["params"]?["jobId"]?.text == job
                && message["params"]?["tested"]?.text != "0"
        }
        id += 1
        return try #require(try await session.result("job/cancel", #"{"jobId":"\#(job)"}"#, id: id)["checkpoint"]?.text)
    }
}
