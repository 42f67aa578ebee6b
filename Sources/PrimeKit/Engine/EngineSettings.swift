import Foundation
import Synchronization

/// The settings an ``Engine`` runs with. Plugins negotiate them through ``SettingsNegotiator``; the engine applies
/// them on ``Engine/applySettings()``.
public struct EngineSettings: Sendable, Hashable {
    /// The shortest time between two progress snapshots of a job submitted through the engine (when the request
    /// keeps the default interval). Requests: shorter wins.
    public var progressInterval: Duration = .milliseconds(250)
    /// How often the checkpoint store writes the checkpoints of running jobs. Requests: shorter wins.
    public var checkpointInterval: Duration = .seconds(5)
    /// Worker threads. Requests: more wins.
    public var maxConcurrentJobs: Int = max(1, ProcessInfo.processInfo.activeProcessorCount)
    /// The target length of one slice. Requests: shorter wins.
    public var sliceDuration: Duration = .milliseconds(10)
    /// Where the checkpoint store keeps its files; nil keeps everything in memory. No precedence; read when the
    /// engine starts (a change applies to the next engine).
    public var stateDirectory: String? = nil
    /// The longest candidate accepted, in digits. No precedence; a value above the limit the engine started with
    /// is capped to it.
    public var maxDigits: Int = KernelLimits.defaults.maxDigits
    /// The longest remainder classified by BPSW. No precedence; read when the engine starts.
    public var bpswDigits: Int = KernelLimits.defaults.bpswDigits

    /// The defaults.
    public init() {}
}

/// The name of one setting.
public enum SettingName: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    case progressInterval, checkpointInterval, maxConcurrentJobs, sliceDuration, stateDirectory, maxDigits,
         bpswDigits

    public var description: String { rawValue }

    /// The setting's value in `settings`, as text (durations in milliseconds).
    public func value(in settings: EngineSettings) -> String {
        func ms(_ duration: Duration) -> String {
            let (seconds, attoseconds) = duration.components
            let value = Double(seconds) * 1000 + Double(attoseconds) / 1e15
            return value == value.rounded() ? "\(Int64(value)) ms" : "\(value) ms"
        }
        switch self {
        case .progressInterval: return ms(settings.progressInterval)
        case .checkpointInterval: return ms(settings.checkpointInterval)
        case .maxConcurrentJobs: return String(settings.maxConcurrentJobs)
        case .sliceDuration: return ms(settings.sliceDuration)
        case .stateDirectory: return settings.stateDirectory ?? "none"
        case .maxDigits: return String(settings.maxDigits)
        case .bpswDigits: return String(settings.bpswDigits)
        }
    }

    /// Copies this setting from `source` into `target`.
    func copy(from source: EngineSettings, into target: inout EngineSettings) {
        switch self {
        case .progressInterval: target.progressInterval = source.progressInterval
        case .checkpointInterval: target.checkpointInterval = source.checkpointInterval
        case .maxConcurrentJobs: target.maxConcurrentJobs = source.maxConcurrentJobs
        case .sliceDuration: target.sliceDuration = source.sliceDuration
        case .stateDirectory: target.stateDirectory = source.stateDirectory
        case .maxDigits: target.maxDigits = source.maxDigits
        case .bpswDigits: target.bpswDigits = source.bpswDigits
        }
    }
}

/// A typed handle on one setting, with its precedence: `settings.request(.progressInterval, .milliseconds(50))`.
public struct SettingKey<Value: Sendable & Hashable>: Sendable {
    /// The setting.
    public let name: SettingName
    let set: @Sendable (inout EngineSettings, Value) -> Void
    let get: @Sendable (EngineSettings) -> Value
    /// True when the first value is at least as good as the second; nil: no precedence (requests act as
    /// overrides).
    let atLeastAsGood: (@Sendable (Value, Value) -> Bool)?
}

extension SettingKey where Value == Duration {
    /// Shorter wins.
    public static var progressInterval: SettingKey<Duration> {
        SettingKey(name: .progressInterval, set: { $0.progressInterval = $1 }, get: { $0.progressInterval },
                   atLeastAsGood: { $0 <= $1 })
    }
    /// Shorter wins.
    public static var checkpointInterval: SettingKey<Duration> {
        SettingKey(name: .checkpointInterval, set: { $0.checkpointInterval = $1 }, get: { $0.checkpointInterval },
                   atLeastAsGood: { $0 <= $1 })
    }
    /// Shorter wins.
    public static var sliceDuration: SettingKey<Duration> {
        SettingKey(name: .sliceDuration, set: { $0.sliceDuration = $1 }, get: { $0.sliceDuration },
                   atLeastAsGood: { $0 <= $1 })
    }
}

extension SettingKey where Value == Int {
    /// More wins.
    public static var maxConcurrentJobs: SettingKey<Int> {
        SettingKey(name: .maxConcurrentJobs, set: { $0.maxConcurrentJobs = $1 }, get: { $0.maxConcurrentJobs },
                   atLeastAsGood: { $0 >= $1 })
    }
    /// No precedence.
    public static var maxDigits: SettingKey<Int> {
        SettingKey(name: .maxDigits, set: { $0.maxDigits = $1 }, get: { $0.maxDigits }, atLeastAsGood: nil)
    }
    /// No precedence.
    public static var bpswDigits: SettingKey<Int> {
        SettingKey(name: .bpswDigits, set: { $0.bpswDigits = $1 }, get: { $0.bpswDigits }, atLeastAsGood: nil)
    }
}

extension SettingKey where Value == String? {
    /// No precedence.
    public static var stateDirectory: SettingKey<String?> {
        SettingKey(name: .stateDirectory, set: { $0.stateDirectory = $1 }, get: { $0.stateDirectory },
                   atLeastAsGood: nil)
    }
}

/// Who decided a setting's effective value.
public enum SettingSource: Sendable, Hashable, CustomStringConvertible {
    /// The engine's configuration (nobody asked since).
    case configured
    /// The best request, by this requester.
    case requested(by: String)
    /// An override, by this requester.
    case overridden(by: String)

    public var description: String {
        switch self {
        case .configured: "configured"
        case .requested(let by): "requested by \(by)"
        case .overridden(let by): "overridden by \(by)"
        }
    }
}

/// One setting that ``Engine/applySettings()`` changed.
public struct SettingChange: Sendable, Hashable, CustomStringConvertible {
    public let name: SettingName
    /// The value before, as text.
    public let oldValue: String
    /// The value now, as text.
    public let newValue: String
    /// Who decided the new value.
    public let source: SettingSource

    public var description: String { "\(name): \(oldValue) → \(newValue) (\(source))" }
}

/// Negotiated settings: plugins *request* values (a request is kept only when it is at least as good as the best
/// one so far: shorter intervals and slices, more workers) or *override* them (forced; `nil` clears the override
/// and the negotiated value returns). Settings without a precedence (state directory, digit limits) treat a
/// request as an override. Nothing changes until ``Engine/applySettings()``, which reports what changed.
public final class SettingsNegotiator: Sendable {
    private struct Override: Sendable {
        var settings: EngineSettings
        var by: String
    }

    private struct State: Sendable {
        var effective: EngineSettings
        var negotiated: EngineSettings
        var negotiatedBy: [SettingName: String] = [:]
        var proposal: EngineSettings
        var proposalBy: [SettingName: String] = [:]
        var overrides: [SettingName: Override] = [:]
        var pendingOverrides: [SettingName: Override?] = [:]
        var sources: [SettingName: SettingSource] = [:]
    }

    private let state: Mutex<State>

    init(_ initial: EngineSettings) {
        state = Mutex(State(effective: initial, negotiated: initial, proposal: initial))
    }

    /// The settings in effect (as of the last apply).
    public var effective: EngineSettings { state.withLock(anchoredTo: self) { $0.effective } }

    /// Who decided each effective setting.
    public var sources: [SettingName: SettingSource] {
        state.withLock(anchoredTo: self) { state in
            Dictionary(uniqueKeysWithValues: SettingName.allCases.map { ($0, state.sources[$0] ?? .configured) })
        }
    }

    /// True when requests or overrides wait for ``Engine/applySettings()``.
    public var hasPendingChanges: Bool {
        state.withLock(anchoredTo: self) { $0.proposal != $0.negotiated || !$0.pendingOverrides.isEmpty }
    }

    /// Requests a value. It is kept (until apply) only when at least as good as the best value requested so far —
    /// committed or pending; a setting without a precedence takes it as an override.
    /// - Parameters:
    ///   - key: The setting.
    ///   - value: The value wanted.
    ///   - requester: Who asks (a plugin's name), reported in ``sources``.
    /// - Returns: True when the request was kept.
    @discardableResult
    public func request<Value>(_ key: SettingKey<Value>, _ value: Value, by requester: String = "user") -> Bool {
        guard let atLeastAsGood = key.atLeastAsGood else {
            override(key, value, by: requester)
            return true
        }
        return state.withLock(anchoredTo: self) { state in
            guard atLeastAsGood(value, key.get(state.proposal)) else { return false }
            key.set(&state.proposal, value)
            state.proposalBy[key.name] = requester
            return true
        }
    }

    /// Requests a value on behalf of a plugin.
    @discardableResult
    public func request<Value>(_ key: SettingKey<Value>, _ value: Value, by plugin: Plugin) -> Bool {
        request(key, value, by: plugin.name)
    }

    /// Forces a value, whatever was requested; `nil` clears the override (at apply the negotiated value returns).
    /// When several overrides of one setting are made before an apply, the last one wins.
    /// - Parameters:
    ///   - key: The setting.
    ///   - value: The value, or nil to clear.
    ///   - requester: Who forces it.
    public func override<Value>(_ key: SettingKey<Value>, _ value: Value?, by requester: String = "user") {
        state.withLock(anchoredTo: self) { state in
            if let value {
                var settings = state.effective
                key.set(&settings, value)
                state.pendingOverrides[key.name] = .some(Override(settings: settings, by: requester))
            } else {
                state.pendingOverrides[key.name] = .some(nil)
            }
        }
    }

    /// Forces a value on behalf of a plugin.
    public func override<Value>(_ key: SettingKey<Value>, _ value: Value?, by plugin: Plugin) {
        override(key, value, by: plugin.name)
    }

    /// Commits pending requests and overrides.
    /// - Returns: The new effective settings and what changed.
    func commit() -> (EngineSettings, [SettingChange]) {
        state.withLock(anchoredTo: self) { state in
            let before = state.effective
            let sourcesBefore = state.sources
            state.negotiated = state.proposal
            state.negotiatedBy = state.proposalBy
            for (name, override) in state.pendingOverrides {
                state.overrides[name] = override
            }
            state.pendingOverrides = [:]
            var effective = state.negotiated
            var sources: [SettingName: SettingSource] = [:]
            for name in SettingName.allCases {
                if let override = state.overrides[name] {
                    name.copy(from: override.settings, into: &effective)
                    sources[name] = .overridden(by: override.by)
                } else if let by = state.negotiatedBy[name] {
                    sources[name] = .requested(by: by)
                }
            }
            state.effective = effective
            state.sources = sources
            var changes: [SettingChange] = []
            for name in SettingName.allCases {
                let old = name.value(in: before), new = name.value(in: effective)
                let source = sources[name] ?? .configured
                if old != new || source != (sourcesBefore[name] ?? .configured) {
                    changes.append(SettingChange(name: name, oldValue: old, newValue: new, source: source))
                }
            }
            return (effective, changes)
        }
    }
}
