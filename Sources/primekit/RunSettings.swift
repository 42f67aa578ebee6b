import ArgumentParser
import PrimeKitBridge

/// An error the tool reports as `primekit: <message>` with an exit status (1 unless said otherwise).
struct CLIError: Error, Sendable {
    let message: String
    let status: Int32

    init(_ message: String, status: Int32 = ExitStatus.error) {
        self.message = message
        self.status = status
    }
}

/// The documented exit statuses.
enum ExitStatus {
    static let ok: Int32 = 0
    /// Something failed: an invalid candidate, a job that failed.
    static let error: Int32 = 1
    /// The command line is wrong (unknown option, missing argument, bad option value), or the checkpoint file it
    /// names is refused (missing, unreadable, changed, damaged, of another version).
    static let usage: Int32 = 2
    /// `is-prime --exit-status`: the candidate is not prime.
    static let notPrime: Int32 = 3
    /// `is-prime --exit-status`: primality is unknown (the remainder was too long to test).
    static let unknown: Int32 = 4
    /// Interrupted by SIGINT or SIGTERM (128 + 2).
    static let interrupted: Int32 = 130
}

/// What a run computes and how it prints it (everything a checkpoint must remember to continue the same way).
struct RunSettings: Sendable {
    enum Command: String, Sendable {
        case factor
        case isPrime = "is-prime"
    }

    var command: Command
    var json = false
    var exponents = false
    var exitStatus = false
    var from: String?
    var bound: String?
    /// `factor`'s effort limit for numbers factored completely (ECM level in digits), if any.
    var ecmDigits: Int?
    /// `factor`'s time limit per number factored completely, as written (`--time-limit`, seconds), if any.
    var timeLimit: String?

    /// The time limit as a duration.
    var timeLimitDuration: Duration? {
        timeLimit.flatMap(Self.timeLimit(parsing:))
    }

    /// Seconds written as a decimal number (`2`, `0.5`), at least a millisecond and at most a year; else nil.
    static func timeLimit(parsing text: String) -> Duration? {
        guard let seconds = Double(text), seconds.isFinite, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }),
              seconds >= 0.001, seconds <= 31_536_000 else { return nil }
        return .milliseconds(Int64((seconds * 1000).rounded()))
    }
}

/// How the progress bar is shown.
enum ProgressMode: Sendable {
    /// Only when standard error is a terminal.
    case automatic
    case always
    case never
}

/// Options every computing command shares: progress and checkpoints.
struct RunOptions: ParsableArguments {
    @Flag(inversion: .prefixedNo,
          help: "Show a progress bar on standard error (default: only when it is a terminal).")
    var progress: Bool?

    @Option(name: .customLong("checkpoint"), help: ArgumentHelp(
        "Where Ctrl-C or SIGTERM writes the checkpoint (default: ./primekit-<pid>.checkpoint, or the file being resumed).",
        valueName: "file"))
    var checkpointText: String?

    var checkpoint: String? { checkpointText.map(NegativeNumbers.plain) }

    @Flag(help: """
        Accepted and ignored: a number whose divisor range is long enough is split over all cores anyway.
        """)
    var parallel = false

    var progressMode: ProgressMode {
        switch progress {
        case nil: .automatic
        case true?: .always
        case false?: .never
        }
    }
}

/// The range options of `factor` and `is-prime`.
struct RangeOptions: ParsableArguments {
    @Option(name: .customLong("bound"), help: ArgumentHelp(
        "The last trial divisor (default: the square root of the number, at most 2^32).", valueName: "B"))
    var boundText: String?

    @Option(name: .customLong("from"), help: ArgumentHelp("The first trial divisor (default: 2).", valueName: "A"))
    var fromText: String?

    var bound: String? { boundText.map(NegativeNumbers.plain) }
    var from: String? { fromText.map(NegativeNumbers.plain) }

    func validate() throws {
        for (name, value) in [("--bound", bound), ("--from", from)] {
            if let value, let problem = name == "--from" ? CandidateCheck.fromProblem(value)
                : CandidateCheck.optionProblem(value) {
                throw ValidationError("invalid \(name) \"\(value.prefix(40))\": \(problem)")
            }
        }
    }
}
