import Foundation
import Testing
@testable import PrimeKit

@Suite(.timeLimit(.minutes(3))) struct EnginePluginTests {
    @Test func lifecycleIsInitializeThenEventsThenStop() async throws {
        let engine = await Engine.testing()
        let probe = Probe("probe", streams: .results)
        #expect(engine.add(probe, arguments: ["mode": "test"]))
        #expect(engine.plugins.map(\.name) == ["probe"])
        #expect(!engine.add(probe))  // a plugin is installed once
        let job = try engine.submit(.isPrime(1301081))
        _ = try await job.result
        await probe.wait { $0.count(of: .results) == 1 }
        #expect(await engine.remove(probe) == .removed)
        #expect(probe.lifecycle == ["initialize [\"mode\"]", "receive", "stop"])
        #expect(engine.plugins.isEmpty)
        #expect(await engine.remove(probe) == .notInstalled)
        _ = try await engine.submit(.isPrime(179402471)).result
        #expect(probe.events.count == 1)  // nothing after removal
        _ = await engine.shutdown()
    }

    /// A completion on the results stream says what the job's own handle says: result, candidate, state and kind,
    /// whether the answer is a small job's (kept as the kernel's eight-byte answer) or any other.
    @Test func completionsMatchTheJobsOwnAnswers() async throws {
        let engine = await Engine.testing { _, options in options.failureInjection = .failing(["91": "injected"]) }
        let probe = Probe("probe", streams: .results)
        engine.add(probe)
        let requests: [JobRequest] = [
            .isPrime(97), .isPrime("1301081"), .factor(600_851_475_143), .factor("4294967291"), .isPrime(4_294_967_296),
            .factor(UInt64(4_294_967_295)), .isPrime("18446744073709551557", bound: "1000"), .factor(2), .isPrime(4),
            .factor("170141183460469231731687303715884105727", bound: "100000"),
        ]
        var jobs = try requests.map { try engine.submit($0) }
        jobs.append(try engine.submit(JobRequest.isPrime(91)))  // fails: the engine's test seam names it
        for job in jobs { _ = try? await job.result }
        await probe.wait { $0.count(of: .results) == jobs.count }
        let completions = Dictionary(uniqueKeysWithValues: probe.completions().map { ($0.jobID, $0) })
        for job in jobs {
            let completion = try #require(completions[job.id])
            #expect(completion.kind == job.kind)
            #expect(completion.candidate == job.candidate)
            #expect(completion.state == job.state)
            let own: Result<JobResult, any Error>
            do { own = .success(try await job.result) } catch { own = .failure(error) }
            switch (completion.outcome, own) {
            case (.succeeded(let result), .success(let expected)):
                #expect(result == expected)
                #expect(completion.result == expected)
                #expect(result.candidate == job.candidate)
            case (.failed(let error), .failure(let expected as PrimeKitError)):
                #expect(error == expected)
                #expect(completion.result == nil)
            default:
                Issue.record("job \(job.id): completion \(completion.outcome) does not match the job")
            }
        }
        _ = await engine.shutdown()
    }

    /// A plugin taking runs in `receive(contentsOf:)` sees exactly what one taking each event in `receive(_:)` sees,
    /// in the same order.
    @Test func pluginsTakingRunsSeeTheSameEventsInTheSameOrder() async throws {
        let engine = await Engine.testing { _, options in options.failureInjection = .failing(["2300": "injected"]) }
        let single = Probe("single")
        let runs = Probe("runs", inRuns: true)
        engine.add(single)
        engine.add(runs)
        let requests = (0..<600).map { JobRequest.isPrime(UInt64(2_000 + $0)) }
        #expect(requests[300].candidate == "2300")  // fails: the engine's test seam names it
        let jobs = try engine.submit(contentsOf: requests)
        for job in jobs { _ = try? await job.result }
        engine.broadcast(tag: "test.end", data: 0, from: nil)
        for probe in [single, runs] {
            await probe.wait { $0.contains { if case .pluginData = $0 { true } else { false } } }
        }
        func described(_ events: [EngineEvent]) -> [String] {
            events.map { event in
                switch event {
                case .finished(let completion): "finished \(completion.jobID) \(completion.state) \(completion.candidate)"
                case .error(let error): "error \(error.kind) \(error.jobID.map { "\($0)" } ?? "")"
                case .lifecycle(let change): "lifecycle \(change)"
                case .progress(let progress): "progress \(progress.jobID)"
                case .pluginData(let data): "data \(data.tag)"
                }
            }
        }
        // Stream by stream (the streams interleave as their producers do: a worker may report an end before the
        // submitter announced the job). The first plugin also saw the second one's arrival.
        let seen = described(runs.events).filter { !$0.hasPrefix("lifecycle pluginAdded") }
        let expected = described(single.events).filter { !$0.hasPrefix("lifecycle pluginAdded") }
        for stream in ["finished", "error", "lifecycle", "data"] {
            let mine = seen.filter { $0.hasPrefix(stream) }, theirs = expected.filter { $0.hasPrefix(stream) }
            #expect(mine.count == theirs.count, "\(stream)")
            let first = mine.indices.first { $0 < theirs.count && mine[$0] != theirs[$0] }
            #expect(first == nil, "\(stream) from \(first ?? 0): \(mine.dropFirst(first ?? 0).prefix(2)) vs \(theirs.dropFirst(first ?? 0).prefix(2))")
        }
        #expect(seen.filter { $0.hasPrefix("finished") }.count == 600)
        #expect(seen.contains("error jobFailed \(jobs[300].id)"))
        #expect(runs.runsReceived > 0 && runs.runsReceived < 600)
        _ = await engine.shutdown()
    }

    @Test func initializeReturningFalseStopsAndDropsThePlugin() async {
        let engine = await Engine.testing()
        let watcher = Probe("watcher", streams: [.errors])
        engine.add(watcher)
        let failing = Probe("failing")
        failing.initializeAnswer = false
        #expect(!engine.add(failing))
        #expect(failing.lifecycle == ["initialize []", "stop"])
        #expect(engine.plugins.map(\.name) == ["watcher"])
        await watcher.wait { events in
            events.contains { if case .error(let e) = $0 { e.kind == .pluginInitializeFailed } else { false } }
        }
        _ = await engine.shutdown()
    }

    @Test func aRefusedStopIsReportedAndRetried() async {
        let engine = await Engine.testing()
        let watcher = Probe("watcher", streams: [.errors, .lifecycle])
        engine.add(watcher)
        let busy = Probe("busy")
        busy.stopAnswers = [.refused(reason: "write in flight")]
        engine.add(busy)
        // Asked once: refused, and still installed.
        #expect(await engine.remove(busy) == .refused(reason: "write in flight"))
        #expect(engine.plugins.contains { $0 === busy })
        await watcher.wait { events in
            events.contains { if case .error(let e) = $0 { e.kind == .pluginStopRefused && e.plugin == "busy" }
                              else { false } }
                && events.contains { if case .lifecycle(.pluginStopRefused("busy", "write in flight")) = $0 { true }
                                     else { false } }
        }
        // With retries: refused twice, then stops. The window only bounds the retries (the third one succeeds at
        // once); it is wide because a loaded test run held this task back for more than 30 s between two of them.
        busy.stopAnswers = [.refused(reason: "a"), .refused(reason: "b")]
        #expect(await engine.remove(busy, retryFor: .seconds(600)) == .removed)
        #expect(busy.lifecycle.filter { $0 == "stop" }.count == 4)
        _ = await engine.shutdown()
    }

    @Test func shutdownWaitsABoundedTimeForARefusingPlugin() async {
        let engine = await Engine.testing()  // stopTimeout 100 ms
        let stubborn = Probe("stubborn")
        stubborn.stopAnswers = Array(repeating: .refused(reason: "never"), count: 10_000)
        let polite = Probe("polite")
        engine.add(polite)
        engine.add(stubborn)
        let report = await engine.shutdown()
        #expect(report.forcedPlugins == ["stubborn": "never"])
        #expect(engine.plugins.isEmpty)
        #expect(polite.lifecycle.last == "stop")
        #expect(throws: PrimeKitError.self) { try engine.submit(.isPrime(7)) }
        #expect(!engine.add(Probe("late")))
    }

    @Test func nothingIsRetainedAfterRemoval() async throws {
        let engine = await Engine.testing()
        weak var weakProbe: Probe?
        do {
            let probe = Probe("transient", streams: .all)
            weakProbe = probe
            engine.add(probe)
            _ = try await engine.submit(.isPrime(1301081)).result
            await probe.wait { $0.count(of: .results) == 1 }
            #expect(await engine.remove(probe) == .removed)
        }
        #expect(weakProbe == nil)
        // Also when the engine shuts down.
        do {
            let probe = Probe("until shutdown")
            weakProbe = probe
            engine.add(probe)
        }
        _ = await engine.shutdown()
        #expect(weakProbe == nil)
    }
}

@Suite(.timeLimit(.minutes(3))) struct EngineStreamTests {
    @Test func streamsAreAnOptionSet() {
        #expect(Streams.all.subtracting(.pluginData) == [.progress, .results, .errors, .lifecycle])
        #expect(Streams.none.isEmpty)
        #expect(Streams.all.contains(.lifecycle))
        #expect(Streams([.results, .errors]).union(.progress).rawValue == 0b111)
        #expect("\(Streams.all.subtracting(.progress))" == "[results, errors, pluginData, lifecycle]")
    }

    @Test func eachPluginGetsExactlyTheStreamsItSubscribedTo() async throws {
        let engine = await Engine.testing { _, options in options.failureInjection = .failing(["91": "boom"]) }
        let everything = Probe("everything", streams: .all)
        let allButData = Probe("allButData", streams: .all.subtracting(.pluginData))
        let resultsOnly = Probe("resultsOnly", streams: .results)
        let nothing = Probe("nothing", streams: .none)
        let sender = Probe("sender", streams: .none)
        for plugin in [everything, allButData, resultsOnly, nothing, sender] { engine.add(plugin) }
        let job = try engine.submit(Slow.endlessFactor.splitting(false).progressInterval(.zero))
        await everything.wait { $0.count(of: .progress) >= 3 }
        job.cancel()
        _ = try? await job.result
        _ = try? await engine.submit(JobRequest.isPrime(91)).result
        engine.broadcast(tag: "test.hello", data: 42, from: sender)
        engine.broadcast(tag: "test.last", data: 0, from: sender)
        for probe in [everything, allButData] {
            await probe.wait { $0.count(of: .results) == 2 && $0.count(of: .errors) == 1 }
        }
        await everything.wait { $0.count(of: .pluginData) == 2 }
        await resultsOnly.wait { $0.count(of: .results) == 2 }
        let a = everything.events, b = allButData.events, c = resultsOnly.events
        #expect(a.count(of: .progress) > 0 && a.count(of: .lifecycle) > 0)
        await allButData.wait { $0.count(of: .progress) > 0 }
        #expect(b.count(of: .lifecycle) > 0 && b.count(of: .pluginData) == 0)
        #expect(c.allSatisfy { $0.stream == .results })
        #expect(nothing.events.isEmpty && sender.events.isEmpty)
        // A result is the last event about its job.
        let lastForJob = a.lastIndex { if case .progress(let p) = $0 { p.jobID == job.id } else { false } }!
        let finished = a.firstIndex { if case .finished(let f) = $0 { f.jobID == job.id } else { false } }!
        #expect(lastForJob < finished)
        #expect(engine.subscriptions(of: allButData) == .all.subtracting(.pluginData))
        // Unsubscribing.
        engine.unsubscribe(everything, from: .all.subtracting(.lifecycle))
        #expect(engine.subscriptions(of: everything) == .lifecycle)
        _ = await engine.shutdown()
    }

    @Test func broadcastSkipsTheSenderAndFiltersByTag() async {
        let engine = await Engine.testing()
        let sender = Probe("sender", streams: .pluginData)
        let all = Probe("all", streams: .pluginData)
        let exact = Probe("exact", streams: .pluginData, tags: .exactly(["com.example.a"]))
        let prefix = Probe("prefix", streams: .pluginData, tags: .prefixes(["com.example."]))
        let other = Probe("other", streams: .pluginData, tags: .prefixes(["org.other."]))
        let deaf = Probe("deaf", streams: .all.subtracting(.pluginData))
        for plugin in [sender, all, exact, prefix, other, deaf] { engine.add(plugin) }
        engine.broadcast(tag: "com.example.a", data: "A", from: sender)
        engine.broadcast(tag: "com.example.b", data: "B", from: sender)
        engine.broadcast(tag: "org.other.c", data: "C", from: sender)
        engine.broadcast(tag: "org.other.end", data: "end", from: all)  // all does not get its own
        await all.wait { $0.count(of: .pluginData) == 3 }
        await exact.wait { $0.count(of: .pluginData) == 1 }
        await prefix.wait { $0.count(of: .pluginData) == 2 }
        await other.wait { $0.count(of: .pluginData) == 2 }
        await sender.wait { $0.count(of: .pluginData) == 1 }
        #expect(all.pluginData().map(\.tag) == ["com.example.a", "com.example.b", "org.other.c"])
        #expect(exact.pluginData().map { $0.data as? String } == ["A"])
        #expect(prefix.pluginData().map(\.tag) == ["com.example.a", "com.example.b"])
        #expect(other.pluginData().map(\.tag) == ["org.other.c", "org.other.end"])
        #expect(sender.pluginData().map(\.sender) == ["all"])
        #expect(all.pluginData().allSatisfy { $0.sender == "sender" })
        _ = await engine.shutdown()
        #expect(deaf.pluginData().isEmpty)
    }

    @Test func aBlockedPluginStallsNeitherWorkersNorOtherPlugins() async throws {
        let engine = await Engine.testing()
        let stuck = Probe("stuck", streams: .all, blocked: true)
        let healthy = Probe("healthy", streams: [.results, .progress])
        engine.add(stuck)
        engine.add(healthy)
        engine.broadcast(tag: "test.first", data: 0, from: nil)  // stuck is now inside receive, blocked
        let count = 1_000
        let jobs = try engine.submit(contentsOf: (0..<count).map { .isPrime(1_000 + $0).progressInterval(.zero) })
        for job in jobs { _ = try await job.result }
        await healthy.wait { $0.count(of: .results) == count }
        #expect(engine.queue.counts.succeeded == count)
        #expect(stuck.events.isEmpty)
        // Progress was coalesced for the stuck plugin; results are all kept.
        stuck.gate!.signal()
        for _ in 0..<(count * 4) { stuck.gate!.signal() }
        await stuck.wait { $0.count(of: .results) == count }
        #expect(Set(stuck.completions().map(\.jobID)) == Set(jobs.map(\.id)))
        #expect(stuck.events.count(of: .progress) <= count)
        _ = await engine.shutdown()
    }

    @Test func aBlockedPluginIsMovedToAThreadOfItsOwnAndKeepsItsOrder() async {
        let engine = await Engine.testing()
        weak var weakStuck: Probe?
        do {
            let stuck = Probe("stuck", streams: .pluginData, blocked: true)
            let healthy = Probe("healthy", streams: .pluginData)
            weakStuck = stuck
            engine.add(stuck)
            engine.add(healthy)
            let tags = (0..<50).map { "test.\($0)" }
            // The stuck plugin is offered each message first, so the shared thread blocks inside its `receive`;
            // the healthy one gets its messages only once the stuck one has been given a thread of its own.
            for (index, tag) in tags.enumerated() { engine.broadcast(tag: tag, data: index, from: nil) }
            await healthy.wait { $0.count(of: .pluginData) == tags.count }
            #expect(healthy.pluginData().map(\.tag) == tags)
            #expect(engine.detachedPlugins >= 1)  // the stuck one (a slow machine may move the healthy one too)
            #expect(stuck.events.isEmpty)
            for _ in tags { stuck.gate!.signal() }
            await stuck.wait { $0.count(of: .pluginData) == tags.count }
            #expect(stuck.pluginData().map(\.tag) == tags)
            // Later events reach it on its own thread, and removing it ends that thread and lets it go.
            engine.broadcast(tag: "test.late", data: 50, from: nil)
            stuck.gate!.signal()
            await stuck.wait { $0.count(of: .pluginData) == tags.count + 1 }
            #expect(await engine.remove(stuck) == .removed)
            engine.broadcast(tag: "test.after", data: 51, from: nil)
            await healthy.wait { $0.count(of: .pluginData) == tags.count + 2 }
        }
        #expect(weakStuck == nil)
        _ = await engine.shutdown()
    }

    @Test func pluginDataBeyondTheCapacityDropsTheOldestAndSaysSo() async {
        let engine = await Engine.testing { _, options in options.mailboxCapacity = 4 }
        let stuck = Probe("stuck", streams: .pluginData, blocked: true)
        engine.add(stuck)
        for index in 0..<10 { engine.broadcast(tag: "test.\(index)", data: index, from: nil) }
        for _ in 0..<20 { stuck.gate!.signal() }
        await stuck.wait { events in events.contains { if case .pluginData(let d) = $0 { d.tag == "test.9" } else { false } } }
        let tags = stuck.pluginData().map(\.tag)
        let dropped = stuck.events.compactMap { if case .lifecycle(.eventsDropped(let n)) = $0 { n } else { nil } }
        #expect(tags.suffix(4) == ["test.6", "test.7", "test.8", "test.9"])
        #expect(tags.count + dropped.reduce(0, +) == 10)
        #expect(!dropped.isEmpty)
        _ = await engine.shutdown()
    }

    @Test func aBatchAnnouncesOnlyTheNewestSubmissionsBeyondTheCapacity() async throws {
        let engine = await Engine.testing { _, options in options.mailboxCapacity = 4 }
        let stuck = Probe("stuck", streams: .lifecycle, blocked: true)
        engine.add(stuck)  // its pluginAdded event keeps it inside receive, blocked
        let jobs = try engine.submit(contentsOf: (0..<10).map { .isPrime(1_000 + $0) })
        for _ in 0..<20 { stuck.gate!.signal() }
        let last = jobs.last!.id
        await stuck.wait { events in
            events.contains { if case .lifecycle(.jobSubmitted(let id)) = $0 { id == last } else { false } }
        }
        let announced = stuck.events.compactMap { if case .lifecycle(.jobSubmitted(let id)) = $0 { id } else { nil } }
        let dropped = stuck.events.compactMap { if case .lifecycle(.eventsDropped(let n)) = $0 { n } else { nil } }
        #expect(announced == jobs.suffix(4).map(\.id))
        // Offered: its pluginAdded (dropped too when the thread had not taken it yet) and the ten submissions.
        let delivered = stuck.events.filter { if case .lifecycle(.eventsDropped) = $0 { false } else { true } }
        #expect(delivered.count + dropped.reduce(0, +) == 11)
        #expect(dropped.count == 1)
        _ = await engine.shutdown()
    }

    /// A batch's announcements wait as one run; later events push its oldest out one by one, in order, counted.
    @Test func laterEventsDropTheOldestAnnouncementsOfABatchInOrder() async throws {
        let engine = await Engine.testing { _, options in options.mailboxCapacity = 6 }
        let stuck = Probe("stuck", streams: [.lifecycle, .pluginData], blocked: true)
        engine.add(stuck)  // its pluginAdded event keeps it inside receive, blocked
        let jobs = try engine.submit(contentsOf: (0..<5).map { .isPrime(1_000 + $0) })
        for index in 0..<4 { engine.broadcast(tag: "test.\(index)", data: index, from: nil) }
        for _ in 0..<30 { stuck.gate!.signal() }
        await stuck.wait { events in
            events.contains { if case .pluginData(let data) = $0 { data.tag == "test.3" } else { false } }
        }
        // Six places: the announcements of jobs 3 and 4 survive, then the four broadcasts; in the order offered.
        let kept: [String] = stuck.events.compactMap {
            switch $0 {
            case .lifecycle(.jobSubmitted(let id)): "job \(id)"
            case .pluginData(let data): data.tag
            default: nil
            }
        }
        #expect(kept == ["job \(jobs[3].id)", "job \(jobs[4].id)", "test.0", "test.1", "test.2", "test.3"])
        let dropped = stuck.events.compactMap { if case .lifecycle(.eventsDropped(let n)) = $0 { n } else { nil } }
        let delivered = stuck.events.filter { if case .lifecycle(.eventsDropped) = $0 { false } else { true } }
        // Offered: pluginAdded (delivered, or dropped when the thread had not taken it yet), 5 jobs, 4 broadcasts.
        #expect(delivered.count + dropped.reduce(0, +) == 10)
        _ = await engine.shutdown()
    }

    @Test func jobsStartedBeforeSubscribingOrOnTheQueueDirectlyAreSeen() async throws {
        let engine = await Engine.testing()
        let early = try engine.submit(Slow.endlessFactor.splitting(false).progressInterval(.zero))
        let probe = Probe("late", streams: [.progress, .results])
        engine.add(probe)
        await probe.wait { events in events.contains { if case .progress(let p) = $0 { p.jobID == early.id } else { false } } }
        let direct = try engine.queue.submit(.isPrime(91))
        _ = try await direct.result
        await probe.wait { events in events.contains { if case .finished(let f) = $0 { f.jobID == direct.id } else { false } } }
        early.cancel()
        _ = try? await early.result
        await probe.wait { events in events.contains { if case .finished(let f) = $0 { f.jobID == early.id } else { false } } }
        let ends = probe.completions()
        #expect(ends.filter { $0.jobID == direct.id }.count == 1 && ends.filter { $0.jobID == early.id }.count == 1)
        if case .succeeded(let result) = ends.first(where: { $0.jobID == direct.id })!.outcome {
            #expect(result.primality?.isPrime == false)
        } else {
            Issue.record("the direct job did not succeed")
        }
        _ = await engine.shutdown()
    }

    /// A job whose progress only the engine's tap took (a plugin on the progress stream, no listener on the job)
    /// reads 100 % once it succeeded, not the last snapshot its interval let through.
    @Test func aSucceededJobsProgressReadsItsEnd() async throws {
        let engine = await Engine.testing()
        let probe = Probe("progress", streams: [.progress, .results])
        engine.add(probe)
        // A range job of 600,001 numbers, one snapshot a minute: the first slice's snapshot is the last one taken.
        let job = try engine.submit(.factorRange(1_000_000, 1_600_000).progressInterval(.seconds(60)))
        for try await _ in job.rangeBlocks {}
        _ = try await job.result
        await probe.wait { events in events.contains { if case .finished(let f) = $0 { f.jobID == job.id } else { false } } }
        #expect(probe.events.contains { if case .progress(let p) = $0 { p.jobID == job.id } else { false } })
        #expect(job.progress.percent == 100)
        #expect(job.progress.numbersDone == 600_001)
        _ = await engine.shutdown()
    }

    /// `engine.queue` is not a side door: its submissions meet the engine's digit limit and progress interval, are
    /// announced, and are followed by the store, as the engine's own are.
    @Test func theQueuesSubmissionsGoThroughTheEnginesDoor() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = await Engine.testing(stateDirectory: directory) { settings, _ in
            settings.maxDigits = 30
            settings.progressInterval = .milliseconds(40)
        }
        let probe = Probe("door", streams: [.lifecycle])
        engine.add(probe)
        let tooLong = String(repeating: "7", count: 31)
        for submit in [{ _ = try engine.queue.submit(.isPrime(tooLong)) },
                       { _ = try engine.queue.submit(contentsOf: [.isPrime("7"), .isPrime(tooLong)]) },
                       { _ = try engine.queue.submitBatch([.isPrime(tooLong)]) },
                       { _ = try engine.queue.chain([.isPrime(tooLong)]) }] as [() throws -> Void] {
            #expect { try submit() } throws: { ($0 as? PrimeKitError)?.code == .candidateTooLarge }
        }
        #expect(engine.queue.jobs.isEmpty)
        let single = try engine.queue.submit(.isPrime("1000000007"))
        let batch = try engine.queue.submit(contentsOf: [.isPrime("91"), .factor("600851475143")])
        let mine = try engine.queue.submit(.isPrime("97").progressInterval(.milliseconds(250)))
        for job in [single] + batch { #expect(job.progressInterval == .milliseconds(40)) }
        #expect(mine.progressInterval == .milliseconds(250))
        let ids = Set(([single, mine] + batch).map(\.id))
        await probe.wait { events in
            ids.isSubset(of: Set(events.compactMap { if case .lifecycle(.jobSubmitted(let id)) = $0 { id } else { nil } }))
        }
        // The store follows them: each result is filed, so a later engine on the directory still has them.
        for job in [single, mine] + batch { _ = try await job.result }
        await engine.store?.waitUntilResultsFiled()
        _ = await engine.shutdown()
        let later = await Engine.testing(stateDirectory: directory)
        #expect(Set(later.store?.unreadResults.map(\.jobID) ?? []) == ids)
        _ = await later.shutdown()
    }

    @Test func lifecycleEventsReportPluginsSettingsAndSuspension() async {
        let engine = await Engine.testing()
        let watcher = Probe("watcher", streams: .lifecycle)
        engine.add(watcher)
        let other = Probe("other", streams: .none)
        engine.add(other)
        await engine.remove(other)
        engine.settings.request(.maxConcurrentJobs, 3, by: "watcher")
        engine.applySettings()
        await engine.suspend()
        engine.resume()
        await watcher.wait { events in events.contains { if case .lifecycle(.resumed) = $0 { true } else { false } } }
        let names = watcher.events.compactMap { event -> String? in
            guard case .lifecycle(let l) = event else { return nil }
            switch l {
            case .pluginAdded(let n): return "added \(n)"
            case .pluginRemoved(let n): return "removed \(n)"
            case .settingsApplied(let changes): return "applied \(changes.map(\.name))"
            case .suspended: return "suspended"
            case .resumed: return "resumed"
            default: return nil
            }
        }
        #expect(names == ["added watcher", "added other", "removed other", "applied [maxConcurrentJobs]", "suspended", "resumed"])
        _ = await engine.shutdown()
    }
}

@Suite(.timeLimit(.minutes(3))) struct EngineSettingsTests {
    @Test func requestsKeepOnlyTheBetterValue() async throws {
        let engine = await Engine.testing { settings, _ in
            settings.progressInterval = .milliseconds(100)
            settings.maxConcurrentJobs = 2
        }
        let s = engine.settings
        // Shorter interval wins; a worse request is refused; equal is accepted.
        #expect(s.request(.progressInterval, .milliseconds(50), by: "a"))
        #expect(!s.request(.progressInterval, .milliseconds(80), by: "b"))
        #expect(s.request(.progressInterval, .milliseconds(50), by: "c"))
        #expect(s.request(.progressInterval, .milliseconds(10), by: "d"))
        // More workers win, shorter slices win, shorter checkpoint interval wins.
        #expect(s.request(.maxConcurrentJobs, 3, by: "a"))
        #expect(!s.request(.maxConcurrentJobs, 1, by: "b"))
        #expect(s.request(.sliceDuration, .milliseconds(1), by: "a"))
        #expect(!s.request(.sliceDuration, .milliseconds(5), by: "b"))
        #expect(!s.request(.checkpointInterval, .seconds(1), by: "a"))  // current is 20 ms
        // Nothing changes before apply.
        #expect(s.effective.progressInterval == .milliseconds(100))
        #expect(s.hasPendingChanges)
        #expect(engine.queue.maxConcurrentJobs == 2)
        let changes = engine.applySettings()
        #expect(Set(changes.map(\.name)) == [.progressInterval, .maxConcurrentJobs, .sliceDuration])
        #expect(changes.first { $0.name == .progressInterval }?.newValue == "10 ms")
        #expect(s.effective.progressInterval == .milliseconds(10))
        #expect(s.sources[.progressInterval] == .requested(by: "d"))
        #expect(s.sources[.checkpointInterval] == .configured)
        #expect(engine.queue.maxConcurrentJobs == 3)
        #expect(engine.queue.sliceDuration == .milliseconds(1))
        // A request is compared with the committed value too.
        #expect(!s.request(.progressInterval, .milliseconds(20), by: "e"))
        #expect(engine.applySettings().isEmpty)
        // Jobs submitted afterwards use the effective progress interval unless they chose one.
        #expect(try engine.submit(.isPrime(7)).progressInterval == .milliseconds(10))
        #expect(try engine.submit(.isPrime(7).progressInterval(.seconds(1))).progressInterval == .seconds(1))
        // One that chose exactly the queue's default keeps it: the default is not a sentinel.
        #expect(try engine.submit(.isPrime(7).progressInterval(.milliseconds(250))).progressInterval
                    == .milliseconds(250))
        #expect(try engine.submit(contentsOf: [.isPrime(7).progressInterval(.milliseconds(250)), .isPrime(11)])
                    .map(\.progressInterval) == [.milliseconds(250), .milliseconds(10)])
        _ = await engine.shutdown()
    }

    @Test func overridesForceAndNilClears() async {
        let engine = await Engine.testing { settings, _ in settings.progressInterval = .milliseconds(100) }
        let s = engine.settings
        s.request(.progressInterval, .milliseconds(10), by: "fast")
        s.override(.progressInterval, .milliseconds(500), by: "saver")
        var changes = engine.applySettings()
        #expect(changes.map(\.description) == ["progressInterval: 100 ms → 500 ms (overridden by saver)"])
        // A better request while overridden is recorded but the override holds.
        s.request(.progressInterval, .milliseconds(5), by: "faster")
        changes = engine.applySettings()
        #expect(changes.isEmpty)
        #expect(s.effective.progressInterval == .milliseconds(500))
        // The last override before apply wins.
        s.override(.progressInterval, .milliseconds(300), by: "x")
        s.override(.progressInterval, .milliseconds(400), by: "y")
        engine.applySettings()
        #expect(s.effective.progressInterval == .milliseconds(400))
        #expect(s.sources[.progressInterval] == .overridden(by: "y"))
        // Clearing returns the negotiated value.
        s.override(.progressInterval, nil, by: "y")
        changes = engine.applySettings()
        #expect(changes.map(\.description) == ["progressInterval: 400 ms → 5 ms (requested by faster)"])
        _ = await engine.shutdown()
    }

    @Test func settingsWithoutPrecedenceActAsOverrides() async throws {
        let engine = await Engine.testing()
        let s = engine.settings
        let probe = Probe("limits")
        engine.add(probe)
        #expect(s.request(.maxDigits, 5, by: probe))
        #expect(s.request(.maxDigits, 8, by: "second"))  // no precedence: the later one replaces it
        #expect(s.request(.stateDirectory, "/tmp/elsewhere", by: "third"))
        let changes = engine.applySettings()
        #expect(Set(changes.map(\.name)) == [.maxDigits, .stateDirectory])
        #expect(s.effective.maxDigits == 8)
        #expect(s.sources[.maxDigits] == .overridden(by: "second"))
        #expect(throws: PrimeKitError.self) { try engine.submit(.isPrime("123456789")) }
        #expect(engine.store == nil)  // the state directory is read when an engine starts
        s.override(.maxDigits, nil)
        engine.applySettings()
        #expect(try engine.submit(.isPrime("123456789")).kind == .isPrime)
        _ = await engine.shutdown()
    }
}

@Suite(.timeLimit(.minutes(3))) struct LoggingPluginTests {
    @Test func logsLevelsWithJobIDs() async throws {
        let capture = LogCapture()
        let engine = await Engine.testing { _, options in options.failureInjection = .failing(["91": "boom"]) }
        engine.add(LoggingPlugin(logger: capture.logger(), streams: .all))
        let ok = try engine.submit(.isPrime(1301081))
        _ = try await ok.result
        let long = try engine.submit(Slow.endless.splitting(false).progressInterval(.zero))
        await capture.wait { records in records.contains { $0.level == .trace && $0.metadata["job"] == "\(long.id)" } }
        long.cancel()
        let bad = try engine.submit(JobRequest.isPrime(91))
        _ = try? await bad.result
        engine.broadcast(tag: "test.x", data: 1, from: nil)
        await capture.wait { records in
            records.contains { $0.level == .error && $0.metadata["job"] == "\(bad.id)" }
                && records.contains { $0.level == .info && $0.metadata["job"] == "\(ok.id)" }
                && records.contains { $0.level == .debug && $0.message == "plugin data test.x" }
        }
        let records = capture.records
        #expect(records.contains { $0.level == .warning && $0.metadata["job"] == "\(bad.id)" })
        #expect(records.contains { $0.level == .notice && $0.message.contains("pluginAdded") })
        _ = await engine.shutdown()
    }
}
