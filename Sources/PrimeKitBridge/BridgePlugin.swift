import Foundation
import PrimeKit
import Synchronization

/// The bridge's plugin: it receives the engine's progress and results (and, when the client subscribes, errors,
/// lifecycle and plugin data) on its own delivery thread and turns them into notification lines.
final class BridgePlugin: Plugin, @unchecked Sendable {
    var name: String { "primekit.bridge" }

    /// The streams a client can subscribe to by name (progress and results always arrive as job notifications).
    static let streamNames: [(String, Streams)] = [("errors", .errors), ("lifecycle", .lifecycle),
                                                   ("pluginData", .pluginData)]

    private final class Weak: @unchecked Sendable { weak var server: BridgeServer? }
    private let reference = Mutex(Weak())

    var server: BridgeServer? {
        get { reference.withLock(anchoredTo: self) { $0.server } }
        set { reference.withLock(anchoredTo: self) { $0.server = newValue } }
    }

    func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        engine.subscribe(self, to: [.progress, .results])
        return true
    }

    func stop() -> PluginStopResult { .stopped }

    func receive(_ event: EngineEvent) {
        server?.deliver(event)
    }

    /// The members after `state` in `job/finished` and `job/status`: `"result":{…}`, `"error":{…}`, or
    /// `"reason":"…","checkpoint":"…"`.
    static func outcomeMembers(_ outcome: JobCompletion.Outcome, checkpoint: Checkpoint? = nil) -> [UInt8] {
        var out = JSONWriter()
        switch outcome {
        case .succeeded(let result):
            out.key("result")
            WireFormat.write(result, into: &out)
        case .failed(let error):
            out.key("error")
            RPCError.from(error).write(into: &out)
        case .cancelled(let reason):
            out.member("reason", string: reason.description)
            if let checkpoint { out.member("checkpoint", string: checkpoint.text) }
        }
        return out.bytes
    }
}

extension BridgeServer {
    /// An event from the plugin's delivery thread.
    func deliver(_ event: EngineEvent) {
        switch event {
        case .progress(let snapshot):
            let line = Self.notification("job/progress") { out in
                out.member("jobId", string: snapshot.jobID.description)
                WireFormat.writeProgressMembers(snapshot, into: &out)
            }
            outbox.progress(snapshot.jobID, seq: snapshot.seq, line)
        case .finished(let completion):
            finished(completion)
        case .error(let error) where error.kind == .jobFailed:
            break  // the job's own job/finished carries the error, and stays the last message about the job
        case .lifecycle(.jobSubmitted):
            break  // the job/submit response says it, and nothing about a job may precede that response
        case .error(let error):
            eventNotification("errors") { out in
                out.member("kind", string: error.kind.rawValue)
                out.member("message", string: error.message)
                if let id = error.jobID { out.member("jobId", string: id.description) }
                if let plugin = error.plugin { out.member("plugin", string: plugin) }
                if let path = error.path { out.member("path", string: path) }
            }
        case .lifecycle(let lifecycle):
            eventNotification("lifecycle") { out in Self.write(lifecycle, into: &out) }
        case .pluginData(let data):
            eventNotification("pluginData") { out in
                out.member("tag", string: data.tag)
                out.key("data")
                if let value = data.data as? JSONValue {
                    out.value(value)
                } else if let saved = data.data as? StoreSaved {
                    out.object { out in
                        out.member("key", string: saved.key)
                        out.member("jobId", string: saved.jobID.description)
                        out.member("generation", number: saved.generation)
                        out.member("percent", number: (saved.percent * 100).rounded() / 100)
                    }
                } else if let text = data.data as? String {
                    out.string(text)
                } else if let flag = data.data as? Bool {
                    out.bool(flag)
                } else if let number = data.data as? Int {
                    out.number(number)
                } else {
                    out.string(String(describing: data.data))
                }
                if let sender = data.sender { out.member("sender", string: sender) }
            }
        }
    }

    private func eventNotification(_ stream: String, _ body: (inout JSONWriter) -> Void) {
        let line = Self.notification("engine/event") { out in
            out.member("stream", string: stream)
            out.key("event")
            out.object(body)
        }
        outbox.respond(line)
    }

    private static func write(_ event: LifecycleEvent, into out: inout JSONWriter) {
        switch event {
        case .started: out.member("event", string: "started")
        case .pluginAdded(let name): out.member("event", string: "pluginAdded"); out.member("plugin", string: name)
        case .pluginRemoved(let name): out.member("event", string: "pluginRemoved"); out.member("plugin", string: name)
        case .pluginStopRefused(let name, let reason):
            out.member("event", string: "pluginStopRefused")
            out.member("plugin", string: name)
            out.member("reason", string: reason)
        case .jobSubmitted(let id): out.member("event", string: "jobSubmitted"); out.member("jobId", string: "\(id)")
        case .recovered(let jobs, let results):
            out.member("event", string: "recovered")
            out.member("jobs", number: jobs)
            out.member("results", number: results)
        case .settingsApplied(let changes):
            out.member("event", string: "settingsApplied")
            out.key("changes")
            out.array { out in for change in changes { writeChange(change, into: &out) } }
        case .suspended: out.member("event", string: "suspended")
        case .resumed: out.member("event", string: "resumed")
        case .eventsDropped(let count): out.member("event", string: "eventsDropped"); out.member("count", number: count)
        case .shuttingDown: out.member("event", string: "shuttingDown")
        }
    }

    /// A job finished: its `job/finished` line, and the record `job/status` answers from.
    private func finished(_ completion: JobCompletion) {
        // Jobs that shutdown stops are reported in the shutdown response, with their checkpoints, not as cancelled.
        if case .cancelled(.shutdown) = completion.outcome { return }
        let id = completion.jobID
        let job = registeredJob(id)
        var checkpoint: Checkpoint?
        if case .cancelled = completion.outcome, let job {
            checkpoint = job.cancelledCheckpoint
        }
        var stored: Bool?
        if let store = engine.store, completion.state != .cancelled {
            // With a state directory, job/finished waits until the outcome is filed: on disk (a restart still
            // answers for it), or its write failed — then `stored` is false and the store retries every tick.
            // One wait covers every result the store has queued by then, so this costs a directory sync per
            // batch of results, not per job.
            Self.blocking { await store.waitUntilResultsFiled() }
            stored = !store.resultIsUnwritten(id)
        }
        let members = BridgePlugin.outcomeMembers(completion.outcome, checkpoint: checkpoint)
        let line = Self.notification("job/finished") { out in
            out.member("jobId", string: id.description)
            out.member("state", string: WireFormat.name(completion.state))
            out.raw(members)
            if let stored { out.member("stored", bool: stored) }
        }
        let waiting = registry.withLock(anchoredTo: self) { registry in
            registry.live[id] = nil
            // A succeeded job's handle is not needed any more (a dependency on it is satisfied).
            let keep = completion.state == .succeeded ? nil : job
            let progress = completion.state == .succeeded ? 100 : (job?.progress.percent ?? 0)
            registry.finished[id] = Finished(job: keep, kind: completion.kind, state: completion.state,
                                             progress: progress, members: members)
            registry.finishedOrder.append(id)
            while registry.finishedOrder.count > limits.keepFinished {
                registry.finished[registry.finishedOrder.removeFirst()] = nil
            }
            return registry.settledWaiters > 0
        }
        outbox.finished(id, line)
        if waiting { settled.withLock { settled.broadcast() } }
    }

    /// The handle of a job the bridge submitted: a job can finish inside `engine.submit` (a dependency already
    /// cancelled), before the submitting thread has registered it, so wait for that (a few microseconds).
    private func registeredJob(_ id: JobID) -> Job? {
        if let job = registry.withLock(anchoredTo: self, { $0.live[id] }) { return job }
        return waitForRegistry(timeout: 2) { $0.live[id] }
    }

    /// Runs async work from a thread that may block (a plugin's delivery thread, the request reader).
    package static func blocking<T: Sendable>(_ work: @escaping @Sendable () async -> T) -> T {
        let box = Mutex<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let value = await work()
            box.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return box.withLock { $0! }
    }
}
