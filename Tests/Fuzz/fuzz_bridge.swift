// fuzz_bridge — the bridge's line handling end to end: arbitrary bytes go through LineFramer, and each line
// (or over-long line) to a BridgeServer over a real Engine whose output is kept in memory.
//
// Properties, per line:
// - the dispatcher never crashes, and everything it writes is newline-terminated JSON;
// - a line that is not JSON, a request, an invalid message, an empty or over-size batch, or an over-long line
//   gets exactly one response (an object with "id", or an array for a batch); a notification gets none, and
//   a batch of notifications only gets none;
// - a response to a single request carries the request's id (null when the id was unusable);
// - a batch response has one element per member that is not a notification.
// Jobs are kept tiny (candidates of at most 12 digits, at most 4 unfinished jobs); the engine and the
// dispatcher live across inputs and are replaced after "shutdown" or "exit" ends a session.

import Dispatch
import Foundation
import PrimeKit
import PrimeKitBridge
import Synchronization

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError("property failed: \(message())") }
}

final class MemoryOutput: BridgeOutput, @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: [UInt8] = []

    func write(_ data: [UInt8]) -> Bool {
        lock.withLock { bytes += data }
        return true
    }

    /// What was written since the last call.
    func take() -> [UInt8] {
        lock.withLock {
            defer { bytes.removeAll(keepingCapacity: true) }
            return bytes
        }
    }
}

/// Runs async work to completion from the synchronous fuzz entry point.
func blocking(_ work: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task.detached {
        await work()
        done.signal()
    }
    done.wait()
}

final class Session: @unchecked Sendable {
    let server: BridgeServer
    let output = MemoryOutput()
    static let limits: BridgeLimits = {
        var limits = BridgeLimits()
        limits.maxMessageBytes = 4096
        limits.maxDigits = 12
        limits.maxActiveJobs = 4
        limits.maxBatch = 16
        limits.keepFinished = 64
        return limits
    }()

    init() {
        var tiny = EngineSettings()
        tiny.maxConcurrentJobs = 1
        tiny.maxDigits = 12
        let settings = tiny
        nonisolated(unsafe) var engine: Engine!
        blocking { engine = await Engine(settings: settings) }
        server = BridgeServer(engine: engine, limits: Self.limits, output: output)
    }

    func end() {
        let server = self.server
        blocking { await server.endOfInput() }
    }
}

nonisolated(unsafe) var session: Session?

/// What a message should get back.
enum Expected {
    case none
    case single(JSONValue)  // the id the response must carry
    case batch(Int)  // a response array of this many elements
}

/// A member the dispatcher answers with nothing: a well-formed notification.
func isNotification(_ value: JSONValue) -> Bool {
    guard case .object(let members) = value else { return false }
    guard members["id"] == nil, members["jsonrpc"] == .string("2.0") else { return false }
    if case .string? = members["method"] { return true }
    return false
}

func responseID(_ value: JSONValue) -> JSONValue {
    guard case .object(let members) = value, let id = members["id"] else { return .null }
    switch id {
    case .string, .number, .null: break
    default: return .null
    }
    // An envelope error is answered to id null only when the id itself is unusable.
    return id
}

func expectation(for line: [UInt8]) -> (Expected, endsSession: Bool) {
    guard let value = try? JSONParser.parse(line) else { return (.single(.null), false) }
    let members: [JSONValue]
    if case .array(let elements) = value { members = elements } else { members = [value] }
    let ends = members.contains { $0["method"] == .string("shutdown") || $0["method"] == .string("exit") }
    guard case .array(let elements) = value else {
        return (isNotification(value) ? .none : .single(responseID(value)), ends)
    }
    if elements.isEmpty || elements.count > Session.limits.maxBatch { return (.single(.null), ends) }
    let answered = elements.filter { !isNotification($0) }.count
    return (answered == 0 ? .none : .batch(answered), ends)
}

/// The responses among the lines written (notifications are objects with "method" and no "id").
func responses(in bytes: [UInt8]) -> [JSONValue] {
    if bytes.isEmpty { return [] }
    check(bytes.last == 0x0A, "output does not end with a newline")
    var found: [JSONValue] = []
    for line in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast() {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            fatalError("property failed: the bridge wrote a line that is not JSON: \(String(decoding: line, as: UTF8.self))")
        }
        switch value {
        case .array: found.append(value)
        case .object(let members):
            if members["id"] != nil {
                found.append(value)
            } else {
                check(members["method"] != nil, "an object that is neither a response nor a notification")
            }
        default: fatalError("property failed: the bridge wrote a bare \(value.typeName)")
        }
    }
    return found
}

func verify(_ expected: Expected, _ written: [JSONValue], line: [UInt8]) {
    let text = String(decoding: line.prefix(300), as: UTF8.self)
    switch expected {
    case .none:
        check(written.isEmpty, "a notification was answered: \(text)")
    case .single(let id):
        check(written.count == 1, "\(written.count) responses to \(text)")
        guard case .object(let members) = written[0] else {
            fatalError("property failed: a batch response to a single message: \(text)")
        }
        check(members["jsonrpc"] == .string("2.0"), "response without jsonrpc 2.0")
        check((members["result"] == nil) != (members["error"] == nil), "response needs exactly one of result/error")
        check(members["id"] == id, "response id \(String(describing: members["id"])), expected \(id), for \(text)")
    case .batch(let count):
        check(written.count == 1, "\(written.count) responses to a batch: \(text)")
        guard case .array(let elements) = written[0] else {
            fatalError("property failed: a single response to a batch: \(text)")
        }
        check(elements.count == count, "batch answered with \(elements.count) elements, expected \(count): \(text)")
    }
}

func handle(_ line: [UInt8], in current: Session) -> Bool {
    let (expected, ends) = expectation(for: line)
    let server = current.server
    if let rest = server.receive(line) { blocking { await rest() } }
    if ends {
        // The session may be over: end it and check what was written up to here.
        current.end()
        _ = responses(in: current.output.take())
        return true
    }
    server.drainOutput()
    verify(expected, responses(in: current.output.take()), line: line)
    return false
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    if session == nil { session = Session() }
    var framer = LineFramer(maxLineBytes: Session.limits.maxMessageBytes)
    var lines: [[UInt8]?] = []  // nil: an over-long line
    framer.feed(UnsafeBufferPointer(start: data, count: size), line: { lines.append(Array($0)) },
                tooLong: { lines.append(nil) })
    framer.finish(line: { lines.append(Array($0)) }, tooLong: { lines.append(nil) })
    for line in lines.prefix(8) {
        guard let current = session else { break }
        guard let line else {
            current.server.messageTooLarge()
            current.server.drainOutput()
            verify(.single(.null), responses(in: current.output.take()), line: Array("<too long>".utf8))
            continue
        }
        if handle(line, in: current) { session = Session() }
    }
    return 0
}
