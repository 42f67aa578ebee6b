import Foundation
import PrimeKit
import Testing

@Suite("Input: candidates, standard input, command line")
struct InputTests {
    static let invalid: [(String, String)] = [
        ("-10", "negative"), ("0", "at least 2"), ("1", "at least 2"), ("2.54", "not a whole number"),
        ("twelve", "not a decimal number"), ("", "empty"), ("0x1G", "hexadecimal"), ("1e9", "exponent"),
        ("007", "leading zeros"), ("+5", "sign"), ("1,000", "separators"),
    ]

    @Test(arguments: invalid)
    func invalidCandidateGetsOneClearLineAndStatus1(candidate: String, reason: String) throws {
        for arguments in [["is-prime", "--", candidate], ["factor", "--", candidate]] {
            let run = try Tool.run(arguments)
            #expect(run.status == 1)
            #expect(run.stdout.isEmpty)
            #expect(run.stderrLines.count == 1)
            let line = run.stderrLines.first ?? ""
            #expect(line.hasPrefix("primekit: invalid candidate \"\(candidate)\": "), "\(line)")
            #expect(line.contains(reason), "\(line)")
        }
    }

    @Test func theExampleMessageIsExact() throws {
        let run = try Tool.run(["is-prime", "2.54"])
        #expect(run.status == 1)
        #expect(run.stderr == "primekit: invalid candidate \"2.54\": not a whole number\n")
    }

    @Test func aBareNegativeNumberIsACandidateNotAnOption() throws {
        for arguments in [["is-prime", "-10"], ["factor", "-10"], ["factor", "--json", "-2.5"]] {
            let run = try Tool.run(arguments)
            #expect(run.status == 1)
            #expect(run.stderr.contains("primekit: invalid candidate \"\(arguments.last!)\": negative"))
        }
    }

    @Test func mistypedOptionsAreUsageErrors() throws {
        let unknown = try Tool.run(["factor", "--jsno", "12"])
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("--jsno"))
        #expect(try Tool.run(["is-prime"]).status == 2)
        #expect(try Tool.run(["is-prime", "3", "5"]).status == 2)
        #expect(try Tool.run(["factor", "--bound", "1x", "12"]).status == 2)
        #expect(try Tool.run(["frobnicate"]).status == 2)
    }

    @Test(arguments: ["0", "1"]) func aFromBelowTwoIsAUsageError(from: String) throws {
        for command in ["factor", "is-prime"] {
            let run = try Tool.run([command, "--from", from, "30"])
            #expect(run.status == 2)
            #expect(run.stdout.isEmpty)
            #expect(run.stderr.contains("invalid --from \"\(from)\": must be at least 2"))
        }
        #expect(try Tool.run(["factor", "--from", "2", "30"]).stdout == "30: 2 3 5\n")
    }

    @Test func badArgumentsDoNotStopTheGoodOnes() throws {
        let run = try Tool.run(["factor", "12", "2.54", "35"])
        #expect(run.status == 1)
        #expect(run.stdoutLines == ["12: 2 2 3", "35: 5 7"])
        #expect(run.stderrLines == ["primekit: invalid candidate \"2.54\": not a whole number"])
    }

    @Test func standardInputMixesHugeNumbersAndBadTokens() async throws {
        // A 1,000,000-digit number (10^999999 + 1), far too long for argv, among good and bad tokens.
        let huge = "1" + String(repeating: "0", count: 999_998) + "1"
        let input = "12\n\t\(huge)  oops 2.54\n35 \n 1e9 1001"
        let run = try Tool.run(["factor", "--bound", "1000"], stdin: Data(input.utf8))
        #expect(run.status == 1)
        let expectedHuge = try await Expected.factorization(huge, bound: "1000")
        let hugeLine = Expected.line(expectedHuge)
            + " [cofactor \(expectedHuge.cofactor): not classified, too long for a primality test]"
        #expect(run.stdoutLines.count == 4)
        #expect(run.stdoutLines.first == "12: 2 2 3")
        #expect(run.stdoutLines.dropFirst().first?.utf8.count == hugeLine.utf8.count)
        #expect(run.stdoutLines.dropFirst().first.map { $0.utf8.elementsEqual(hugeLine.utf8) } == true)
        #expect(Array(run.stdoutLines.dropFirst(2)) == ["35: 5 7", "1001: 7 11 13"])
        #expect(run.stderrLines == [
            "primekit: invalid candidate \"oops\": not a decimal number",
            "primekit: invalid candidate \"2.54\": not a whole number",
            "primekit: invalid candidate \"1e9\": exponent notation is not accepted, write all the digits",
        ])
    }

    @Test func aLongStreamOfSmallNumbersIsAnsweredInOrder() async throws {
        // Far more numbers than the tool keeps in flight or reads ahead, so the window empties and refills often.
        let numbers = (2...30_001).map(String.init)
        let run = try Tool.run(["factor"], stdin: Data(numbers.joined(separator: "\n").utf8))
        #expect(run.status == 0)
        let jobs = try Expected.queue.submit(contentsOf: numbers.map { .factor($0) })
        var expected: [String] = []
        for job in jobs { expected.append(Expected.line(try await job.result.factorization!)) }
        #expect(run.stdoutLines.count == numbers.count)
        #expect(run.stdoutLines == expected)
    }

    @Test func jsonModeGivesBadTokensAnErrorObjectInOrder() throws {
        let run = try Tool.run(["factor", "--json"], stdin: Data("6 x 7".utf8))
        #expect(run.status == 1)
        #expect(run.stdoutLines.count == 3)
        #expect(run.stdoutLines[1] == #"{"candidate":"x","error":{"code":"invalidCandidate","message":"not a decimal number"}}"#)
        #expect(run.stdoutLines[2].hasPrefix(#"{"candidate":"7","factors":[{"prime":"7","exponent":1,"certainty":"proven"}]"#))
    }

    @Test func versionAndHelp() throws {
        let version = try Tool.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.hasPrefix("primekit "))
        let help = try Tool.run(["--help"])
        #expect(help.status == 0)
        for text in ["Examples:", "Exit status:", "130", "factor", "is-prime", "resume", "bench"] {
            #expect(help.stdout.contains(text), "\(text)")
        }
        let factorHelp = try Tool.run(["factor", "--help"])
        #expect(factorHelp.status == 0 && factorHelp.stdout.contains("--exponents"))
    }
}
