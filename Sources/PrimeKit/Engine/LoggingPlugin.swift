import Logging

/// Logs the engine's streams through swift-log: errors at `error`, failed jobs at `warning`, lifecycle at
/// `notice`, finished jobs at `info`, plugin data at `debug`, progress at `trace`. Every message about a job carries
/// its id in the `job` metadata key.
///
/// ```swift
/// await engine.add(LoggingPlugin(logger: Logger(label: "primekit")))
/// await engine.add(LoggingPlugin(logger: logger, streams: [.errors, .lifecycle]))   // quieter
/// ```
public final class LoggingPlugin: Plugin, Sendable {
    /// The logger written to.
    public let logger: Logger
    /// The streams logged.
    public let streams: Streams

    /// - Parameters:
    ///   - logger: Where to log (its level filters as usual).
    ///   - streams: What to log; default everything but progress (which is chatty at `trace`).
    public init(logger: Logger, streams: Streams = .all.subtracting(.progress)) {
        self.logger = logger
        self.streams = streams
    }

    public var name: String { "primekit.logging" }

    public func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        engine.subscribe(self, to: streams)
        return true
    }

    public func stop() -> PluginStopResult { .stopped }

    public func receive(_ event: EngineEvent) {
        switch event {
        case .progress(let progress):
            logger.trace("progress \(progress.percent) %", metadata: [
                "job": "\(progress.jobID)", "seq": "\(progress.seq)", "next": "\(progress.nextDivisor)",
            ])
        case .finished(let completion):
            var metadata: Logger.Metadata = ["job": "\(completion.jobID)", "kind": "\(completion.kind.rawValue)"]
            switch completion.outcome {
            case .succeeded(let result):
                metadata["isPrime"] = "\(result.isPrime.map(String.init) ?? "unknown")"
                logger.info("job succeeded", metadata: metadata)
            case .failed(let error):
                metadata["code"] = "\(error.code.rawValue)"
                logger.warning("job failed: \(error.message)", metadata: metadata)
            case .cancelled(let reason):
                logger.info("job cancelled: \(reason)", metadata: metadata)
            }
        case .error(let error):
            var metadata: Logger.Metadata = ["kind": "\(error.kind.rawValue)"]
            if let id = error.jobID { metadata["job"] = "\(id)" }
            if let plugin = error.plugin { metadata["plugin"] = "\(plugin)" }
            if let path = error.path { metadata["path"] = "\(path)" }
            logger.error("\(error.message)", metadata: metadata)
        case .pluginData(let data):
            logger.debug("plugin data \(data.tag)", metadata: ["sender": "\(data.sender ?? "-")"])
        case .lifecycle(let event):
            switch event {
            case .jobSubmitted(let id):
                logger.debug("job submitted", metadata: ["job": "\(id)"])
            case .eventsDropped(let count):
                logger.warning("\(count) plugin data or lifecycle events dropped for the logger")
            default:
                logger.notice("\(String(describing: event))")
            }
        }
    }
}
