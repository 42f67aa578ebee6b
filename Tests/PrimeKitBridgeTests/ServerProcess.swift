import Foundation
@testable import PrimeKitBridge
import PrimeKitTestSupport
import Synchronization

/// `primekit serve` as a child process: lines in through a pipe, messages collected from its standard output.
final class ServerProcess: @unchecked Sendable {
    let process = Process()
    let log = MessageLog()
    private let input: FileHandle
    private let exit = Locked<(status: Int32?, waiters: [CheckedContinuation<Int32, Never>])>((nil, []))
    private let stderrText = Locked<String>("")

    init(_ arguments: [String] = []) throws {
        process.executableURL = URL(fileURLWithPath: toolPath)
        process.arguments = ["serve"] + arguments
        process.terminationHandler = { [exit] process in
            let waiters = exit.withLock { state in
                state.status = process.terminationStatus
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(returning: process.terminationStatus) }
        }
        let pipes = try launch(process)
        input = pipes.stdin
        let log = self.log
        Thread.detachNewThread {
            while true {
                let chunk = pipes.stdout.availableData
                if chunk.isEmpty { break }
                log.append(Array(chunk))
            }
            log.close()
        }
        Thread.detachNewThread { [stderrText] in
            while true {
                let chunk = pipes.stderr.availableData
                if chunk.isEmpty { break }
                stderrText.withLock { $0 += String(decoding: chunk, as: UTF8.self) }
            }
        }
    }

    /// Writes bytes (a line needs its own newline).
    func write(_ bytes: [UInt8]) {
        try? input.write(contentsOf: Data(bytes))
    }

    /// Writes one line.
    func send(_ line: String) {
        write(Array((line + "\n").utf8))
    }

    /// Sends a request and returns its response.
    @discardableResult
    func request(_ method: String, _ params: String? = nil, id: Int = 1) async throws -> JSONValue {
        let paramsPart = params.map { ",\"params\":\($0)" } ?? ""
        send("{\"jsonrpc\":\"2.0\",\"id\":\(id),\"method\":\"\(method)\"\(paramsPart)}")
        return try await log.nextResponse()
    }

    func closeInput() {
        try? input.close()
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// What the server wrote to standard error so far.
    var stderr: String { stderrText.withLock { $0 } }

    /// Waits for the process to end.
    func exitStatus() async -> Int32 {
        await withCheckedContinuation { continuation in
            let now: Int32? = exit.withLock { state in
                if let status = state.status { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// The server's resident memory, in KiB (from /proc).
    var residentKiB: Int {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// A value behind a lock, shareable between threads and closures.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
