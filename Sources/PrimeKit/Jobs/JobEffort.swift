import Synchronization

/// The effort limits of a complete job, and the running time it has had so far. Most jobs have none (their
/// ``Job/effort`` is nil); a job given a limit, or restored from a checkpoint that carries a time limit, has one.
final class JobEffort: Sendable {
    /// The ECM level limit in digits (0: none).
    let ecmDigits: Int
    /// The work limit of the stages after trial division, in kernel units (0: none).
    let workLimit: UInt64
    /// The running time after which the job concludes with its partial answer, in nanoseconds (nil: none).
    let timeLimit: Int64?
    /// Nanoseconds the job has run on workers so far (across checkpoints when it carries a time limit).
    let running: Atomic<Int64>

    init(ecmDigits: Int, workLimit: UInt64, timeLimit: Int64?, running: Int64 = 0) {
        self.ecmDigits = ecmDigits
        self.workLimit = workLimit
        self.timeLimit = timeLimit
        self.running = Atomic(running)
    }

    /// The effort of a request in complete mode, validated; nil when it sets no limit.
    /// - Throws: ``PrimeKitError`` `invalidOptions` for an ECM level outside 1...70, a work limit of 0 or a time
    ///   limit that is not positive.
    static func make(_ request: borrowing JobRequest) throws(PrimeKitError) -> JobEffort? {
        if let digits = request.ecmDigits, !(1...70).contains(digits) {
            throw PrimeKitError(code: .invalidOptions, message: "ecmDigits must be 1 to 70, not \(digits)")
        }
        if request.workLimit == 0 {
            throw PrimeKitError(code: .invalidOptions, message: "workLimit must be at least 1")
        }
        if let limit = request.timeLimit, limit <= .zero {
            throw PrimeKitError(code: .invalidOptions, message: "timeLimit must be positive")
        }
        let checkpoint = request.checkpoint
        let timeLimit = request.timeLimit.map { Scheduler.nanoseconds($0, floor: 1) } ?? checkpoint?.timeLimit
        guard request.mode == .complete,
              request.ecmDigits != nil || request.workLimit != nil || timeLimit != nil else { return nil }
        // A restored job's ECM and work limits are in its kernel checkpoint; only the time travels in the envelope.
        return JobEffort(ecmDigits: checkpoint == nil ? request.ecmDigits ?? 0 : 0,
                         workLimit: checkpoint == nil ? request.workLimit ?? 0 : 0, timeLimit: timeLimit,
                         running: checkpoint?.runningTime ?? 0)
    }

    /// Whether the answer may come from the kernel's batch call: no work or time limit (an ECM level limit never
    /// stops a part below 2^128, which is all the batch call sees).
    var allowsWordAnswer: Bool { workLimit == 0 && timeLimit == nil }

    /// Adds a slice's running time; true when the job has now used up its time limit.
    func add(_ elapsed: Duration) -> Bool {
        let total = running.add(Scheduler.nanoseconds(elapsed, floor: 0), ordering: .relaxed).newValue
        guard let timeLimit else { return false }
        return total >= timeLimit
    }

    /// Whether the time limit is used up.
    var expired: Bool {
        guard let timeLimit else { return false }
        return running.load(ordering: .relaxed) >= timeLimit
    }
}
