import Foundation
import Testing

/// Trial division of the largest 64-bit prime to 4·10^9: a couple of seconds in a debug build, a tenth of one in a
/// release build. Its answer is known (no divisor up to the bound; BPSW proves it prime below 2^64), but a run of it
/// can end before a signal sent after its first progress line lands: only `is-prime` (which has no time limit) and
/// the progress bar tests, which interrupt nothing, still use it.
private let longPrime = "18446744073709551557"
private let longBound = "4000000000"

/// The time limit of the runs on `rsa100` that are interrupted, which the resumed run ends by. With 3 s, runs in the
/// whole CLI suite beside three busy loops ended before the signal stopped them (a run whose signal comes later
/// than its limit answers and exits 0); 10 s leaves room for that.
private let timeLimit = "10"
/// The start of the answer for `rsa100`; what follows says which ECM curves ran in the time, which differs by run.
private let unsplitAnswer = "\(rsa100): [cofactor \(rsa100): composite, not split within the time limit (--time-limit \(timeLimit)); tried: trial division to 65536, "

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
        let numbers = ["12", rsa100, "35"]
        let stopped = try interrupt(["factor", "--time-limit", timeLimit] + numbers, with: SIGINT,
                                    checkpoint: checkpoint)
        #expect(stopped.stdout == "12: 2 2 3\n")  // answered before the signal; the rest is in the checkpoint
        let resumed = try Tool.run(["resume", checkpoint, "--no-progress"])
        #expect(resumed.status == 0)
        #expect(resumed.stderr.isEmpty)
        let whole = try Tool.run(["factor", "--time-limit", timeLimit] + numbers)
        #expect((stopped.stdoutLines + resumed.stdoutLines).map(withoutEffort) == whole.stdoutLines.map(withoutEffort))
        #expect(whole.stdoutLines.count == 3)
        #expect(whole.stdoutLines.first == "12: 2 2 3" && whole.stdoutLines.last == "35: 5 7")
        #expect(whole.stdoutLines.dropFirst().first?.hasPrefix(unsplitAnswer) == true, "\(whole.stdoutLines)")
    }

    @Test func sigtermDoesTheSameAndResumeKeepsTheJSONFormat() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("run.checkpoint").path
        // --parallel is accepted (and what happens anyway).
        let arguments = ["factor", "--json", "--parallel", "--time-limit", timeLimit, rsa100, "77"]
        let stopped = try interrupt(arguments, with: SIGTERM, checkpoint: checkpoint)
        #expect(stopped.stdout.isEmpty)
        let resumed = try Tool.run(["factor", "--resume", checkpoint])
        #expect(resumed.status == 0)
        #expect(resumed.stdoutLines.count == 2)
        // The part's record goes on with the effort spent (work, curves, B1, B2), which differs by run.
        #expect(resumed.stdoutLines.first?.hasPrefix(
            #"{"candidate":"\#(rsa100)","factors":[],"cofactor":"\#(rsa100)","cofactorStatus":"composite","complete":false,"isPrime":false,"certainty":"proven","mode":"complete","parts":[{"value":"\#(rsa100)","exponent":1,"trialFrom":"2","trialBound":"65536","work":""#
        ) == true, "\(resumed.stdoutLines)")
        #expect(resumed.stdoutLines.last ==
            #"{"candidate":"77","factors":[{"prime":"7","exponent":1,"certainty":"proven"},{"prime":"11","exponent":1,"certainty":"proven"}],"cofactor":"1","cofactorStatus":"one","complete":true,"isPrime":false,"certainty":"proven","mode":"complete","parts":[]}"#)
    }

    @Test func isPrimeResumesWithItsExitStatus() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("is-prime.checkpoint").path
        // is-prime has no time limit: its long run is trial division, which a fast machine can end before the
        // signal lands. Then there is nothing to resume, and the run answered with its own exit status.
        let launched = try Launched(["is-prime", "--exit-status", "--bound", longBound, longPrime, "--progress",
                                     "--checkpoint", checkpoint])
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(SIGINT)
        let run = launched.finish()
        if run.status == 0 {
            #expect(run.stdout == "\(longPrime): prime\n")
            #expect(!FileManager.default.fileExists(atPath: checkpoint))
            return
        }
        #expect(run.status == 130)
        #expect(run.stderr.contains("primekit: interrupted; checkpoint written to \(checkpoint)\n"))
        #expect(run.stderr.contains("primekit resume \(checkpoint)"))
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
        let command = "'\(Tool.path)' factor --time-limit \(timeLimit) --checkpoint '\(checkpoint)' \(rsa100)"
        let terminal = try Launched(["-qfec", command, "/dev/null"], executable: "/usr/bin/script",
                                    keepingStdinOpen: true)
        #expect(terminal.waitForStdout(containing: "of stage"))
        try terminal.send(Data([0x03]))
        #expect(terminal.waitForStdout(containing: "checkpoint written to \(checkpoint)"))
        try terminal.closeStdin()
        let run = terminal.finish()
        #expect(run.status == 130)
        #expect(run.stdout.contains("primekit resume"))
        let resumed = try Tool.run(["resume", checkpoint])
        #expect(resumed.status == 0)
        #expect(resumed.stdout.hasPrefix(unsplitAnswer) && resumed.stdoutLines.count == 1, "\(resumed.stdout)")
    }

    @Test func aSecondSignalEndsAtOnceAndNeverLeavesAHalfWrittenFile() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("twice.checkpoint").path
        let launched = try Launched(["factor", "--progress", "--checkpoint", checkpoint, "--time-limit", timeLimit,
                                     rsa100])
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
            #expect(resumed.status == 0 && resumed.stdout.hasPrefix(unsplitAnswer), "\(resumed.stdout)")
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
