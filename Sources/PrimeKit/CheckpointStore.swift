import Foundation
import Synchronization

/// A finished job's outcome kept by the ``CheckpointStore`` until it is read (``CheckpointStore/markRead(_:)``) or
/// pushed out by the retention limit — also across restarts.
public struct StoredResult: Sendable {
    /// The store's durable key of the job.
    public let key: String
    /// The job's id in the process that ran it.
    public let jobID: JobID
    /// The candidate, decimal.
    public let candidate: String
    /// What it computed.
    public let kind: JobKind
    /// The result, or the error it failed with.
    public let outcome: Result<JobResult, PrimeKitError>
}

/// A job the engine recovered from its state directory at start.
public struct RecoveredJob: Sendable {
    /// The store's durable key of the job (the same across restarts).
    public let key: String
    /// The job's id when it was stored: the recovered job keeps it (``job`` has the same id).
    public let previousJobID: JobID
    /// The job now running (or paused) in this engine.
    public let job: Job
}

/// The payload of the `primekit.store.saved` broadcast: a checkpoint generation is durable.
public struct StoreSaved: Sendable, Hashable {
    public let key: String
    public let jobID: JobID
    public let generation: UInt64
    /// The job's progress when the checkpoint was taken.
    public let percent: Double
}

/// The durable checkpoint store: a built-in plugin that the ``Engine`` installs when its settings name a state
/// directory.
///
/// - Every checkpoint interval (and on ``Engine/pause(_:)``, ``Engine/suspend()`` and shutdown) it writes the
///   checkpoint of each unfinished job whose checkpoint changed: to a temporary file, fsync, rename over the older
///   of the job's two generation files (`<key>.job.0`, `<key>.job.1`), fsync the directory. The newer generation
///   therefore stays intact until the next one is complete; a torn or corrupt newest file falls back to the one
///   before it.
/// - A finished job's outcome is written as `<key>.result` and its checkpoints are removed; results stay until
///   read or until more than ``resultRetention`` are unread (the oldest go first).
/// - Files are owner-only (directory 0700, files 0600), each ends with its own checksum line.
/// - A write failure (disk full, read-only) is reported on the errors stream; the jobs keep running, nothing stored
///   before is touched, and the write is retried at the next interval.
/// - At start, torn, corrupt and foreign files are moved to `quarantine/` with a logged error.
public final class CheckpointStore: Plugin, @unchecked Sendable {
    /// The tag of the broadcast sent after each durable checkpoint (payload ``StoreSaved``).
    public static let savedTag = "primekit.store.saved"

    public var name: String { "primekit.store" }
    /// The state directory.
    public let directory: String
    /// The most unread results kept.
    public let resultRetention: Int
    let fileSystem: any StoreFileSystem

    private struct Tracked {
        var job: Job
        var generation: UInt64
        var writtenText: String?
        var writtenState: JobState?
    }

    private struct State {
        var tracked: [String: Tracked] = [:]
        var keysByJob: [JobID: String] = [:]
        var results: [String: StoredResult] = [:]
        var resultOrder: [String] = []
        var completions: [JobCompletion] = []
        var unwrittenResults: [String] = []
        var flushWaiters: [CheckedContinuation<Void, Never>] = []
        /// Completions handed to the store, and those filed (result written and the directory synced, or given up).
        var completionsQueued: UInt64 = 0
        var completionsFiled: UInt64 = 0
        var filedWaiters: [(target: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var interval: Duration
        var stopping = false
        var busy = false
        var threadRunning = false
        var writes = 0
    }

    private let condition = NSCondition()
    private var state: State
    private weak var engine: Engine?

    init(directory: String, interval: Duration, resultRetention: Int, fileSystem: any StoreFileSystem) {
        self.directory = directory
        self.resultRetention = max(0, resultRetention)
        self.fileSystem = fileSystem
        self.state = State(interval: interval)
    }

    // MARK: - Plugin

    public func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        self.engine = engine
        condition.withLock { state.threadRunning = true }
        let thread = Thread { [self] in run() }
        thread.name = "primekit.store"
        thread.start()
        return true
    }

    public func stop() -> PluginStopResult {
        condition.lock()
        defer { condition.unlock() }
        if state.busy { return .refused(reason: "a checkpoint write is in flight") }
        state.stopping = true
        condition.broadcast()
        return .stopped
    }

    /// Called by the engine on the thread that finished the job, before anyone awaiting its result resumes (so
    /// ``persistNow()`` after `await job.result` includes it). Only queues it for the store thread.
    func jobsFinished(_ completions: [JobCompletion]) {
        condition.withLock {
            state.completions += completions
            state.completionsQueued += UInt64(completions.count)
            condition.signal()
        }
    }

    // MARK: - Public

    /// Unread results, oldest first.
    public var unreadResults: [StoredResult] {
        condition.withLock { state.resultOrder.compactMap { state.results[$0] } }
    }

    /// Forgets a result (its file is removed).
    public func markRead(_ key: String) {
        let known = condition.withLock {
            state.resultOrder.removeAll { $0 == key }
            state.unwrittenResults.removeAll { $0 == key }
            return state.results.removeValue(forKey: key) != nil
        }
        if known { removeFiles([resultName(key)]) }
    }

    /// The durable key of a job submitted through the engine.
    public func key(for jobID: JobID) -> String? {
        condition.withLock { state.keysByJob[jobID] }
    }

    /// Returns once every job that finished before the call has its outcome filed: its result written and the
    /// directory synced (or the write failed and was reported). Cheaper than ``persistNow()``: checkpoints are not
    /// written, and one directory sync covers every result waiting at the time.
    public func waitUntilResultsFiled() async {
        await withCheckedContinuation { continuation in
            condition.withLock {
                if state.threadRunning && !state.stopping && state.completionsFiled < state.completionsQueued {
                    state.filedWaiters.append((state.completionsQueued, continuation))
                } else {
                    continuation.resume()
                }
            }
        }
    }

    /// Writes every unfinished job's checkpoint now (running jobs at their next slice boundary) and every result
    /// not yet written; returns when done.
    public func persistNow() async {
        await withCheckedContinuation { continuation in
            condition.withLock {
                if state.threadRunning && !state.stopping {
                    state.flushWaiters.append(continuation)
                    condition.signal()
                } else {
                    continuation.resume()
                }
            }
        }
    }

    /// Checkpoint files written since start.
    public var writesCompleted: Int { condition.withLock { state.writes } }

    // MARK: - Engine side

    func track(_ job: Job, key: String, generation: UInt64 = 0, writtenText: String? = nil) {
        condition.withLock {
            state.tracked[key] = Tracked(job: job, generation: generation, writtenText: writtenText,
                                         writtenState: writtenText == nil ? nil : .paused)
            state.keysByJob[job.id] = key
        }
    }

    /// Forgets jobs tracked for a submission that then failed, with any file a tick wrote for them meanwhile.
    func untrack(_ jobs: [Job]) {
        guard !jobs.isEmpty else { return }
        let written: [String] = condition.withLock {
            var names: [String] = []
            for job in jobs {
                guard let key = state.keysByJob.removeValue(forKey: job.id),
                      let tracked = state.tracked.removeValue(forKey: key) else { continue }
                if tracked.writtenText != nil { names += [jobName(key, 0), jobName(key, 1)] }
            }
            return names
        }
        if !written.isEmpty { removeFiles(written) }
    }

    func setInterval(_ interval: Duration) {
        condition.withLock {
            state.interval = interval
            condition.signal()
        }
    }

    // MARK: - The store thread

    private func run() {
        var nextTick = Date().addingTimeInterval(condition.withLock { state.interval.seconds })
        while true {
            condition.lock()
            // A shorter interval applied meanwhile takes effect at once.
            nextTick = min(nextTick, Date().addingTimeInterval(state.interval.seconds))
            while !state.stopping && state.completions.isEmpty && state.flushWaiters.isEmpty
                && Date() < nextTick {
                condition.wait(until: nextTick)
            }
            if state.stopping {
                state.threadRunning = false
                let waiters = state.flushWaiters + state.filedWaiters.map(\.continuation)
                state.flushWaiters = []
                state.filedWaiters = []
                condition.unlock()
                for waiter in waiters { waiter.resume() }
                return
            }
            let completions = state.completions
            state.completions = []
            let waiters = state.flushWaiters
            state.flushWaiters = []
            let tickDue = Date() >= nextTick
            state.busy = true
            condition.unlock()

            let ticked = finish(completions, nextTick: &nextTick)
            if (tickDue && !ticked) || !waiters.isEmpty {
                persistCheckpoints()
                if tickDue { nextTick = Date().addingTimeInterval(condition.withLock { state.interval.seconds }) }
            }
            condition.withLock { state.busy = false }
            for waiter in waiters { waiter.resume() }
        }
    }

    private func jobName(_ key: String, _ generation: UInt64) -> String { "\(key).job.\(generation % 2)" }
    private func resultName(_ key: String) -> String { "\(key).result" }
    private func path(_ name: String) -> String { directory + "/" + name }

    /// Writes `record` as `name`: temp file, fsync, rename, fsync the directory.
    private func write(_ record: StoreRecord, as name: String, syncDirectory: Bool = true) throws(StoreIOError) {
        let temporary = path(name + ".tmp")
        do {
            try fileSystem.writeAndSync(record.encoded(), to: temporary)
            try fileSystem.rename(temporary, to: path(name))
            if syncDirectory { try fileSystem.syncDirectory(directory) }
        } catch {
            try? fileSystem.remove(temporary)
            throw error
        }
    }

    private func removeFiles(_ names: [String]) {
        var failure: StoreIOError?
        for name in names {
            do { try fileSystem.remove(path(name)) } catch { failure = error }
        }
        do { try fileSystem.syncDirectory(directory) } catch { failure = error }
        if let failure {
            engine?.report(EngineError(.storeWriteFailed, "checkpoint store: \(failure)", path: failure.path))
        }
    }

    /// Files a finished job's outcome: writes its result file (the caller syncs the directory once per batch)
    /// and lists the files to remove after that sync (its checkpoints, evicted results).
    /// - Returns: True when a result file was written.
    private func finish(_ completion: JobCompletion, removals: inout [String]) -> Bool {
        let key: String? = condition.withLock {
            guard let key = state.keysByJob.removeValue(forKey: completion.jobID) else { return nil }
            state.tracked[key] = nil
            return key
        }
        guard let key else { return false }
        let jobFiles = [jobName(key, 0), jobName(key, 1)]
        switch completion.outcome {
        case .cancelled(.shutdown):
            return false  // the checkpoint stays for the next start
        case .cancelled:
            removals += jobFiles
            return false
        case .succeeded, .failed:
            let stored = StoredResult(key: key, jobID: completion.jobID, candidate: completion.candidate,
                                      kind: completion.kind, outcome: {
                                          switch completion.outcome {
                                          case .succeeded(let result): .success(result)
                                          case .failed(let error): .failure(error)
                                          case .cancelled: .failure(PrimeKitError(code: .internalError, message: ""))
                                          }
                                      }())
            var evicted: [String] = []
            condition.withLock {
                state.results[key] = stored
                state.resultOrder.append(key)
                while state.resultOrder.count > resultRetention {
                    let old = state.resultOrder.removeFirst()
                    state.results[old] = nil
                    state.unwrittenResults.removeAll { $0 == old }
                    evicted.append(old)
                }
            }
            removals += evicted.map(resultName)
            if condition.withLock({ state.results[key] != nil }) {
                if writeResult(key, completion, syncDirectory: false) {
                    removals += jobFiles
                    return true
                }
                condition.withLock { state.unwrittenResults.append(key) }
                return false
            }
            removals += jobFiles
            return false
        }
    }

    /// Files finished jobs in batches: result files, one directory sync, then the removals and another sync — two
    /// directory syncs per batch instead of two per job. Between batches a due checkpoint tick runs, so a flood
    /// of results never postpones the checkpoints of running jobs.
    /// - Returns: True when a tick ran.
    private func finish(_ completions: [JobCompletion], nextTick: inout Date) -> Bool {
        var ticked = false
        var start = 0
        while start < completions.count {
            let batch = completions[start..<min(start + 64, completions.count)]
            start = batch.endIndex
            var removals: [String] = []
            var wrote = false
            for completion in batch where finish(completion, removals: &removals) { wrote = true }
            if wrote {
                do { try fileSystem.syncDirectory(directory) } catch {
                    engine?.report(EngineError(.storeWriteFailed, "checkpoint store: \(error)", path: error.path))
                }
            }
            if !removals.isEmpty { removeFiles(removals) }
            let filed: [CheckedContinuation<Void, Never>] = condition.withLock {
                state.completionsFiled += UInt64(batch.count)
                let done = state.completionsFiled
                var ready: [CheckedContinuation<Void, Never>] = []
                state.filedWaiters.removeAll { waiter in
                    guard waiter.target <= done else { return false }
                    ready.append(waiter.continuation)
                    return true
                }
                return ready
            }
            for waiter in filed { waiter.resume() }
            if Date() >= nextTick {
                persistCheckpoints()
                nextTick = Date().addingTimeInterval(condition.withLock { state.interval.seconds })
                ticked = true
            }
        }
        return ticked
    }

    private func writeResult(_ key: String, _ completion: JobCompletion, syncDirectory: Bool = true) -> Bool {
        let json = (try? JSONEncoder().encode(StoredOutcome(completion))).map { String(decoding: $0, as: UTF8.self) }
        let record = StoreRecord(kind: .result, key: key, generation: 1, jobID: completion.jobID.rawValue,
                                 jobKind: completion.kind, priority: .normal, state: completion.state.rawValue,
                                 payload: json ?? "{}")
        do {
            try write(record, as: resultName(key), syncDirectory: syncDirectory)
            condition.withLock { state.writes += 1 }
            return true
        } catch {
            engine?.report(EngineError(.storeWriteFailed,
                                       "checkpoint store: could not write the result of \(completion.jobID): \(error)",
                                       jobID: completion.jobID, path: error.path))
            return false
        }
    }

    /// Takes the checkpoints that may have changed and writes those that did.
    private func persistCheckpoints() {
        // Results whose write failed before.
        let retry: [(String, StoredResult)] = condition.withLock {
            let keys = state.unwrittenResults
            state.unwrittenResults = []
            return keys.compactMap { key in state.results[key].map { (key, $0) } }
        }
        for (key, stored) in retry {
            let completion = JobCompletion(jobID: stored.jobID, kind: stored.kind, candidate: stored.candidate,
                                           outcome: { switch stored.outcome {
                                           case .success(let result): .succeeded(result)
                                           case .failure(let error): .failed(error) } }())
            if writeResult(key, completion) {
                removeFiles([jobName(key, 0), jobName(key, 1)])
            } else {
                condition.withLock { state.unwrittenResults.append(key) }
            }
        }

        let candidates: [(String, Job)] = condition.withLock {
            state.tracked.compactMap { key, tracked in
                let now = tracked.job.state
                if now.isFinished { return nil }
                if tracked.writtenText != nil && now != .running && now == tracked.writtenState { return nil }
                return (key, tracked.job)
            }
        }
        if candidates.isEmpty { return }
        let taken = Self.checkpoints(of: candidates)
        var failures: [StoreIOError] = []
        var firstFailedJob: JobID?
        var written: [(String, Job, UInt64, String, JobState, Double)] = []
        for (key, job, checkpoint, jobState, percent) in taken {
            let plan: (UInt64, Bool)? = condition.withLock {
                guard let tracked = state.tracked[key], tracked.job === job else { return nil }
                return (tracked.generation + 1, tracked.writtenText == checkpoint.text)
            }
            guard let (generation, unchanged) = plan else { continue }
            if unchanged {
                condition.withLock { state.tracked[key]?.writtenState = jobState }
                continue
            }
            let record = StoreRecord(kind: .job, key: key, generation: generation, jobID: job.id.rawValue,
                                     jobKind: job.kind,
                                     priority: job.priority, state: jobState.rawValue, payload: checkpoint.text)
            do {
                try write(record, as: jobName(key, generation), syncDirectory: false)
                written.append((key, job, generation, checkpoint.text, jobState, percent))
            } catch {
                failures.append(error)
                if firstFailedJob == nil { firstFailedJob = job.id }
            }
        }
        // One directory sync makes this tick's renames durable; only then is a generation reported saved.
        if !written.isEmpty {
            var synced = true
            do { try fileSystem.syncDirectory(directory) } catch {
                synced = false
                failures.append(error)
            }
            condition.withLock {
                for (key, _, generation, text, jobState, _) in written {
                    state.writes += 1
                    state.tracked[key]?.generation = generation
                    state.tracked[key]?.writtenText = synced ? text : nil  // not known durable: write it again
                    state.tracked[key]?.writtenState = synced ? jobState : nil
                }
            }
            if synced {
                for (key, job, generation, _, _, percent) in written {
                    engine?.broadcast(tag: Self.savedTag,
                                      data: StoreSaved(key: key, jobID: job.id, generation: generation,
                                                       percent: percent),
                                      from: self)
                }
            }
        }
        if let first = failures.first {
            engine?.report(EngineError(
                .storeWriteFailed,
                "checkpoint store: \(failures.count) checkpoint write(s) failed, stored files kept: \(first)",
                jobID: firstFailedJob, path: first.path))
        }
    }

    /// Takes the checkpoints of `jobs` (running ones at their next slice boundary), from this non-pool thread.
    private static func checkpoints(of jobs: [(String, Job)]) -> [(String, Job, Checkpoint, JobState, Double)] {
        let semaphore = DispatchSemaphore(value: 0)
        let box = Mutex<[(String, Job, Checkpoint, JobState, Double)]>([])
        Task {
            await withTaskGroup(of: (String, Job, Checkpoint, JobState, Double)?.self) { group in
                for (key, job) in jobs {
                    group.addTask {
                        let percent = job.progress.percent
                        guard let checkpoint = try? await job.checkpoint() else { return nil }
                        return (key, job, checkpoint, job.state, percent)
                    }
                }
                for await item in group {
                    if let item { box.withLock { $0.append(item) } }
                }
            }
            semaphore.signal()
        }
        semaphore.wait()
        return box.withLock { $0 }
    }

    // MARK: - Recovery

    /// What recovery found.
    struct Recovery {
        var jobs: [(key: String, record: StoreRecord, checkpoint: Checkpoint, otherGeneration: StoreRecord?)] = []
        var results: [StoredResult] = []
        var errors: [EngineError] = []
    }

    /// Reads the state directory: quarantines what cannot be used, returns the newest good generation of every job
    /// (with the one before it, as a fallback) and every result.
    func readDirectory() -> Recovery {
        var recovery = Recovery()
        do {
            try fileSystem.makeOwnerOnlyDirectory(directory)
            try fileSystem.makeOwnerOnlyDirectory(path("quarantine"))
        } catch {
            recovery.errors.append(EngineError(.storeUnavailable, "checkpoint store: \(error)", path: error.path))
            return recovery
        }
        let names: [String]
        do { names = try fileSystem.list(directory) } catch {
            recovery.errors.append(EngineError(.storeUnavailable, "checkpoint store: \(error)", path: error.path))
            return recovery
        }
        var jobFiles: [String: [String]] = [:]
        var resultFiles: [String: String] = [:]
        for name in names.sorted() where name != "quarantine" {
            if name.hasSuffix(".tmp") {
                try? fileSystem.remove(path(name))  // a write that never completed
                continue
            }
            let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 3, parts[1] == "job", parts[2] == "0" || parts[2] == "1",
               StoreRecord.isValidKey(parts[0]) {
                jobFiles[parts[0], default: []].append(name)
            } else if parts.count == 2, parts[1] == "result", StoreRecord.isValidKey(parts[0]) {
                resultFiles[parts[0]] = name
            } else {
                quarantine(name, "foreign file", &recovery)
            }
        }
        for (key, name) in resultFiles.sorted(by: { $0.key < $1.key }) {
            guard let record = load(name, key: key, kind: .result, &recovery) else { continue }
            guard let data = record.payload.data(using: .utf8),
                  let stored = try? JSONDecoder().decode(StoredOutcome.self, from: data)
            else {
                quarantine(name, "unreadable result", &recovery)
                continue
            }
            recovery.results.append(StoredResult(key: key, jobID: JobID(rawValue: stored.jobID),
                                                 candidate: stored.candidate, kind: record.jobKind,
                                                 outcome: stored.outcome))
            for jobFile in jobFiles.removeValue(forKey: key) ?? [] { try? fileSystem.remove(path(jobFile)) }
        }
        for (key, files) in jobFiles.sorted(by: { $0.key < $1.key }) {
            var good: [StoreRecord] = []
            for name in files {
                guard let record = load(name, key: key, kind: .job, &recovery) else { continue }
                do {
                    _ = try Checkpoint(text: record.payload)
                    good.append(record)
                } catch {
                    quarantine(name, "invalid checkpoint: \(error.message)", &recovery)
                }
            }
            good.sort { $0.generation > $1.generation }
            if let newest = good.first, let checkpoint = try? Checkpoint(text: newest.payload) {
                recovery.jobs.append((key, newest, checkpoint, good.count > 1 ? good[1] : nil))
            }
        }
        // In the order the jobs were submitted (ids grow; a recovered job's new id keeps the order).
        recovery.jobs.sort { $0.record.jobID < $1.record.jobID }
        return recovery
    }

    private func load(_ name: String, key: String, kind: StoreRecord.Kind, _ recovery: inout Recovery)
        -> StoreRecord?
    {
        let bytes: [UInt8]
        do { bytes = try fileSystem.read(path(name)) } catch {
            quarantine(name, "unreadable: \(error)", &recovery)
            return nil
        }
        do {
            let record = try StoreRecord.decode(bytes)
            guard record.key == key, record.kind == kind else {
                quarantine(name, "record does not match its file name", &recovery)
                return nil
            }
            return record
        } catch {
            quarantine(name, error.description, &recovery)
            return nil
        }
    }

    /// Moves a file to `quarantine/` (stamped with the time, so nothing there is overwritten) and reports it.
    func quarantine(_ name: String, _ reason: String, _ recovery: inout Recovery) {
        let stamp = Int64(Date().timeIntervalSince1970 * 1000)
        let target = path("quarantine/\(name).\(stamp)")
        do {
            try fileSystem.rename(path(name), to: target)
            try? fileSystem.syncDirectory(directory)
            recovery.errors.append(EngineError(.storeFileQuarantined,
                                               "checkpoint store: \(name) quarantined: \(reason)", path: target))
        } catch {
            recovery.errors.append(EngineError(.storeFileQuarantined,
                                               "checkpoint store: \(name) is unusable (\(reason)) and could not be "
                                                   + "moved to quarantine: \(error)", path: path(name)))
        }
    }

    /// Quarantines a stored generation that the kernel refused at submission.
    func quarantine(_ record: StoreRecord, _ reason: String) -> EngineError? {
        var recovery = Recovery()
        quarantine(jobName(record.key, record.generation), reason, &recovery)
        return recovery.errors.first
    }

    func adoptResults(_ results: [StoredResult]) {
        condition.withLock {
            for result in results {
                state.results[result.key] = result
                state.resultOrder.append(result.key)
            }
        }
    }
}

extension Duration {
    /// The duration in seconds, as a `TimeInterval`.
    var seconds: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
