import Foundation
import PrimeKit

/// queue/*, settings/*, plugin/* and shutdown.
extension BridgeServer {
    // MARK: - Queue

    func suspendQueue() -> Reply {
        .later { [self] in
            await engine.suspend()
            return .ok { $0.member("state", string: "suspended") }
        }
    }

    func resumeQueue() -> Answer {
        engine.resume()
        return .ok { $0.member("state", string: "running") }
    }

    func resetQueue() -> Reply {
        .later { [self] in
            // Exactly the jobs that ended cancelled: one finishing on a worker while the reset runs may succeed after
            // all, and gets its job/finished with its result.
            let cancelled = await engine.queue.reset()
            return .ok { out in
                out.key("cancelled")
                out.array { out in for id in cancelled { out.string(id.description) } }
            }
        }
    }

    // MARK: - Settings

    /// The settings a client can negotiate, by wire name.
    private enum WireSetting: String, CaseIterable {
        case progressIntervalMs, checkpointIntervalMs, sliceMs, maxConcurrentJobs, maxDigits, bpswDigits

        var name: SettingName {
            switch self {
            case .progressIntervalMs: .progressInterval
            case .checkpointIntervalMs: .checkpointInterval
            case .sliceMs: .sliceDuration
            case .maxConcurrentJobs: .maxConcurrentJobs
            case .maxDigits: .maxDigits
            case .bpswDigits: .bpswDigits
            }
        }

        init?(_ name: SettingName) {
            guard let found = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = found
        }

        func range(_ limits: BridgeLimits) -> ClosedRange<Int> {
            switch self {
            case .progressIntervalMs, .checkpointIntervalMs: 1...86_400_000
            case .sliceMs: 1...10_000
            case .maxConcurrentJobs: 1...1_024
            case .maxDigits: 1...limits.maxDigits
            case .bpswDigits: 0...1_000_000
            }
        }

        func value(in settings: EngineSettings) -> Int {
            func ms(_ duration: Duration) -> Int {
                let (seconds, attoseconds) = duration.components
                return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
            }
            switch self {
            case .progressIntervalMs: return ms(settings.progressInterval)
            case .checkpointIntervalMs: return ms(settings.checkpointInterval)
            case .sliceMs: return ms(settings.sliceDuration)
            case .maxConcurrentJobs: return settings.maxConcurrentJobs
            case .maxDigits: return settings.maxDigits
            case .bpswDigits: return settings.bpswDigits
            }
        }
    }

    func requestSettings(_ params: Params, override: Bool) throws(RPCError) -> Answer {
        let negotiator = engine.settings
        var checked: [(WireSetting, Int?)] = []
        for name in params.members.keys.sorted() {
            guard let setting = WireSetting(rawValue: name) else {
                let known = WireSetting.allCases.map(\.rawValue).joined(separator: ", ")
                let reason = name == "stateDirectory" ? "is chosen when the server starts (--state-dir)"
                                                      : "unknown setting; the settings are \(known)"
                throw RPCError.invalidParams(name, reason, got: params.members[name])
            }
            guard setting != .bpswDigits else {
                throw RPCError.invalidParams(name, "is fixed when the server starts", got: params.members[name])
            }
            guard let value = params[name] else {
                guard override else { throw RPCError.invalidParams(name, "a request needs a value", got: .null) }
                checked.append((setting, nil))  // null clears an override
                continue
            }
            checked.append((setting, try Params.integer(value, field: name, in: setting.range(limits))))
        }
        // Everything is checked before anything is recorded: a bad member changes nothing.
        var accepted: [(String, Bool)] = []
        for (setting, value) in checked {
            let kept: Bool
            switch setting {
            case .progressIntervalMs, .checkpointIntervalMs, .sliceMs:
                let key: SettingKey<Duration> = setting == .progressIntervalMs ? .progressInterval
                    : setting == .checkpointIntervalMs ? .checkpointInterval : .sliceDuration
                let duration = value.map { Duration.milliseconds($0) }
                if override { negotiator.override(key, duration, by: "client"); kept = true }
                else { kept = negotiator.request(key, duration!, by: "client") }
            case .maxConcurrentJobs, .maxDigits, .bpswDigits:
                let key: SettingKey<Int> = setting == .maxConcurrentJobs ? .maxConcurrentJobs
                    : setting == .maxDigits ? .maxDigits : .bpswDigits
                if override { negotiator.override(key, value, by: "client"); kept = true }
                else { kept = negotiator.request(key, value!, by: "client") }
            }
            accepted.append((setting.rawValue, kept))
        }
        return .ok { out in
            out.key("accepted")
            out.object { out in for (name, kept) in accepted { out.member(name, bool: kept) } }
            out.member("pending", bool: negotiator.hasPendingChanges)
        }
    }

    func applySettings() -> Answer {
        let changes = engine.applySettings()
        let effective = engine.settings.effective
        return .ok { out in
            writeSettings(effective, into: &out)
            out.key("changes")
            out.array { out in for change in changes { Self.writeChange(change, into: &out) } }
        }
    }

    func currentSettings() -> Answer {
        let negotiator = engine.settings
        let effective = negotiator.effective
        let sources = negotiator.sources
        return .ok { out in
            writeSettings(effective, into: &out)
            out.key("sources")
            out.object { out in
                for setting in WireSetting.allCases {
                    out.member(setting.rawValue, string: (sources[setting.name] ?? .configured).description)
                }
            }
            out.member("pending", bool: negotiator.hasPendingChanges)
        }
    }

    private func writeSettings(_ settings: EngineSettings, into out: inout JSONWriter) {
        out.key("settings")
        out.object { out in
            for setting in WireSetting.allCases { out.member(setting.rawValue, number: setting.value(in: settings)) }
        }
    }

    static func writeChange(_ change: SettingChange, into out: inout JSONWriter) {
        out.object { out in
            out.member("name", string: WireSetting(change.name)?.rawValue ?? change.name.rawValue)
            out.member("from", string: change.oldValue)
            out.member("to", string: change.newValue)
            out.member("source", string: change.source.description)
        }
    }

    // MARK: - Plugin streams

    func subscribe(_ params: Params, adding: Bool) throws(RPCError) -> Answer {
        guard let value = params["streams"] else { throw RPCError.invalidParams("streams", "is required", got: nil) }
        guard case .array(let names) = value else {
            throw RPCError.invalidParams("streams", "must be an array of stream names", got: value)
        }
        var streams = Streams.none
        for name in names {
            guard case .string(let text) = name,
                  let stream = BridgePlugin.streamNames.first(where: { $0.0 == text })?.1
            else {
                throw RPCError.invalidParams("streams", "must name errors, lifecycle or pluginData", got: name)
            }
            streams.formUnion(stream)
        }
        var filter: TagFilter?
        if let tags = params["tags"] {
            guard case .array(let prefixes) = tags else {
                throw RPCError.invalidParams("tags", "must be an array of tag prefixes", got: tags)
            }
            var list: [String] = []
            for prefix in prefixes {
                guard case .string(let text) = prefix else {
                    throw RPCError.invalidParams("tags", "must be an array of tag prefixes", got: prefix)
                }
                list.append(text)
            }
            filter = .prefixes(list)
        }
        if adding { engine.subscribe(plugin, to: streams, tags: filter) } else { engine.unsubscribe(plugin, from: streams) }
        let now = engine.subscriptions(of: plugin)
        return .ok { out in
            out.key("streams")
            out.array { out in
                for (name, stream) in BridgePlugin.streamNames where now.contains(stream) { out.string(name) }
            }
        }
    }

    func broadcast(_ params: Params) throws(RPCError) -> Answer {
        let tag = try params.requiredString("tag")
        guard !tag.isEmpty else { throw RPCError.invalidParams("tag", "must not be empty", got: .string(tag)) }
        guard !tag.hasPrefix("primekit.") else {
            throw RPCError.invalidParams("tag", "the primekit. namespace belongs to the engine", got: .string(tag))
        }
        engine.broadcast(tag: tag, data: params.members["data"] ?? .null, from: plugin)
        return .ok { _ in }
    }

    func listPlugins() -> Answer {
        let names = engine.plugins.map(\.name)
        return .ok { out in
            out.key("plugins")
            out.array { out in for name in names { out.string(name) } }
        }
    }

    // MARK: - Shutdown

    func shutdown() -> Reply {
        registry.withLock(anchoredTo: self) { $0.shutDown = true }
        return .later { [self] in
            let checkpoints = await shutDownEngine()
            registry.withLock(anchoredTo: self) { $0.shutdownCompleted = true }
            return .ok { out in
                out.key("jobs")
                out.array { out in
                    for (id, checkpoint) in checkpoints {
                        out.object { out in
                            out.member("jobId", string: id.description)
                            out.member("state", string: "paused")
                            out.member("checkpoint", string: checkpoint.text)
                        }
                    }
                }
            }
        }
    }

    /// Pauses every job, waits until every job that finished has its `job/finished` queued, then shuts the engine
    /// down (checkpoints made durable with a state directory). Runs once; later calls wait for the first.
    /// - Returns: The unfinished jobs' checkpoints, by id.
    func shutDownEngine() async -> [(JobID, Checkpoint)] {
        let task: Task<[(JobID, Checkpoint)], Never> = registry.withLock(anchoredTo: self) { registry in
            registry.shutDown = true
            if let task = registry.shutdownTask { return task }
            let task = Task { [self] in
                await engine.suspend()
                waitUntilSettled(timeout: 5)
                let report = await engine.shutdown()
                return report.checkpoints.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            }
            registry.shutdownTask = task
            return task
        }
        return await task.value
    }

    /// Waits until no job the bridge lists as unfinished has finished without its notification being queued.
    func waitUntilSettled(timeout seconds: Double) {
        _ = waitForRegistry(timeout: seconds) { $0.live.values.contains { $0.state.isFinished } ? nil : () }
    }

    /// Waits until `found` (read under the registry's lock) gives a value, or `seconds` pass (nil then). The
    /// waiter is counted meanwhile, so whoever changes the registry knows to wake it.
    func waitForRegistry<T>(timeout seconds: Double, _ found: (Registry) -> T?) -> T? {
        let deadline = Date().addingTimeInterval(seconds)
        settled.lock()
        registry.withLock(anchoredTo: self) { $0.settledWaiters += 1 }
        defer {
            registry.withLock(anchoredTo: self) { $0.settledWaiters -= 1 }
            settled.unlock()
        }
        while true {
            if let value = registry.withLock(anchoredTo: self, { found($0) }) { return value }
            if !settled.wait(until: deadline) { return nil }
        }
    }
}
