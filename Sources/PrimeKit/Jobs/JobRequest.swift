/// What to submit to a ``JobQueue``: a `factor` or `isPrime` job for a candidate, or a job restored from a
/// ``Checkpoint``, with its priority, progress interval and dependencies. Without `from` or `bound` a job factors
/// completely; with either it is trial division over that range.
///
/// ```swift
/// let job = try queue.submit(.isPrime(1301081))
/// let big = try queue.submit(.factor("600851475143", bound: "10000").priority(.high))
/// let limited = try queue.submit(.factor(n).effort(ecmDigits: 30, timeLimit: .seconds(10)))
/// ```
public struct JobRequest: Sendable {
    // A request is copied several times on its way into a job (a million tiny jobs are a million requests): the
    // fields every request sets are stored here, the rest in a shared box that a plain request does not have.

    /// What the job computes (for a restored job: the checkpoint's kind).
    public var kind: JobKind
    /// The candidate as decimal text (empty for a restored job until it is submitted).
    public var candidate: String {
        get { submitted.decimal }
        set { submitted = JobCandidate(text: newValue, value: nil) }
    }
    /// The candidate as given: text (not parsed here), or an integer that fits 64 bits (with empty text: written out
    /// only when `candidate` is read, and never parsed back).
    private(set) var submitted: JobCandidate
    /// Scheduling priority.
    public var priority: JobPriority = .normal
    /// Whether the queue may cut a large divisor range into pieces that run on several workers at once.
    public var allowsSplitting = true
    /// Whether a trial-division `factor` job's result carries the job's final checkpoint
    /// (``FactorResult/finalCheckpoint``), so that ``Checkpoint/mergingDivisorPieces(_:)`` can merge it with the
    /// other pieces of its range. Other jobs ignore it. Default false.
    public var keepsFinalCheckpoint = false
    /// Whether the job factors its candidate completely (trial division, then primality, rho and ECM until every
    /// part is prime) instead of by trial division alone. Ignored when `from` or `bound` is given: a divisor range
    /// always means trial division over it. Default true; ``trialDivision()`` sets it to false (trial division up
    /// to the default bound, ⌊√n⌋ capped at 2^32).
    public var complete = true
    /// The fields below, when any was set; nil for a plain request (none was).
    private var options: Options?

    /// The first trial divisor, decimal, at least 2; nil means 2 ("0" and "1" are refused with `invalidOptions`).
    public var from: String? {
        get { options?.from }
        set { change { $0.from = newValue } }
    }
    /// The last trial divisor (inclusive), decimal; nil means floor(sqrt(n)) capped at 2^32.
    public var bound: String? {
        get { options?.bound }
        set { change { $0.bound = newValue } }
    }
    /// The checkpoint to continue from, if any (then `candidate`, `from` and `bound` come from it).
    public var checkpoint: Checkpoint? {
        get { options?.checkpoint }
        set { change { $0.checkpoint = newValue } }
    }
    /// The shortest time between two progress snapshots (default 250 ms; an ``Engine`` gives a request that sets
    /// none its ``EngineSettings/progressInterval``).
    public var progressInterval: Duration {
        @inline(__always) get { chosenProgressInterval ?? .milliseconds(250) }
        set { change { $0.chosenProgressInterval = newValue } }
    }
    /// The progress interval the caller set, if any (even one equal to the default).
    var chosenProgressInterval: Duration? { options?.chosenProgressInterval }
    /// Jobs of the same queue that must succeed before this one starts.
    public var dependencies: [Job] {
        get { options?.dependencies ?? [] }
        set { change { $0.dependencies = newValue } }
    }
    /// The effort limit of a complete job: stop splitting a part above 128 bits once the ECM curves expected to
    /// find a factor of this many digits are done (1...70, rounded up to a level 15, 20, ..., 70; nil: no limit).
    /// The parts left are listed in ``FactorResult/parts``.
    public var ecmDigits: Int? {
        get { options?.ecmDigits }
        set { change { $0.ecmDigits = newValue } }
    }
    /// The effort limit of a complete job in kernel work units spent after trial division (nil: no limit).
    public var workLimit: UInt64? {
        get { options?.workLimit }
        set { change { $0.workLimit = newValue } }
    }
    /// The running time (time on a worker, not waiting time) after which a complete job stops splitting and
    /// succeeds with the partial answer (nil: no limit).
    public var timeLimit: Duration? {
        get { options?.timeLimit }
        set { change { $0.timeLimit = newValue } }
    }
    /// What the job computes: complete unless ``complete`` is false or a divisor range is given (a restored job
    /// takes its mode from its checkpoint).
    var mode: FactorMode {
        @inline(__always) get {
            guard let options else { return complete ? .complete : .trialDivision }
            if let checkpoint = options.checkpoint { return checkpoint.mode }
            return complete && options.from == nil && options.bound == nil ? .complete : .trialDivision
        }
    }
    /// A `factorRange` request's first and last number as given (decimal); nil for other requests.
    public internal(set) var range: (first: String, last: String)? {
        get { rangeEnds.map { ($0.first, $0.last) } }
        set { rangeEnds = newValue.map { RangeEnds(first: $0.first, last: $0.last) } }
    }
    private(set) var rangeEnds: RangeEnds? {
        get { options?.rangeEnds }
        set { change { $0.rangeEnds = newValue } }
    }

    /// True when no field of the box was ever set: integer or text candidate, kind, priority, splitting and
    /// completeness only — no divisor range, checkpoint, dependencies, effort limits, progress interval or range.
    var isPlain: Bool { options == nil }

    /// The rarely set fields. Immutable, so requests that share one stay values: a change makes a new box.
    private final class Options: Sendable {
        let from: String?
        let bound: String?
        let checkpoint: Checkpoint?
        let chosenProgressInterval: Duration?
        let dependencies: [Job]
        let ecmDigits: Int?
        let workLimit: UInt64?
        let timeLimit: Duration?
        let rangeEnds: RangeEnds?

        init(_ fields: Fields) {
            from = fields.from
            bound = fields.bound
            checkpoint = fields.checkpoint
            chosenProgressInterval = fields.chosenProgressInterval
            dependencies = fields.dependencies
            ecmDigits = fields.ecmDigits
            workLimit = fields.workLimit
            timeLimit = fields.timeLimit
            rangeEnds = fields.rangeEnds
        }

        var fields: Fields {
            Fields(from: from, bound: bound, checkpoint: checkpoint, chosenProgressInterval: chosenProgressInterval,
                   dependencies: dependencies, ecmDigits: ecmDigits, workLimit: workLimit, timeLimit: timeLimit,
                   rangeEnds: rangeEnds)
        }
    }

    /// The box's fields as one value to change.
    private struct Fields {
        var from: String?
        var bound: String?
        var checkpoint: Checkpoint?
        var chosenProgressInterval: Duration?
        var dependencies: [Job] = []
        var ecmDigits: Int?
        var workLimit: UInt64?
        var timeLimit: Duration?
        var rangeEnds: RangeEnds?
    }

    /// Sets fields of the box (a new one: others may share the old).
    private mutating func change(_ body: (inout Fields) -> Void) {
        var fields = options?.fields ?? Fields()
        body(&fields)
        options = Options(fields)
    }

    @usableFromInline
    init(kind: JobKind, candidate: String, from: String?, bound: String?) {
        self.kind = kind
        self.submitted = JobCandidate(text: candidate, value: nil)
        if let from { self.from = from }
        if let bound { self.bound = bound }
    }

    /// A request for an integer that fits 64 bits: kept as the integer.
    @usableFromInline
    init(kind: JobKind, integer value: UInt64, from: UInt64?, bound: UInt64?) {
        self.kind = kind
        self.submitted = JobCandidate(text: "", value: value)
        if let from { self.from = String(from) }
        if let bound { self.bound = String(bound) }
    }

    /// A request for any integer: kept as the integer when it fits 64 bits (the check is specialised for the
    /// caller's type, which is why the factories below are inlinable), else as its text.
    @inlinable
    static func make<T: BinaryInteger>(_ kind: JobKind, _ candidate: T, from: UInt64?, bound: UInt64?) -> JobRequest {
        if let value = UInt64(exactly: candidate) {
            return JobRequest(kind: kind, integer: value, from: from, bound: bound)
        }
        return JobRequest(kind: kind, candidate: String(candidate), from: from.map { String($0) },
                          bound: bound.map { String($0) })
    }

    /// A factorization of `candidate`: complete, or trial division over `from...bound` when either is given.
    /// - Parameters:
    ///   - candidate: A canonical decimal integer of at least 2.
    ///   - from: The first trial divisor (default 2).
    ///   - bound: The last trial divisor (default floor(sqrt(n)) capped at 2^32).
    public static func factor(_ candidate: String, from: String? = nil, bound: String? = nil) -> JobRequest {
        JobRequest(kind: .factor, candidate: candidate, from: from, bound: bound)
    }

    /// A factorization of an integer candidate.
    @inlinable
    public static func factor<T: BinaryInteger>(_ candidate: T, from: UInt64? = nil, bound: UInt64? = nil)
        -> JobRequest
    {
        make(.factor, candidate, from: from, bound: bound)
    }

    /// A primality answer for `candidate` (``PrimalityResult``): from the complete factorization, or
    /// from trial division over `from...bound` when either is given.
    /// - Parameters:
    ///   - candidate: A canonical decimal integer of at least 2.
    ///   - from: The first trial divisor (default 2).
    ///   - bound: The last trial divisor (default floor(sqrt(n)) capped at 2^32).
    public static func isPrime(_ candidate: String, from: String? = nil, bound: String? = nil) -> JobRequest {
        JobRequest(kind: .isPrime, candidate: candidate, from: from, bound: bound)
    }

    /// A primality answer for an integer candidate.
    @inlinable
    public static func isPrime<T: BinaryInteger>(_ candidate: T, from: UInt64? = nil, bound: UInt64? = nil)
        -> JobRequest
    {
        make(.isPrime, candidate, from: from, bound: bound)
    }

    /// The complete factorization of every number from `first` to `last`, delivered in order as blocks
    /// (``Job/rangeBlocks``); the job's result is a ``RangeSummary``. The numbers must satisfy 2 <= first <= last,
    /// ends of at most the queue's `maxDigits` digits (else `candidateTooLarge`) and fewer than 2^128 numbers:
    /// `first` below 2 is refused with `candidateOutOfRange`, `first > last` and a longer range with
    /// `invalidOptions`. Below 2^64 the range sieve answers (every prime proven), to 2^128 the kernel's batch call,
    /// beyond a complete job per number; above 2^64 a prime is probable (BPSW), as ``RangeBlock/factors(at:)`` says.
    /// - Parameters:
    ///   - first: The first number, canonical decimal.
    ///   - last: The last number (inclusive), canonical decimal.
    public static func factorRange(_ first: String, _ last: String) -> JobRequest {
        var request = JobRequest(kind: .factorRange, candidate: "", from: nil, bound: nil)
        request.rangeEnds = RangeEnds(first: first, last: last)
        return request
    }

    /// The complete factorization of every number from `first` to `last` (see ``factorRange(_:_:)-(String,String)``).
    public static func factorRange(_ first: UInt64, _ last: UInt64) -> JobRequest {
        factorRange(String(first), String(last))
    }

    /// A job that continues from a checkpoint (of a paused, cancelled or interrupted job, from any process).
    public static func restore(_ checkpoint: Checkpoint) -> JobRequest {
        var request = JobRequest(kind: checkpoint.kind, candidate: "", from: nil, bound: nil)
        request.checkpoint = checkpoint
        return request
    }

    /// This request with another priority.
    public func priority(_ priority: JobPriority) -> JobRequest {
        var copy = self
        copy.priority = priority
        return copy
    }

    /// This request with another progress interval.
    public func progressInterval(_ interval: Duration) -> JobRequest {
        var copy = self
        copy.progressInterval = interval
        return copy
    }

    /// This request depending on more jobs.
    public func dependsOn(_ jobs: Job...) -> JobRequest {
        var copy = self
        copy.dependencies += jobs
        return copy
    }

    /// This request factoring completely (see ``complete``), with an optional ECM effort limit in digits.
    public func complete(ecmDigits: Int? = nil) -> JobRequest {
        var copy = self
        copy.complete = true
        if ecmDigits != nil || copy.ecmDigits != nil { copy.ecmDigits = ecmDigits }
        return copy
    }

    /// This request by trial division alone (no bound given: up to ⌊√n⌋ capped at 2^32), the queue's behaviour
    /// before complete answers became the default.
    public func trialDivision() -> JobRequest {
        var copy = self
        copy.complete = false
        return copy
    }

    /// This request with effort limits for a complete job (see ``ecmDigits``, ``workLimit``, ``timeLimit``); a
    /// limit left nil keeps its current value. The answer at a limit lists the parts left in
    /// ``FactorResult/parts``.
    public func effort(ecmDigits: Int? = nil, workLimit: UInt64? = nil, timeLimit: Duration? = nil) -> JobRequest {
        var copy = self
        if let ecmDigits { copy.ecmDigits = ecmDigits }
        if let workLimit { copy.workLimit = workLimit }
        if let timeLimit { copy.timeLimit = timeLimit }
        return copy
    }

    /// This request with splitting allowed or not.
    public func splitting(_ allowed: Bool) -> JobRequest {
        var copy = self
        copy.allowsSplitting = allowed
        return copy
    }
}

/// A range request's ends as given.
struct RangeEnds: Sendable, Hashable {
    let first: String
    let last: String
}
