import DequeModule
import Foundation
import PrimeKit
import Synchronization

/// The limits a bridge announces in `initialize` and enforces.
package struct BridgeLimits: Sendable, Hashable {
    /// The longest line accepted, in bytes (a million-digit candidate is 1 MB).
    package var maxMessageBytes = 16 << 20
    /// The longest candidate, in digits (the kernel's limit).
    package var maxDigits = CandidateCheck.maxDigits
    /// The most unfinished jobs at once; a submission beyond it is answered -32000 (busy).
    package var maxActiveJobs = 1_000_000
    /// The most requests in one batch.
    package var maxBatch = 1_000
    /// How many finished jobs `job/status` still answers for (the oldest are forgotten first).
    package var keepFinished = 100_000

    package init() {}
}

/// The bridge's dispatcher: JSON-RPC 2.0 requests in, responses and notifications out, over an ``Engine``.
/// `primekit serve` feeds it lines from standard input; tests feed it lines from memory.
///
/// Lines are handled one at a time, in order, by one caller (``receive(_:)``). Most requests are answered before
/// `receive` returns; requests that wait for a slice boundary (pause, cancel, suspend, reset, shutdown) return work
/// to await, and the caller awaits it before handing over the next line — so requests take effect in the order they
/// were sent.
package final class BridgeServer: Sendable {
    /// The engine the bridge drives.
    package let engine: Engine
    /// The limits in force.
    package let limits: BridgeLimits
    let outbox: Outbox
    let plugin: BridgePlugin
    let registry = Mutex(Registry())
    /// The block streams of range jobs, by job (removed when the stream ends).
    let rangeStreams = Mutex<[JobID: RangeStream]>([:])
    /// Signalled when a finished job's notification has been queued (shutdown waits for them).
    let settled = NSCondition()
    private let exitHandler: Mutex<(@Sendable (Int32) -> Void)?>

    /// What the bridge knows about jobs.
    struct Registry {
        var live: [JobID: Job] = [:]
        var finished: [JobID: Finished] = [:]
        var finishedOrder = Deque<JobID>()
        /// Outcomes of jobs finished by earlier processes on the same state directory.
        var previous: [JobID: StoredResult] = [:]
        var shutDown = false
        var shutdownCompleted = false
        var exited = false
        var shutdownTask: Task<[(JobID, Checkpoint)], Never>?
        /// Threads waiting on `settled` (nobody is woken when there are none).
        var settledWaiters = 0
    }

    /// A finished job as `job/status` reports it.
    struct Finished {
        let job: Job?
        let kind: JobKind
        let state: JobState
        /// Percent done when it finished (100 for a success).
        let progress: Double
        /// The members after `state` in `job/finished`: `"result":…`, `"error":…`, or `"checkpoint":…`.
        let members: [UInt8]
    }

    /// Creates the dispatcher and installs its plugin in `engine`.
    /// - Parameters:
    ///   - engine: The engine; jobs it recovered from a state directory are listed at once.
    ///   - limits: Limits to announce and enforce.
    ///   - output: Where lines go.
    ///   - onExit: Called once with the exit status when the client sends `exit`, the input ends, or the output
    ///     fails (the process should then exit).
    package init(engine: Engine, limits: BridgeLimits = BridgeLimits(), output: any BridgeOutput,
                onExit: @escaping @Sendable (Int32) -> Void = { _ in }) {
        self.engine = engine
        self.limits = limits
        outbox = Outbox(output: output)
        plugin = BridgePlugin()
        exitHandler = Mutex(onExit)
        plugin.server = self
        let recovered = engine.recoveredJobs.map(\.job)
        let previous = engine.store?.unreadResults ?? []
        registry.withLock(anchoredTo: self) { registry in
            for job in recovered { registry.live[job.id] = job }
            for result in previous { registry.previous[result.jobID] = result }
        }
        outbox.announce(recovered.map(\.id))
        for job in recovered where job.kind == .factorRange { startRangeStream(job) }
        engine.add(plugin)
        outbox.setFailureHandler { [weak self] in
            guard let self else { return }
            Task { await self.finish(status: 0) }
        }
    }

    // MARK: - Lines

    /// Handles one line (without its newline).
    /// - Returns: Work to await before the next line, or nil when the line was handled completely.
    package func receive(_ line: some Collection<UInt8>) -> (@Sendable () async -> Void)? {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            let message = error.invalidUTF8 ? error.message : "parse error: \(error.message)"
            outbox.respond(Self.envelope(id: .null, .failure(RPCError(code: RPCError.parseError, message: message))))
            return nil
        }
        if case .array(let elements) = value { return batch(elements) }
        guard let (id, reply) = process(value) else { return nil }
        switch reply {
        case .now(let answer):
            if let id { send(answer, id: id) }
            return nil
        case .later(let work):
            return { [self] in
                let answer = await work()
                if let id { send(answer, id: id) }
            }
        }
    }

    /// Handles one line and awaits what it started.
    package func handle(_ line: some Collection<UInt8>) async {
        if let rest = receive(line) { await rest() }
    }

    /// Answers a line longer than ``BridgeLimits/maxMessageBytes`` (the caller discards the rest of it).
    package func messageTooLarge() {
        let error = RPCError(code: RPCError.messageTooLarge,
                             message: "message longer than \(limits.maxMessageBytes) bytes; discarded")
        outbox.respond(Self.envelope(id: .null, .failure(error)))
    }

    /// The end of input: shutdown (checkpointing every unfinished job), then exit with status 0.
    package func endOfInput() async {
        await finish(status: 0)
    }

    /// Blocks the calling thread while the client is far behind in reading (the request reader calls it).
    package func waitForOutputRoom() {
        outbox.waitForRoom()
    }

    /// Blocks until every line queued so far is written.
    package func drainOutput() {
        outbox.drain()
    }

    // MARK: - Envelopes and batches

    private func send(_ answer: Answer, id: JSONValue) {
        outbox.respond(Self.envelope(id: id, answer.result), announcing: answer.announcing, pausing: answer.pausing,
                       resuming: answer.resuming)
    }

    private func batch(_ elements: [JSONValue]) -> (@Sendable () async -> Void)? {
        guard !elements.isEmpty else {
            outbox.respond(Self.envelope(id: .null, .failure(RPCError(code: RPCError.invalidRequest,
                                                                      message: "empty batch"))))
            return nil
        }
        guard elements.count <= limits.maxBatch else {
            let error = RPCError(code: RPCError.invalidRequest,
                                 message: "batch of \(elements.count) requests, more than \(limits.maxBatch)")
            outbox.respond(Self.envelope(id: .null, .failure(error)))
            return nil
        }
        // Members run in order; a member that waits makes the following ones wait for it.
        var processed: [(JSONValue?, Reply)] = []
        var index = 0
        while index < elements.count {
            guard let item = process(elements[index]) else {
                index += 1
                continue
            }
            processed.append(item)
            index += 1
            if case .later = item.1 { break }
        }
        if index == elements.count, processed.allSatisfy({ if case .now = $0.1 { true } else { false } }) {
            var answers: [(JSONValue, Answer)] = []
            for (id, reply) in processed {
                if let id, case .now(let answer) = reply { answers.append((id, answer)) }
            }
            sendBatch(answers)
            return nil
        }
        let rest = Array(elements[index...])
        let first = processed
        return { [self] in
            var answers: [(JSONValue, Answer)] = []
            for (id, reply) in first {
                let answer = await reply.answer()
                if let id { answers.append((id, answer)) }
            }
            for element in rest {
                guard let (id, reply) = process(element) else { continue }
                let answer = await reply.answer()
                if let id { answers.append((id, answer)) }
            }
            sendBatch(answers)
        }
    }

    private func sendBatch(_ answers: [(JSONValue, Answer)]) {
        guard !answers.isEmpty else { return }  // only notifications: no response at all
        var line: [UInt8] = [UInt8(ascii: "[")]
        var announcing: [JobID] = []
        for (index, (id, answer)) in answers.enumerated() {
            if index > 0 { line.append(UInt8(ascii: ",")) }
            var one = Self.envelope(id: id, answer.result)
            one.removeLast()
            line += one
            announcing += answer.announcing
        }
        line += [UInt8(ascii: "]"), 0x0A]
        outbox.respond(line, announcing: announcing)
    }

    /// `{"jsonrpc":"2.0","id":…,"result":…}` or `…"error":{…}}`, with its newline.
    static func envelope(id: JSONValue, _ result: Result<[UInt8], RPCError>) -> [UInt8] {
        var out = JSONWriter()
        out.object { out in
            out.member("jsonrpc", string: "2.0")
            out.key("id")
            out.value(id)
            switch result {
            case .success(let bytes): out.member("result", raw: bytes)
            case .failure(let error):
                out.key("error")
                error.write(into: &out)
            }
        }
        return out.bytes + [0x0A]
    }

    /// A notification line, with its newline.
    static func notification(_ method: String, _ params: (inout JSONWriter) -> Void) -> [UInt8] {
        var out = JSONWriter()
        out.object { out in
            out.member("jsonrpc", string: "2.0")
            out.member("method", string: method)
            out.key("params")
            out.object(params)
        }
        return out.bytes + [0x0A]
    }

    // MARK: - Requests

    /// A method's outcome: now, or after awaiting something.
    enum Reply: Sendable {
        case now(Answer)
        case later(@Sendable () async -> Answer)

        func answer() async -> Answer {
            switch self {
            case .now(let answer): answer
            case .later(let work): await work()
            }
        }
    }

    /// A method's result (encoded) or error, and what the outbox must know about it.
    struct Answer: Sendable {
        var result: Result<[UInt8], RPCError>
        var announcing: [JobID] = []
        var pausing: JobID? = nil
        var resuming: JobID? = nil

        static func ok(_ body: (inout JSONWriter) -> Void) -> Answer {
            var out = JSONWriter()
            out.object(body)
            return Answer(result: .success(out.bytes))
        }

        static func error(_ error: RPCError) -> Answer { Answer(result: .failure(error)) }
    }

    /// Checks the envelope and runs the method.
    /// - Returns: nil for nothing to answer; else the id to answer (nil for a notification) and the reply.
    private func process(_ message: JSONValue) -> (JSONValue?, Reply)? {
        guard case .object(let members) = message else {
            return (.null, .now(.error(RPCError(code: RPCError.invalidRequest,
                                               message: "a request must be an object, not \(message.typeName)"))))
        }
        let id: JSONValue?
        switch members["id"] {
        case nil: id = nil
        case let value? where value == .null || value.isIDLike: id = value
        case let value?:
            return (.null, .now(.error(RPCError(code: RPCError.invalidRequest,
                                               message: "id must be a string, a number or null, not \(value.typeName)"))))
        }
        guard members["jsonrpc"] == .string("2.0") else {
            return (id ?? .null, .now(.error(RPCError(code: RPCError.invalidRequest,
                                                      message: "jsonrpc must be \"2.0\""))))
        }
        guard case .string(let method)? = members["method"] else {
            return (id ?? .null, .now(.error(RPCError(code: RPCError.invalidRequest,
                                                      message: "method must be a string"))))
        }
        let reply: Reply
        do {
            let params = try Params(members["params"])
            reply = try dispatch(method, params, isNotification: id == nil)
        } catch {
            reply = .now(.error(error))
        }
        if id == nil { return (nil, reply) }
        return (id, reply)
    }

    private func dispatch(_ method: String, _ params: Params, isNotification: Bool) throws(RPCError) -> Reply {
        if method == "exit" { return exitRequested() }
        if registry.withLock(anchoredTo: self, { $0.shutDown }) {
            throw RPCError(code: RPCError.shuttingDown, message: "the server is shutting down; only exit is accepted")
        }
        switch method {
        case "initialize": return .now(try initialize(params))
        case "ping": return .now(.ok { _ in })
        case "job/submit": return .now(try submit(params))
        case "job/pause": return try pause(params)
        case "job/resume": return .now(try resume(params))
        case "job/cancel": return try cancel(params)
        case "job/status": return try status(params)
        case "job/list": return .now(try list(params))
        case "job/ack": return .now(try acknowledge(params))
        case "queue/suspend": return suspendQueue()
        case "queue/resume": return .now(resumeQueue())
        case "queue/reset": return resetQueue()
        case "settings/request": return .now(try requestSettings(params, override: false))
        case "settings/override": return .now(try requestSettings(params, override: true))
        case "settings/apply": return .now(applySettings())
        case "settings/get": return .now(currentSettings())
        case "plugin/subscribe": return .now(try subscribe(params, adding: true))
        case "plugin/unsubscribe": return .now(try subscribe(params, adding: false))
        case "plugin/broadcast": return .now(try broadcast(params))
        case "plugin/list": return .now(listPlugins())
        case "checkpoint/split": return .now(try splitCheckpoint(params))
        case "checkpoint/merge": return .now(try mergeCheckpoints(params))
        case "shutdown": return shutdown()
        default:
            if isNotification { return .now(.ok { _ in }) }  // unknown notifications are ignored
            var data = JSONWriter()
            data.object { $0.member("method", string: method) }
            throw RPCError(code: RPCError.methodNotFound, message: "unknown method \"\(method)\"", data: data.bytes)
        }
    }

    private func initialize(_ params: Params) throws(RPCError) -> Answer {
        if let version = params["protocolVersion"] {
            _ = try Params.integer(version, field: "protocolVersion",
                                   in: WireFormat.protocolVersion...WireFormat.protocolVersion)
        }
        return .ok { out in
            out.member("protocolVersion", number: WireFormat.protocolVersion)
            out.member("protocolMinor", number: WireFormat.protocolMinor)
            out.key("server")
            out.object { out in
                out.member("name", string: "primekit")
                out.member("version", string: PrimeKitVersion.package)
                out.member("kernel", string: PrimeKitVersion.kernel)
            }
            out.key("limits")
            out.object { out in
                out.member("maxMessageBytes", number: limits.maxMessageBytes)
                out.member("maxDigits", number: limits.maxDigits)
                out.member("maxActiveJobs", number: limits.maxActiveJobs)
                out.member("maxBatch", number: limits.maxBatch)
            }
            out.key("capabilities")
            out.object { out in
                out.key("methods")
                out.array { out in for name in Self.methods { out.string(name) } }
                out.key("kinds")
                out.array { out in for kind in JobKind.allCases { out.string(kind.rawValue) } }
                out.key("streams")
                out.array { out in for name in BridgePlugin.streamNames.map(\.0) { out.string(name) } }
                out.member("stateDirectory", bool: engine.store != nil)
                if let store = engine.store { out.member("stateDirectoryWritable", bool: store.isWritable) }
            }
        }
    }

    /// Every method, in the order docs/protocol.md lists them.
    static let methods = [
        "initialize", "ping", "job/submit", "job/pause", "job/resume", "job/cancel", "job/status", "job/list",
        "job/ack", "queue/suspend", "queue/resume", "queue/reset", "settings/request", "settings/override", "settings/apply",
        "settings/get", "plugin/subscribe", "plugin/unsubscribe", "plugin/broadcast", "plugin/list", "checkpoint/split",
        "checkpoint/merge", "shutdown", "exit",
    ]

    // MARK: - Ending

    /// `exit`: ends the process, 0 after `shutdown`, else 1 (checkpointing first when it was not shut down).
    private func exitRequested() -> Reply {
        .later { [self] in
            let clean = registry.withLock(anchoredTo: self) { $0.shutdownCompleted }
            await finish(status: clean ? 0 : 1)
            return .ok { _ in }
        }
    }

    /// Shuts the engine down if that has not happened, drains the output and reports the exit status once.
    func finish(status: Int32) async {
        _ = await shutDownEngine()
        let first = registry.withLock(anchoredTo: self) { registry in
            defer { registry.exited = true }
            return !registry.exited
        }
        guard first else { return }
        outbox.close()
        let handler = exitHandler.withLock(anchoredTo: self) { handler in
            defer { handler = nil }
            return handler
        }
        handler?(status)
    }

    /// Whether `exit` (or the end of input) ended the session.
    package var hasExited: Bool { registry.withLock(anchoredTo: self) { $0.exited } }
}

extension JSONValue {
    /// A string or a number: what JSON-RPC accepts as a request id (besides null).
    var isIDLike: Bool {
        switch self {
        case .string, .number: true
        default: false
        }
    }
}
