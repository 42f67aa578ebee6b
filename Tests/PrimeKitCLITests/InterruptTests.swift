import Foundation
import Testing

/// Long enough (a second or more in a debug build) to be interrupted after its first progress line; its answer
/// is known: the largest 64-bit prime has no divisor up to the bound, and BPSW proves it prime below 2^64.
private let longPrime = "18446744073709551557"
private let longBound = "4000000000"

@Suite("Ctrl-C and SIGTERM: checkpoint, resume", .serialized)
struct InterruptTests {
    /// Starts a run, waits for its first progress line, sends `signal`, and checks the checkpoint it leaves.
    private func interrupt(_ arguments: [String], with signal: Int32, checkpoint: String) throws -> ToolRun {
        let launched = try Launched(arguments + ["--progress", "--checkpoint", checkpoint])
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(signal)
        let run = launched.finish()
        #expect(run.status == 130)
        #expect(run.stderr.contains("primekit: interrupted; checkpoint written to \(checkpoint)\n"))
        #expect(run.stderr.contains("primekit resume \(checkpoint)"))
        #expect(FileManager.default.fileExists(atPath: checkpoint))
        #expect(!FileManager.default.fileExists(atPath: checkpoint + ".tmp-\(launched.process.processIdentifier)"))
        return run
    }

    @Test func ctrlCWritesACheckpointThatResumeFinishesToTheSameAnswer() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("run.checkpoint").path
        let numbers = ["12", longPrime, "35"]
        let stopped = try interrupt(["factor", "--bound", longBound] + numbers, with: SIGINT, checkpoint: checkpoint)
        #expect(stopped.stdout == "12: 2 2 3\n")  // answered before the signal; the rest is in the checkpoint
        let resumed = try Tool.run(["resume", checkpoint, "--no-progress"])
        #expect(resumed.status == 0)
        #expect(resumed.stderr.isEmpty)
        let whole = try Tool.run(["factor", "--bound", longBound] + numbers)
        #expect(stopped.stdout + resumed.stdout == whole.stdout)
        #expect(whole.stdoutLines == ["12: 2 2 3", "\(longPrime): \(longPrime)", "35: 5 7"])
    }

    @Test func sigtermDoesTheSameAndResumeKeepsTheJSONFormat() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("run.checkpoint").path
        // --parallel (accepted, and what happens anyway): the checkpoint holds every piece of a split job.
        let arguments = ["factor", "--json", "--parallel", "--bound", longBound, longPrime, "77"]
        let stopped = try interrupt(arguments, with: SIGTERM, checkpoint: checkpoint)
        #expect(stopped.stdout.isEmpty)
        let resumed = try Tool.run(["factor", "--resume", checkpoint])
        #expect(resumed.status == 0)
        #expect(resumed.stdoutLines == [
            #"{"candidate":"\#(longPrime)","factors":[{"prime":"\#(longPrime)","exponent":1,"certainty":"proven"}],"cofactor":"1","cofactorStatus":"one","complete":true,"isPrime":true,"certainty":"proven","mode":"trial","parts":[]}"#,
            #"{"candidate":"77","factors":[{"prime":"7","exponent":1,"certainty":"proven"},{"prime":"11","exponent":1,"certainty":"proven"}],"cofactor":"1","cofactorStatus":"one","complete":true,"isPrime":false,"certainty":"proven","mode":"trial","parts":[]}"#,
        ])
    }

    @Test func isPrimeResumesWithItsExitStatus() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("is-prime.checkpoint").path
        _ = try interrupt(["is-prime", "--exit-status", "--bound", longBound, longPrime], with: SIGINT,
                          checkpoint: checkpoint)
        let resumed = try Tool.run(["resume", checkpoint])
        #expect(resumed.status == 0)
        #expect(resumed.stdout == "\(longPrime): prime\n")
    }

    @Test func ctrlCAtATerminalStopsTheRunWithACheckpoint() throws {
        // script(1) runs the tool on a pseudo-terminal; ^C written to it becomes SIGINT from the line discipline,
        // as when a person presses Ctrl-C. The test waits for the bar before pressing it.
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("tty.checkpoint").path
        let command = "'\(Tool.path)' factor --bound \(longBound) --checkpoint '\(checkpoint)' \(longPrime)"
        let terminal = try Launched(["-qfec", command, "/dev/null"], executable: "/usr/bin/script",
                                    keepingStdinOpen: true)
        #expect(terminal.waitForStdout(containing: "div/s"))
        try terminal.send(Data([0x03]))
        #expect(terminal.waitForStdout(containing: "checkpoint written to \(checkpoint)"))
        try terminal.closeStdin()
        let run = terminal.finish()
        #expect(run.status == 130)
        #expect(run.stdout.contains("primekit resume"))
        let resumed = try Tool.run(["resume", checkpoint])
        #expect(resumed.status == 0)
        #expect(resumed.stdout == "\(longPrime): \(longPrime)\n")
    }

    @Test func aSecondSignalEndsAtOnceAndNeverLeavesAHalfWrittenFile() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("twice.checkpoint").path
        let launched = try Launched(["factor", "--progress", "--checkpoint", checkpoint, "--bound", longBound,
                                     longPrime])
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(SIGINT)
        launched.signal(SIGINT)
        let run = launched.finish()
        #expect(run.status == 130)
        // Whichever signal won, no temporary file is left, and a checkpoint that exists is whole.
        let left = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(left.allSatisfy { !$0.contains(".tmp-") }, "\(left)")
        if FileManager.default.fileExists(atPath: checkpoint) {
            let resumed = try Tool.run(["resume", checkpoint])
            #expect(resumed.status == 0 && resumed.stdout == "\(longPrime): \(longPrime)\n")
        } else {
            #expect(run.stderr.contains("interrupted again"))
        }
    }

    @Test func aDamagedCheckpointIsAnErrorNotACrash() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bad.checkpoint").path
        #expect(FileManager.default.createFile(atPath: path, contents: Data("primekit-cli-checkpoint 1\ncommand factor\n".utf8)))
        let run = try Tool.run(["resume", path])
        #expect(run.status == 2)
        #expect(run.stderrLines.count == 1)
        #expect(run.stderr.hasPrefix("primekit: \(path) is not a usable primekit checkpoint"))
        let missing = try Tool.run(["resume", path + ".missing"])
        #expect(missing.status == 2)
    }
}

@Suite("Progress bar")
struct ProgressBarTests {
    @Test func aTerminalGetsARedrawnBarWithPercentRateAndETA() throws {
        // script(1) gives the tool a pseudo-terminal on stdin, stdout and stderr, and copies what it writes.
        let command = "'\(Tool.path)' factor --bound \(longBound) \(longPrime)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let text = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0)
        #expect(text.contains("\(longPrime): \(longPrime)"))
        #expect(text.contains("\r\(longPrime) ["))
        #expect(text.contains("%"))
        #expect(text.contains("div/s"))
        #expect(text.contains("ETA "))
        #expect(text.contains("\u{1B}[K"))  // the bar is erased before the answer
    }

    @Test func aPipeGetsNoBar() throws {
        let run = try Tool.run(["factor", "--bound", longBound, longPrime])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        #expect(run.stdout == "\(longPrime): \(longPrime)\n")
    }

    @Test func noProgressWinsOverATerminal() throws {
        let command = "'\(Tool.path)' factor --no-progress --bound 100000000 \(longPrime)"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        process.arguments = ["-qfec", command, "/dev/null"]
        let output = Pipe()
        process.standardOutput = output
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(text.replacingOccurrences(of: "\r\n", with: "\n") == "\(longPrime): \(longPrime)\n")
    }
}
