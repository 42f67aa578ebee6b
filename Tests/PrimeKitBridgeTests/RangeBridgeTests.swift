import Foundation
import PrimeKit
@testable import PrimeKitBridge
import Testing

/// `factorRange` over the bridge: blocks in order under the credit window, a client that does not acknowledge,
/// pause, cancel and restore from the checkpoint.
@Suite(.timeLimit(.minutes(3))) struct RangeBridgeTests {
    /// Every block of a range job, in order.
    enum RangeBlockReader {
        static func collect(_ job: Job) async throws -> [RangeBlock] {
            var blocks: [RangeBlock] = []
            for try await block in job.rangeBlocks { blocks.append(block) }
            return blocks
        }
    }

    static func int(_ value: JSONValue?) -> Int? {
        if case .number(let text)? = value { return Int(text) }
        return nil
    }

    @Test func aRangeJobFinishedBeforeItsBlockStreamOpenedSendsItsBlocksBeforeItsEnd() {
        // A short range job can finish between its submission and the opening of its block stream, before its
        // response is out. Its job/finished must still come after its blocks, and no block may be lost: the
        // outbox sees the same calls in that order.
        let output = MemoryOutput()
        let outbox = Outbox(output: output)
        let id = JobID(rawValue: 7)
        func line(_ text: String) -> [UInt8] { Array(text.utf8) + [0x0A] }
        outbox.finished(id, line(#"{"jsonrpc":"2.0","method":"job/finished","params":{"jobId":"j7","state":"succeeded"}}"#))
        outbox.startRange(id)
        outbox.respond(line(#"{"jsonrpc":"2.0","id":1,"result":{"jobId":"j7","state":"running"}}"#), announcing: [id])
        for seq in 1...2 {
            outbox.rangeBlock(id, line(#"{"jsonrpc":"2.0","method":"job/rangeBlock","params":{"jobId":"j7","seq":\#(seq)}}"#))
        }
        outbox.endRange(id)
        outbox.close()
        let written = output.log.messages.map { message -> String in
            if case .string(let method)? = message["method"] { return method }
            return "response"
        }
        #expect(written == ["response", "job/rangeBlock", "job/rangeBlock", "job/finished"])
    }

    /// The `job/rangeBlock` of `job` with `seq`.
    static func block(_ session: Session, _ job: String, _ seq: Int) async throws -> JSONValue {
        try await session.log.notification("block \(seq) of \(job)") { message in
            message["method"] == .string("job/rangeBlock") && message["params"]?["jobId"] == .string(job)
                && int(message["params"]?["seq"]) == seq
        }
    }

    /// The `job/rangeBlock` lines of `job` received so far, in the order written, as (seq, first).
    static func blocks(_ session: Session, _ job: String) -> [(seq: Int, first: UInt64)] {
        session.log.messages.compactMap { message in
            guard message["method"] == .string("job/rangeBlock"), message["params"]?["jobId"] == .string(job),
                  let seq = int(message["params"]?["seq"]), let first = message["params"]?["first"]?.text.flatMap(UInt64.init)
            else { return nil }
            return (seq, first)
        }
    }

    /// The factor command's line of `n`, by trial division.
    static func oracleLine(_ n: UInt64) -> String {
        var line = "\(n):"
        var rest = n
        var divisor: UInt64 = 2
        while divisor <= rest / divisor {
            while rest % divisor == 0 {
                line += " \(divisor)"
                rest /= divisor
            }
            divisor += divisor == 2 ? 1 : 2
        }
        if rest > 1 { line += " \(rest)" }
        return line
    }

    /// Reads every block of `job` from `seq` on, acknowledging each; returns the lines in order.
    static func readAll(_ session: Session, _ job: String, from seq: Int = 1, id: inout Int) async throws -> [String] {
        var lines: [String] = []
        var next = seq
        while true {
            let wanted = next
            let message = try await session.log.notification("block \(wanted) of \(job) or its end") { message in
                (message["method"] == .string("job/rangeBlock") && message["params"]?["jobId"] == .string(job)
                    && int(message["params"]?["seq"]) == wanted)
                    || (message["method"] == .string("job/finished") && message["params"]?["jobId"] == .string(job))
            }
            if message["method"] == .string("job/finished") { return lines }
            if case .array(let values)? = message["params"]?["lines"] { lines += values.compactMap(\.text) }
            id += 1
            _ = try await session.request("job/ack", #"{"jobId":"\#(job)","seq":\#(next)}"#, id: id)
            next += 1
        }
    }

    @Test func blocksArriveInOrderUnderAcknowledgementAndMatchTrialDivision() async throws {
        let session = await Session.start()
        let submitted = try await session.result("job/submit", #"{"kind":"factorRange","first":"2","last":"30000"}"#)
        let job = try #require(submitted["jobId"]?.text)
        var id = 1
        let lines = try await Self.readAll(session, job, id: &id)
        #expect(lines == (2...30_000).map { Self.oracleLine(UInt64($0)) })
        // job/finished is the last message about the job, after every block.
        let order = session.log.messages.compactMap { message -> String? in
            guard message["params"]?["jobId"] == .string(job) else { return nil }
            return message["method"]?.text
        }
        #expect(order.last == "job/finished")
        #expect(order.filter { $0 == "job/finished" }.count == 1)
        let finished = try await session.log.finished(job)
        #expect(finished["params"]?["result"] == .parse(#"{"first":"2","last":"30000","count":"29999","primeCount":"3245"}"#))
        #expect(await session.end() == 0)
    }

    @Test func aClientThatDoesNotAcknowledgeStopsItsJobNotTheServer() async throws {
        var settings = EngineSettings()
        settings.maxConcurrentJobs = 1
        let session = await Session.start(settings: settings)
        let submitted = try await session.result(
            "job/submit", #"{"kind":"factorRange","first":"1000000000000","last":"1010000000000"}"#)
        let id = try #require(submitted["jobId"]?.text)
        let job = try #require(session.engine.queue.jobs.first { $0.id.description == id })
        _ = try await Self.block(session, id, 4)
        await job.waitUntilWaitingForConsumer()
        // Four blocks sent, one held by the sender, at most four in the engine's buffer: the job waits.
        #expect(Self.blocks(session, id).map(\.seq) == [1, 2, 3, 4])
        let held = job.progress.numbersDone
        #expect(held <= 9 * 8_192)
        // The one worker serves other jobs meanwhile.
        let other = try await session.result("job/submit", #"{"kind":"factor","candidate":"10000049000057"}"#, id: 2)
        let otherFinished = try await session.log.finished(try #require(other["jobId"]?.text))
        #expect(otherFinished["params"]?["state"] == .string("succeeded"))
        #expect(job.progress.numbersDone == held)
        #expect(Self.blocks(session, id).count == 4)
        // Acknowledging block 2 opens the window to block 6.
        let ack = try await session.result("job/ack", #"{"jobId":"\#(id)","seq":2}"#, id: 3)
        #expect(Self.int(ack["sent"]) == 4)
        _ = try await Self.block(session, id, 6)
        await job.waitUntilWaitingForConsumer()
        #expect(Self.blocks(session, id).map(\.seq) == [1, 2, 3, 4, 5, 6])
        // Cancelling sends no more blocks; the checkpoint continues after the last one acknowledged (block 2).
        let cancelled = try await session.result("job/cancel", #"{"jobId":"\#(id)"}"#, id: 4)
        _ = try await session.log.finished(id)
        let received = Self.blocks(session, id)
        #expect(received.map(\.seq) == [1, 2, 3, 4, 5, 6])
        for (previous, next) in zip(received, received.dropFirst()) { #expect(next.first == previous.first + 8_192) }
        let checkpoint = try #require(cancelled["checkpoint"]?.text)
        #expect(checkpoint.contains("\ndone \(received[2].first - received[0].first)\n"))
        #expect(await session.end() == 0)
    }

    @Test func aPausedRangeRestoredFromItsCheckpointContinuesWithTheNextNumber() async throws {
        let session = await Session.start()
        let first: UInt64 = 1_000_000_000_000
        let last = first + 100_000
        let submitted = try await session.result("job/submit", #"{"kind":"factorRange","first":"\#(first)","last":"\#(last)"}"#)
        let old = try #require(submitted["jobId"]?.text)
        var id = 1
        var lines: [String] = []
        for seq in 1...3 {
            let message = try await Self.block(session, old, seq)
            if case .array(let values)? = message["params"]?["lines"] { lines += values.compactMap(\.text) }
            id += 1
            _ = try await session.request("job/ack", #"{"jobId":"\#(old)","seq":\#(seq)}"#, id: id)
        }
        id += 1
        let paused = try await session.result("job/pause", #"{"jobId":"\#(old)"}"#, id: id)
        let checkpoint = try #require(paused["checkpoint"]?.text)
        // The checkpoint continues after block 3, the last acknowledged: blocks sent after it come again.
        id += 1
        _ = try await session.result("job/cancel", #"{"jobId":"\#(old)"}"#, id: id)
        _ = try await session.log.finished(old)
        id += 1
        var checkpointJSON = JSONWriter()
        checkpointJSON.string(checkpoint)
        let restored = try await session.result(
            "job/submit", #"{"checkpoint":\#(String(decoding: checkpointJSON.bytes, as: UTF8.self))}"#, id: id)
        let new = try #require(restored["jobId"]?.text)
        lines += try await Self.readAll(session, new, id: &id)
        let numbers = lines.map { UInt64($0.prefix { $0 != ":" })! }
        #expect(numbers == Array(first...last))
        #expect(await session.end() == 0)
    }

    /// A range past 2^64 over the wire: the sieve's block, then batch calls; cancelled after block 3 and restored
    /// from its checkpoint, the lines go on with the next number, each as `primekit factor` prints it.
    @Test func aRangePast2To64StreamsAndRestoresFromItsCheckpoint() async throws {
        let session = await Session.start()
        let first = (UInt128(1) << 64) - 10
        let last = (UInt128(1) << 64) + 1_000_000
        let submitted = try await session.result("job/submit", #"{"kind":"factorRange","first":"\#(first)","last":"\#(last)"}"#)
        let old = try #require(submitted["jobId"]?.text)
        var id = 1
        var lines: [String] = []
        func read(_ job: String, _ seq: Int) async throws {
            let message = try await Self.block(session, job, seq)
            if case .array(let values)? = message["params"]?["lines"] {
                #expect(message["params"]?["first"]?.text == values.first?.text.map { String($0.prefix { $0 != ":" }) })
                lines += values.compactMap(\.text)
            }
            id += 1
            _ = try await session.request("job/ack", #"{"jobId":"\#(job)","seq":\#(seq)}"#, id: id)
        }
        for seq in 1...3 { try await read(old, seq) }
        id += 1
        let cancelled = try await session.result("job/cancel", #"{"jobId":"\#(old)"}"#, id: id)
        _ = try await session.log.finished(old)
        let checkpoint = try #require(cancelled["checkpoint"]?.text)
        // Blocks: [first, 2^64 - 1] sieved, then 64 numbers per batch call.
        #expect(checkpoint.contains("\nnext \(first + 10 + 128)\n"))
        var checkpointJSON = JSONWriter()
        checkpointJSON.string(checkpoint)
        id += 1
        let restored = try await session.result(
            "job/submit", #"{"checkpoint":\#(String(decoding: checkpointJSON.bytes, as: UTF8.self))}"#, id: id)
        let new = try #require(restored["jobId"]?.text)
        for seq in 1...3 { try await read(new, seq) }
        id += 1
        _ = try await session.result("job/cancel", #"{"jobId":"\#(new)"}"#, id: id)
        let end = first + 10 + 5 * 64 - 1
        #expect(lines.map { UInt128($0.prefix { $0 != ":" })! } == Array(first...end))
        // The engine's own blocks, formatted the same way.
        let queue = JobQueue(configuration: JobQueue.Configuration())
        let blocks = try await RangeBlockReader.collect(try queue.submit(.factorRange(String(first), String(end))))
        #expect(lines == blocks.flatMap(\.lines))
        #expect(lines.contains("18446744073709551629: 18446744073709551629 [18446744073709551629: probable prime]"))
        #expect(await session.end() == 0)
    }

    @Test func badRangeRequestsAreRefused() async throws {
        let session = await Session.start()
        let cases: [(String, String)] = [
            (#"{"kind":"factorRange","first":"0","last":"5"}"#, "first"),
            (#"{"kind":"factorRange","first":"9","last":"5"}"#, "last"),
            (#"{"kind":"factorRange","first":"18446744073709551618","last":"18446744073709551617"}"#, "last"),
            (#"{"kind":"factorRange","first":"1","last":"100000000000000000000000000000000000000000"}"#, "first"),
            (#"{"kind":"factorRange","first":5,"last":"9"}"#, "first"),
            (#"{"kind":"factorRange","last":"9"}"#, "first"),
            (#"{"kind":"factorRange","first":"2","last":"9","mode":"trial"}"#, "mode"),
            (#"{"kind":"isPrime","candidate":"7","last":"9"}"#, "last"),
        ]
        for (index, (params, field)) in cases.enumerated() {
            let response = try await session.request("job/submit", params, id: index + 1)
            #expect(response["error"]?["code"] == .number("-32602"), "\(params)")
            #expect(response["error"]?["data"]?["field"] == .string(field), "\(params)")
        }
        #expect(session.engine.queue.jobs.isEmpty)
        #expect(await session.end() == 0)
    }
}
