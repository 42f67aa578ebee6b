import Foundation
import Testing
@testable import PrimeKit

/// Every file the store writes is covered by its checksum and checked against its name and its own contents when
/// read: a changed file is refused (and reported), or reads back exactly as written — it never changes an answer.
@Suite(.timeLimit(.minutes(5))) struct CheckpointStoreRecordTests {
    /// A state directory with real files of every kind: two generations each of a paused factor job and a paused
    /// isPrime job, and the results of a factor job and of an isPrime job. (The store keeps a job's checkpoint as
    /// opaque text: one piece or many makes no difference to it.)
    static func realDirectory() async throws -> String {
        let directory = makeStateDirectory()
        let engine = await Engine.testing(stateDirectory: directory, interval: .seconds(86_400)) { _, options in
            options.resultRetention = 10
        }
        let probe = Probe("probe", streams: .progress)
        engine.add(probe)
        let factor = try engine.submit(.factor(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false)
            .priority(.low).progressInterval(.zero))
        let single = try engine.submit(.isPrime(Slow.digits100, from: nil, bound: Slow.endlessBound).splitting(false)
            .priority(.low).progressInterval(.zero))
        await probe.wait { events in
            Set(events.compactMap { if case .progress(let p) = $0 { p.jobID } else { nil } }).isSuperset(of: [factor.id, single.id])
        }
        await engine.store!.persistNow()
        let seen = probe.events.count
        await probe.wait { $0.count >= seen + 4 }
        _ = try await engine.pause(factor)
        _ = try await engine.pause(single)
        _ = try await engine.submit(.factor("600851475143000000000000000034248534083151", from: nil, bound: "100000")).result
        _ = try await engine.submit(.isPrime(1301081)).result
        await engine.store!.persistNow()
        _ = await engine.shutdown()
        return directory
    }

    /// Every character a text file can hold (printable ASCII, newline, tab), and three bytes that are not text.
    static let characters: [UInt8] = Array(32...126) + [9, 10, 0, 0x80, 0xff]

    /// What a file reads as, or nil when it is refused.
    static func reading(_ name: String, _ bytes: [UInt8]) -> String? {
        if name.hasSuffix(".result") {
            guard let stored = try? CheckpointStore.result(named: name, bytes) else { return nil }
            return "\(stored.key) \(stored.jobID) \(stored.kind) \(stored.candidate) \(stored.outcome)"
        }
        guard let (record, checkpoint) = try? CheckpointStore.jobRecord(named: name, bytes) else { return nil }
        return "\(record) \(checkpoint.text)"
    }

    @Test func everySingleCharacterChangeOfAStoredFileIsRefusedOrReadsTheSame() async throws {
        let directory = try await Self.realDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = storedFiles(directory)
        #expect(files.keys.filter { $0.hasSuffix(".result") }.count == 2)
        #expect(files.keys.filter { $0.contains(".job.") }.count == 4)
        var tried = 0
        var harmless = 0
        for (name, data) in files.sorted(by: { $0.key < $1.key }) {
            let original = Array(data)
            let expected = try #require(Self.reading(name, original), "\(name) reads back")
            var wrong: [String] = []
            func check(_ changed: [UInt8], _ what: String) {
                tried += 1
                guard let read = Self.reading(name, changed) else { return }
                harmless += 1
                if read != expected { wrong.append(what) }
            }
            var changed = original
            // Each character replaced by every other, deleted, and doubled.
            for index in original.indices {
                for value in Self.characters where value != original[index] {
                    changed[index] = value
                    check(changed, "byte \(index) set to \(value)")
                }
                changed[index] = original[index]
                var shorter = original
                shorter.remove(at: index)
                check(shorter, "byte \(index) deleted")
                var longer = original
                longer.insert(original[index], at: index)
                check(longer, "byte \(index) doubled")
            }
            #expect(wrong.isEmpty, "\(name): \(wrong.prefix(5)) changed what it reads as")
        }
        // Stronger than "refused or the same": the checksum and the exact end line refuse every one of them.
        #expect(tried > 300_000)
        #expect(harmless == 0, "\(harmless) of \(tried) changes accepted")
    }

    @Test func aDamagedFileIsRefusedAndNothingElseIsLost() async throws {
        let directory = try await Self.realDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = storedFiles(directory)
        let results = files.keys.filter { $0.hasSuffix(".result") }.sorted()
        let damagedResult = results[0]
        // The newest generation of one job, so that it falls back to the one before.
        let newest = newestJobRecords(directory)
        let (jobKey, jobRecord) = try #require(newest.sorted { $0.key < $1.key }.first)
        let damagedJob = "\(jobKey).job.\(jobRecord.generation % 2)"
        // One digit of the payload of each: a digit of the result's candidate, one of the checkpoint's numbers.
        for name in [damagedResult, damagedJob] {
            var bytes = Array(try #require(files[name]))
            let digit = try #require(bytes.indices.reversed().first { index in
                index < bytes.count - 30 && (48...56).contains(bytes[index])
            })
            bytes[digit] += 1
            try Data(bytes).write(to: URL(fileURLWithPath: directory + "/" + name))
        }
        let engine = await Engine.testing(stateDirectory: directory)
        let store = try #require(engine.store)
        #expect(engine.startupErrors.count == 2)
        #expect(engine.startupErrors.allSatisfy { $0.kind == .storeFileQuarantined && $0.message.contains("checksum") })
        // The other result is there, unchanged; the damaged one is not answered at all.
        let other = try #require(Self.reading(results[1], Array(files[results[1]]!)))
        #expect(store.unreadResults.count == 1)
        #expect(store.unreadResults.first.map { "\($0.key) \($0.jobID) \($0.kind) \($0.candidate) \($0.outcome)" } == other)
        // Both jobs come back; the damaged one from its previous generation.
        #expect(Set(engine.recoveredJobs.map(\.key)) == Set(newest.keys))
        let fallback = try #require(engine.recoveredJobs.first { $0.key == jobKey })
        let previous = "\(jobKey).job.\((jobRecord.generation + 1) % 2)"
        let (olderRecord, olderCheckpoint) = try CheckpointStore.jobRecord(named: previous, Array(files[previous]!))
        #expect(olderRecord.generation + 1 == jobRecord.generation)
        #expect(try await fallback.job.checkpoint() == olderCheckpoint)
        _ = await engine.shutdown()
    }
}
