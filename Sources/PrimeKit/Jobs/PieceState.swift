import Synchronization

/// One piece of a job's divisor range. A job has one piece unless it was split over several workers.
struct PieceState: Sendable {
    // The flags come last, where they share the words after `progress`.

    /// The piece's own divisor range, if it has one.
    private(set) var range: PieceRange? = nil
    /// The piece's share of the job's work; the shares add up to 1.
    var weight: Double = 1
    /// The kernel job, created on first use.
    var kernel: KernelJob? = nil
    /// Matches the piece's one valid deque entry; older entries are stale and skipped.
    var token: UInt64 = 0
    /// The factors found so far by this piece.
    var factors: [PrimeFactor] = []
    /// The last progress read from the kernel (nothing done before the piece's first slice).
    var progress: KernelProgress {
        get { lastProgress?.value ?? KernelProgress() }
        set { lastProgress = ProgressRecord(newValue) }
    }
    /// Where `progress` is kept: out of line, because every queued job has a piece and most wait with nothing
    /// done — 72 bytes less a job in memory (a million queued jobs, a million pieces).
    private var lastProgress: ProgressRecord? = nil
    /// A worker is stepping the piece right now; nobody else may touch `kernel` (but interrupt it).
    var onWorker = false
    /// The piece has a valid entry in the ready deques.
    var queued = false
    /// The piece's kernel job returned PK_DONE (an ECM share: it is over, or another share found a factor).
    var finished = false
    /// The piece is a share of a complete job's ECM curves (docs/queue.md, "One big job on all cores").
    var ecmShare = false

    /// The piece's first divisor, or nil for the job's own (the kernel's default).
    var from: String? { range?.from }
    /// The piece's last divisor, or nil for the job's own.
    var bound: String? { range?.bound }


    /// The one piece of a job over its whole divisor range, nothing done yet.
    @inline(__always)
    init() {}

    init(from: String?, bound: String?, weight: Double, kernel: KernelJob?, shared: SharedCofactor? = nil,
         run: RangeRun? = nil) {
        self.range = from == nil && bound == nil && shared == nil && run == nil
            ? nil : PieceRange(from: from, bound: bound, shared: shared, run: run)
        self.weight = weight
        self.kernel = kernel
    }

    /// The next divisor to try: the kernel's once it has stepped, else where the piece starts.
    var nextDivisor: UInt64 {
        if progress.nextDivisor != 0 || progress.workDone != 0 { return progress.nextDivisor }
        return from.flatMap { UInt64($0) } ?? 2
    }
}

/// A piece's last progress, immutable (a piece that steps again gets a new one).
final class ProgressRecord: Sendable {
    let value: KernelProgress

    init(_ value: KernelProgress) { self.value = value }
}

/// A job's pieces: the first one stored inline, the rest (a split job's) in an array, so the common one-piece job
/// costs no extra allocation.
struct PieceList: RandomAccessCollection, MutableCollection, Sendable {
    // `tail` first: the one-byte fields after the list in ``JobCore`` then share the words after `head`.
    private var tail: [PieceState]
    private var head: PieceState

    /// One piece.
    init(_ piece: consuming PieceState) {
        head = piece
        tail = []
    }

    /// One piece over the job's whole divisor range, built in place.
    @inline(__always)
    init(whole: ()) {
        head = PieceState()
        tail = []
    }

    /// At least one piece.
    init(_ pieces: [PieceState]) {
        precondition(!pieces.isEmpty, "a job has at least one piece")
        head = pieces[0]
        tail = Array(pieces.dropFirst())
    }

    var startIndex: Int { 0 }
    var endIndex: Int { 1 + tail.count }

    subscript(position: Int) -> PieceState {
        get { position == 0 ? head : tail[position - 1] }
        set { update(position) { $0 = newValue } }
    }

    /// Reads one piece without copying it: the first piece is lent to `body` in place (the subscript's getter
    /// returns a copy, which retains every reference the piece holds).
    @inline(__always)
    func read<R>(_ position: Int, _ body: (PieceState) throws -> R) rethrows -> R {
        position == 0 ? try body(head) : try body(tail[position - 1])
    }

    /// Changes one piece in place. The engine's paths use this rather than `pieces[i].x = …`: that goes through
    /// the subscript's modify coroutine, whose frame (it forwards to the array's own) does not fit the caller's
    /// fixed buffer and is allocated on the heap — once per access, several times per job — while this inlines
    /// to a direct access.
    @inline(__always)
    mutating func update<R>(_ position: Int, _ body: (inout PieceState) throws -> R) rethrows -> R {
        if position == 0 { return try body(&head) }
        return try body(&tail[position - 1])
    }

    /// Changes every piece in place. The rest are touched only when there are any: a loop over `indices` with
    /// ``update(_:_:)`` made the one-piece job's empty `tail` unique first — a new, empty array buffer allocated
    /// and freed on each call.
    @inline(__always)
    mutating func updateAll(_ body: (inout PieceState) -> Void) {
        body(&head)
        guard !tail.isEmpty else { return }
        for index in tail.indices { body(&tail[index]) }
    }
}

/// A piece's own divisor range — a split job's piece, or a job given `from` or `bound` — in a box: most jobs have
/// none, and the box keeps it to one word of every piece (and one reference in each copy of it).
final class PieceRange: Sendable {
    /// The first divisor, or nil for the job's own (the kernel's default).
    let from: String?
    /// The last divisor, or nil for the job's own.
    let bound: String?
    /// What the pieces of a split job share; nil for a job in one piece.
    let shared: SharedCofactor?
    /// A range job's sieve and block buffer (the piece has no `KernelJob`); nil for every other job.
    let run: RangeRun?

    init(from: String?, bound: String?, shared: SharedCofactor? = nil, run: RangeRun? = nil) {
        self.from = from
        self.bound = bound
        self.shared = shared
        self.run = run
    }
}

/// What the pieces of one split job tell each other: every factor any piece found is divided out of the job's
/// cofactor c, and no piece needs a divisor above floor(√c) (above c when the job's range starts past 2, where
/// primes below the range may still divide c). A worker lowers a piece's limit to it before each slice
/// (``apply(to:)``), so a factor found in one piece shortens the others at their next slice, and a piece whose
/// range lies wholly above the limit ends.
///
/// The limit is derived, never stored: a checkpoint holds each piece's factors, and a restored job computes the
/// limit again from all of them. Limits never change an answer (the merge of limited pieces is the unsplit answer;
/// the kernel's tests check it), only how soon it comes.
final class SharedCofactor: Sendable {
    private let candidate: String
    private let startsAtTwo: Bool
    /// Every prime found so far by any piece, with its exponent.
    private let found: Mutex<[String: Int]>
    private let currentLimit: Atomic<UInt64>

    /// - Parameters:
    ///   - candidate: The job's candidate, decimal.
    ///   - startsAtTwo: The job's range starts at 2 (so trial division may stop at the cofactor's square root).
    ///   - factors: Factors the pieces already hold (a restored job's).
    init(candidate: String, startsAtTwo: Bool, factors: [PrimeFactor] = []) {
        self.candidate = candidate
        self.startsAtTwo = startsAtTwo
        found = Mutex([:])
        currentLimit = Atomic(UInt64.max)
        record(factors)
    }

    /// The highest divisor any piece still needs.
    var limit: UInt64 { currentLimit.load(ordering: .acquiring) }

    /// Lowers `kernel`'s limit to the shared one. Called by the worker that owns the piece, before a slice.
    func apply(to kernel: KernelJob) {
        let limit = self.limit
        if limit != .max { kernel.limit(limit) }
    }

    /// Adds factors a piece found; when any is new, lowers the limit.
    /// - Returns: Whether the limit went down.
    @discardableResult
    func record(_ factors: [PrimeFactor]) -> Bool {
        guard !factors.isEmpty else { return false }
        let all: [PrimeFactor]? = found.withLock(anchoredTo: self) { found in
            var added = false
            for factor in factors where found[factor.prime] == nil {
                found[factor.prime] = factor.exponent
                added = true
            }
            return added ? found.map { PrimeFactor(prime: $0.key, exponent: $0.value) } : nil
        }
        // Factors that do not divide the candidate together (impossible from the kernel) leave the limit alone.
        guard let all, let (root, cofactor) = try? KernelJob.cofactorRoot(candidate: candidate, factors: all)
        else { return false }
        let limit = startsAtTwo ? root : cofactor
        var current = currentLimit.load(ordering: .relaxed)
        while limit < current {
            let (exchanged, original) = currentLimit.compareExchange(
                expected: current, desired: limit, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
        return false
    }
}
