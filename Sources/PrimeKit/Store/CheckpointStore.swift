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
///   before is touched, and the write is retried at the next interval (``resultIsUnwritten(_:)`` until then).
/// - At start, torn, corrupt, inconsistent and foreign files are moved to `quarantine/` with a logged error. A
///   directory that cannot be made writable is read without changing anything (``isWritable`` is false).
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
        /// Results whose write failed (or whose directory sync did): kept in memory and written again every tick.
        var unwrittenResults: [String] = []
        var unwrittenJobs: Set<JobID> = []
        /// Temporary files a failed write could not remove (the file system turned read-only meanwhile).
        var strayTemporaries: Set<String> = []
        /// False while the directory is known not to take writes: it was read-only at start, or the last write
        /// failed.
        var writable = true
        /// The directory could not be made writable at start (recovery read it without changing anything).
        var readOnlyAtStart = false
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
            if let jobID = state.results[key]?.jobID { state.unwrittenJobs.remove(jobID) }
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

    /// True when the job finished (succeeded or failed) but its outcome is not on disk: the write failed (disk full,
    /// read-only, I/O error; reported as `storeWriteFailed`). The outcome is kept in memory (``unreadResults``) and
    /// written again at every tick until it succeeds; a restart before then does not know the job.
    public func resultIsUnwritten(_ jobID: JobID) -> Bool {
        condition.withLock { state.unwrittenJobs.contains(jobID) }
    }

    /// False while the state directory does not take writes: it could not be made writable at start (recovery
    /// then read it without changing anything), or the latest write failed. True again after a write succeeds.
    public var isWritable: Bool { condition.withLock { state.writable } }

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
                _ = condition.wait(until: nextTick)  // a timeout or a signal: the loop looks again
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
            try fileSystem.replace(path(name), with: record.encoded(), temporary: temporary, directory: directory,
                                   syncingDirectory: syncDirectory)
            condition.withLock { state.writable = true }
        } catch {
            let removed = (try? fileSystem.remove(temporary)) != nil
            condition.withLock {
                state.writable = false
                if !removed { state.strayTemporaries.insert(temporary) }
            }
            throw error
        }
    }

    /// Removes the temporary files failed writes left behind (a later write of the same name replaces its own).
    private func removeStrayTemporaries() {
        let stray = condition.withLock { state.strayTemporaries }
        guard !stray.isEmpty else { return }
        for temporary in stray where (try? fileSystem.remove(temporary)) != nil {
            _ = condition.withLock { state.strayTemporaries.remove(temporary) }
        }
    }

    /// Marks results unwritten (kept in memory, retried every tick).
    private func markUnwritten(_ keys: [String]) {
        condition.withLock {
            for key in keys {
                guard let stored = state.results[key], !state.unwrittenJobs.contains(stored.jobID) else { continue }
                state.unwrittenResults.append(key)
                state.unwrittenJobs.insert(stored.jobID)
            }
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
    /// - Returns: The job's key when a result file was written.
    private func finish(_ completion: JobCompletion, removals: inout [String]) -> String? {
        let key: String? = condition.withLock {
            guard let key = state.keysByJob.removeValue(forKey: completion.jobID) else { return nil }
            state.tracked[key] = nil
            return key
        }
        guard let key else { return nil }
        let jobFiles = [jobName(key, 0), jobName(key, 1)]
        switch completion.outcome {
        case .cancelled(.shutdown):
            return nil  // the checkpoint stays for the next start
        case .cancelled:
            removals += jobFiles
            return nil
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
                    if let jobID = state.results.removeValue(forKey: old)?.jobID { state.unwrittenJobs.remove(jobID) }
                    state.unwrittenResults.removeAll { $0 == old }
                    evicted.append(old)
                }
            }
            removals += evicted.map(resultName)
            if condition.withLock({ state.results[key] != nil }) {
                if writeResult(key, completion, syncDirectory: false) {
                    removals += jobFiles
                    return key
                }
                markUnwritten([key])
                return nil
            }
            removals += jobFiles
            return nil
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
            var written: [String] = []
            for completion in batch {
                if let key = finish(completion, removals: &removals) { written.append(key) }
            }
            if !written.isEmpty {
                do { try fileSystem.syncDirectory(directory) } catch {
                    // The renames may not be durable: the results count as unwritten, their checkpoints stay.
                    markUnwritten(written)
                    let keys = Set(written)
                    removals.removeAll { name in keys.contains(String(name.prefix(while: { $0 != "." }))) }
                    condition.withLock { state.writable = false }
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
        removeStrayTemporaries()
        // Results whose write failed before: they count as unwritten until written (and synced) again.
        let retry: [(String, StoredResult)] = condition.withLock {
            state.unwrittenResults.compactMap { key in state.results[key].map { (key, $0) } }
        }
        for (key, stored) in retry {
            let completion = JobCompletion(jobID: stored.jobID, kind: stored.kind, candidate: stored.candidate,
                                           outcome: { switch stored.outcome {
                                           case .success(let result): .succeeded(result)
                                           case .failure(let error): .failed(error) } }())
            if writeResult(key, completion) {
                condition.withLock {
                    state.unwrittenResults.removeAll { $0 == key }
                    state.unwrittenJobs.remove(stored.jobID)
                }
                removeFiles([jobName(key, 0), jobName(key, 1)])
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
                condition.withLock { state.writable = false }
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
        /// The directory could not be made writable: it was read without changing anything (nothing removed or
        /// quarantined; a damaged file is refused and left in place).
        var readOnly = false
    }

    /// Reads the state directory: quarantines what cannot be used, returns the newest good generation of every job
    /// (with the one before it, as a fallback) and every result.
    func readDirectory() -> Recovery {
        var recovery = Recovery()
        var unwritable: StoreIOError?
        do {
            try fileSystem.makeOwnerOnlyDirectory(directory)
            try fileSystem.makeOwnerOnlyDirectory(path("quarantine"))
        } catch {
            unwritable = error  // read what is there, change nothing
        }
        let names: [String]
        do { names = try fileSystem.list(directory) } catch {
            recovery.errors.append(EngineError(.storeUnavailable, "checkpoint store: \(unwritable ?? error)",
                                               path: (unwritable ?? error).path))
            condition.withLock { state.writable = false }
            return recovery
        }
        recovery.readOnly = unwritable != nil
        condition.withLock {
            state.readOnlyAtStart = recovery.readOnly
            state.writable = !recovery.readOnly
        }
        if let unwritable {
            recovery.errors.append(EngineError(
                .storeUnavailable,
                "checkpoint store: the state directory cannot be written (\(unwritable)): it is read without "
                    + "changing anything, and nothing new is stored until a write succeeds (each tick tries again)",
                path: unwritable.path))
        }
        var jobFiles: [String: [String]] = [:]
        var resultFiles: [String: String] = [:]
        for name in names.sorted() where name != "quarantine" {
            if name.hasSuffix(".tmp") {
                if !recovery.readOnly { try? fileSystem.remove(path(name)) }  // a write that never completed
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
            guard let bytes = read(name, &recovery) else { continue }
            let stored: StoredResult
            do { stored = try Self.result(named: name, bytes) } catch {
                quarantine(name, error.reason, &recovery)
                continue
            }
            recovery.results.append(stored)
            let leftovers = jobFiles.removeValue(forKey: key) ?? []
            if !recovery.readOnly { for jobFile in leftovers { try? fileSystem.remove(path(jobFile)) } }
        }
        for (key, files) in jobFiles.sorted(by: { $0.key < $1.key }) {
            var good: [(StoreRecord, Checkpoint)] = []
            for name in files {
                guard let bytes = read(name, &recovery) else { continue }
                do { good.append(try Self.jobRecord(named: name, bytes)) } catch {
                    quarantine(name, error.reason, &recovery)
                }
            }
            good.sort { $0.0.generation > $1.0.generation }
            if let (newest, checkpoint) = good.first {
                recovery.jobs.append((key, newest, checkpoint, good.count > 1 ? good[1].0 : nil))
            }
        }
        // In the order the jobs were submitted (ids grow; a recovered job's new id keeps the order).
        recovery.jobs.sort { $0.record.jobID < $1.record.jobID }
        return recovery
    }

    private func read(_ name: String, _ recovery: inout Recovery) -> [UInt8]? {
        do { return try fileSystem.read(path(name)) } catch {
            quarantine(name, "unreadable: \(error)", &recovery)
            return nil
        }
    }

    /// Why a stored file is refused.
    struct Refusal: Error, Sendable {
        let reason: String
    }

    /// The record in the file `name` (`<key>.job.<slot>` or `<key>.result`): checksum, header, and its key, kind and
    /// generation slot against the name.
    static func record(named name: String, _ bytes: [UInt8]) throws(Refusal) -> StoreRecord {
        let parts = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let record: StoreRecord
        do { record = try StoreRecord.decode(bytes) } catch { throw Refusal(reason: error.description) }
        let expected = parts.count == 3 ? "\(record.key).job.\(record.generation % 2)" : "\(record.key).result"
        guard name == expected, (record.kind == .job) == (parts.count == 3) else {
            throw Refusal(reason: "record does not match its file name")
        }
        return record
    }

    /// A stored job generation, refused unless its checkpoint is valid and agrees with the record.
    static func jobRecord(named name: String, _ bytes: [UInt8]) throws(Refusal) -> (StoreRecord, Checkpoint) {
        let record = try record(named: name, bytes)
        let checkpoint: Checkpoint
        do { checkpoint = try Checkpoint(text: record.payload) } catch {
            throw Refusal(reason: "invalid checkpoint: \(error.message)")
        }
        guard checkpoint.kind == record.jobKind else {
            throw Refusal(reason: "the record says \(record.jobKind.rawValue), its checkpoint \(checkpoint.kind.rawValue)")
        }
        guard let state = JobState(rawValue: record.state), !state.isFinished else {
            throw Refusal(reason: "malformed state")
        }
        return (record, checkpoint)
    }

    /// A stored result, refused unless it decodes and agrees with its record (job id, state, kind, candidate).
    static func result(named name: String, _ bytes: [UInt8]) throws(Refusal) -> StoredResult {
        let record = try record(named: name, bytes)
        guard record.kind == .result, let data = record.payload.data(using: .utf8),
              let stored = try? JSONDecoder().decode(StoredOutcome.self, from: data)
        else { throw Refusal(reason: "unreadable result") }
        if let inconsistency = stored.inconsistency(with: record) {
            throw Refusal(reason: "inconsistent result: \(inconsistency)")
        }
        return StoredResult(key: record.key, jobID: JobID(rawValue: stored.jobID), candidate: stored.candidate,
                            kind: record.jobKind, outcome: stored.outcome)
    }

    /// Moves a file to `quarantine/` (stamped with the time, so nothing there is overwritten) and reports it.
    func quarantine(_ name: String, _ reason: String, _ recovery: inout Recovery) {
        if recovery.readOnly {
            recovery.errors.append(EngineError(.storeFileQuarantined,
                                               "checkpoint store: \(name) is unusable (\(reason)) and was left in "
                                                   + "place (the directory is read-only)", path: path(name)))
            return
        }
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
        recovery.readOnly = condition.withLock { state.readOnlyAtStart }
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
