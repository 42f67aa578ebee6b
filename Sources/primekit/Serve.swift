// `primekit serve`: the JSON bridge (docs/protocol.md) on standard input and output.

import ArgumentParser
import Foundation
import Logging
import PrimeKit
import PrimeKitBridge
import Synchronization

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve JSON-RPC 2.0 on standard input and output, one message per line (docs/protocol.md).",
        discussion: """
            This is how Node, Python and any program that can start a process use PrimeKit. Standard output \
            carries protocol messages only; logs go to standard error. The end of standard input, SIGTERM and \
            SIGINT shut down: every unfinished job is checkpointed (made durable with --state-dir) and the \
            process exits 0.

            Examples:
              echo '{"jsonrpc":"2.0","id":1,"method":"job/submit","params":{"kind":"factor","candidate":"600851475143"}}' | primekit serve
              primekit serve --state-dir ~/.primekit --max-active-jobs 100000
            """)

    @Option(name: .customLong("state-dir"), help: ArgumentHelp(
        "Keep checkpoints and results here; a restart on the same directory lists the unfinished jobs (paused).",
        valueName: "dir"))
    var stateDirectory: String?

    @Option(help: "The longest message accepted, in bytes.")
    var maxMessageBytes = BridgeLimits().maxMessageBytes

    @Option(help: "The longest candidate accepted, in digits.")
    var maxDigits = BridgeLimits().maxDigits

    @Option(help: "The most unfinished jobs at once (more are answered -32000, busy).")
    var maxActiveJobs = BridgeLimits().maxActiveJobs

    @Option(help: "The most requests in one batch.")
    var maxBatch = BridgeLimits().maxBatch

    @Option(help: "How many finished jobs job/status still answers for.")
    var keepFinished = BridgeLimits().keepFinished

    @Option(help: "Worker threads (default: the number of cores).")
    var workers: Int?

    @Option(help: "How often running jobs are checkpointed to the state directory, in milliseconds.")
    var checkpointIntervalMs = 5_000

    @Flag(help: "Resume the jobs recovered from the state directory at once (default: they wait, paused).")
    var resumeRecovered = false

    @Option(help: "Log level on standard error: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "warning"

    func validate() throws {
        guard maxMessageBytes >= 1024 else { throw ValidationError("--max-message-bytes must be at least 1024") }
        guard (1...CandidateCheck.maxDigits).contains(maxDigits) else {
            throw ValidationError("--max-digits must be between 1 and \(CandidateCheck.maxDigits)")
        }
        guard maxActiveJobs >= 1, maxBatch >= 1, keepFinished >= 0 else {
            throw ValidationError("--max-active-jobs and --max-batch must be at least 1")
        }
        if let workers, !(1...1024).contains(workers) { throw ValidationError("--workers must be between 1 and 1024") }
        guard checkpointIntervalMs >= 1 else { throw ValidationError("--checkpoint-interval-ms must be at least 1") }
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level \(logLevel)") }
    }

    func run() async throws {
        signal(SIGPIPE, SIG_IGN)  // a vanished client is seen as EPIPE
        var logger = Logger(label: "primekit.serve") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = Logger.Level(rawValue: logLevel)!

        var settings = EngineSettings()
        settings.stateDirectory = stateDirectory
        settings.maxDigits = maxDigits
        settings.checkpointInterval = .milliseconds(checkpointIntervalMs)
        if let workers { settings.maxConcurrentJobs = workers }
        var options = Engine.Options()
        options.logger = logger
        options.resumeRecoveredJobs = resumeRecovered
        let engine = await Engine(settings: settings, options: options)
        // Below info nothing but errors would be logged: do not have the plugin receive the rest.
        engine.add(LoggingPlugin(logger: logger,
                                 streams: logger.logLevel <= .info ? .all.subtracting(.progress) : .errors))

        var limits = BridgeLimits()
        limits.maxMessageBytes = maxMessageBytes
        limits.maxDigits = maxDigits
        limits.maxActiveJobs = maxActiveJobs
        limits.maxBatch = maxBatch
        limits.keepFinished = keepFinished

        let exit = ExitSignal()
        let server = BridgeServer(engine: engine, limits: limits, output: StandardOutput(),
                                  onExit: { status in exit.fire(status) })
        let signals = SignalWatcher {
            Task { await server.endOfInput() }
        }
        RequestReader.start(server: server, maxMessageBytes: maxMessageBytes)
        let status = await exit.wait()
        withExtendedLifetime(signals) {}
        Foundation.exit(status)
    }
}

/// Standard output as the bridge's output: every batch of lines written at once, EPIPE reported.
final class StandardOutput: BridgeOutput, @unchecked Sendable {
    func write(_ bytes: [UInt8]) -> Bool {
        writeAll(1, bytes) == 0
    }
}

/// Resolves once with the exit status.
final class ExitSignal: Sendable {
    private let state = Mutex<(status: Int32?, waiter: CheckedContinuation<Int32, Never>?)>((nil, nil))

    func fire(_ status: Int32) {
        let waiter: CheckedContinuation<Int32, Never>? = state.withLock { state in
            guard state.status == nil else { return nil }
            state.status = status
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: status)
    }

    func wait() async -> Int32 {
        await withCheckedContinuation { continuation in
            let now: Int32? = state.withLock { state in
                if let status = state.status { return status }
                state.waiter = continuation
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }
}

/// Reads standard input on its own thread, in chunks, and hands the server one line at a time.
enum RequestReader {
    static func start(server: BridgeServer, maxMessageBytes: Int) {
        let thread = Thread {
            var framer = LineFramer(maxLineBytes: maxMessageBytes)
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            func handle(_ line: UnsafeBufferPointer<UInt8>) {
                if let rest = server.receive(line) { BridgeServer.blocking { await rest() } }
            }
            while !server.hasExited {
                server.waitForOutputRoom()
                let count = chunk.withUnsafeMutableBytes { read(0, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                chunk.withUnsafeBufferPointer { buffer in
                    framer.feed(UnsafeBufferPointer(rebasing: buffer[..<count]), line: handle,
                                tooLong: server.messageTooLarge)
                }
            }
            framer.finish(line: handle, tooLong: server.messageTooLarge)
            BridgeServer.blocking { await server.endOfInput() }
        }
        thread.name = "primekit.bridge.reader"
        thread.stackSize = 1 << 22
        thread.start()
    }
}
