import Foundation
import PrimeKit
@testable import PrimeKitBridge
import Synchronization
import Testing

/// A prime of 31 digits: trial division of it to 10^13 (3.5·10^11 prime divisors) is far more than any machine does
/// within a test, so the job is still running whenever a test pauses, cancels or stops it, however fast or loaded
/// the machine is. Its first progress comes within a fraction of a second (a 100-digit candidate takes seconds per
/// batch of divisors). Not a higher bound: the job's pieces above the first take long to stop while they start (a
/// pause took 1.4 s with bound 10^15 and 84 s with 10^18 in a release build, 0.03 s with 10^13).
let longPrime = "1000000000000000000000000000057"
let longJob = #"{"kind":"factor","candidate":"\#(longPrime)","bound":"10000000000000","progressIntervalMs":1}"#

/// The dispatcher in memory: every method and every error, without pipes.
@Suite struct DispatcherTests {
    @Test func initializeAnnouncesTheLimitsInForce() async throws {
        var limits = BridgeLimits()
        limits.maxMessageBytes = 4096
        limits.maxDigits = 77
        limits.maxActiveJobs = 5
        limits.maxBatch = 3
        let session = await Session.start(limits: limits)
        let result = try await session.result("initialize", #"{"protocolVersion":1,"client":{"name":"test"}}"#)
        #expect(result["protocolVersion"] == .number("1"))
        #expect(result["limits"] == .parse(#"{"maxMessageBytes":4096,"maxDigits":77,"maxActiveJobs":5,"maxBatch":3}"#))
        #expect(result["capabilities"]?["stateDirectory"] == .bool(false))
        if case .array(let methods)? = result["capabilities"]?["methods"] {
            #expect(Set(methods.compactMap(\.text)) == Set(BridgeServer.methods))
        } else {
            Issue.record("no method list")
        }
        let wrongVersion = try await session.request("initialize", #"{"protocolVersion":2}"#)
        #expect(wrongVersion["error"]?["code"] == .number("-32602"))
        #expect(await session.end() == 0)
    }

    @Test func answersMatchTheEngineForSmallNumbers() async throws {
        let session = await Session.start()
        for n in 2...60 {
            let kind = n % 2 == 0 ? "factor" : "isPrime"
            let submitted = try await session.result("job/submit", #"{"kind":"\#(kind)","candidate":"\#(n)"}"#, id: n)
            let id = try #require(submitted["jobId"]?.text)
            let finished = try await session.log.finished(id)
            let result = try #require(finished["params"]?["result"])
            let divisors = (1...n).filter { n % $0 == 0 }
            let prime = divisors.count == 2
            #expect(result["isPrime"] == .bool(prime), "\(n)")
            #expect(result["certainty"] == .string("proven"))
            if kind == "isPrime" {
                let listed: [String] = prime ? [] : divisors.map(String.init)
                #expect(result["factors"] == .array(listed.map(JSONValue.string)), "\(n)")
            } else {
                var product = 1
                if case .array(let factors)? = result["factors"] {
                    for factor in factors {
                        let p = Int(factor["prime"]!.text!)!, e = Int({ if case .number(let t) = factor["exponent"]! { t } else { "0" } }())!
                        #expect((2..<p).allSatisfy { p % $0 != 0 }, "\(p) is prime")
                        for _ in 0..<e { product *= p }
                    }
                }
                #expect(product == n, "\(n)")
            }
        }
        #expect(await session.end() == 0)
    }

    @Test func submitResponseComesBeforeEveryNotificationAndFinishedComesLast() async throws {
        let session = await Session.start()
        var ids: [String] = []
        // Singles and a batch, each job reporting progress every millisecond.
        for index in 0..<60 {
            let response = try await session.result("job/submit",
                #"{"kind":"factor","candidate":"\#(1_000_000_007 * (index + 3))","progressIntervalMs":1}"#, id: index)
            ids.append(response["jobId"]!.text!)
        }
        let batch = (0..<30).map { index in
            #"{"jsonrpc":"2.0","id":"b\#(index)","method":"job/submit","params":{"kind":"isPrime","candidate":"\#(100_000_000_000_031 + index * 2)","progressIntervalMs":1}}"#
        }
        await session.send("[" + batch.joined(separator: ",") + "]")
        guard case .array(let answers) = try await session.log.nextResponse() else {
            Issue.record("no batch response")
            return
        }
        for answer in answers { ids.append(answer["result"]!["jobId"]!.text!) }
        for id in ids { _ = try await session.log.finished(id) }
        let messages = session.log.messages
        for id in ids {
            let about = messages.indices.filter { index in
                let m = messages[index]
                if m["params"]?["jobId"] == .string(id) { return true }
                if m["result"]?["jobId"] == .string(id) { return true }
                if case .array(let items) = m { return items.contains { $0["result"]?["jobId"] == .string(id) } }
                return false
            }
            let first = messages[about.first!]
            #expect(first["method"] == nil, "\(id): the first message about it is its submit response")
            let finishedCount = about.filter { messages[$0]["method"] == .string("job/finished") }.count
            #expect(finishedCount == 1, "\(id)")
            #expect(messages[about.last!]["method"] == .string("job/finished"), "\(id): job/finished is last")
            var lastSeq = 0
            for index in about where messages[index]["method"] == .string("job/progress") {
                guard case .number(let text)? = messages[index]["params"]?["seq"], let seq = Int(text) else { continue }
                #expect(seq > lastSeq, "\(id): seq increases")
                lastSeq = seq
            }
        }
        #expect(await session.end() == 0)
    }

    @Test func noProgressFollowsAPauseResponseUntilResume() async throws {
        let session = await Session.start()
        let id = try await session.result("job/submit", longJob)["jobId"]!.text!
        for round in 0..<3 {
            _ = try await session.log.notification { $0["method"] == .string("job/progress")
                && $0["params"]?["jobId"] == .string(id) && $0["params"]?["state"] == .string("running") }
            let paused = try await session.result("job/pause", #"{"jobId":"\#(id)"}"#, id: 100 + round)
            #expect(paused["state"] == .string("paused"))
            let checkpoint = try #require(paused["checkpoint"]?.text)
            #expect(checkpoint.hasPrefix("primekit-"))
            let status = try await session.result("job/status", #"{"jobId":"\#(id)"}"#, id: 200 + round)
            #expect(status["state"] == .string("paused"))
            #expect(status["checkpoint"]?.text == checkpoint)
            let resumed = try await session.result("job/resume", #"{"jobId":"\#(id)"}"#, id: 300 + round)
            #expect(resumed["state"] == .string("queued") || resumed["state"] == .string("running"))
        }
        _ = try await session.result("job/cancel", #"{"jobId":"\#(id)"}"#, id: 400)
        _ = try await session.log.finished(id)
        let messages = session.log.messages
        var paused = false
        for message in messages {
            if case .number(let text)? = message["id"], let number = Int(text) {
                if (100..<200).contains(number) { paused = true }
                if (300..<400).contains(number) { paused = false }
            }
            if paused, message["method"] == .string("job/progress") {
                Issue.record("progress between a pause response and the resume response: \(String(decoding: message.encoded, as: UTF8.self))")
            }
        }
        #expect(await session.end() == 0)
    }

    @Test func aPausedJobsCheckpointFinishesInAnotherEngineWithTheSameAnswer() async throws {
        let candidate = "340282366920938463463374607431768211457"  // 2^128 + 1 = 59649589127497217 · 5704689200685129054721
        let job = #"{"kind":"factor","candidate":"\#(candidate)","bound":"100000000","progressIntervalMs":1}"#
        let first = await Session.start()
        _ = try await first.result("queue/suspend")
        let id = try await first.result("job/submit", job)["jobId"]!.text!
        let paused = try await first.result("job/pause", #"{"jobId":"\#(id)"}"#)
        let checkpoint = try #require(paused["checkpoint"]?.text)
        #expect(await first.end() == 0)

        let second = await Session.start()
        var params = JSONWriter()
        params.object { $0.member("checkpoint", string: checkpoint) }
        let resumed = try await second.result("job/submit", String(decoding: params.bytes, as: UTF8.self))
        let finished = try await second.log.finished(resumed["jobId"]!.text!)
        let direct = await Session.start()
        let directID = try await direct.result("job/submit", job)["jobId"]!.text!
        let expected = try await direct.log.finished(directID)
        #expect(finished["params"]?["result"] == expected["params"]?["result"])
        #expect(finished["params"]?["result"]?["cofactorStatus"] == .string("composite"))
        #expect(await second.end() == 0)
        #expect(await direct.end() == 0)
    }

    @Test func aSplitCheckpointWithItsFirstPieceDeletedIsRefusedWith1003() async throws {
        // 71 · 839 · 1471 · 6857 · (10^30 + 57), split in 8 pieces on 2 workers.
        let job = #"{"kind":"factor","candidate":"600851475143000000000000000034248534083151","bound":"200000000"}"#
        var settings = EngineSettings()
        settings.maxConcurrentJobs = 2
        let session = await Session.start(settings: settings)
        _ = try await session.result("queue/suspend")
        let id = try await session.result("job/submit", job)["jobId"]!.text!
        let paused = try await session.result("job/pause", #"{"jobId":"\#(id)"}"#)
        let checkpoint = try #require(paused["checkpoint"]?.text)
        #expect(checkpoint.contains("\npieces 8\n"))
        // Delete the first piece (its `piece` line and kernel text) and say `pieces 7`.
        let first = try #require(checkpoint.range(of: "\npiece "))
        let second = try #require(checkpoint.range(of: "\npiece ", range: first.upperBound..<checkpoint.endIndex))
        let edited = (checkpoint[..<first.lowerBound] + checkpoint[second.lowerBound...])
            .replacingOccurrences(of: "\npieces 8\n", with: "\npieces 7\n")
        var params = JSONWriter()
        params.object { $0.member("checkpoint", string: edited) }
        let response = try await session.request("job/submit", String(decoding: params.bytes, as: UTF8.self))
        #expect(response["error"]?["code"] == .number("1003"))
        #expect(response["error"]?["message"]?.text?.contains("checksum") == true)
        #expect(await session.end() == 0)
    }

    @Test func cancelReturnsTheCheckpointAndTheJobFinishesCancelled() async throws {
        let session = await Session.start()
        let id = try await session.result("job/submit", longJob)["jobId"]!.text!
        _ = try await session.log.notification { $0["params"]?["jobId"] == .string(id) }
        let cancelled = try await session.result("job/cancel", #"{"jobId":"\#(id)"}"#)
        #expect(cancelled["state"] == .string("cancelled"))
        let checkpoint = try #require(cancelled["checkpoint"]?.text)
        let finished = try await session.log.finished(id)
        #expect(finished["params"]?["state"] == .string("cancelled"))
        #expect(finished["params"]?["reason"] == .string("cancelled"))
        #expect(finished["params"]?["checkpoint"]?.text == checkpoint)
        // Cancelling again answers the same; pausing or resuming a finished job is a state error.
        let again = try await session.result("job/cancel", #"{"jobId":"\#(id)"}"#)
        #expect(again["checkpoint"]?.text == checkpoint)
        for method in ["job/pause", "job/resume"] {
            let refused = try await session.request(method, #"{"jobId":"\#(id)"}"#)
            #expect(refused["error"]?["code"] == .number("1002"))
            #expect(refused["error"]?["data"]?["state"] == .string("cancelled"))
        }
        let status = try await session.result("job/status", #"{"jobId":"\#(id)"}"#)
        #expect(status["state"] == .string("cancelled") && status["checkpoint"]?.text == checkpoint)
        #expect(await session.end() == 0)
    }

    @Test func dependentsWaitAndInheritCancellation() async throws {
        let session = await Session.start()
        _ = try await session.result("queue/suspend")
        let a = try await session.result("job/submit", longJob)["jobId"]!.text!
        let b = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"97","dependsOn":["\#(a)"]}"#)
        #expect(b["state"] == .string("pending"))
        let c = try await session.result("job/submit",
                                         #"{"kind":"isPrime","candidate":"91","dependsOn":["\#(b["jobId"]!.text!)"]}"#)
        let unknown = try await session.request("job/submit", #"{"kind":"isPrime","candidate":"5","dependsOn":["j999"]}"#)
        #expect(unknown["error"]?["code"] == .number("1001"))
        let pausePending = try await session.request("job/pause", #"{"jobId":"\#(c["jobId"]!.text!)"}"#)
        #expect(pausePending["error"]?["code"] == .number("1002"))
        _ = try await session.result("job/cancel", #"{"jobId":"\#(a)"}"#)
        let bFinished = try await session.log.finished(b["jobId"]!.text!)
        #expect(bFinished["params"]?["state"] == .string("cancelled"))
        #expect(bFinished["params"]?["reason"]?.text?.contains(a) == true)
        let cFinished = try await session.log.finished(c["jobId"]!.text!)
        #expect(cFinished["params"]?["reason"]?.text?.contains(b["jobId"]!.text!) == true)
        // A dependency that already succeeded is satisfied.
        _ = try await session.result("queue/resume")
        let done = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"7"}"#)["jobId"]!.text!
        _ = try await session.log.finished(done)
        let after = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"11","dependsOn":["\#(done)"]}"#)
        let afterFinished = try await session.log.finished(after["jobId"]!.text!)
        #expect(afterFinished["params"]?["result"]?["isPrime"] == .bool(true))
        #expect(await session.end() == 0)
    }

    @Test func busyWhenMaxActiveJobsAreUnfinishedAndNothingElseChanges() async throws {
        var limits = BridgeLimits()
        limits.maxActiveJobs = 2
        let session = await Session.start(limits: limits)
        _ = try await session.result("queue/suspend")
        _ = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"101"}"#)
        _ = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"103"}"#)
        let busy = try await session.request("job/submit", #"{"kind":"isPrime","candidate":"107"}"#)
        #expect(busy["error"]?["code"] == .number("-32000"))
        #expect(busy["error"]?["data"]?["retryAfterMs"] != nil)
        let list = try await session.result("job/list")
        if case .array(let jobs)? = list["jobs"] { #expect(jobs.count == 2) } else { Issue.record("no list") }
        _ = try await session.result("queue/resume")
        _ = try await session.log.finished("j1")
        _ = try await session.log.finished("j2")
        _ = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"107"}"#)
        #expect(await session.end() == 0)
    }

    @Test func batchesAnswerInOneArrayAndRespectTheLimit() async throws {
        var limits = BridgeLimits()
        limits.maxBatch = 3
        let session = await Session.start(limits: limits)
        await session.send(#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#)
        let batch = try await session.log.nextResponse()
        guard case .array(let items) = batch else { Issue.record("not an array"); return }
        #expect(items.count == 2)
        #expect(items[0]["result"] == .object([:]) && items[1]["error"]?["code"] == .number("-32601"))
        await session.send(#"[{"jsonrpc":"2.0","method":"ping"},{"jsonrpc":"2.0","method":"ping"}]"#)
        await session.send(#"[1,2,3,4]"#)
        let tooLong = try await session.log.nextResponse()  // the notification-only batch had no response
        #expect(tooLong["error"]?["code"] == .number("-32600") && tooLong["id"] == .null)
        // A batch with a member that waits (pause) still answers every member, in order.
        _ = try await session.result("queue/suspend")
        let id = try await session.result("job/submit", longJob)["jobId"]!.text!
        await session.send(#"[{"jsonrpc":"2.0","id":"p","method":"job/pause","params":{"jobId":"\#(id)"}},{"jsonrpc":"2.0","id":"s","method":"job/status","params":{"jobId":"\#(id)"}}]"#)
        guard case .array(let waited) = try await session.log.nextResponse() else { Issue.record("not an array"); return }
        #expect(waited.map { $0["id"] } == [.string("p"), .string("s")])
        #expect(waited[1]["result"]?["state"] == .string("paused"))
        #expect(await session.end() == 0)
    }

    @Test func anUndecidedIsPrimeAnswerSaysItIsNotComplete() async throws {
        var settings = EngineSettings()
        settings.bpswDigits = 20
        let session = await Session.start(settings: settings)
        _ = try await session.result(
            "job/submit", #"{"kind":"isPrime","candidate":"1000000000000000000000000000057","bound":"1000"}"#)
        let finished = try await session.log.finished("j1")
        #expect(finished["params"]?["result"] == .parse(
            #"{"candidate":"1000000000000000000000000000057","isPrime":null,"complete":false,"progress":100}"#))
        #expect(await session.end() == 0)
    }

    @Test func aFromBelowTwoIsRefusedNamingFrom() async throws {
        let session = await Session.start()
        for (id, from) in ["0", "1"].enumerated() {
            for bound in [nil, "10"] {
                let boundPart = bound.map { #","bound":"\#($0)""# } ?? ""
                let response = try await session.request(
                    "job/submit", #"{"kind":"factor","candidate":"30","from":"\#(from)"\#(boundPart)}"#, id: id)
                #expect(response["error"]?["code"] == .number("-32602"))
                #expect(response["error"]?["data"]?["field"] == .string("from"))
                #expect(response["error"]?["data"]?["got"] == .string(from))
                #expect(response["error"]?["data"]?["reason"] == .string("must be at least 2, the first divisor tried"))
            }
        }
        let list = try await session.result("job/list", id: 9)
        #expect(list["jobs"] == .array([]))
        #expect(await session.end() == 0)
    }

    @Test func candidateLengthLimitGives1004AndTheLimitItselfIsAccepted() async throws {
        var limits = BridgeLimits()
        limits.maxDigits = 50
        let session = await Session.start(limits: limits)
        let atLimit = "1" + String(repeating: "0", count: 48) + "9"
        let ok = try await session.request("job/submit", #"{"kind":"factor","candidate":"\#(atLimit)","bound":"1000"}"#)
        #expect(ok["result"]?["jobId"] != nil)
        let over = try await session.request("job/submit", #"{"kind":"factor","candidate":"\#(atLimit)1"}"#)
        #expect(over["error"]?["code"] == .number("1004"))
        #expect(over["error"]?["data"]?["digits"] == .number("51"))
        #expect(await session.end() == 0)
    }

    @Test func settingsAreNegotiatedAndCommittedOnApply() async throws {
        let session = await Session.start()
        let first = try await session.result("settings/request", #"{"progressIntervalMs":50}"#)
        #expect(first["accepted"]?["progressIntervalMs"] == .bool(true) && first["pending"] == .bool(true))
        let worse = try await session.result("settings/request", #"{"progressIntervalMs":80}"#)
        #expect(worse["accepted"]?["progressIntervalMs"] == .bool(false))
        let before = try await session.result("settings/get")
        #expect(before["settings"]?["progressIntervalMs"] == .number("250"))
        let applied = try await session.result("settings/apply")
        #expect(applied["settings"]?["progressIntervalMs"] == .number("50"))
        if case .array(let changes)? = applied["changes"] {
            #expect(changes.contains { $0["name"] == .string("progressIntervalMs") && $0["to"] == .string("50 ms") })
        }
        _ = try await session.result("settings/override", #"{"progressIntervalMs":500}"#)
        #expect(try await session.result("settings/apply")["settings"]?["progressIntervalMs"] == .number("500"))
        _ = try await session.result("settings/override", #"{"progressIntervalMs":null}"#)
        #expect(try await session.result("settings/apply")["settings"]?["progressIntervalMs"] == .number("50"))
        // A bad member refuses the whole request: nothing of it is recorded.
        let bad = try await session.request("settings/request", #"{"maxConcurrentJobs":8,"sliceMs":0}"#)
        #expect(bad["error"]?["data"]?["field"] == .string("sliceMs"))
        #expect(try await session.result("settings/get")["pending"] == .bool(false))
        let directory = try await session.request("settings/override", #"{"stateDirectory":"/tmp/x"}"#)
        #expect(directory["error"]?["code"] == .number("-32602"))
        let unknown = try await session.request("settings/request", #"{"colour":1}"#)
        #expect(unknown["error"]?["data"]?["field"] == .string("colour"))
        _ = try await session.result("settings/request", #"{"maxConcurrentJobs":3}"#)
        _ = try await session.result("settings/apply")
        #expect(session.engine.queue.maxConcurrentJobs == 3)
        #expect(await session.end() == 0)
    }

    @Test func clientsReachPluginStreamsAndBroadcasts() async throws {
        let session = await Session.start()
        let listener = TagListener()
        session.engine.add(listener)
        let plugins = try await session.result("plugin/list")
        #expect(plugins["plugins"] == .parse(#"["primekit.logging","primekit.bridge","test.listener"]"#))
        let subscribed = try await session.result("plugin/subscribe", #"{"streams":["lifecycle","pluginData"],"tags":["com.example."]}"#)
        #expect(subscribed["streams"] == .parse(#"["lifecycle","pluginData"]"#))
        _ = try await session.result("queue/suspend")
        _ = try await session.log.notification { $0["method"] == .string("engine/event")
            && $0["params"]?["event"]?["event"] == .string("suspended") }
        _ = try await session.result("plugin/broadcast", #"{"tag":"com.example.hello","data":{"n":[1,2]}}"#)
        let received = try await listener.next()
        #expect(received.tag == "com.example.hello" && received.data == .parse(#"{"n":[1,2]}"#))
        session.engine.broadcast(tag: "com.example.reply", data: "hi", from: listener)
        session.engine.broadcast(tag: "org.other.reply", data: "filtered out", from: listener)
        let event = try await session.log.notification { $0["params"]?["stream"] == .string("pluginData") }
        #expect(event["params"]?["event"]?["tag"] == .string("com.example.reply"))
        #expect(event["params"]?["event"]?["data"] == .string("hi"))
        let reserved = try await session.request("plugin/broadcast", #"{"tag":"primekit.store.saved"}"#)
        #expect(reserved["error"]?["code"] == .number("-32602"))
        let after = try await session.result("plugin/unsubscribe", #"{"streams":["lifecycle"]}"#)
        #expect(after["streams"] == .parse(#"["pluginData"]"#))
        #expect(!session.log.messages.contains { $0["params"]?["event"]?["data"] == .string("filtered out") })
        #expect(await session.end() == 0)
    }

    @Test func shutdownListsUnfinishedJobsThenOnlyExitIsAccepted() async throws {
        let session = await Session.start()
        let running = try await session.result("job/submit", longJob)["jobId"]!.text!
        _ = try await session.log.notification { $0["params"]?["jobId"] == .string(running) }
        _ = try await session.result("queue/suspend")
        let queued = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"1000003"}"#)["jobId"]!.text!
        _ = try await session.result("queue/resume")
        let shutdown = try await session.result("shutdown")
        guard case .array(let jobs)? = shutdown["jobs"] else { Issue.record("no jobs"); return }
        let ids = jobs.compactMap { $0["jobId"]?.text }
        #expect(ids.contains(running))
        #expect(jobs.allSatisfy { $0["checkpoint"]?.text?.hasPrefix("primekit-") == true })
        _ = queued
        let late = try await session.request("ping")
        #expect(late["error"]?["code"] == .number("-32002"))
        await session.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(session.exitStatus.value == 0)
        #expect(!session.log.messages.contains { $0["method"] == .string("job/finished") && $0["params"]?["jobId"] == .string(running) })
    }

    @Test func exitWithoutShutdownExitsOne() async throws {
        let session = await Session.start()
        await session.send(#"{"jsonrpc":"2.0","method":"exit"}"#)
        #expect(session.exitStatus.value == 1)
    }

    @Test func queueResetCancelsEverythingAndTheQueueStaysUsable() async throws {
        let session = await Session.start()
        _ = try await session.result("queue/suspend")
        for n in 0..<5 { _ = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"\#(1009 + 2 * n)"}"#) }
        let reset = try await session.result("queue/reset")
        #expect(reset["cancelled"] == .parse(#"["j1","j2","j3","j4","j5"]"#))
        for n in 1...5 {
            let finished = try await session.log.finished("j\(n)")
            #expect(finished["params"]?["reason"] == .string("the queue was reset"))
        }
        _ = try await session.result("queue/resume")
        let next = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"1013"}"#)["jobId"]!.text!
        #expect(try await session.log.finished(next)["params"]?["state"] == .string("succeeded"))
        let list = try await session.result("job/list", #"{"state":["cancelled"]}"#)
        if case .array(let jobs)? = list["jobs"] { #expect(jobs.count == 5) }
        let badFilter = try await session.request("job/list", #"{"state":"ready"}"#)
        #expect(badFilter["error"]?["code"] == .number("-32602"))
        #expect(await session.end() == 0)
    }

    @Test func aSlowClientGetsCoalescedProgressAndEveryResult() async throws {
        let session = await Session.start(blocked: true)
        let count = 300
        for index in 0..<count {
            await session.send(#"{"jsonrpc":"2.0","id":\#(index),"method":"job/submit","params":{"kind":"factor","candidate":"\#(18_446_744_073_709_551_557 as UInt64 - UInt64(index * 2))","bound":"3000000","progressIntervalMs":1}}"#)
        }
        await session.engine.queue.waitUntilIdle()
        session.server.waitUntilSettled(timeout: 10)
        let backlog = session.server.outbox.backlog
        #expect(backlog.progressLines <= count, "progress is coalesced to at most one waiting line per job")
        session.output.open()
        for index in 1...count { _ = try await session.log.finished("j\(index)") }
        #expect(session.log.messages.filter { $0["id"] != nil }.count == count)
        #expect(await session.end() == 0)
    }
}

/// A plugin that hands the tests what other plugins broadcast.
final class TagListener: Plugin, @unchecked Sendable {
    var name: String { "test.listener" }
    private let received = MessageLog()

    func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        engine.subscribe(self, to: .pluginData, tags: .prefixes(["com.example."]))
        return true
    }

    func stop() -> PluginStopResult { .stopped }

    func receive(_ event: EngineEvent) {
        guard case .pluginData(let data) = event, let value = data.data as? JSONValue else { return }
        received.append(JSONValue.object(["tag": .string(data.tag), "data": value]).encoded + [0x0A])
    }

    func next() async throws -> (tag: String, data: JSONValue) {
        let message = try await received.notification { _ in true }
        return (message["tag"]!.text!, message["data"]!)
    }
}
