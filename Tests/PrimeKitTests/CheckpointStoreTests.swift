import Foundation
import Testing
@testable import PrimeKit

/// The real file system with injectable failures: a write that fails half-way (disk full), a read-only file
/// system refusing renames and removals.
final class FaultyFileSystem: StoreFileSystem, @unchecked Sendable {
    enum Fault { case diskFull, readOnly }

    private let base = POSIXStoreFileSystem()
    private let lock = NSLock()
    private var current: Fault?

    var fault: Fault? {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }

    func makeOwnerOnlyDirectory(_ path: String) throws(StoreIOError) {
        if fault == .readOnly { throw StoreIOError(operation: "chmod", path: path, errno: EROFS) }
        try base.makeOwnerOnlyDirectory(path)
    }

    func writeAndSync(_ bytes: [UInt8], to path: String) throws(StoreIOError) {
        switch fault {
        case .diskFull:
            try base.writeAndSync(Array(bytes.prefix(bytes.count / 2)), to: path)  // what fitted
            throw StoreIOError(operation: "write", path: path, errno: ENOSPC)
        case .readOnly:
            throw StoreIOError(operation: "open", path: path, errno: EROFS)
        case nil:
            try base.writeAndSync(bytes, to: path)
        }
    }

    func rename(_ from: String, to: String) throws(StoreIOError) {
        if fault == .readOnly { throw StoreIOError(operation: "rename", path: to, errno: EROFS) }
        try base.rename(from, to: to)
    }

    func syncDirectory(_ path: String) throws(StoreIOError) { try base.syncDirectory(path) }

    func remove(_ path: String) throws(StoreIOError) {
        if fault == .readOnly { throw StoreIOError(operation: "unlink", path: path, errno: EROFS) }
        try base.remove(path)
    }

    func read(_ path: String) throws(StoreIOError) -> [UInt8] { try base.read(path) }
    func list(_ path: String) throws(StoreIOError) -> [String] { try base.list(path) }
}

/// The store's files: name → bytes (the quarantine directory aside).
func storedFiles(_ directory: String) -> [String: Data] {
    var files: [String: Data] = [:]
    for name in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] where name != "quarantine" {
        files[name] = FileManager.default.contents(atPath: directory + "/" + name)
    }
    return files
}

func permissions(_ path: String) -> Int {
    ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int ?? -1) & 0o777
}

/// The newest decodable generation of each job in a state directory: key → record.
func newestJobRecords(_ directory: String) -> [String: StoreRecord] {
    var newest: [String: StoreRecord] = [:]
    for (name, data) in storedFiles(directory) where name.contains(".job.") && !name.hasSuffix(".tmp") {
        guard let record = try? StoreRecord.decode(Array(data)) else { continue }
        if (newest[record.key]?.generation ?? 0) < record.generation { newest[record.key] = record }
    }
    return newest
}

@Suite(.timeLimit(.minutes(3))) struct CheckpointStoreTests {
    @Test func pausedJobsAndUnreadResultsSurviveARestart() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paused: Checkpoint
        let answer: JobResult
        do {
            let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(60))
            let probe = Probe("probe", streams: .progress)
            engine.add(probe)
            let long = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false).progressInterval(.zero).priority(.high))
            await probe.wait { $0.count(of: .progress) >= 2 }
            paused = try await engine.pause(long)
            answer = try await engine.submit(.isPrime(1301081)).result
            _ = await engine.shutdown()
        }
        #expect(permissions(directory) == 0o700)
        let files = storedFiles(directory)
        #expect(files.keys.filter { $0.hasSuffix(".result") }.count == 1)
        #expect(files.keys.filter { $0.contains(".job.") }.count == 1)
        for name in files.keys { #expect(permissions(directory + "/" + name) == 0o600) }

        let engine = await Engine.testing(stateDirectory: directory)
        #expect(engine.startupErrors.isEmpty)
        #expect(engine.recoveredJobs.count == 1)
        let recovered = try #require(engine.recoveredJobs.first)
        #expect(recovered.job.state == .paused)
        #expect(recovered.job.priority == .high)
        #expect(try await recovered.job.checkpoint() == paused)
        let results = try #require(engine.store).unreadResults
        #expect(results.count == 1)
        #expect(try results.first?.outcome.get() == answer)
        engine.store!.markRead(results[0].key)
        #expect(engine.store!.unreadResults.isEmpty)
        #expect(storedFiles(directory).keys.filter { $0.hasSuffix(".result") }.isEmpty)
        // Cancelling forgets the job for good.
        recovered.job.cancel()
        _ = try? await recovered.job.result
        await engine.store!.persistNow()
        _ = await engine.shutdown()
        let third = await Engine.testing(stateDirectory: directory)
        #expect(third.recoveredJobs.isEmpty && third.store!.unreadResults.isEmpty)
        _ = await third.shutdown()
    }

    @Test func runningJobsAreWrittenEveryIntervalAndOnShutdown() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = await Engine.testing(stateDirectory: directory, interval: .milliseconds(5))
        let saved = Probe("saved", streams: .pluginData, tags: .exactly([CheckpointStore.savedTag]))
        engine.add(saved)
        let job = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false).priority(.low))
        // Several generations are written while the job runs, each newer than the last.
        await saved.wait { $0.count >= 4 }
        let generations = saved.pluginData().compactMap { ($0.data as? StoreSaved)?.generation }
        #expect(generations == Array(1...UInt64(generations.count)))
        #expect(job.state == .running)
        let report = await engine.shutdown()
        let key = try #require(newestJobRecords(directory).keys.first)
        let stored = try #require(newestJobRecords(directory)[key])
        #expect(stored.payload == report.checkpoints[job.id]?.text)
        // Both generation files exist: the newest and the one before it.
        #expect(storedFiles(directory).keys.filter { $0.hasPrefix(key + ".job.") }.count == 2)
    }

    @Test func aStreamOfFinishingJobsDoesNotPostponeTheCheckpoints() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = await Engine.testing(stateDirectory: directory, interval: .milliseconds(5))
        let saved = Probe("saved", streams: .pluginData, tags: .exactly([CheckpointStore.savedTag]))
        engine.add(saved)
        let long = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false).priority(.low))
        // Results keep the store thread busy; the running job must still be written every interval.
        var finished = 0
        while finished < 20_000 {
            let savesOfLong = saved.pluginData().filter { ($0.data as? StoreSaved)?.jobID == long.id }.count
            if savesOfLong >= 3 { break }
            _ = try await engine.submit(.isPrime(1_000 + finished % 5_000)).result
            finished += 1
        }
        #expect(saved.pluginData().filter { ($0.data as? StoreSaved)?.jobID == long.id }.count >= 3, "\(long.state), \(finished) jobs finished")
        _ = await engine.shutdown()
    }

    @Test func tornCorruptAndForeignFilesAreQuarantined() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Two jobs, each with two generations on disk.
        do {
            let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(60))
            let probe = Probe("probe", streams: .progress)
            engine.add(probe)
            let a = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false).priority(.low).progressInterval(.zero))
            let b = try engine.submit(.isPrime(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false).priority(.low).progressInterval(.zero))
            await probe.wait { events in
                Set(events.compactMap { if case .progress(let p) = $0 { p.jobID } else { nil } }) == [a.id, b.id]
            }
            await engine.store!.persistNow()
            let seen = probe.events.count
            await probe.wait { $0.count >= seen + 4 }
            _ = await engine.shutdown()
        }
        let records = newestJobRecords(directory)
        #expect(records.count == 2)
        let (tornKey, tornRecord) = try #require(records.sorted { $0.key < $1.key }.first)
        let (corruptKey, corruptRecord) = try #require(records.sorted { $0.key < $1.key }.last)
        let tornPath = "\(directory)/\(tornKey).job.\(tornRecord.generation % 2)"
        let full = try #require(FileManager.default.contents(atPath: tornPath))
        try full.prefix(full.count * 2 / 3).write(to: URL(fileURLWithPath: tornPath))
        let corruptPath = "\(directory)/\(corruptKey).job.\(corruptRecord.generation % 2)"
        var bytes = Array(try #require(FileManager.default.contents(atPath: corruptPath)))
        bytes[bytes.count / 2] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: corruptPath))
        try Data("shopping list\n".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
        try Data("primekit-store 9\nrecord job\n".utf8)
            .write(to: URL(fileURLWithPath: directory + "/k0000000000000001.job.0"))
        try Data("half a write".utf8).write(to: URL(fileURLWithPath: directory + "/k0000000000000002.result.tmp"))

        let capture = LogCapture()
        let engine = await Engine.testing(stateDirectory: directory) { _, options in
            options.logger = capture.logger()
        }
        // Both jobs come back, from the generation before the damaged one.
        #expect(engine.recoveredJobs.map(\.key).sorted() == [tornKey, corruptKey].sorted())
        #expect(engine.startupErrors.count == 4)
        #expect(engine.startupErrors.allSatisfy { $0.kind == .storeFileQuarantined })
        let messages = engine.startupErrors.map(\.message).joined(separator: "\n")
        #expect(messages.contains("torn write"))
        #expect(messages.contains("checksum mismatch"))
        #expect(messages.contains("notes.txt quarantined: foreign file"))
        #expect(messages.contains("unsupported store format"))
        let quarantined = try FileManager.default.contentsOfDirectory(atPath: directory + "/quarantine")
        #expect(quarantined.count == 4)
        #expect(capture.records.filter { $0.level == .error }.count == 4)
        #expect(!storedFiles(directory).keys.contains { $0.hasSuffix(".tmp") })
        // The recovered jobs carry on to the uninterrupted answer.
        let job = try #require(engine.recoveredJobs.first { $0.key == tornKey }?.job)
        #expect(job.state == .paused)
        _ = await engine.shutdown()
    }

    @Test func writeFailuresAreReportedAndDamageNothing() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileSystem = FaultyFileSystem()
        // No tick of its own: every write below is one the test asks for and waits on.
        let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(86_400),
                                          fileSystem: fileSystem)
        let probe = Probe("probe", streams: [.errors, .progress])
        engine.add(probe)
        // A job that outlasts the test however slow the machine is (a 64-bit prime can finish under heavy load).
        let long = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false)
            .priority(.low).progressInterval(.zero))
        await probe.wait { $0.count(of: .progress) >= 1 }
        await engine.store!.persistNow()
        let before = storedFiles(directory)
        #expect(before.count == 1)
        #expect(engine.store!.isWritable)

        var smalls: [JobID] = []
        for fault in [FaultyFileSystem.Fault.diskFull, .readOnly] {
            fileSystem.fault = fault
            let errorsBefore = probe.errors().count
            let seen = probe.events.count(of: .progress)
            await probe.wait { $0.count(of: .progress) >= seen + 2 }  // the checkpoint has moved on
            await engine.store!.persistNow()
            let small = try engine.submit(.isPrime(1301081))
            _ = try await small.result
            await engine.store!.persistNow()
            await probe.wait { $0.count(of: .errors) >= errorsBefore + 2 }
            #expect(probe.errors().dropFirst(errorsBefore).allSatisfy { $0.kind == .storeWriteFailed })
            #expect(long.state == .running)  // jobs keep running
            #expect(storedFiles(directory) == before)  // nothing stored is damaged, no temp file left
            #expect(engine.store!.unreadResults.contains { $0.jobID == small.id })  // kept in memory
            #expect(engine.store!.resultIsUnwritten(small.id))  // and said to be not on disk
            #expect(!engine.store!.isWritable)
            smalls.append(small.id)
        }
        // Once writes work again, the job and the results are written.
        fileSystem.fault = nil
        await engine.store!.persistNow()
        let after = storedFiles(directory)
        #expect(after.keys.filter { $0.hasSuffix(".result") }.count == 2)
        #expect(after.keys.filter { $0.contains(".job.") }.count == 2)
        #expect(!smalls.contains { engine.store!.resultIsUnwritten($0) })
        #expect(engine.store!.isWritable)
        _ = await engine.shutdown()
    }

    @Test func aReadOnlyStateDirectoryIsRecoveredWithoutChangingIt() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paused: Checkpoint
        let answer: JobResult
        do {
            let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(86_400))
            let probe = Probe("probe", streams: .progress)
            engine.add(probe)
            let long = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false)
                .progressInterval(.zero).priority(.high))
            await probe.wait { $0.count(of: .progress) >= 2 }
            paused = try await engine.pause(long)
            answer = try await engine.submit(.isPrime(1301081)).result
            _ = await engine.shutdown()
        }
        // What a writable start would remove or quarantine: a temporary file and a foreign one.
        try Data("half a write".utf8).write(to: URL(fileURLWithPath: directory + "/k0000000000000002.result.tmp"))
        try Data("shopping list\n".utf8).write(to: URL(fileURLWithPath: directory + "/notes.txt"))
        let before = storedFiles(directory)

        let fileSystem = FaultyFileSystem()
        fileSystem.fault = .readOnly
        let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(86_400),
                                          fileSystem: fileSystem)
        let store = try #require(engine.store)
        #expect(!store.isWritable)
        #expect(engine.startupErrors.contains { $0.kind == .storeUnavailable && $0.message.contains("cannot be written") })
        #expect(engine.startupErrors.contains {
            $0.kind == .storeFileQuarantined && $0.message.contains("notes.txt is unusable (foreign file) and was left")
        })
        // Everything stored is recovered.
        let recovered = try #require(engine.recoveredJobs.first)
        #expect(engine.recoveredJobs.count == 1)
        #expect(recovered.job.state == .paused && recovered.job.priority == .high)
        #expect(try await recovered.job.checkpoint() == paused)
        #expect(store.unreadResults.count == 1)
        #expect(try store.unreadResults.first?.outcome.get() == answer)
        // A new job's end is not stored, and is said not to be; nothing on disk changes.
        let small = try engine.submit(.isPrime(1000003))
        _ = try await small.result
        await store.persistNow()
        #expect(store.resultIsUnwritten(small.id))
        _ = await engine.shutdown()
        #expect(storedFiles(directory) == before)
    }

    @Test func resultsBeyondTheRetentionLimitAreDropped() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let engine = await Engine.testing(stateDirectory: directory) { _, options in options.resultRetention = 3 }
        var ids: [JobID] = []
        for candidate in [101, 103, 107, 109, 113] {
            let job = try engine.submit(.isPrime(candidate))
            _ = try await job.result
            ids.append(job.id)
        }
        await engine.store!.persistNow()
        #expect(engine.store!.unreadResults.map(\.jobID) == Array(ids.suffix(3)))
        #expect(storedFiles(directory).keys.filter { $0.hasSuffix(".result") }.count == 3)
        _ = await engine.shutdown()
    }

    @Test func withoutAStateDirectoryNothingTouchesTheDisk() async throws {
        let engine = await Engine.testing()
        #expect(engine.store == nil)
        #expect(try await engine.submit(.isPrime(7)).result.isPrime == true)
        _ = await engine.shutdown()
    }
}
