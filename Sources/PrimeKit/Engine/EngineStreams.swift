/// The event streams a plugin can subscribe to. Combine them with set algebra:
/// `[.results, .errors]`, `.all.subtracting(.pluginData)`.
public struct Streams: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8

    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// Progress snapshots of every job (coalesced per subscriber: the latest per job wins).
    public static let progress = Streams(rawValue: 1 << 0)
    /// One ``JobCompletion`` per finished job (succeeded, failed or cancelled). Never dropped.
    public static let results = Streams(rawValue: 1 << 1)
    /// ``EngineError``s: failed jobs, store write failures, quarantined files, plugins that refused to stop.
    /// Never dropped.
    public static let errors = Streams(rawValue: 1 << 2)
    /// Tagged data broadcast by other plugins (``Engine/broadcast(tag:data:from:)``).
    public static let pluginData = Streams(rawValue: 1 << 3)
    /// ``LifecycleEvent``s of the engine: plugins added and removed, settings applied, suspension, shutdown.
    public static let lifecycle = Streams(rawValue: 1 << 4)

    /// No stream.
    public static let none: Streams = []
    /// Every stream.
    public static let all: Streams = [.progress, .results, .errors, .pluginData, .lifecycle]

    public var description: String {
        let names: [(Streams, String)] = [(.progress, "progress"), (.results, "results"), (.errors, "errors"),
                                          (.pluginData, "pluginData"), (.lifecycle, "lifecycle")]
        return "[" + names.filter { contains($0.0) }.map(\.1).joined(separator: ", ") + "]"
    }
}

/// One event delivered to a plugin. Every payload is an immutable `Sendable` value.
///
/// A `finished` event is stored inline and the others boxed: the ends of small jobs are most of the traffic, and
/// such an event (``JobCompletion`` of a candidate below 2^32) holds no reference at all, so handing it to each
/// plugin costs no reference counting.
public enum EngineEvent: Sendable {
    /// A job's progress (stream ``Streams/progress``).
    indirect case progress(JobProgress)
    /// A job finished (stream ``Streams/results``).
    case finished(JobCompletion)
    /// Something went wrong (stream ``Streams/errors``).
    indirect case error(EngineError)
    /// Data from another plugin (stream ``Streams/pluginData``).
    indirect case pluginData(PluginData)
    /// The engine's own life (stream ``Streams/lifecycle``).
    indirect case lifecycle(LifecycleEvent)

    /// The stream the event belongs to.
    public var stream: Streams {
        switch self {
        case .progress: .progress
        case .finished: .results
        case .error: .errors
        case .pluginData: .pluginData
        case .lifecycle: .lifecycle
        }
    }
}

/// How a job ended: the payload of the results stream.
public struct JobCompletion: Sendable {
    /// How it ended.
    public enum Outcome: Sendable {
        case succeeded(JobResult)
        case failed(PrimeKitError)
        case cancelled(CancellationReason)
    }

    /// The job.
    public let jobID: JobID
    /// What it computed.
    public let kind: JobKind
    /// The candidate, decimal.
    public var candidate: String {
        switch stored {
        case .small(let answer): answer.candidate
        case .full(let candidate, _): candidate.decimal
        }
    }
    /// How it ended.
    public var outcome: Outcome {
        switch stored {
        case .small(let answer): .succeeded(answer.result(kind: kind))
        case .full(_, let outcome): outcome
        }
    }

    /// A small job's success as the kernel's eight-byte answer (candidate, factors and result are made again, equal,
    /// when read), or the candidate as the job had it and the outcome, boxed: either way one word, and none of it
    /// reference counted for a small job.
    private enum Stored: Sendable {
        case small(SmallAnswer)
        indirect case full(JobCandidate, Outcome)
    }
    private let stored: Stored

    /// A job's end as the queue has it (a small job's success stays its answer).
    init(jobID: JobID, kind: JobKind, candidate: JobCandidate, ending: JobOutcome) {
        self.jobID = jobID
        self.kind = kind
        switch ending {
        case .small(let answer): stored = .small(answer)
        case .success(let result): stored = .full(candidate, .succeeded(result))
        case .failure(let error): stored = .full(candidate, .failed(error))
        case .cancelled(let reason): stored = .full(candidate, .cancelled(reason))
        }
    }

    /// A completion as the store recovers it.
    init(jobID: JobID, kind: JobKind, candidate: String, outcome: Outcome) {
        self.jobID = jobID
        self.kind = kind
        stored = .full(JobCandidate(text: candidate, value: nil), outcome)
    }

    /// The state it ended in.
    public var state: JobState {
        guard case .full(_, let outcome) = stored else { return .succeeded }
        return switch outcome {
        case .succeeded: .succeeded
        case .failed: .failed
        case .cancelled: .cancelled
        }
    }

    /// The result, when it succeeded.
    public var result: JobResult? {
        if case .succeeded(let result) = outcome { return result }
        return nil
    }
}

/// Data one plugin broadcast to the others.
///
/// Tags are namespaced by reverse-DNS-like prefixes so independent groups of plugins never misread each other's
/// data: the engine's built-in plugins use `primekit.` (`primekit.store.saved`), your own should use your
/// project's (`com.example.progressbar.visible`).
public struct PluginData: Sendable {
    /// What the data is (a namespaced identifier).
    public let tag: String
    /// The data.
    public let data: any Sendable
    /// The name of the plugin that sent it (nil when sent by code that is not a plugin).
    public let sender: String?
}

/// Which tags of the pluginData stream a subscriber receives.
public enum TagFilter: Sendable, Hashable {
    /// Every tag.
    case all
    /// Exactly these tags.
    case exactly(Set<String>)
    /// Tags starting with one of these prefixes (a namespace: `"primekit.store."`).
    case prefixes([String])

    /// Whether a tag passes.
    public func matches(_ tag: String) -> Bool {
        switch self {
        case .all: true
        case .exactly(let tags): tags.contains(tag)
        case .prefixes(let prefixes): prefixes.contains { tag.hasPrefix($0) }
        }
    }
}

/// The engine's own life, as reported on the lifecycle stream.
public enum LifecycleEvent: Sendable {
    /// The engine is ready (after recovery from its state directory, if any).
    case started
    /// A plugin was added and initialised.
    case pluginAdded(name: String)
    /// A plugin stopped and was dropped.
    case pluginRemoved(name: String)
    /// A plugin's `stop()` refused.
    case pluginStopRefused(name: String, reason: String)
    /// A job was submitted through the engine.
    case jobSubmitted(JobID)
    /// Jobs and results were recovered from the state directory.
    case recovered(jobs: Int, results: Int)
    /// ``Engine/applySettings()`` changed these settings.
    case settingsApplied([SettingChange])
    /// The queue was suspended: running jobs pause at their next slice.
    case suspended
    /// The queue was resumed.
    case resumed
    /// A subscriber's buffer overflowed and this many pluginData or lifecycle events were dropped for it
    /// (delivered to that subscriber only; progress is coalesced, results and errors are never dropped).
    case eventsDropped(Int)
    /// Shutdown began.
    case shuttingDown
}

/// An error reported on the errors stream.
public struct EngineError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: String, Sendable, Hashable {
        /// A job failed (``underlying`` is its error).
        case jobFailed
        /// The checkpoint store could not write or remove a file; what was stored before is intact.
        case storeWriteFailed
        /// A stored file was torn, corrupt or foreign and was moved to the quarantine directory.
        case storeFileQuarantined
        /// The state directory could not be opened or read.
        case storeUnavailable
        /// A plugin's `initialize` returned false.
        case pluginInitializeFailed
        /// A plugin refused to stop.
        case pluginStopRefused
        /// A plugin was dropped at shutdown although it still refused to stop.
        case pluginForcedToStop
    }

    /// What went wrong.
    public let kind: Kind
    /// A short English description.
    public let message: String
    /// The job concerned, if any.
    public let jobID: JobID?
    /// The plugin concerned, if any.
    public let plugin: String?
    /// The file concerned, if any.
    public let path: String?
    /// The job's error, for ``Kind/jobFailed``.
    public let underlying: PrimeKitError?

    public init(_ kind: Kind, _ message: String, jobID: JobID? = nil, plugin: String? = nil, path: String? = nil,
                underlying: PrimeKitError? = nil) {
        self.kind = kind
        self.message = message
        self.jobID = jobID
        self.plugin = plugin
        self.path = path
        self.underlying = underlying
    }

    public var description: String { "EngineError(\(kind.rawValue)): \(message)" }
}
