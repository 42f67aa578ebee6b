import Foundation
import Logging
@testable import PrimeKit

extension FailureInjection {
    /// Jobs whose candidate is a key fail on their first slice with an internal error carrying the value as its
    /// message (the queue's test seam); every other job runs.
    static func failing(_ messages: [String: String]) -> FailureInjection {
        FailureInjection { job in messages[job.candidate].map { PrimeKitError(code: .internalError, message: $0) } }
    }
}

/// A plugin that records what happens to it and lets tests await conditions on its events (no sleeps).
final class Probe: Plugin, @unchecked Sendable {
    let name: String
    private let lock = NSLock()
    private var storage: [EngineEvent] = []
    private var calls: [String] = []
    private var waiters: [(([EngineEvent]) -> Bool, CheckedContinuation<Void, Never>)] = []
    private let subscribeTo: Streams
    private let tags: TagFilter?
    var initializeAnswer = true
    var stopAnswers: [PluginStopResult] = []
    /// When set, `receive` blocks until it is signalled (a stuck plugin).
    let gate: DispatchSemaphore?
    /// Takes runs of events in `receive(contentsOf:)` as they come, rather than one at a time.
    let inRuns: Bool
    /// The calls of `receive(contentsOf:)` that took a run as a whole.
    private(set) var runsReceived = 0
    weak var engine: Engine?

    init(_ name: String, streams: Streams = .all, tags: TagFilter? = nil, blocked: Bool = false, inRuns: Bool = false) {
        self.name = name
        self.subscribeTo = streams
        self.tags = tags
        self.gate = blocked ? DispatchSemaphore(value: 0) : nil
        self.inRuns = inRuns
    }

    func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        lock.withLock { calls.append("initialize \(arguments.keys.sorted())") }
        self.engine = engine
        engine.subscribe(self, to: subscribeTo, tags: tags)
        return initializeAnswer
    }

    func stop() -> PluginStopResult {
        lock.withLock {
            calls.append("stop")
            return stopAnswers.isEmpty ? .stopped : stopAnswers.removeFirst()
        }
    }

    func receive(_ event: EngineEvent) {
        gate?.wait()
        record(CollectionOfOne(event))
    }

    func receive(contentsOf events: ArraySlice<EngineEvent>) {
        guard inRuns else {
            for index in events.indices { receive(events[index]) }
            return
        }
        gate?.wait()
        lock.withLock { runsReceived += 1 }
        record(events)
    }

    private func record(_ events: some Sequence<EngineEvent>) {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            storage.append(contentsOf: events)
            if calls.last != "receive" { calls.append("receive") }
            var ready: [CheckedContinuation<Void, Never>] = []
            waiters.removeAll { predicate, continuation in
                if predicate(storage) {
                    ready.append(continuation)
                    return true
                }
                return false
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    var events: [EngineEvent] { lock.withLock { storage } }
    var lifecycle: [String] { lock.withLock { calls } }

    /// Returns once the received events satisfy `predicate`.
    func wait(until predicate: @escaping ([EngineEvent]) -> Bool) async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock {
                if predicate(storage) { return true }
                waiters.append((predicate, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func completions() -> [JobCompletion] {
        events.compactMap { if case .finished(let c) = $0 { c } else { nil } }
    }

    func errors() -> [EngineError] {
        events.compactMap { if case .error(let e) = $0 { e } else { nil } }
    }

    func pluginData() -> [PluginData] {
        events.compactMap { if case .pluginData(let d) = $0 { d } else { nil } }
    }
}

extension Array where Element == EngineEvent {
    func count(of stream: Streams) -> Int { filter { $0.stream == stream }.count }
}

extension Engine {
    /// An engine with two workers and short slices, for tests.
    static func testing(stateDirectory: String? = nil, interval: Duration = .milliseconds(20),
                        configure: (inout EngineSettings, inout Engine.Options) -> Void = { _, _ in },
                        fileSystem: any StoreFileSystem = POSIXStoreFileSystem()) async -> Engine {
        var settings = EngineSettings()
        settings.maxConcurrentJobs = 2
        settings.sliceDuration = .milliseconds(2)
        settings.stateDirectory = stateDirectory
        settings.checkpointInterval = interval
        var options = Engine.Options()
        options.stopTimeout = .milliseconds(100)
        configure(&settings, &options)
        return await Engine(settings: settings, options: options, fileSystem: fileSystem)
    }
}

/// A fresh directory under the temporary directory.
func makeStateDirectory() -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("primekit-engine-\(UUID().uuidString)").path
    return path
}

/// Log records, for the logging plugin's tests.
final class LogCapture: @unchecked Sendable {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: [String: String]
    }

    private let lock = NSLock()
    private var storage: [Record] = []
    private var waiters: [(([Record]) -> Bool, CheckedContinuation<Void, Never>)] = []

    var records: [Record] { lock.withLock { storage } }

    func append(_ record: Record) {
        let ready: [CheckedContinuation<Void, Never>] = lock.withLock {
            storage.append(record)
            var ready: [CheckedContinuation<Void, Never>] = []
            waiters.removeAll { predicate, continuation in
                if predicate(storage) { ready.append(continuation); return true }
                return false
            }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    func wait(until predicate: @escaping ([Record]) -> Bool) async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock {
                if predicate(storage) { return true }
                waiters.append((predicate, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "test") { _ in CaptureHandler(capture: self) }
        logger.logLevel = level
        return logger
    }

    struct CaptureHandler: LogHandler {
        let capture: LogCapture
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var flat: [String: String] = [:]
            for (key, value) in event.metadata ?? [:] { flat[key] = "\(value)" }
            capture.append(Record(level: event.level, message: "\(event.message)", metadata: flat))
        }
    }
}
