// `factor` without a divisor range: complete factorizations, checked here against a sieve, by multiplying back and
// by an independent primality test in this file, and against coreutils `factor` when it is installed.

import Foundation
import PrimeKitTestSupport
import Testing

/// Independent arithmetic for checking answers.
private enum Check {
    static func isPrime(_ n: UInt128) -> Bool { PrimeOracle.isPrime(n) }

    /// The smallest prime factor of every n <= limit.
    static func sieve(_ limit: Int) -> [Int] {
        var smallest = Array(0...limit)
        var p = 2
        while p * p <= limit {
            if smallest[p] == p {
                for multiple in stride(from: p * p, through: limit, by: p) where smallest[multiple] == multiple {
                    smallest[multiple] = p
                }
            }
            p += 1
        }
        return smallest
    }

    /// Decimal text of a · b for a, b < 2^128.
    static func product(_ a: UInt128, _ b: UInt128) -> String {
        let (high, low) = a.multipliedFullWidth(by: b)
        var limbs = [UInt64(truncatingIfNeeded: high >> 64), UInt64(truncatingIfNeeded: high),
                     UInt64(truncatingIfNeeded: low >> 64), UInt64(truncatingIfNeeded: low)]
        var groups: [UInt64] = []
        while limbs.contains(where: { $0 != 0 }) {
            var remainder: UInt64 = 0
            for index in limbs.indices {
                let (q, r) = (10_000_000_000_000_000_000 as UInt64).dividingFullWidth((high: remainder, low: limbs[index]))
                limbs[index] = q
                remainder = r
            }
            groups.append(remainder)
        }
        guard let top = groups.popLast() else { return "0" }
        var text = String(top)
        for group in groups.reversed() {
            let digits = String(group)
            text += String(repeating: "0", count: 19 - digits.count) + digits
        }
        return text
    }

    /// A random prime of `bits` bits (top bit set).
    static func randomPrime(bits: Int, _ random: inout SplitMix) -> UInt128 {
        while true {
            var n = UInt128(random.next()) << 64 | UInt128(random.next())
            n = n >> (128 - bits) | 1 | (1 << (bits - 1))
            if isPrime(n) { return n }
        }
    }
}

/// One answer line of `factor`, parsed.
private struct Line {
    var number: UInt128
    var primes: [UInt128]
    var probable: Set<UInt128>

    init?(_ line: String) {
        var rest = Substring(line)
        var probable: Set<UInt128> = []
        while rest.hasSuffix(": probable prime]"), let open = rest.lastIndex(of: "[") {
            let inner = rest[rest.index(after: open)...].dropLast(": probable prime]".count)
            guard let value = UInt128(inner) else { return nil }
            probable.insert(value)
            rest = rest[..<open].dropLast()  // the space before "["
        }
        let words = rest.split(separator: " ")
        guard let first = words.first, first.hasSuffix(":"), let number = UInt128(first.dropLast()) else { return nil }
        var primes: [UInt128] = []
        for word in words.dropFirst() {
            guard let prime = UInt128(word) else { return nil }
            primes.append(prime)
        }
        self.number = number
        self.primes = primes
        self.probable = probable
    }

    /// Multiplies back, checks order and primality, and that exactly the primes above 2^64 are called probable.
    func verify() -> Bool {
        var product: UInt128 = 1
        for prime in primes {
            let (next, overflow) = product.multipliedReportingOverflow(by: prime)
            if overflow { return false }
            product = next
        }
        let above = Set(primes.filter { $0 >> 64 != 0 })
        return product == number && primes == primes.sorted() && primes.allSatisfy(Check.isPrime)
            && probable == above
    }
}

private let coreutils = "/usr/bin/factor"

/// Runs coreutils `factor` on `input`, or returns nil when it is not installed.
private func coreutilsOutput(_ input: String) throws -> String? {
    guard FileManager.default.isExecutableFile(atPath: coreutils) else { return nil }
    let run = try Launched([], stdin: Data(input.utf8), executable: coreutils).finish()
    return run.stdout
}

@Suite("factor: complete factorizations through the batch path")
struct BatchTests {
    @Test func everyNumberToAMillionMatchesASieve() throws {
        let limit = 1_000_000
        let input = (2...limit).map(String.init).joined(separator: "\n") + "\n"
        let run = try Tool.run(["factor"], stdin: Data(input.utf8))
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        let smallest = Check.sieve(limit)
        var expected: [String] = []
        for n in 2...limit {
            var words = ["\(n):"]
            var rest = n
            while rest > 1 {
                words.append(String(smallest[rest]))
                rest /= smallest[rest]
            }
            expected.append(words.joined(separator: " "))
        }
        #expect(run.stdoutLines.count == expected.count)
        let mismatches = zip(run.stdoutLines, expected).filter { $0.0 != $0.1 }
        #expect(mismatches.isEmpty, "first mismatches: \(mismatches.prefix(3))")
        if let reference = try coreutilsOutput(input) {
            #expect(run.stdout == reference)
        }
    }

    @Test func random64And128BitNumbersMultiplyBackToPrimes() throws {
        var random = SplitMix(seed: 20_261_126)
        var numbers: [UInt128] = []
        // 100,000 word-size numbers of every size from 2 bits to 64 (checked against coreutils below).
        for _ in 0..<100_000 { numbers.append(UInt128(max(2, random.next() >> (random.next() % 63)))) }
        for _ in 0..<150 {
            let bits = 65 + Int(random.next() % 64)
            let value = (UInt128(random.next()) << 64 | UInt128(random.next())) >> (128 - bits)
            numbers.append(value | (1 << (bits - 1)))
        }
        // Balanced semiprimes, the hard case for every method, on both sides of 2^64.
        for bits in [24, 32, 40, 48, 56, 63] {
            numbers.append(Check.randomPrime(bits: bits, &random) * Check.randomPrime(bits: bits, &random))
        }
        let input = numbers.map { String($0) }.joined(separator: "\n") + "\n"
        let run = try Tool.run(["factor"], stdin: Data(input.utf8))
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == numbers.count)
        // coreutils takes seconds on some two-word numbers: it checks the 64-bit ones (proven, so no notes); the
        // test's own primality test checks the rest, and everything when coreutils is not installed.
        let words = numbers.prefix(100_000).map { String($0) }.joined(separator: "\n") + "\n"
        let reference = try coreutilsOutput(words)
        if let reference {
            #expect(run.stdoutLines.prefix(100_000).joined(separator: "\n") + "\n" == reference)
        }
        for (index, (line, number)) in zip(run.stdoutLines, numbers).enumerated()
        where reference == nil || index >= 100_000 {
            let parsed = Line(line)
            #expect(parsed?.number == number, "\(line)")
            #expect(parsed?.verify() == true, "\(line)")
        }
    }

    @Test func argumentsAndStandardInputGiveTheSameBytes() throws {
        var random = SplitMix(seed: 7)
        let numbers = (0..<5_000).map { index in String(index % 3 == 0 ? random.next() : random.next() % 1_000_000 + 2) }
        let fromArguments = try Tool.run(["factor"] + numbers)
        let fromStandardInput = try Tool.run(["factor"], stdin: Data(numbers.joined(separator: " ").utf8))
        #expect(fromArguments.status == 0)
        #expect(fromArguments.stdoutLines.count == numbers.count)
        #expect(fromArguments.stdout == fromStandardInput.stdout)
        // Input order: each line answers the number at its place.
        #expect(zip(fromArguments.stdoutLines, numbers).allSatisfy { $0.0.hasPrefix($0.1 + ":") })
        let exponents = try Tool.run(["factor", "--exponents"] + numbers.prefix(50))
        let exponentsIn = try Tool.run(["factor", "--exponents"], stdin: Data(numbers.prefix(50).joined(separator: "\n").utf8))
        #expect(exponents.stdout == exponentsIn.stdout)
    }

    @Test func bigSmallAndInvalidNumbersKeepTheirOrder() throws {
        var random = SplitMix(seed: 99)
        let p = Check.randomPrime(bits: 70, &random)
        let q = Check.randomPrime(bits: 72, &random)
        let big = Check.product(p, q)  // 142 bits: a complete job, not the batch path
        let mixed = ["12", "2.54", big, "1", "35", "18446744073709551617", "007", "97"]
        for run in [try Tool.run(["factor", "--"] + mixed),
                    try Tool.run(["factor"], stdin: Data(mixed.joined(separator: "\n").utf8))] {
            #expect(run.status == 1)
            #expect(run.stdoutLines.count == 5)
            #expect(run.stdoutLines.first == "12: 2 2 3")
            let bigLine = run.stdoutLines.count > 1 ? run.stdoutLines[1] : ""
            let (low, high) = (min(p, q), max(p, q))
            #expect(bigLine == "\(big): \(low) \(high) [\(low): probable prime] [\(high): probable prime]")
            #expect(Array(run.stdoutLines.dropFirst(2)) == ["35: 5 7", "18446744073709551617: 274177 67280421310721", "97: 97"])
            #expect(run.stderrLines.count == 3)
            #expect(run.stderrLines.first?.contains("\"2.54\"") == true)
        }
    }

    @Test func aBoundKeepsTrialDivisionAndItsCofactorLine() async throws {
        var random = SplitMix(seed: 5)
        let n = Check.randomPrime(bits: 40, &random) * Check.randomPrime(bits: 40, &random)
        let run = try Tool.run(["factor", "--bound", "1000", "12", String(n)])
        #expect(run.status == 0)
        let expected = try await Expected.factorization(String(n), bound: "1000")
        #expect(run.stdoutLines == ["12: 2 2 3",
                                    "\(n): [cofactor \(expected.cofactor): composite, its factors are outside the divisor range tried]"])
        #expect(expected.cofactor == String(n))
        // Without the bound the same number is factored completely.
        let complete = try Tool.run(["factor", String(n)])
        #expect(Line(complete.stdoutLines.first ?? "")?.verify() == true)
        #expect(Line(complete.stdoutLines.first ?? "")?.primes.count == 2)
    }

    @Test func anEffortLimitGivesAnHonestPartialLine() throws {
        var random = SplitMix(seed: 11)
        // Two 100-bit primes (31 digits): far beyond ECM at the 15-digit level.
        let big = Check.product(Check.randomPrime(bits: 100, &random), Check.randomPrime(bits: 100, &random))
        let run = try Tool.run(["factor", "--ecm-digits", "15", "6", big])
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 2 && run.stdoutLines[0] == "6: 2 3")
        // What is left, why, and what was tried on it.
        #expect(run.stdoutLines[1].hasPrefix(
            "\(big): [cofactor \(big): composite, no factor found by ECM to about 15 digits (--ecm-digits); tried: trial division to "))
        #expect(run.stdoutLines[1].contains(" ECM curves (last B1 = "))
        #expect(try Tool.run(["factor", "--ecm-digits", "15", "--bound", "100", "6"]).status == 2)
        #expect(try Tool.run(["factor", "--ecm-digits", "0", "6"]).status == 2)
    }

    @Test func aTimeLimitGivesAnHonestPartialLineAndIsKeptByCheckpoints() throws {
        var random = SplitMix(seed: 12)
        // Two 120-bit primes: far beyond a quarter of a second of ECM.
        let big = Check.product(Check.randomPrime(bits: 120, &random), Check.randomPrime(bits: 120, &random))
        let run = try Tool.run(["factor", "--time-limit", "0.25", "35", big, "12"])
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 3 && run.stdoutLines[0] == "35: 5 7" && run.stdoutLines[2] == "12: 2 2 3")
        #expect(run.stdoutLines[1].hasPrefix(
            "\(big): [cofactor \(big): composite, not split within the time limit (--time-limit 0.25); tried: trial division to "))
        // In JSON: not complete, the part left with what was tried on it.
        let json = try Tool.run(["factor", "--json", "--time-limit", "0.25", big])
        #expect(json.status == 0)
        #expect(json.stdout.contains(#""complete":false"#) && json.stdout.contains(#""mode":"complete""#))
        #expect(json.stdout.contains(#""parts":[{"value":"\#(big)","exponent":1,"trialFrom":"#))
        for bad in ["0", "-1", "abc", "1e3", "0.0001"] {
            #expect(try Tool.run(["factor", "--time-limit", bad, "6"]).status == 2, "\(bad)")
        }
        #expect(try Tool.run(["factor", "--time-limit", "1", "--bound", "100", "6"]).status == 2)
        // A checkpoint remembers the limit: interrupted before its end, the run resumes with the same limit.
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("limit.checkpoint").path
        let launched = try Launched(["factor", "--time-limit", "30", "--progress", "--checkpoint", checkpoint, big])
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(SIGINT)
        #expect(launched.finish().status == 130)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: checkpoint)), as: UTF8.self)
        #expect(text.contains("\ntime-limit 30\n"))
        #expect(try Tool.run(["resume", "--check", checkpoint]).status == 0)
    }

    @Test func anInterruptedRunKeepsTheNumbersNotAnsweredInItsCheckpoint() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("batch.checkpoint").path
        // RSA-100: a complete job still running when the signal lands, however fast or loaded the machine is. The
        // time limit only ends the run if the signal never stops it (a SIGINT ignored from the start stays ignored).
        let launched = try Launched(["factor", "--progress", "--time-limit", "60", "--checkpoint", checkpoint, "12",
                                     rsa100, "35", "36"])
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(SIGINT)
        let run = launched.finish()
        #expect(run.status == 130)
        #expect(run.stdout == "12: 2 2 3\n")
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: checkpoint)), as: UTF8.self)
        #expect(text.contains("items 3\njob "))
        #expect(text.contains("\nnumber 2\n35\nnumber 2\n36\n"))
    }

    @Test func sigtermDuringTheBatchPathCheckpointsTheNumbersNotAnswered() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let checkpoint = directory.appendingPathComponent("stdin.checkpoint").path
        var random = SplitMix(seed: 17)
        // Balanced 64-bit semiprimes: seconds of work in all, printed a chunk (128 numbers) at a time.
        let numbers = (0..<2_000).map { _ in
            String(Check.randomPrime(bits: 32, &random) * Check.randomPrime(bits: 32, &random))
        }
        // As arguments, so every number is known to the run when the signal comes (standard input may not be
        // read to its end yet, and numbers not read are not in a checkpoint).
        let launched = try Launched(["factor", "--checkpoint", checkpoint] + numbers)
        #expect(launched.waitForStdout(containing: "\n"))
        launched.signal(SIGTERM)
        let stopped = launched.finish()
        #expect(stopped.status == 130)
        #expect(stopped.stderr.contains("checkpoint written to \(checkpoint)"))
        let resumed = try Tool.run(["resume", checkpoint])
        #expect(resumed.status == 0)
        // Nothing lost, nothing twice: every number answered once, in input order.
        let lines = stopped.stdoutLines + resumed.stdoutLines
        #expect(lines.count == numbers.count)
        #expect(zip(lines, numbers).allSatisfy { $0.0.hasPrefix($0.1 + ":") })
        #expect(stopped.stdoutLines.count < numbers.count)
        #expect(resumed.stdout == (try Tool.run(["factor"] + numbers[stopped.stdoutLines.count...])).stdout)
    }

    @Test func sigtermWhileReadingStandardInputCheckpointsWhatWasReadButNotAnswered() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SplitMix(seed: 23)
        let numbers = (0..<600).map { _ in
            String(Check.randomPrime(bits: 32, &random) * Check.randomPrime(bits: 32, &random))
        }
        // The plain `factor` (no option): standard input stays open, so the run is still reading when stopped.
        let launched = try Launched(["factor"], keepingStdinOpen: true)
        try launched.send(Data((numbers.joined(separator: "\n") + "\n").utf8))
        #expect(launched.waitForStdout(containing: "\n"))
        launched.signal(SIGTERM)
        let stopped = launched.finish()
        #expect(stopped.status == 130)
        var resumedLines: [String] = []
        if let line = stopped.stderrLines.first(where: { $0.hasPrefix("primekit: interrupted; checkpoint written to ") }) {
            let path = String(line.dropFirst("primekit: interrupted; checkpoint written to ".count))
            defer { try? FileManager.default.removeItem(atPath: path) }
            let resumed = try Tool.run(["resume", path])
            #expect(resumed.status == 0)
            resumedLines = resumed.stdoutLines
        } else {
            #expect(stopped.stderrLines == ["primekit: interrupted"])  // everything read was answered
        }
        // Nothing twice, nothing out of order: the numbers read so far, each answered once.
        let lines = stopped.stdoutLines + resumedLines
        #expect(lines.count <= numbers.count)
        #expect(zip(lines, numbers).allSatisfy { $0.0.hasPrefix($0.1 + ":") })
        #expect(lines == (try Tool.run(["factor", "--no-progress"] + numbers[..<lines.count])).stdoutLines)
    }

    @Test func thePlainPathHandsOverAtTheFirstNumberItDoesNotTake() throws {
        // Small numbers, then one of 2^128 or more, an invalid token and a token cut by the end of a read: the
        // plain path answers what comes before, the general path the rest, in order.
        let big = "340282366920938463463374607431768211507"
        let small = (2...5_000).map(String.init)
        let input = (small + [big, "12", "x7", "35"] + small).joined(separator: " ") + "\n"
        let plain = try Tool.run(["factor"], stdin: Data(input.utf8))
        let general = try Tool.run(["factor", "--no-progress"], stdin: Data(input.utf8))
        #expect(plain.status == 1 && general.status == 1)
        #expect(plain.stdout == general.stdout)
        #expect(plain.stderrLines == ["primekit: invalid candidate \"x7\": not a decimal number"])
        #expect(plain.stdoutLines.count == 2 * small.count + 3)
        #expect(plain.stdoutLines[small.count] == "\(big): \(big) [\(big): probable prime]")
    }
}

