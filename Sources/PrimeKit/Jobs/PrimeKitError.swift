/// The one error type PrimeKit throws (besides `CancellationError` for cancellation).
///
/// `code` is stable across releases: programs and the bridge switch on it; `message` is for people and may change.
public struct PrimeKitError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A stable error code. Values 1–15 mirror the kernel's `pk_status` errors; 100 and up are engine errors.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The stable numeric value.
        public let rawValue: Int

        /// Creates a code from its stable numeric value.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }

        /// A required argument was missing or malformed.
        public static let invalidArgument = Code(rawValue: 1)
        /// The candidate is not a canonical decimal integer (`^(0|[1-9][0-9]*)$`).
        public static let invalidCandidate = Code(rawValue: 2)
        /// The candidate is below 2.
        public static let candidateOutOfRange = Code(rawValue: 3)
        /// The candidate has more digits than the limit.
        public static let candidateTooLarge = Code(rawValue: 4)
        /// A divisor range option is malformed or out of range (`from` above `bound`, ...).
        public static let invalidOptions = Code(rawValue: 5)
        /// Memory could not be allocated.
        public static let outOfMemory = Code(rawValue: 6)
        /// The answer asked for needs a finished job.
        public static let notFinished = Code(rawValue: 8)
        /// The factorization is not complete, so the divisors are not known.
        public static let incompleteFactorization = Code(rawValue: 9)
        /// More divisors than allowed.
        public static let tooManyDivisors = Code(rawValue: 10)
        /// A checkpoint is malformed, truncated or fails its checksum.
        public static let invalidCheckpoint = Code(rawValue: 12)
        /// A checkpoint of an unknown format version.
        public static let unsupportedCheckpointVersion = Code(rawValue: 13)
        /// A well-formed checkpoint whose contents contradict each other.
        public static let inconsistentCheckpoint = Code(rawValue: 14)
        /// An internal invariant failed; please report it.
        public static let internalError = Code(rawValue: 15)
        /// The job is not in a state that allows this operation.
        public static let invalidState = Code(rawValue: 101)
        /// Adding the dependency would make a cycle.
        public static let dependencyCycle = Code(rawValue: 102)
        /// The job belongs to another queue.
        public static let foreignJob = Code(rawValue: 103)
        /// The queue has been torn down and accepts no more work.
        public static let queueShutDown = Code(rawValue: 104)

        public var description: String {
            switch self {
            case .invalidArgument: "invalidArgument"
            case .invalidCandidate: "invalidCandidate"
            case .candidateOutOfRange: "candidateOutOfRange"
            case .candidateTooLarge: "candidateTooLarge"
            case .invalidOptions: "invalidOptions"
            case .outOfMemory: "outOfMemory"
            case .notFinished: "notFinished"
            case .incompleteFactorization: "incompleteFactorization"
            case .tooManyDivisors: "tooManyDivisors"
            case .invalidCheckpoint: "invalidCheckpoint"
            case .unsupportedCheckpointVersion: "unsupportedCheckpointVersion"
            case .inconsistentCheckpoint: "inconsistentCheckpoint"
            case .internalError: "internalError"
            case .invalidState: "invalidState"
            case .dependencyCycle: "dependencyCycle"
            case .foreignJob: "foreignJob"
            case .queueShutDown: "queueShutDown"
            default: "code\(rawValue)"
            }
        }
    }

    /// The stable code.
    public let code: Code
    /// A short English description.
    public let message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: The stable code.
    ///   - message: A short English description.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String {
        "PrimeKitError(\(code)): \(message)"
    }
}
