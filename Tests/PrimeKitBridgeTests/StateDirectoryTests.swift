import Foundation
@testable import PrimeKit
@testable import PrimeKitBridge
import Synchronization
import Testing

/// The real file system, with a disk that can be full and a directory that cannot be made writable.
final class FaultInjectingFileSystem: StoreFileSystem, Sendable {
    private let base = POSIXStoreFileSystem()
    let full = Atomic(false)
    let readOnly = Atomic(false)

    func makeOwnerOnlyDirectory(_ path: String) throws(StoreIOError) {
        if readOnly.load(ordering: .relaxed) { throw StoreIOError(operation: "chmod", path: path, errno: EROFS) }
        try base.makeOwnerOnlyDirectory(path)
    }
    func writeAndSync(_ bytes: [UInt8], to path: String) throws(StoreIOError) {
        if readOnly.load(ordering: .relaxed) { throw StoreIOError(operation: "open", path: path, errno: EROFS) }
        if full.load(ordering: .relaxed) { throw StoreIOError(operation: "write", path: path, errno: ENOSPC) }
        try base.writeAndSync(bytes, to: path)
    }
    func rename(_ from: String, to: String) throws(StoreIOError) { try base.rename(from, to: to) }
    func syncDirectory(_ path: String) throws(StoreIOError) { try base.syncDirectory(path) }
    func remove(_ path: String) throws(StoreIOError) { try base.remove(path) }
    func read(_ path: String) throws(StoreIOError) -> [UInt8] { try base.read(path) }
    func list(_ path: String) throws(StoreIOError) -> [String] { try base.list(path) }
}

/// `--state-dir` through the dispatcher: what `job/finished` and `initialize` say when the disk fails.
@Suite(.timeLimit(.minutes(3))) struct StateDirectoryTests {
    static func engine(_ directory: String, _ fileSystem: FaultInjectingFileSystem) async -> Engine {
        var settings = EngineSettings()
        settings.stateDirectory = directory
        settings.checkpointInterval = .seconds(86_400)  // every write is one the test asks for
        return await Engine(settings: settings, options: Engine.Options(), fileSystem: fileSystem)
    }

    static func directory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("primekit-bridge-\(UUID().uuidString)").path
    }

    @Test func jobFinishedSaysWhetherTheOutcomeIsOnDisk() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileSystem = FaultInjectingFileSystem()
        let session = await Session.start(engine: await Self.engine(directory, fileSystem))
        let initialize = try await session.result("initialize")
        #expect(initialize["capabilities"]?["stateDirectory"] == .bool(true))
        #expect(initialize["capabilities"]?["stateDirectoryWritable"] == .bool(true))

        _ = try await session.result("job/submit", #"{"kind":"factor","candidate":"600851475143"}"#, id: 2)
        let stored = try await session.log.finished("j1")
        #expect(stored["params"]?["state"] == .string("succeeded"))
        #expect(stored["params"]?["stored"] == .bool(true))

        fileSystem.full.store(true, ordering: .relaxed)
        _ = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"1000003"}"#, id: 3)
        let unstored = try await session.log.finished("j2")
        #expect(unstored["params"]?["state"] == .string("succeeded"))
        #expect(unstored["params"]?["stored"] == .bool(false))
        #expect(session.engine.store!.resultIsUnwritten(JobID(rawValue: 2)))
        let capabilities = try await session.result("initialize", id: 4)["capabilities"]
        #expect(capabilities?["stateDirectoryWritable"] == .bool(false))

        // Written at the next tick once the disk has room: a restart answers for both jobs.
        fileSystem.full.store(false, ordering: .relaxed)
        await session.engine.store!.persistNow()
        #expect(!session.engine.store!.resultIsUnwritten(JobID(rawValue: 2)))
        #expect(await session.end() == 0)
        _ = await session.engine.shutdown()
        let again = await Session.start(engine: await Self.engine(directory, FaultInjectingFileSystem()))
        let status = try await again.result("job/status", #"{"jobId":"j2"}"#)
        #expect(status["result"]?["isPrime"] == .bool(true))
        #expect(try await again.result("job/status", #"{"jobId":"j1"}"#, id: 2)["state"] == .string("succeeded"))
        #expect(await again.end() == 0)
    }

    @Test func aReadOnlyStateDirectoryIsReadAndSaysItCannotBeWritten() async throws {
        let directory = Self.directory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = await Session.start(engine: await Self.engine(directory, FaultInjectingFileSystem()))
        _ = try await first.result("job/submit", #"{"kind":"factor","candidate":"600851475143"}"#)
        let finished = try await first.log.finished("j1")
        #expect(await first.end() == 0)
        _ = await first.engine.shutdown()

        let fileSystem = FaultInjectingFileSystem()
        fileSystem.readOnly.store(true, ordering: .relaxed)
        let session = await Session.start(engine: await Self.engine(directory, fileSystem))
        let capabilities = try await session.result("initialize")["capabilities"]
        #expect(capabilities?["stateDirectory"] == .bool(true))
        #expect(capabilities?["stateDirectoryWritable"] == .bool(false))
        // The earlier result is answered from the directory.
        let status = try await session.result("job/status", #"{"jobId":"j1"}"#, id: 2)
        #expect(status["state"] == .string("succeeded"))
        #expect(status["result"] == finished["params"]?["result"])
        // A new job is computed; its job/finished says it is not stored.
        _ = try await session.result("job/submit", #"{"kind":"isPrime","candidate":"7"}"#, id: 3)
        #expect(try await session.log.finished("j2")["params"]?["stored"] == .bool(false))
        #expect(await session.end() == 0)
    }
}
