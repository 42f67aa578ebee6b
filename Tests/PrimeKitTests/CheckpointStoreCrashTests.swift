import Foundation
import PrimeKitTestSupport
import Testing
@testable import PrimeKit

/// The crash-recovery child (Tests/PrimeKitCrashChild, a target of the package without a product, so its executable
/// has the target's name), next to this test bundle.
private let crashChildPath: String = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    if directory.lastPathComponent == "MacOS" {
        directory = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }
    return directory.appendingPathComponent("PrimeKitCrashChild").path
}()

/// What the kill loop saw.
private struct CrashLoopReport: Sendable {
    var kills = 0
    var problems: [String] = []
    var savedLines = 0
    var idleChildren = 0
}

/// Starts the child on `directory`, waits for its "ready" line (and, every other time, for its first "saved" line
/// or "idle", so that kills also land after durable writes however slow the machine is), lets it run for a random
/// moment, SIGKILLs it, and checks that every generation it reported as durable is still on disk (or superseded by
/// a newer one or a result). Runs on a thread of its own: it blocks on pipes and sleeps a random delay, which is
/// the chaos itself, not synchronisation.
private func crashLoop(directory: String, iterations: Int, intervalMs: Int, seed: UInt64) -> CrashLoopReport {
    var report = CrashLoopReport()
    var random = SplitMix(seed: seed)
    var durable: [String: UInt64] = [:]
    for iteration in 0..<iterations {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: crashChildPath)
        process.arguments = [directory, String(intervalMs)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch {
            report.problems.append("cannot start \(crashChildPath): \(error)")
            return report
        }
        let reader = output.fileHandleForReading
        var text = ""
        func readUntil(_ done: (String) -> Bool) {
            while !done(text) {
                let chunk = reader.availableData
                if chunk.isEmpty { return }
                text += String(decoding: chunk, as: UTF8.self)
            }
        }
        readUntil { $0.contains("ready") }
        if iteration % 2 == 1 { readUntil { $0.contains("saved ") || $0.contains("idle") } }
        if let ready = text.split(separator: "\n").first(where: { $0.hasPrefix("ready") }),
           ready.split(separator: " ").last != "0" {
            report.problems.append("iteration \(iteration): the child quarantined files: \(ready)")
        }
        usleep(UInt32.random(in: 0...UInt32(intervalMs * 13_000), using: &random))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        if process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL { report.kills += 1 }
        text += String(decoding: reader.readDataToEndOfFile(), as: UTF8.self)
        try? reader.close()
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.first == "idle" { report.idleChildren += 1 }
            guard fields.count == 3, fields[0] == "saved", let generation = UInt64(fields[2]) else { continue }
            report.savedLines += 1
            durable[String(fields[1])] = max(durable[String(fields[1])] ?? 0, generation)
        }
        // Every generation reported durable survives the kill (unless the job finished: then its result does).
        let onDisk = newestJobRecords(directory)
        let files = storedFiles(directory)
        for (key, generation) in durable where files[key + ".result"] == nil {
            let found = onDisk[key]?.generation ?? 0
            if found < generation {
                report.problems.append("iteration \(iteration): \(key) generation \(generation) was reported "
                                       + "durable, the newest on disk is \(found)")
            }
        }
    }
    return report
}

// A hang guard only: beside the parallel suite its 50 children wait for CPU (about 100 s of a 110 s run).
@Suite(.timeLimit(.minutes(5))) struct CheckpointStoreCrashTests {
    static let requests: [JobRequest] = [
        .isPrime(1301081),
        .factor(600851475143),
        .factor(Medium.semiprime).trialDivision(),
        .factor(Slow.prime64, bound: "150000000").splitting(false),
        .isPrime(Slow.prime64, bound: "40000000").splitting(false),
        .factor("147573952589676412927", bound: "60000000").splitting(false),  // 2^67 - 1, the 128-bit path
        .isPrime(Slow.digits100, bound: "20000000").splitting(false),          // the GMP path
        .factor(Known.ecm232),                                                 // complete: seconds of ECM
    ]

    @Test func enginesKilledAtRandomMomentsLoseNothingDurable() async throws {
        let directory = makeStateDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let requests = Self.requests
        // The uninterrupted answers.
        let reference = JobQueue.testing()
        var expected: [JobResult] = []
        for request in requests { expected.append(try await reference.submit(request).result) }
        await reference.tearDown(.cancel)

        // An engine stores the jobs without running them.
        var indexByKey: [String: Int] = [:]
        do {
            let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(60))
            await engine.suspend()
            let jobs = try engine.submit(contentsOf: requests)
            for (index, job) in jobs.enumerated() { indexByKey[try #require(engine.store?.key(for: job.id))] = index }
            _ = await engine.shutdown()
        }
        #expect(newestJobRecords(directory).count == requests.count)

        // Children resume them, write checkpoints every 3 ms, and are SIGKILLed at random moments.
        let seed = UInt64.random(in: 0...UInt64.max)
        let report: CrashLoopReport = await withCheckedContinuation { continuation in
            let thread = Thread {
                continuation.resume(returning: crashLoop(directory: directory, iterations: 50, intervalMs: 3,
                                                         seed: seed))
            }
            thread.start()
        }
        #expect(report.problems.isEmpty, "seed \(seed)")
        #expect(report.kills == 50)
        #expect(report.savedLines > 0)

        // A fresh engine recovers every job and result; nothing was quarantined.
        let engine = await Engine.testing(stateDirectory: directory) { _, options in
            options.resumeRecoveredJobs = true
        }
        #expect(engine.startupErrors.isEmpty)
        let quarantined = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/quarantine")) ?? []
        #expect(quarantined.isEmpty)
        let results = engine.store!.unreadResults
        let recoveredKeys = Set(engine.recoveredJobs.map(\.key))
        let resultKeys = Set(results.map(\.key))
        #expect(recoveredKeys.isDisjoint(with: resultKeys))
        #expect(recoveredKeys.union(resultKeys) == Set(indexByKey.keys))
        // Identical final answers, whether finished by a child or now.
        for stored in results {
            #expect(try stored.outcome.get() == expected[indexByKey[stored.key]!])
        }
        for recovered in engine.recoveredJobs {
            #expect(try await recovered.job.result == expected[indexByKey[recovered.key]!])
        }
        _ = await engine.shutdown()
    }
}
