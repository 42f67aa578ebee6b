import Foundation
import PrimeKit
import Testing

@Suite("Answers: text and JSON against the engine")
struct AnswerFormatTests {
    static let numbers = ["600851475143", "18446744073709551617", "1024", "12354962", "2", "4294967291",
                          "340282366920938463463374607431768211455", "1000036000099"]

    @Test func factorPrintsOneCoreutilsLinePerNumber() async throws {
        let run = try Tool.run(["factor"] + Self.numbers)
        #expect(run.status == 0)
        #expect(run.stderr.isEmpty)
        var expected: [String] = []
        for number in Self.numbers { expected.append(Expected.line(try await Expected.factorization(number))) }
        #expect(run.stdoutLines == expected)
        #expect(run.stdoutLines.first == "600851475143: 71 839 1471 6857")
        #expect(run.stdoutLines[1] == "18446744073709551617: 274177 67280421310721")
    }

    @Test func exponentsPrintEachPrimeOnceWithItsPower() throws {
        let run = try Tool.run(["factor", "--exponents", "1024", "360", "17"])
        #expect(run.status == 0)
        #expect(run.stdoutLines == ["1024: 2^10", "360: 2^3 3^2 5", "17: 17"])
    }

    @Test func factorJSONIsTheProtocolResultOnePerLine() async throws {
        let run = try Tool.run(["factor", "--json"] + Self.numbers)
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == Self.numbers.count)
        for (line, number) in zip(run.stdoutLines, Self.numbers) {
            let decoded = try JSONDecoder().decode(FactorResult.self, from: Data(line.utf8))
            #expect(decoded == (try await Expected.factorization(number)))
        }
        // Key order and big integers as strings, exactly.
        #expect(run.stdoutLines[1] == #"{"candidate":"18446744073709551617","factors":[{"prime":"274177","exponent":1,"certainty":"proven"},{"prime":"67280421310721","exponent":1,"certainty":"proven"}],"cofactor":"1","cofactorStatus":"one","complete":true,"isPrime":false,"certainty":"proven","mode":"complete","parts":[]}"#)
    }

    @Test func unfinishedTrialDivisionStatesTheCofactorAndItsStatus() async throws {
        let mersenne127 = "170141183460469231731687303715884105727"
        let probable = "510423550381407695195061911147652317181"  // 3 · (2^127 − 1)
        let composite = "6000216000594"  // 2 · 3 · 1000003 · 1000033
        let run = try Tool.run(["factor", "--bound", "1000", probable, composite])
        #expect(run.status == 0)
        #expect(run.stdoutLines.count == 2)
        #expect(run.stdoutLines[0] == "\(probable): 3 [cofactor \(mersenne127): probable prime]")
        let expected = try await Expected.factorization(composite, bound: "1000")
        #expect(expected.cofactorStatus == .composite && expected.cofactor == "1000036000099")
        #expect(run.stdoutLines[1] == Expected.line(expected)
                + " [cofactor \(expected.cofactor): composite, its factors are outside the divisor range tried]")

        let json = try Tool.run(["factor", "--json", "--bound", "1000", probable])
        let decoded = try JSONDecoder().decode(FactorResult.self, from: Data(json.stdout.utf8))
        #expect(decoded == (try await Expected.factorization(probable, bound: "1000")))
        #expect(decoded.cofactorStatus == .probablePrime && decoded.complete && decoded.certainty == .probable)
    }

    @Test func isPrimeTextAndPluginShapedJSON() async throws {
        #expect(try Tool.run(["is-prime", "1301081"]).stdout == "1301081: prime\n")
        #expect(try Tool.run(["is-prime", "12"]).stdout == "12: not prime; divisors: 1 2 3 4 6 12\n")
        let json = try Tool.run(["is-prime", "--json", "6801534321"])
        #expect(json.status == 0)
        #expect(json.stdout == #"{"candidate":"6801534321","isPrime":false,"complete":true,"progress":100,"factors":["1","3","41","123","55297027","165891081","2267178107","6801534321"],"certainty":"proven"}"# + "\n")
        let prime = try Tool.run(["is-prime", "--json", "179402471"])
        let decoded = try JSONDecoder().decode(PrimalityResult.self, from: Data(prime.stdout.utf8))
        let expected = try await Expected.primality("179402471")
        #expect(decoded.isPrime == expected.isPrime && decoded.factors == expected.factors && decoded.factors == [])
    }

    @Test func isPrimeAnswersAreExitStatusesOnlyWhenAsked() throws {
        #expect(try Tool.run(["is-prime", "12"]).status == 0)
        #expect(try Tool.run(["is-prime", "--exit-status", "2147483647"]).status == 0)
        #expect(try Tool.run(["is-prime", "--exit-status", "2147483649"]).status == 3)
    }
}
