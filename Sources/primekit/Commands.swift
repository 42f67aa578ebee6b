import ArgumentParser
import Foundation
import PrimeKit

@main
struct Primekit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "primekit",
        abstract: "Factor numbers of any size completely (or by trial division over a range), and say whether they are prime.",
        discussion: """
            Long work shows a progress bar on standard error when it is a terminal. Ctrl-C (or SIGTERM) stops at \
            the next slice of work and writes a checkpoint file; `primekit resume FILE` continues it, here or on \
            another machine, to the same answer.

            Examples:
              primekit factor 600851475143 18446744073709551617
              primekit factor --exponents 1024
              primekit factor --json 12354962
              seq 2 100 | primekit factor
              primekit is-prime 1301081
              primekit is-prime --exit-status 2147483647 && echo prime
              primekit factor --bound 1000000 --checkpoint big.checkpoint 170141183460469231731687303715884105727
              primekit resume big.checkpoint

            Exit status:
              0    success
              1    an error: an invalid candidate (the others are still answered), a failed job
              2    usage error: unknown option, missing or malformed argument; a checkpoint file that is refused
              3    is-prime --exit-status: not prime
              4    is-prime --exit-status: unknown (the remainder was too long for a primality test)
              130  interrupted by Ctrl-C or SIGTERM (a checkpoint was written when work was left)
            """,
        version: Primekit.version,
        subcommands: [Factor.self, IsPrime.self, Resume.self, Serve.self, Bench.self]
    )

    static let version = "primekit \(PrimeKitVersion.package) (kernel \(PrimeKitVersion.kernel))"

    /// Parses the command line, runs the command and exits with the documented statuses.
    static func main() async {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let range = RangeRun.plain(arguments) { Foundation.exit(await range.run()) }
        // `factor` reading numbers from standard input, with no option but --exponents, starts nothing it does
        // not need: no argument parser, no engine, no tasks (PlainFactor.swift).
        if arguments == ["factor"] || arguments == ["factor", "--exponents"] {
            switch PlainFactor.run(exponents: arguments.count == 2) {
            case .finished(let status): Foundation.exit(status)
            case .handOver(let prefix): Factor.standardInputPrefix = prefix
            }
        }
        // `factor` with numbers on the command line (and no option but --exponents before them) goes the same way
        // when the batch path takes every number.
        if arguments.count > 1, arguments[0] == "factor" {
            let exponents = arguments[1] == "--exponents"
            let numbers = arguments[(exponents ? 2 : 1)...]
            if !numbers.isEmpty, let status = PlainFactor.run(arguments: numbers, exponents: exponents) {
                Foundation.exit(status)
            }
        }
        // The argument parser takes time growing with the square of the argument count; `factor`'s trailing
        // numbers are taken off before it runs and handed to the command directly.
        if arguments.first == "factor" {
            let (parsed, trailing) = Factor.splitTrailingNumbers(arguments)
            arguments = parsed
            Factor.trailingNumbers = trailing
        }
        let status: Int32
        do {
            var command = try parseAsRoot(NegativeNumbers.protect(arguments))
            if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            status = ExitStatus.ok
        } catch let error as CLIError {
            reportError(error.message)
            status = error.status
        } catch {
            let code = exitCode(for: error)
            let message = fullMessage(for: error).replacingOccurrences(of: NegativeNumbers.marker, with: "")
            if code == .success {
                if !message.isEmpty { print(message) }
                status = ExitStatus.ok
            } else if code == .validationFailure {
                FileHandle.standardError.write(Data((message + "\n").utf8))
                status = ExitStatus.usage
            } else {
                if !message.isEmpty { FileHandle.standardError.write(Data((message + "\n").utf8)) }
                status = code.rawValue
            }
        }
        Foundation.exit(status)
    }
}

/// `factor`, `is-prime` and `resume` end through this: a run's status becomes the process's.
func finish(_ status: Int32) throws {
    if status != ExitStatus.ok { throw ExitCode(status) }
}

struct Factor: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the prime factors of each number, like coreutils factor.",
        discussion: """
            Each answer is a line `N: p p p` (a prime dividing N twice is printed twice), factored completely, \
            as coreutils factor prints it. A prime above 2^64 passes BPSW but is not proven; it is named again at \
            the end: `N: p q [q: probable prime]`. With --ecm-digits, a part of a number of 2^128 or more left \
            unsplit at that ECM level ends the line as `[cofactor C: composite, no factor found by ECM to about D \
            digits (--ecm-digits)]`; with --time-limit S, a part still unsplit after S seconds of running time ends it \
            as `[cofactor C: composite, not split within the time limit (--time-limit S); tried: …]`, saying what \
            was tried on it (trial division to B, the ECM curves and their B1 and B2).

            With --bound or --from, factor is trial division over that range only; when it stops before the \
            number is fully factored, the line ends with the part left over and what is known about it:
              N: 3 [cofactor C: probable prime]
              N: 3 [cofactor C: composite, its factors are outside the divisor range tried]
              N: 3 [cofactor C: not classified, too long for a primality test]

            With no numbers, reads whitespace-separated numbers from standard input (any size up to \(EngineSettings().maxDigits) \
            digits). An invalid number gets its own error line on standard error; the others are still answered and \
            the exit status is 1. A number that starts with "-" is taken as a (negative, so invalid) number; \
            "--" ends the options.

            Examples:
              primekit factor 600851475143 18446744073709551617
              primekit factor --exponents 1024 360
              primekit factor --json 12354962
              primekit factor < numbers.txt
              primekit factor --range 1000000000000 1000000100000
            """)

    @Flag(help: "One JSON factor result per line (big integers as strings).")
    var json = false

    @Flag(help: "Print repeated primes once, as p^e (like GNU factor -h, --exponents).")
    var exponents = false

    @OptionGroup var range: RangeOptions
    @OptionGroup var run: RunOptions

    @Option(name: .customLong("range"), parsing: .upToNextOption, help: ArgumentHelp(
        "Factor every number from A to B (both included, 2 <= A <= B), in order, like `seq A B | factor`.",
        valueName: "A B"))
    var rangeEnds: [String] = []

    @Option(name: .customLong("ecm-digits"), help: ArgumentHelp(
        "Effort limit for numbers of 2^128 and more: stop splitting a part once the ECM curves expected to find a factor of D digits are done (15 to 70; default: no limit).",
        valueName: "D"))
    var ecmDigits: Int?

    @Option(name: .customLong("time-limit"), help: ArgumentHelp(
        "Time limit per number of 2^128 and more: after this much running time, stop and print the primes found and the parts left, with what was tried on them (seconds, e.g. 2 or 0.5; default: no limit).",
        valueName: "seconds"))
    var timeLimit: String?

    @Option(name: .long, help: ArgumentHelp("Continue the run saved in a checkpoint file (same as primekit resume FILE).",
                                            valueName: "file"))
    var resume: String?

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The numbers to factor (default: read standard input).",
                                                             valueName: "N"))
    var numbers: [String] = []

    /// Numbers at the end of the command line, taken off before parsing (see ``splitTrailingNumbers(_:)``).
    nonisolated(unsafe) static var trailingNumbers: [String] = []

    /// Splits `factor`'s arguments into those the parser must see and the run of plain decimal numbers that ends
    /// them (every number of that run is a number to factor: the value of an option such as `--bound 100` right
    /// before the run stays with the parser).
    static func splitTrailingNumbers(_ arguments: [String]) -> ([String], [String]) {
        // --range takes the numbers after it (A B); any more are refused by the parser's checks.
        if arguments.prefix(while: { $0 != "--" }).contains("--range") { return (arguments, []) }
        var start = arguments.count
        while start > 1, let first = arguments[start - 1].utf8.first, first >= 0x30, first <= 0x39,
              arguments[start - 1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            start -= 1
        }
        let takesValue: Set<String> = ["--bound", "--from", "--checkpoint", "--resume", "--ecm-digits", "--time-limit"]
        if start > 1, start < arguments.count, takesValue.contains(arguments[start - 1]) { start += 1 }
        return (Array(arguments[..<start]), Array(arguments[start...]))
    }

    func validate() throws {
        try NegativeNumbers.rejectOptions(in: numbers)
        if !rangeEnds.isEmpty { try validateRange() }
        if resume != nil, !numbers.isEmpty || !Self.trailingNumbers.isEmpty {
            throw ValidationError("--resume takes no numbers")
        }
        if let ecmDigits {
            guard (1...70).contains(ecmDigits) else { throw ValidationError("--ecm-digits must be 1 to 70") }
            if range.from != nil || range.bound != nil {
                throw ValidationError("--ecm-digits applies to complete factorization, not to --from/--bound")
            }
        }
        if let timeLimit {
            guard RunSettings.timeLimit(parsing: timeLimit) != nil else {
                throw ValidationError("--time-limit must be a number of seconds from 0.001 to 31536000")
            }
            if range.from != nil || range.bound != nil {
                throw ValidationError("--time-limit applies to complete factorization, not to --from/--bound")
            }
        }
    }

    /// `--range A B`: two numbers, and nothing else to factor or to limit.
    private func validateRange() throws {
        guard rangeEnds.count == 2 else {
            throw ValidationError("--range takes two numbers, the first and the last: --range A B")
        }
        if !numbers.isEmpty || !Self.trailingNumbers.isEmpty {
            throw ValidationError("--range takes no other numbers (and does not read standard input)")
        }
        for (given, name) in [(range.from != nil, "--from"), (range.bound != nil, "--bound"),
                              (resume != nil, "--resume"), (ecmDigits != nil, "--ecm-digits"),
                              (timeLimit != nil, "--time-limit")] where given {
            throw ValidationError("--range factors every number completely; it cannot be combined with \(name)")
        }
        let ends = rangeEnds.map(NegativeNumbers.plain)
        if let problem = RangeRun.problem(first: ends[0], last: ends[1]) { throw ValidationError(problem) }
    }

    func run() async throws {
        if let resume { return try await Resume.continueRun(from: NegativeNumbers.plain(resume), options: run) }
        var settings = RunSettings(command: .factor)
        settings.json = json
        settings.exponents = exponents
        if !rangeEnds.isEmpty {
            let ends = rangeEnds.map(NegativeNumbers.plain)
            let range = RangeRun(settings: settings, progressMode: run.progressMode, checkpoint: run.checkpoint,
                                 work: [.span(first: ends[0], last: ends[1])], failed: false, resumedFrom: nil)
            return try finish(await range.run())
        }
        settings.from = range.from
        settings.bound = range.bound
        settings.ecmDigits = ecmDigits
        settings.timeLimit = timeLimit
        let all = NegativeNumbers.values(numbers) + Self.trailingNumbers
        let items = numbers.isEmpty && Self.trailingNumbers.isEmpty ? nil : all.map(WorkItem.number)
        try finish(await Runner(settings: settings, options: run, items: items, prefix: Self.standardInputPrefix).run())
    }

    /// Standard input the plain path (PlainFactor) read before handing the run over.
    nonisolated(unsafe) static var standardInputPrefix: StandardInputPrefix?
}

struct IsPrime: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "is-prime",
        abstract: "Say whether a number is prime, with all its divisors when it is not.",
        discussion: """
            Prints `N: prime`, `N: probable prime` (a remainder above 2^64 that passes BPSW), `N: not prime; \
            divisors: 1 … N`, or `N: unknown …`. With --json, prints the plugin-shaped answer \
            {candidate, isPrime, complete, progress, factors}, where factors lists every divisor (1 and N \
            included, [] for a prime), or divisorCount when there are more than 100,000.

            The answer is not the exit status unless --exit-status is given: then 0 means prime, 3 not prime, \
            4 unknown.

            Examples:
              primekit is-prime 1301081
              primekit is-prime --json 6801534321
              primekit is-prime --exit-status 2147483647 && echo prime
            """)

    @Flag(help: "Print the answer as one JSON object.")
    var json = false

    @Flag(help: "Exit with 0 when the number is prime, 3 when it is not, 4 when unknown.")
    var exitStatus = false

    @OptionGroup var range: RangeOptions
    @OptionGroup var run: RunOptions

    @Option(name: .long, help: ArgumentHelp("Continue the run saved in a checkpoint file (same as primekit resume FILE).",
                                            valueName: "file"))
    var resume: String?

    @Argument(parsing: .allUnrecognized, help: ArgumentHelp("The number to test.", valueName: "N"))
    var numbers: [String] = []

    func validate() throws {
        try NegativeNumbers.rejectOptions(in: numbers)
        if resume != nil {
            if !numbers.isEmpty { throw ValidationError("--resume takes no number") }
        } else if NegativeNumbers.values(numbers).isEmpty {
            throw ValidationError("Missing expected argument '<N>'")
        } else if NegativeNumbers.values(numbers).count > 1 {
            throw ValidationError("is-prime takes one number; use `primekit factor` for several")
        }
    }

    func run() async throws {
        if let resume { return try await Resume.continueRun(from: NegativeNumbers.plain(resume), options: run) }
        var settings = RunSettings(command: .isPrime)
        settings.json = json
        settings.exitStatus = exitStatus
        settings.from = range.from
        settings.bound = range.bound
        let items = NegativeNumbers.values(numbers).map(WorkItem.number)
        try finish(await Runner(settings: settings, options: run, items: items).run())
    }
}

struct Resume: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Continue a run from the checkpoint file Ctrl-C or SIGTERM wrote.",
        discussion: """
            The run continues where it stopped, in this or another process or machine, and prints the rest of \
            its answers in the format it was started with. Interrupting it again writes a new checkpoint (by \
            default over the same file).

            With --check, the files are only validated, as resuming would validate them, and nothing runs: the \
            exit status is 0 when every file is usable; otherwise each refused file gets one line on standard \
            error and the exit status is 2.

            Examples:
              primekit resume primekit-12345.checkpoint
              primekit resume --check *.checkpoint
            """)

    @OptionGroup var run: RunOptions

    @Flag(help: "Only validate the files (several may be given); run nothing.")
    var check = false

    @Argument(help: ArgumentHelp("The checkpoint file (with --check, files).", valueName: "file"))
    var files: [String]

    func validate() throws {
        if !check, files.count != 1 {
            throw ValidationError(files.isEmpty ? "Missing expected argument '<file>'"
                                                : "resume takes one checkpoint file (--check takes several)")
        }
    }

    func run() async throws {
        let paths = files.map(NegativeNumbers.plain)
        if check {
            var refused = false
            for path in paths {
                do {
                    _ = try CheckpointFile.read(path: path)
                } catch {
                    reportError(error.message)
                    refused = true
                }
            }
            return try finish(refused ? ExitStatus.usage : ExitStatus.ok)
        }
        try await Self.continueRun(from: paths[0], options: run)
    }

    static func continueRun(from path: String, options: RunOptions) async throws {
        let file = try CheckpointFile.read(path: path)
        if !file.ranges.isEmpty {
            let range = RangeRun(settings: file.settings, progressMode: options.progressMode,
                                 checkpoint: options.checkpoint, work: file.ranges, failed: file.failed, resumedFrom: path)
            return try finish(await range.run())
        }
        let runner = Runner(settings: file.settings, options: options, items: file.items, failed: file.failed,
                            resumedFrom: path)
        try finish(await runner.run())
    }
}
