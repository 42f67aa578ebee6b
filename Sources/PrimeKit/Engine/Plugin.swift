/// Something that plugs into an ``Engine``: a progress bar, a bridge, a logger, a store.
///
/// The engine guarantees the lifecycle:
/// 1. ``Engine/add(_:arguments:)`` receives the plugin and calls ``initialize(engine:arguments:)`` once. There the
///    plugin subscribes to the streams it wants. Returning false makes the engine call ``stop()`` and drop it.
/// 2. Events of the subscribed streams arrive in ``receive(_:)``, or several in order in
///    ``receive(contentsOf:)`` — on one of the engine's delivery threads, one call at a time (never two calls at once
///    for one plugin, each call finished before the next begins, even when another thread takes over), never before
///    `initialize` returned true.
/// 3. ``Engine/remove(_:)`` or engine shutdown calls ``stop()``. `.stopped` ends deliveries (undelivered events are
///    discarded) and the engine drops every reference it holds. `.refused(reason)` keeps the plugin: removal reports
///    the reason and may retry; shutdown retries for a bounded time, then drops the plugin anyway.
///
/// Keep the engine `weak` (or `unowned`) inside the plugin; a strong reference is a cycle until shutdown.
public protocol Plugin: AnyObject, Sendable {
    /// A name for logs and for "who asked" in settings. Default: the type's name.
    var name: String { get }
    /// Called once when the plugin is added.
    /// - Parameters:
    ///   - engine: The engine; subscribe here.
    ///   - arguments: What the caller of ``Engine/add(_:arguments:)`` passed.
    /// - Returns: False when the plugin cannot run (the engine then calls ``stop()`` and drops it).
    func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool
    /// Called on removal and at shutdown.
    /// - Returns: `.stopped` after releasing every resource, or `.refused(reason)` when it cannot stop now.
    func stop() -> PluginStopResult
    /// One event of a subscribed stream, on a delivery thread, one call at a time. A slow `receive` delays only
    /// this plugin's later events (progress is coalesced meanwhile): a plugin found blocking gets a thread of its own.
    func receive(_ event: EngineEvent)
    /// Several events of subscribed streams, in order: the ends of the jobs one worker finished together (results,
    /// with an error after each failed job's), or a batch submission's announcements. The default passes each to
    /// ``receive(_:)``; a plugin that takes a steady stream of small jobs' results can implement this to look at them
    /// where they lie (`events[i]`), without the per-call and per-copy cost of one event at a time. Removal and
    /// shutdown wait for the call to return.
    func receive(contentsOf events: ArraySlice<EngineEvent>)
}

extension Plugin {
    public var name: String { String(describing: type(of: self)) }
    public func receive(_ event: EngineEvent) {}
    public func receive(contentsOf events: ArraySlice<EngineEvent>) {
        for index in events.indices { receive(events[index]) }
    }
}

/// The answer of ``Plugin/stop()``.
public enum PluginStopResult: Sendable, Hashable {
    /// Stopped; every resource released.
    case stopped
    /// Cannot stop now (for example a checkpoint write is in flight).
    case refused(reason: String)
}

/// What ``Engine/remove(_:retryFor:)`` did.
public enum PluginRemoval: Sendable, Hashable {
    /// The plugin stopped and was dropped.
    case removed
    /// The plugin refused until the retry time ran out; it is still installed.
    case refused(reason: String)
    /// The plugin was not installed.
    case notInstalled
}
