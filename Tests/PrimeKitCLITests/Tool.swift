// Runs the built `primekit` executable and collects what it printed.

import Foundation
import PrimeKitTestSupport
import Testing

/// What a finished run of the tool printed.
struct ToolRun {
    let status: Int32
    let stdout: String
    let stderr: String
    /// The lines of each stream (split once, on bytes: outputs can be megabytes long).
    let stdoutLines: [String]
    let stderrLines: [String]

    init(status: Int32, stdout: Data, stderr: Data) {
        self.status = status
        self.stdout = String(decoding: stdout, as: UTF8.self)
        self.stderr = String(decoding: stderr, as: UTF8.self)
        stdoutLines = Self.lines(stdout)
        stderrLines = Self.lines(stderr)
    }

    private static func lines(_ data: Data) -> [String] {
        var lines = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { String(decoding: $0, as: UTF8.self) }
    }
}

/// RSA-100, the product of two 50-digit primes: a complete run does not split it within a test, so it is still
/// running whenever a test interrupts it. With `--time-limit` (running time only; an interrupted run's checkpoint
/// keeps the time spent) it runs that long, then answers with the part left and what was tried on it.
let rsa100 = "1522605027922533360535618378132637429718068114961380688657908494580122963258952897654000350692006139"

/// A line of `factor`'s answers without the effort spent, which differs by run (the ECM curves tried in a time limit).
func withoutEffort(_ line: String) -> String {
    line.range(of: "; tried: ").map { String(line[..<$0.lowerBound]) } ?? line
}

enum Tool {
    /// The executable next to this test bundle (swift build puts every product in one directory).
    static let path: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        if directory.lastPathComponent == "MacOS" {  // macOS: .build/debug/X.xctest/Contents/MacOS/X
            directory = directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        }
        return directory.appendingPathComponent("primekit").path
    }()

    /// Runs the tool to the end.
    static func run(_ arguments: [String], stdin: Data? = nil) throws -> ToolRun {
        let process = try Launched(arguments, stdin: stdin)
        return process.finish()
    }

    /// A fresh directory for checkpoint files.
    static func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("primekit-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// A running tool whose standard error can be watched line by line (to send a signal at the right moment).
final class Launched: @unchecked Sendable {
    let process = Process()
    private let lock = NSCondition()
    private var stdoutData = Data()
    private var stderrData = Data()
    private var stdoutClosed = false
    private var stderrClosed = false

    private var stdinWriter: FileHandle?

    /// Starts the tool (or `executable`). With `keepingStdinOpen`, standard input stays open for ``send(_:)``.
    init(_ arguments: [String], stdin: Data? = nil, executable: String = Tool.path, keepingStdinOpen: Bool = false)
        throws
    {
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipes = try launch(process)
        let writer = pipes.stdin
        if keepingStdinOpen {
            stdinWriter = writer
        } else {
            Thread.detachNewThread {
                if let stdin { try? writer.write(contentsOf: stdin) }
                try? writer.close()
            }
        }
        collect(pipes.stdout, isStdout: true)
        collect(pipes.stderr, isStdout: false)
    }

    private func collect(_ handle: FileHandle, isStdout: Bool) {
        Thread.detachNewThread { [self] in
            while true {
                let chunk = handle.availableData
                lock.lock()
                if chunk.isEmpty {
                    if isStdout { stdoutClosed = true } else { stderrClosed = true }
                } else if isStdout {
                    stdoutData.append(chunk)
                } else {
                    stderrData.append(chunk)
                }
                lock.broadcast()
                lock.unlock()
                if chunk.isEmpty { return }
            }
        }
    }

    /// Blocks until standard error contains `text` (true) or is closed without it (false).
    func waitForStderr(containing text: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if String(decoding: stderrData, as: UTF8.self).contains(text) { return true }
            if stderrClosed { return false }
            lock.wait()
        }
    }

    /// Blocks until standard output contains `text` (true) or is closed without it (false).
    func waitForStdout(containing text: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        while true {
            if String(decoding: stdoutData, as: UTF8.self).contains(text) { return true }
            if stdoutClosed { return false }
            lock.wait()
        }
    }

    /// Writes to standard input (opened with `keepingStdinOpen`).
    func send(_ data: Data) throws {
        try stdinWriter?.write(contentsOf: data)
    }

    /// Closes standard input (opened with `keepingStdinOpen`).
    func closeStdin() throws {
        try stdinWriter?.close()
        stdinWriter = nil
    }

    func signal(_ number: Int32) {
        kill(process.processIdentifier, number)
    }

    /// Waits for the exit and for both streams to close.
    func finish() -> ToolRun {
        process.waitUntilExit()
        lock.lock()
        while !(stdoutClosed && stderrClosed) { lock.wait() }
        let run = ToolRun(status: process.terminationStatus, stdout: stdoutData, stderr: stderrData)
        lock.unlock()
        return run
    }
}
