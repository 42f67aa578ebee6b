import Foundation
import Logging
import Synchronization

/// The core that owns a ``JobQueue`` and hands its events to plugins — the way a sensor SDK's core hands its data
/// streams to plugins that subscribe by bitmask, broadcast to each other and negotiate settings.
///
/// ```swift
/// var settings = EngineSettings()
/// settings.stateDirectory = "/var/lib/myapp/primekit"      // optional: durable checkpoints and results
/// let engine = await Engine(settings: settings)
/// await engine.add(LoggingPlugin(logger: Logger(label: "primekit")))
/// let job = try engine.submit(.factor("600851475143"))
/// engine.settings.request(.progressInterval, .milliseconds(100), by: "progress bar")
/// let changes = engine.applySettings()
/// let report = await engine.shutdown()
/// ```
///
/// Events reach each subscribed plugin asynchronously, on a thread of its own, through a bounded mailbox: the
/// engine's workers only drop an event in the mailbox and move on, so a slow or blocked plugin never stalls them,
/// the queue, or other plugins.
public final class Engine: Sendable {
    /// How the engine starts.
    public struct Options: Sendable {
        /// Recovered unfinished jobs continue at once (true) or wait paused for ``Job/resume()`` (false).
        public var resumeRecoveredJobs = false
        /// The most unread results the checkpoint store keeps.
        public var resultRetention = 10_000
        /// Each plugin's mailbox holds at most this many pluginData and lifecycle events (the oldest are dropped
        /// beyond it); progress is coalesced to one per job; results and errors are never dropped.
        public var mailboxCapacity = 1024
        /// Where the engine logs what it reports on the errors stream (quarantined files, write failures) even
        /// when no plugin listens. Default: nowhere.
        public var logger = Logger(label: "primekit.engine", factory: { _ in SwiftLogNoOpLogHandler() })
        /// How long shutdown retries a plugin that refuses to stop before dropping it.
        public var stopTimeout: Duration = .seconds(2)
        /// Test seam (internal): the queue's ``JobQueue/Configuration/failureInjection``.
        var failureInjection: FailureInjection? = nil

        public init() {}
    }

    private struct Registry: Sendable {
        var subscriptions: [PluginSubscription] = []
        var shutDown = false
    }

    /// The queue the engine runs jobs on. Plugins see the progress and ends of every job in it, and a submission to
    /// it is a submission to the engine (``submit(_:)``): the digit limit, the engine's progress interval,
    /// lifecycle events and the store apply to both alike.
    public let queue: JobQueue
    /// Negotiated settings: request, override, then ``applySettings()``.
    public let settings: SettingsNegotiator
    /// The durable checkpoint store, when the settings name a state directory.
    public let store: CheckpointStore?
    /// Jobs recovered from the state directory at start.
    public let recoveredJobs: [RecoveredJob]
    /// What went wrong at start (quarantined files, an unusable state directory); also reported on the errors
    /// stream and to ``Options/logger``.
    public let startupErrors: [EngineError]
    /// The options the engine started with.
    public let options: Options
    private let maxDigitsCeiling: Int
    private let registry = Mutex(Registry())
    /// The subscriptions as an immutable array, replaced on every change: what the hot path reads.
    private let published = SubscriberList()
    /// The threads that deliver the plugins' mailboxes.
    private let delivery = PluginDelivery()
    /// Serialises ``refreshTap()``, so the tap installed last reflects the subscriptions changed last.
    private let tapRefresh = Mutex(())

    /// Starts an engine: creates the queue and, with a state directory, the checkpoint store, which recovers every
    /// unfinished job (paused, unless ``Options/resumeRecoveredJobs``) and every unread result.
    /// - Parameters:
    ///   - settings: The initial settings.
    ///   - options: How to start.
    public convenience init(settings: EngineSettings = EngineSettings(), options: Options = Options()) async {
        await self.init(settings: settings, options: options, fileSystem: POSIXStoreFileSystem())
    }

    init(settings initial: EngineSettings, options: Options, fileSystem: any StoreFileSystem) async {
        var configuration = JobQueue.Configuration()
        configuration.maxConcurrentJobs = max(1, initial.maxConcurrentJobs)
        configuration.sliceDuration = initial.sliceDuration
        configuration.maxDigits = initial.maxDigits
        configuration.bpswDigits = initial.bpswDigits
        configuration.failureInjection = options.failureInjection
        queue = JobQueue(configuration: configuration)
        settings = SettingsNegotiator(initial)
        self.options = options
        maxDigitsCeiling = initial.maxDigits
        guard let directory = initial.stateDirectory else {
            store = nil
            recoveredJobs = []
            startupErrors = []
            queue.attach(to: self)
            emit(.lifecycle(.started))
            return
        }
        let absolute = directory.hasPrefix("/") ? directory
            : FileManager.default.currentDirectoryPath + "/" + directory
        let store = CheckpointStore(directory: absolute, interval: initial.checkpointInterval,
                                    resultRetention: options.resultRetention, fileSystem: fileSystem)
        self.store = store
        let recovery = store.readDirectory()
        var recovered: [RecoveredJob] = []
        var errors = recovery.errors
        queue.suspend()
        // A recovered job keeps its id (recovery.jobs is in ascending id order), and new jobs are numbered after
        // every id the directory remembers, so an id names the same job across restarts.
        for found in recovery.jobs {
            queue.scheduler.raiseNextJobID(to: max(found.record.jobID, 1) - 1)
            var job: Job?
            var candidates = [(found.record, found.checkpoint)]
            if let older = found.otherGeneration, let checkpoint = try? Checkpoint(text: older.payload) {
                candidates.append((older, checkpoint))
            }
            for (record, checkpoint) in candidates {
                do {
                    let request = JobRequest.restore(checkpoint).priority(record.priority)
                        .progressInterval(initial.progressInterval)
                    job = try queue.submit(request)
                    store.track(job!, key: found.key, generation: found.record.generation,
                                writtenText: record.generation == found.record.generation ? checkpoint.text : nil)
                    break
                } catch {
                    if let quarantined = store.quarantine(record, "refused by the kernel: \(error.message)") {
                        errors.append(quarantined)
                    }
                }
            }
            guard let job else { continue }
            let previous = JobID(rawValue: found.record.jobID)
            recovered.append(RecoveredJob(key: found.key, previousJobID: previous, job: job))
        }
        queue.scheduler.raiseNextJobID(to: recovery.results.map(\.jobID.rawValue).max() ?? 0)
        queue.scheduler.raiseNextJobID(to: recovery.jobs.map(\.record.jobID).max() ?? 0)
        store.adoptResults(recovery.results)
        recoveredJobs = recovered
        startupErrors = errors
        refreshTap()  // before the queue resumes: the store hears of every recovered job's end
        if !options.resumeRecoveredJobs {
            for item in recovered { _ = try? await item.job.pause() }
        }
        queue.resume()
        queue.attach(to: self)  // after recovery, whose jobs the store tracks under their old keys
        for error in errors { report(error) }
        _ = add(store, arguments: [:])
        emit(.lifecycle(.recovered(jobs: recovered.count, results: recovery.results.count)))
        emit(.lifecycle(.started))
    }

    deinit {
        let subscriptions = registry.withLock { $0.subscriptions }
        for subscription in subscriptions {
            _ = subscription.plugin?.stop()
            subscription.close()
        }
        delivery.stop()
    }

    // MARK: - Jobs

    /// Submits a job; plugins see its progress and completion. A request that sets no progress interval gets the
    /// engine's ``EngineSettings/progressInterval``; one that sets any, 250 ms included, keeps it.
    /// - Throws: ``PrimeKitError`` as ``JobQueue/submit(_:)`` does, `candidateTooLarge` above the
    ///   ``EngineSettings/maxDigits`` in effect, `queueShutDown` after ``shutdown()``.
    @discardableResult
    public func submit(_ request: JobRequest) throws(PrimeKitError) -> Job {
        var prepared = request
        let admission = try admission()
        if try admission.needsInterval(request) { prepared.progressInterval = admission.progressInterval }
        return try submitTracked { (track) throws(PrimeKitError) in
            [try queue.submit(prepared) { track([$0]) }]
        }[0]
    }

    /// Submits many jobs under one lock (all or none): the fast path for large numbers of small jobs.
    @discardableResult
    public func submit(contentsOf requests: [JobRequest]) throws(PrimeKitError) -> [Job] {
        // The shutdown flag and the settings are read once per submission; the array is only rewritten when the
        // engine changes a request (its progress interval replaces the default).
        var prepared = requests
        let admission = try admission()
        for index in requests.indices where try admission.needsInterval(requests[index]) {
            prepared[index].progressInterval = admission.progressInterval
        }
        return try submitTracked { (track) throws(PrimeKitError) in
            try queue.submit(contentsOf: prepared, beforeRegistering: track)
        }
    }

    /// Runs a queue submission whose `track` argument must see the jobs before they can run: the store follows
    /// them from then on (so it hears of every end), and forgets them if the submission fails. Then announces them.
    private func submitTracked(_ submit: (_ track: ([Job]) -> Void) throws(PrimeKitError) -> [Job])
        throws(PrimeKitError) -> [Job]
    {
        var tracked: [Job] = []
        do {
            let jobs = try submit { jobs in
                if let store { for job in jobs { store.track(job, key: StoreRecord.newKey()) } }
                tracked = jobs
            }
            announce(jobs)
            return jobs
        } catch {
            store?.untrack(tracked)
            throw error
        }
    }

    /// What every submission is checked against, read once per submission.
    private struct Admission {
        let maxDigits: Int
        let progressInterval: Duration

        /// Checks a request against the digit limit; true when it set no progress interval and must get the
        /// engine's.
        func needsInterval(_ request: JobRequest) throws(PrimeKitError) -> Bool {
            let digits = request.submitted.digits
            if request.checkpoint == nil, digits > maxDigits {
                throw PrimeKitError(code: .candidateTooLarge,
                                    message: "the candidate has \(digits) digits, over \(maxDigits)")
            }
            return request.chosenProgressInterval == nil && progressInterval != .milliseconds(250)
        }
    }

    private func admission() throws(PrimeKitError) -> Admission {
        if registry.withLock({ $0.shutDown }) {
            throw PrimeKitError(code: .queueShutDown, message: "the engine has shut down")
        }
        let effective = settings.effective
        return Admission(maxDigits: min(effective.maxDigits, maxDigitsCeiling),
                         progressInterval: effective.progressInterval)
    }

    private func announce(_ jobs: [Job]) {
        guard published.current.contains(where: { $0.mask.contains(.lifecycle) }) else { return }
        // Every mailbox keeps at most `mailboxCapacity` lifecycle events: older announcements would only be
        // counted as dropped, so only the newest are made.
        let kept = jobs.suffix(max(1, options.mailboxCapacity))
        let events = kept.map { EngineEvent.lifecycle(.jobSubmitted($0.id)) }
        published.offer { subscribers in
            for subscriber in subscribers {
                subscriber.offer(lifecycle: events, droppedBefore: jobs.count - kept.count)
            }
        }
    }

    // MARK: - The queue's tap

    /// Has the queue report to the engine while somebody listens — the store, or a plugin subscribed to progress,
    /// results or errors — and report nothing otherwise (then a job costs what it costs on the bare queue).
    private func refreshTap() {
        tapRefresh.withLock(anchoredTo: self) { _ in
            var wanted = Streams.none
            for subscriber in published.current { wanted.formUnion(subscriber.mask) }
            let listening = store != nil || !wanted.isDisjoint(with: [.progress, .results, .errors])
            queue.scheduler.setTap(listening ? makeTap() : nil, progress: wanted.contains(.progress))
        }
    }

    /// What the queue reports, turned into events: one batch per trip into the queue's lock, offered to each
    /// subscriber under one lock of its mailbox, and filed with the store before anyone awaiting those jobs
    /// resumes.
    private func makeTap() -> QueueTap {
        let published = self.published
        let store = self.store
        return QueueTap(holdsResults: store != nil) { finished, progress in
            let snapshots = progress.map { EngineEvent.progress($0) }
            var ends: [EngineEvent] = []
            ends.reserveCapacity(finished.count)
            var withErrors = false
            var completions: [JobCompletion] = []
            if store != nil { completions.reserveCapacity(finished.count) }
            // Read in place by index, each part once: every copy of an outcome is a retain of its result.
            for index in finished.indices {
                let jobID = finished[index].jobID
                let completion = JobCompletion(jobID: jobID, kind: finished[index].kind,
                                               candidate: finished[index].candidate, ending: finished[index].outcome)
                if store != nil { completions.append(completion) }
                ends.append(.finished(consume completion))
                if case .failure(let failure) = finished[index].outcome {
                    ends.append(.error(EngineError(.jobFailed, "job \(jobID) failed: \(failure.message)",
                                                   jobID: jobID, underlying: failure)))
                    withErrors = true
                }
            }
            if !completions.isEmpty { store?.jobsFinished(completions) }
            published.offer { subscribers in
                for subscriber in subscribers {
                    subscriber.offer(progress: snapshots, ends: ends, withErrors: withErrors)
                }
            }
        }
    }

    private static func deliver(_ event: EngineEvent, to published: SubscriberList) {
        published.offer { subscribers in for subscriber in subscribers { subscriber.offer(event) } }
    }

    private func emit(_ event: EngineEvent) {
        Engine.deliver(event, to: published)
    }

    /// Reports an error on the errors stream (and to ``Options/logger``).
    public func report(_ error: EngineError) {
        options.logger.error("\(error.message)", metadata: error.jobID.map { ["job": "\($0)"] })
        emit(.error(error))
    }

    /// Pauses a job and makes its checkpoint durable (with a state directory) before returning it.
    @discardableResult
    public func pause(_ job: Job) async throws -> Checkpoint {
        let checkpoint = try await job.pause()
        await store?.persistNow()
        return checkpoint
    }

    /// Suspends the queue, waits until no job is running (each paused at its slice boundary), and makes their
    /// checkpoints durable.
    public func suspend() async {
        queue.suspend()
        emit(.lifecycle(.suspended))
        for job in queue.jobs where job.state == .running {
            await job.wait(until: .paused)
        }
        await store?.persistNow()
    }

    /// Resumes the queue after ``suspend()``.
    public func resume() {
        queue.resume()
        emit(.lifecycle(.resumed))
    }

    // MARK: - Plugins

    /// Installs a plugin: calls its `initialize`; when that returns false, calls `stop()` and drops it.
    /// - Parameters:
    ///   - plugin: The plugin (a plugin can be installed once).
    ///   - arguments: Passed to `initialize`.
    /// - Returns: True when the plugin runs.
    @discardableResult
    public func add(_ plugin: Plugin, arguments: [String: any Sendable] = [:]) -> Bool {
        let subscription = PluginSubscription(plugin: plugin, capacity: options.mailboxCapacity,
                                              delivery: delivery)
        let accepted = registry.withLock { registry in
            guard !registry.shutDown, !registry.subscriptions.contains(where: { $0.owns(plugin) }) else { return false }
            registry.subscriptions.append(subscription)
            return true
        }
        guard accepted else { return false }
        publish()
        guard plugin.initialize(engine: self, arguments: arguments) else {
            _ = plugin.stop()
            drop(subscription)
            report(EngineError(.pluginInitializeFailed, "plugin \(plugin.name) did not initialize",
                               plugin: plugin.name))
            return false
        }
        subscription.start()
        emit(.lifecycle(.pluginAdded(name: plugin.name)))
        return true
    }

    /// The installed plugins, in the order they were added.
    public var plugins: [Plugin] {
        registry.withLock { $0.subscriptions.compactMap(\.plugin) }
    }

    /// How many plugins were moved off the shared delivery thread for blocking or running slow (for tests).
    var detachedPlugins: Int { delivery.detachedCount }

    /// Stops and removes a plugin. A refusal is reported (errors and lifecycle streams) and `stop()` is retried
    /// until `retryFor` has passed.
    /// - Parameters:
    ///   - plugin: The plugin.
    ///   - retryFor: How long to keep retrying a refusal (zero: ask once).
    /// - Returns: What happened.
    @discardableResult
    public func remove(_ plugin: Plugin, retryFor: Duration = .zero) async -> PluginRemoval {
        guard let subscription = subscription(of: plugin) else { return .notInstalled }
        let result = await stopWithRetries(plugin, subscription, until: ContinuousClock.now + retryFor)
        switch result {
        case .stopped:
            drop(subscription)
            _ = await subscription.waitUntilEnded(timeout: .seconds(1))
            emit(.lifecycle(.pluginRemoved(name: subscription.name)))
            return .removed
        case .refused(let reason):
            return .refused(reason: reason)
        }
    }

    /// Asks `stop()` with deliveries held (so `receive` never runs during or after a successful `stop()`; a
    /// plugin stuck in `receive` for over a second is asked anyway), retrying a refusal until `deadline`.
    private func stopWithRetries(_ plugin: Plugin, _ subscription: PluginSubscription,
                                 until deadline: ContinuousClock.Instant) async -> PluginStopResult {
        var delay = Duration.milliseconds(1)
        while true {
            subscription.hold()
            _ = await subscription.waitUntilQuiet(timeout: .seconds(1))
            let result = plugin.stop()
            guard case .refused(let reason) = result else { return result }
            subscription.release()
            report(EngineError(.pluginStopRefused, "plugin \(plugin.name) refused to stop: \(reason)",
                               plugin: plugin.name))
            emit(.lifecycle(.pluginStopRefused(name: plugin.name, reason: reason)))
            if ContinuousClock.now + delay > deadline { return result }
            try? await Task.sleep(for: delay)  // back-off between retries, not synchronisation
            delay = min(delay * 2, .milliseconds(100))
        }
    }

    private func subscription(of plugin: Plugin) -> PluginSubscription? {
        registry.withLock { $0.subscriptions.first { $0.owns(plugin) } }
    }

    private func drop(_ subscription: PluginSubscription) {
        registry.withLock { $0.subscriptions.removeAll { $0 === subscription } }
        publish()
        subscription.close()
    }

    private func publish() {
        published.current = registry.withLock { $0.subscriptions }
        refreshTap()
    }

    /// Subscribes a plugin to streams (added to those it has).
    /// - Parameters:
    ///   - plugin: An installed plugin.
    ///   - streams: The streams, e.g. `.all.subtracting(.pluginData)`.
    ///   - tags: For ``Streams/pluginData``: which tags it receives (nil keeps the current filter, initially all).
    public func subscribe(_ plugin: Plugin, to streams: Streams, tags: TagFilter? = nil) {
        subscription(of: plugin)?.subscribe(streams, tags: tags)
        refreshTap()
    }

    /// Unsubscribes a plugin from streams; undelivered progress of those streams is dropped.
    public func unsubscribe(_ plugin: Plugin, from streams: Streams) {
        subscription(of: plugin)?.unsubscribe(streams)
        refreshTap()
    }

    /// The streams a plugin is subscribed to.
    public func subscriptions(of plugin: Plugin) -> Streams {
        subscription(of: plugin)?.mask ?? .none
    }

    /// Sends data to every plugin subscribed to ``Streams/pluginData`` whose tag filter passes `tag`, except the
    /// sender.
    /// - Parameters:
    ///   - tag: A namespaced identifier (`com.example.bar.visible`; `primekit.` is the engine's).
    ///   - data: An immutable value.
    ///   - sender: The plugin sending it (not delivered back to it).
    public func broadcast(tag: String, data: any Sendable, from sender: Plugin?) {
        let event = EngineEvent.pluginData(PluginData(tag: tag, data: data, sender: sender?.name))
        published.offer { subscribers in
            for subscriber in subscribers where sender == nil || !subscriber.owns(sender!) { subscriber.offer(event) }
        }
    }

    // MARK: - Settings

    /// Commits the requested and overridden settings and applies them: workers and slice length at once, the
    /// progress interval to jobs submitted afterwards, the checkpoint interval to the store. The state directory
    /// and BPSW limit are read when an engine starts; the digit limit is capped at the one the engine started with.
    /// - Returns: What changed (also sent on the lifecycle stream).
    @discardableResult
    public func applySettings() -> [SettingChange] {
        let (effective, changes) = settings.commit()
        for change in changes {
            switch change.name {
            case .maxConcurrentJobs:
                queue.maxConcurrentJobs = max(1, effective.maxConcurrentJobs)
            case .sliceDuration:
                queue.sliceDuration = effective.sliceDuration
            case .checkpointInterval:
                store?.setInterval(effective.checkpointInterval)
            case .progressInterval, .stateDirectory, .maxDigits, .bpswDigits:
                break
            }
        }
        if !changes.isEmpty { emit(.lifecycle(.settingsApplied(changes))) }
        return changes
    }

    // MARK: - Shutdown

    /// What ``shutdown()`` did.
    public struct ShutdownReport: Sendable {
        /// The checkpoints of the unfinished jobs (paused at their slice boundary), by job id.
        public var checkpoints: [JobID: Checkpoint] = [:]
        /// Plugins dropped although they still refused to stop, with their reasons.
        public var forcedPlugins: [String: String] = [:]
    }

    /// Shuts down: running jobs pause at their next slice, every checkpoint is made durable (with a state
    /// directory), each plugin is stopped (a refusal is retried for ``Options/stopTimeout``, then the plugin is
    /// dropped and reported), and the queue is torn down. Afterwards submissions throw `queueShutDown`.
    public func shutdown() async -> ShutdownReport {
        let first = registry.withLock { registry in
            defer { registry.shutDown = true }
            return !registry.shutDown
        }
        var report = ShutdownReport()
        guard first else { return report }
        emit(.lifecycle(.shuttingDown))
        _ = await queue.enterBackground()
        for job in queue.jobs {
            if let checkpoint = try? await job.checkpoint() { report.checkpoints[job.id] = checkpoint }
        }
        await store?.persistNow()
        let deadline = ContinuousClock.now + options.stopTimeout
        let subscriptions = registry.withLock { $0.subscriptions }
        for subscription in subscriptions.reversed() {
            guard let plugin = subscription.plugin else { continue }
            if case .refused(let reason) = await stopWithRetries(plugin, subscription, until: deadline) {
                report.forcedPlugins[subscription.name] = reason
                self.report(EngineError(.pluginForcedToStop,
                                   "plugin \(subscription.name) still refused to stop (\(reason)); dropped",
                                   plugin: subscription.name))
            }
            drop(subscription)
            _ = await subscription.waitUntilEnded(timeout: .milliseconds(200))
        }
        delivery.stop()
        await queue.tearDown(.cancel)
        return report
    }
}

/// The installed subscriptions as an immutable array, replaced on every change: what the hot path reads.
final class SubscriberList: Sendable {
    private let storage = Mutex<[PluginSubscription]>([])
    /// Held while events are offered: producers on different threads (workers, submitters, plugins) then reach
    /// every mailbox in one order, so every plugin sees the events of a stream in the same order.
    private let offering = Mutex(())

    var current: [PluginSubscription] {
        get { storage.withLock(anchoredTo: self) { $0 } }
        set { storage.withLock(anchoredTo: self) { $0 = newValue } }
    }

    /// Runs `body` with the current subscribers, one producer at a time. `body` only drops events in mailboxes
    /// (which never waits for a plugin).
    func offer(_ body: ([PluginSubscription]) -> Void) {
        offering.withLock(anchoredTo: self) { _ in body(current) }
    }
}
