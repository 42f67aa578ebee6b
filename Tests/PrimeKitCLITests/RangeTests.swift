// `factor --range A B` against coreutils factor (seq A B | factor), the tool's own per-number path, interrupts and
// resume, and bad arguments.

import Foundation
import PrimeKit
import PrimeKitTestSupport
import Testing

private let coreutilsFactor = "/usr/bin/factor"
private let twoTo64: UInt128 = 1 << 64

/// coreutils factor's lines for [first, last], as `seq first last | factor` prints them.
private func coreutils(_ first: UInt128, _ last: UInt128) throws -> String {
    var numbers = ""
    var n = first
    while true {
        numbers += String(n) + "\n"
        if n == last { break }
        n += 1
    }
    let run = try Launched([], stdin: Data(numbers.utf8), executable: coreutilsFactor).finish()
    #expect(run.status == 0)
    return run.stdout
}

/// The line the tool prints where coreutils prints `line`: a prime from 2^64 on passes BPSW and is named again at
/// the end (`[p: probable prime]`), in ascending order, once each.
private func withProbablePrimesNamed(_ line: Substring) -> String {
    var seen: [String] = []
    for word in line.split(separator: " ").dropFirst() {
        if let prime = UInt128(word), prime >= twoTo64, !seen.contains(String(word)) { seen.append(String(word)) }
    }
    return String(line) + seen.map { " [\($0): probable prime]" }.joined()
}

@Suite("factor --range")
struct RangeTests {
    @Test func twoToAMillionIsByteForByteWhatCoreutilsPrints() throws {
        let run = try Tool.run(["factor", "--range", "2", "1000000"])
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let expected = try coreutils(2, 1_000_000)
        #expect(run.stdoutLines.count == 999_999)
        #expect(run.stdout == expected)
    }

    @Test func seededRandomRangesMatchCoreutilsUpToAndAcross2To64() throws {
        var random = SplitMix(seed: 0x5EED_0F_4A_46E5)
        // (lowest first number, spread of first numbers, length)
        let shapes: [(UInt128, UInt128, UInt128)] = [
            (2, 1 << 20, 3000),
            (1 << 32, 1 << 40, 3000),
            (1 << 50, 1 << 60, 2000),
            (1_000_000_000_000_000_000, 1 << 40, 2000),
            (twoTo64 - 5000, 3000, 1500),  // near 2^64, below it
            (twoTo64 - 400, 300, 800),  // across 2^64
            (twoTo64, 1 << 30, 300),  // just above 2^64
        ]
        for (low, spread, length) in shapes {
            let first = low + UInt128(random.next()) % spread
            let last = first + UInt128(random.next()) % length
            let run = try Tool.run(["factor", "--range", String(first), String(last)])
            #expect(run.status == 0, "range \(first) \(last)")
            let expected = try coreutils(first, last).split(separator: "\n").map(withProbablePrimesNamed)
            #expect(run.stdoutLines.count == Int(last - first + 1), "range \(first) \(last)")
            #expect(run.stdoutLines == expected, "range \(first) \(last)")
        }
    }

    @Test func jsonAndExponentsAreTheLinesOfThePerNumberPath() throws {
        // Below 2^64 (sieved), across 2^64 (batch calls) and across 2^128 (one engine job each).
        let prefix = "340282366920938463463374607431768211"  // 2^128 = ...211456
        let lists: [[String]] = [
            (UInt128(2)...300).map { String($0) },
            (UInt128(18_446_744_073_709_551_600)...18_446_744_073_709_551_630).map { String($0) },
            (450...460).map { prefix + String($0) },
        ]
        for numbers in lists {
            let (first, last) = (numbers.first!, numbers.last!)
            for option in ["--json", "--exponents"] {
                let range = try Tool.run(["factor", option, "--range", first, last])
                let each = try Tool.run(["factor", option] + numbers)
                #expect(range.status == 0)
                #expect(range.stdoutLines.count == numbers.count)
                #expect(range.stdout == each.stdout, "\(option) \(first) \(last)")
            }
        }
        let json = try Tool.run(["factor", "--json", "--range", "12", "12"])
        #expect(json.stdoutLines == [
            #"{"candidate":"12","factors":[{"prime":"2","exponent":2,"certainty":"proven"},{"prime":"3","exponent":1,"certainty":"proven"}],"cofactor":"1","cofactorStatus":"one","complete":true,"isPrime":false,"certainty":"proven","mode":"complete","parts":[]}"#,
        ])
    }

    @Test func hugeNumbersGoThroughTheCompleteFactorPath() throws {
        let first = "1000000000000000000000000000000"  // 10^30
        let numbers = (0...12).map { String(first.dropLast(2)) + String(format: "%02d", $0) }
        let range = try Tool.run(["factor", "--range", first, numbers.last!])
        let each = try Tool.run(["factor"] + numbers)
        #expect(range.status == 0)
        #expect(range.stdoutLines.count == 13)
        #expect(range.stdout == each.stdout)
        for line in range.stdoutLines {
            // Every listed prime, with its repetitions, multiplies back to the number.
            let words = line.prefix(while: { $0 != "[" }).split(separator: " ")
            let product = words.dropFirst().reduce(UInt128(1)) { $0 * UInt128($1)! }
            #expect(String(product) + ":" == words[0])
        }
    }

    @Test func badArgumentsAreUsageErrors() throws {
        let cases: [([String], String)] = [
            (["--range", "10", "9"], "A <= B"),
            (["--range", "1", "9"], "at least 2"),
            (["--range", "0", "9"], "at least 2"),
            (["--range", "2", "x"], "invalid --range B"),
            (["--range", "2.5", "9"], "invalid --range A"),
            (["--range", "-3", "9"], "negative"),
            (["--range", "007", "9"], "leading zeros"),
            (["--range", "2"], "two numbers"),
            (["--range", "2", "5", "7"], "two numbers"),
            (["7", "--range", "2", "5"], "no other numbers"),
            (["--range", "2", "5", "--", "7"], "no other numbers"),
            (["--bound", "100", "--range", "2", "5"], "--bound"),
            (["--range", "2", "5", "--from", "3"], "--from"),
            (["--range", "2", "5", "--ecm-digits", "20"], "--ecm-digits"),
        ]
        for (arguments, message) in cases {
            let run = try Tool.run(["factor"] + arguments, stdin: Data("12\n".utf8))
            #expect(run.status == 2, "\(arguments)")
            #expect(run.stdout.isEmpty, "\(arguments)")
            #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
    }

    /// Starts `arguments`, waits until it has written lines and shown progress, and stops it with `signal`.
    private func interrupted(_ arguments: [String], signal: Int32, checkpoint: String) throws -> ToolRun {
        let launched = try Launched(arguments + ["--progress", "--checkpoint", checkpoint])
        #expect(launched.waitForStdout(containing: "\n"))
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(signal)
        let run = launched.finish()
        #expect(run.status == 130)
        #expect(run.stderr.contains("primekit: interrupted; checkpoint written to \(checkpoint)\n"))
        #expect(run.stdout.hasSuffix("\n"))
        return run
    }

    @Test func ctrlCThenResumeContinuesExactlyWhereTheOutputStopped() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("range.checkpoint").path
        let first: UInt128 = 1_000_000_000_000_000_000
        // Hours of work on any machine: it is still running when the signals come.
        let arguments = ["factor", "--range", String(first), String(first + 10_000_000_000)]
        let stopped = try interrupted(arguments, signal: SIGINT, checkpoint: checkpoint)
        let text = try String(contentsOfFile: checkpoint, encoding: .utf8)
        #expect(text.contains("\nrange ") && text.contains("primekit-range 1\n") && text.contains("\nspan "))
        // Resumed, and stopped again (SIGTERM), with the checkpoint rewritten in place.
        let resumed = try interrupted(["resume", checkpoint], signal: SIGTERM, checkpoint: checkpoint)
        let lines = stopped.stdoutLines + resumed.stdoutLines
        #expect(stopped.stdoutLines.count > 0 && resumed.stdoutLines.count > 0)
        // Nothing skipped, nothing doubled: line i is the answer for first + i.
        for (index, line) in lines.enumerated() where !line.hasPrefix(String(first + UInt128(index)) + ": ") {
            Issue.record("line \(index) is \(line.prefix(60))")
            break
        }
        // An uninterrupted run over the same numbers prints the same bytes.
        let count = UInt128(lines.count)
        let whole = try Tool.run(["factor", "--range", String(first), String(first + count - 1)])
        #expect(whole.status == 0)
        #expect(stopped.stdout + resumed.stdout == whole.stdout)
        // coreutils agrees on the lines on both sides of each stop, and on a seeded sample of the rest.
        let cut = UInt128(stopped.stdoutLines.count)
        var picked: [UInt128] = Array(cut - min(cut, 300)..<min(count, cut + 300)) + Array(count - min(count, 300)..<count)
        var random = SplitMix(seed: 0xC7_21_0C)
        for _ in 0..<500 { picked.append(UInt128(random.next() % UInt64(count))) }
        let input = picked.map { String(first + $0) }.joined(separator: "\n") + "\n"
        let expected = try Launched([], stdin: Data(input.utf8), executable: coreutilsFactor).finish().stdoutLines
        #expect(expected.count == picked.count)
        #expect(picked.map { lines[Int($0)] } == expected)
    }

    @Test func aDamagedRangeCheckpointIsRefused() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("range.checkpoint").path
        let first: UInt128 = 1_000_000_000_000_000_000
        _ = try interrupted(["factor", "--range", String(first), String(first + 10_000_000_000)], signal: SIGTERM,
                            checkpoint: checkpoint)
        let check = try Tool.run(["resume", "--check", checkpoint])
        #expect(check.status == 0)
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: checkpoint)))
        let done = bytes.firstRange(of: Array("\ndone ".utf8))!.upperBound
        bytes[done] = bytes[done] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
        try Data(bytes).write(to: URL(fileURLWithPath: checkpoint))
        let refused = try Tool.run(["resume", checkpoint])
        #expect(refused.status == 2)
        #expect(refused.stdout.isEmpty)
        #expect(refused.stderr.contains("is not a usable primekit checkpoint"))
    }

    @Test func rangeCheckpointsWithAForeignItemOrOptionAreRefusedEvenWithAGoodChecksum() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("range.checkpoint").path
        let first: UInt128 = 1_000_000_000_000_000_000
        _ = try interrupted(["factor", "--range", String(first), String(first + 10_000_000_000)], signal: SIGINT,
                            checkpoint: checkpoint)
        let text = try String(contentsOfFile: checkpoint, encoding: .utf8)
        let body = String(text[..<text.range(of: "checksum ", options: .backwards)!.lowerBound])
        func signed(_ body: String) -> String { body + TextChecksum.line(for: Array(body.utf8)) }
        #expect(signed(body) == text)
        let itemsLine = try #require(body.range(of: "\nitems 2\n"))
        let edits: [(String, String)] = [
            ("a number after the range items",
             body.replacingCharacters(in: itemsLine, with: "\nitems 3\n") + "number 2\n12\n"),
            ("a divisor bound", body.replacingOccurrences(of: "\nbound -\n", with: "\nbound 100\n")),
            ("a span with A > B", body.replacingOccurrences(of: String(first + 10_000_000_000) + "\n",
                                                            with: String(first) + "\n")),
        ]
        for (name, edited) in edits {
            #expect(edited != body, "\(name)")
            try signed(edited).write(toFile: checkpoint, atomically: true, encoding: .utf8)
            let run = try Tool.run(["resume", checkpoint])
            #expect(run.status == 2, "\(name)")
            #expect(run.stdout.isEmpty, "\(name)")
            #expect(run.stderr.contains("is not a usable primekit checkpoint"), "\(name): \(run.stderr)")
        }
    }
}
