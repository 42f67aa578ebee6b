import Foundation
import Logging
import PrimeKit
@testable import PrimeKitBridge
import Synchronization
import Testing

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Collects the lines a bridge writes and lets tests await responses (in order) and notifications (as a set).
final class MessageLog: @unchecked Sendable {
    private let lock = NSLock()
    private var partial: [UInt8] = []
    private var all: [JSONValue] = []
    private var responses: [JSONValue] = []
    private var responsesTaken = 0
    private var notifications: [JSONValue] = []
    private var consumed = Set<Int>()
    private var finishedByJob: [String: JSONValue] = [:]
    private var waiters: [Int: () -> Bool] = [:]
    private var nextWaiter = 0
    private(set) var closed = false
    /// Raw bytes received (for size checks).
    private(set) var byteCount = 0

    func append(_ bytes: [UInt8]) {
        let ready: [() -> Bool] = lock.withLock {
            byteCount += bytes.count
            partial += bytes
            while let newline = partial.firstIndex(of: 0x0A) {
                let line = Array(partial[..<newline])
                partial.removeSubrange(...newline)
                guard let value = try? JSONParser.parse(line) else {
                    Issue.record("the bridge wrote a line that is not JSON: \(String(decoding: line.prefix(200), as: UTF8.self))")
                    continue
                }
                all.append(value)
                if case .array = value { responses.append(value) } else if value["id"] != nil { responses.append(value) }
                else {
                    notifications.append(value)
                    if value["method"] == .string("job/finished"), let id = value["params"]?["jobId"]?.text {
                        if finishedByJob[id] != nil { Issue.record("a second job/finished for \(id)") }
                        finishedByJob[id] = value
                    }
                }
            }
            return Array(waiters.values)
        }
        for waiter in ready { _ = waiter() }
    }

    func close() {
        let ready: [() -> Bool] = lock.withLock {
            closed = true
            return Array(waiters.values)
        }
        for waiter in ready { _ = waiter() }
    }

    /// Every message so far, in the order written.
    var messages: [JSONValue] { lock.withLock { all } }

    /// Waits until `find` (run under the lock) returns a value.
    private func wait<T: Sendable>(_ what: String, timeout: Duration, _ find: @escaping () -> T?) async throws -> T {
        let id: Int = lock.withLock {
            nextWaiter += 1
            return nextWaiter
        }
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let slot = Slot(continuation)
            let attempt: () -> Bool = { [self] in
                let (value, isClosed): (T?, Bool) = lock.withLock {
                    let found = find()
                    if found != nil || closed { waiters[id] = nil }
                    return (found, closed)
                }
                if let value {
                    slot.take()?.resume(returning: value)
                    return true
                }
                if isClosed {
                    slot.take()?.resume(throwing: TimedOut(what: what + " (the output ended)"))
                    return true
                }
                return false
            }
            lock.withLock { waiters[id] = attempt }
            if attempt() { return }
            let log = self
            Task { [slot] in
                try? await Task.sleep(for: timeout)  // a failure guard, not synchronisation
                log.forget(id)
                slot.take()?.resume(throwing: TimedOut(what: what))
            }
        }
    }

    private func forget(_ id: Int) {
        lock.withLock { waiters[id] = nil }
    }

    /// The next response (a message with an id, or a batch), in order.
    func nextResponse(timeout: Duration = .seconds(20)) async throws -> JSONValue {
        try await wait("a response", timeout: timeout) { [self] in
            guard responsesTaken < responses.count else { return nil }
            responsesTaken += 1
            return responses[responsesTaken - 1]
        }
    }

    /// A notification that satisfies `predicate` and was not matched before.
    func notification(timeout: Duration = .seconds(20), _ what: String = "a notification",
                      where predicate: @escaping @Sendable (JSONValue) -> Bool) async throws -> JSONValue {
        try await wait(what, timeout: timeout) { [self] in
            for (index, message) in notifications.enumerated() where !consumed.contains(index) && predicate(message) {
                consumed.insert(index)
                return message
            }
            return nil
        }
    }

    /// The `job/finished` notification of `jobID`.
    func finished(_ jobID: String, timeout: Duration = .seconds(30)) async throws -> JSONValue {
        try await wait("job/finished of \(jobID)", timeout: timeout) { [self] in finishedByJob[jobID] }
    }
}

/// A continuation resumed once, by whoever takes it first.
final class Slot<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = continuation }

    func take() -> CheckedContinuation<T, any Error>? {
        lock.withLock {
            defer { continuation = nil }
            return continuation
        }
    }
}

/// An in-memory output; with `blocked`, writes wait until `open()` (a client that stopped reading).
final class MemoryOutput: BridgeOutput, @unchecked Sendable {
    let log = MessageLog()
    private let gate = NSCondition()
    private var isBlocked: Bool

    init(blocked: Bool = false) { isBlocked = blocked }

    func write(_ bytes: [UInt8]) -> Bool {
        gate.lock()
        while isBlocked { gate.wait() }
        gate.unlock()
        log.append(bytes)
        return true
    }

    func open() {
        gate.lock()
        isBlocked = false
        gate.broadcast()
        gate.unlock()
    }
}

/// A dispatcher over a fresh engine, fed from memory.
struct Session {
    let engine: Engine
    let server: BridgeServer
    let output: MemoryOutput
    let exitStatus: ExitBox

    var log: MessageLog { output.log }

    static func start(limits: BridgeLimits = BridgeLimits(), settings: EngineSettings = EngineSettings(),
                      blocked: Bool = false) async -> Session {
        await start(engine: await Engine(settings: settings), limits: limits, blocked: blocked)
    }

    /// A dispatcher over a given engine.
    static func start(engine: Engine, limits: BridgeLimits = BridgeLimits(), blocked: Bool = false) async -> Session {
        engine.add(LoggingPlugin(logger: Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })))
        let output = MemoryOutput(blocked: blocked)
        let status = ExitBox()
        let server = BridgeServer(engine: engine, limits: limits, output: output) { code in
            status.set(code)
        }
        return Session(engine: engine, server: server, output: output, exitStatus: status)
    }

    /// Sends one line.
    func send(_ line: String) async {
        await server.handle(Array(line.utf8))
    }

    /// Sends a request and returns its response.
    @discardableResult
    func request(_ method: String, _ params: String? = nil, id: Int = 1) async throws -> JSONValue {
        let paramsPart = params.map { ",\"params\":\($0)" } ?? ""
        await send("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\"\(paramsPart)}")
        return try await log.nextResponse()
    }

    /// Sends a request and returns its `result` (failing the test on an error response).
    func result(_ method: String, _ params: String? = nil, id: Int = 1,
                sourceLocation: SourceLocation = #_sourceLocation) async throws -> JSONValue {
        let response = try await request(method, params, id: id)
        guard let result = response["result"] else {
            Issue.record("\(method) failed: \(String(decoding: response.encoded, as: UTF8.self))",
                         sourceLocation: sourceLocation)
            throw TimedOut(what: "a result")
        }
        return result
    }

    /// Ends the session as EOF does.
    func end() async -> Int32? {
        await server.endOfInput()
        output.log.close()
        return exitStatus.value
    }
}

/// The exit status a dispatcher reported.
final class ExitBox: Sendable {
    private let storage = Mutex<Int32?>(nil)
    func set(_ status: Int32) { storage.withLock { $0 = status } }
    var value: Int32? { storage.withLock { $0 } }
}

extension JSONValue {
    /// A string member's text.
    var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// Parses test JSON written in source.
    static func parse(_ text: String) -> JSONValue {
        try! JSONParser.parse(Array(text.utf8))
    }
}

/// Whether `actual` matches `expected` (Tests/Vectors/README.md: "$any", "$string", member order ignored).
func matches(_ expected: JSONValue, _ actual: JSONValue?) -> Bool {
    guard let actual else { return false }
    switch expected {
    case .string("$any"): return true
    case .string("$string"): if case .string = actual { return true } else { return false }
    case .number(let a):
        if case .number(let b) = actual { return a == b || (Double(a) != nil && Double(a) == Double(b)) }
        return false
    case .array(let elements):
        guard case .array(let others) = actual, others.count == elements.count else { return false }
        return zip(elements, others).allSatisfy { matches($0, $1) }
    case .object(let members):
        guard case .object(let others) = actual, Set(others.keys) == Set(members.keys) else { return false }
        return members.allSatisfy { matches($0.value, others[$0.key]) }
    default:
        return expected == actual
    }
}

/// The repository's root (this file is Tests/PrimeKitBridgeTests/Support.swift).
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The `primekit` executable next to this test bundle (swift build puts every product in one directory).
let toolPath: String = {
    let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    return URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("primekit").path
}()
