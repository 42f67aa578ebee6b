/// Validating a request and planning its pieces: where options were given, its kernel jobs are created here
/// (so bad options fail at submission, not later on a worker).
enum JobPlan {
    /// The candidate, the pieces and the estimated work of `request`, validated. The pieces are nil for one piece
    /// over the whole divisor range, which the job builds in place (a piece returned here was copied on its way).
    /// - Parameters:
    ///   - request: What was submitted.
    ///   - configuration: The queue's configuration (limits, split threshold).
    ///   - workers: The queue's worker count; a split job has four pieces per worker unless configured.
    @inline(__always)
    static func make(_ request: borrowing JobRequest, configuration: JobQueue.Configuration, workers: Int)
        throws(PrimeKitError) -> (JobCandidate, PieceList?, Double, JobEffort?)
    {
        // A plain complete request (no divisor range, checkpoint, effort limit or range: most small jobs) needs no
        // check but its candidate's, and runs as one piece. This path is inlined into the submission loops; the
        // rest is a call (its frame is large: 800 bytes of stack set up for every job cost ~15 % of a batch).
        if request.isPlain, request.complete, request.kind != .factorRange {
            let submitted = try validated(request.submitted, maxDigits: configuration.maxDigits)
            let range = CandidateText.effectiveRange(value: submitted.value, from: nil, bound: nil)
            return (submitted, nil, completeWork(submitted, estimatedWork(submitted, range)), nil)
        }
        return try planned(request, configuration: configuration, workers: workers)
    }

    /// ``make(_:configuration:workers:)`` for every request that is not plain.
    @inline(never)
    private static func planned(_ request: borrowing JobRequest, configuration: JobQueue.Configuration,
                                workers: Int) throws(PrimeKitError) -> (JobCandidate, PieceList?, Double, JobEffort?)
    {
        let limits = KernelLimits(maxDigits: configuration.maxDigits, bpswDigits: configuration.bpswDigits)
        let effort = try JobEffort.make(request)
        if let checkpoint = request.checkpoint {
            if checkpoint.kind == .factorRange {
                let (candidate, pieces, work) = try restoreRange(checkpoint, workers: splitWorkers(request, workers),
                                                                chunk: rangeChunk(configuration), limits: limits)
                return (candidate, pieces, work, nil)
            }
            let (candidate, pieces, work) = try restore(checkpoint, limits: limits)
            return (candidate, pieces, work, effort)
        }
        if request.kind == .factorRange {
            let (candidate, pieces, work) = try range(request, workers: splitWorkers(request, workers),
                                                      chunk: rangeChunk(configuration), limits: limits)
            return (candidate, pieces, work, nil)
        }
        let submitted = try validated(request.submitted, maxDigits: configuration.maxDigits)
        let value = submitted.value
        try CandidateText.validateOption(request.from, name: "from")
        try CandidateText.validateOption(request.bound, name: "bound")
        let range = CandidateText.effectiveRange(value: value, from: request.from, bound: request.bound)
        let divisors = range.map { $0.upperBound - $0.lowerBound &+ 1 } ?? 0
        let estimatedWork = estimatedWork(submitted, range)

        if request.mode == .complete {
            return (submitted, nil, completeWork(submitted, estimatedWork), effort)
        }
        let pieceCount = workers < 2 && configuration.splitPieces == nil
            ? 1 : min(64, max(1, configuration.splitPieces ?? 4 * workers))
        if request.allowsSplitting, pieceCount > 1, let range, divisors >= configuration.splitThreshold,
           divisors >= UInt64(pieceCount) {
            let candidate = submitted.decimal
            let shared = SharedCofactor(candidate: candidate, startsAtTwo: range.lowerBound <= 2)
            let length = divisors / UInt64(pieceCount)
            var pieces: [PieceState] = []
            var low = range.lowerBound
            for index in 0..<pieceCount {
                let high = index == pieceCount - 1 ? range.upperBound : low + length - 1
                let from = String(low)
                let bound = String(high)
                let kernel = try KernelJob.create(candidate: candidate, from: from, bound: bound, limits: limits)
                let weight = Double(high - low + 1) / Double(divisors)
                pieces.append(PieceState(from: from, bound: bound, weight: weight, kernel: kernel, shared: shared))
                low = high + 1
            }
            return (submitted, PieceList(pieces), estimatedWork, effort)
        }
        let kernel = request.from == nil && request.bound == nil ? nil
            : try KernelJob.create(candidate: submitted.decimal, from: request.from, bound: request.bound,
                                   limits: limits)
        let piece = PieceState(from: request.from, bound: request.bound, weight: 1, kernel: kernel)
        return (submitted, PieceList(piece), estimatedWork, effort)
    }

    /// The candidate, validated (a text one with its value parsed).
    @inline(__always)
    private static func validated(_ submitted: JobCandidate, maxDigits: Int) throws(PrimeKitError) -> JobCandidate {
        if submitted.text.isEmpty, let integer = submitted.value {
            try CandidateText.validateCandidate(integer, maxDigits: maxDigits)
            return submitted
        }
        let text = submitted.text
        return JobCandidate(text: text, value: try CandidateText.validateCandidate(text, maxDigits: maxDigits))
    }

    /// Trial division's work over `range` (a range of 2^64 divisors when it is all of them).
    @inline(__always)
    private static func estimatedWork(_ submitted: JobCandidate, _ range: ClosedRange<UInt64>?) -> Double {
        let divisors = range.map { $0.upperBound - $0.lowerBound &+ 1 } ?? 0
        return max(1, Double(divisors == 0 && range != nil ? UInt64.max : divisors) * submitted.unitsPerDivisor)
    }

    /// A complete job's estimated work. It runs unsplit. Its kernel job is made on its first slice, unless the
    /// answer comes without one (below 2^32 from `pk_small_factor`, below 2^128 from the batch call). A word-size
    /// answer costs at most tens of microseconds below 2^64 and milliseconds below 2^128 (in units of about half a
    /// nanosecond), far less than trial division to the default bound: so many of them go to a worker at once.
    @inline(__always)
    private static func completeWork(_ submitted: JobCandidate, _ estimatedWork: Double) -> Double {
        var work = estimatedWork
        if let word = submitted.wordValue, word >> 32 != 0 {
            work = min(work, word >> 64 == 0 ? 40_000 : 4_000_000)
        }
        return work
    }

    /// The workers a range job may run on at once: one unless the request allows splitting.
    private static func splitWorkers(_ request: borrowing JobRequest, _ workers: Int) -> Int {
        request.allowsSplitting ? workers : 1
    }

    /// A range job's chunk length: whole segments, at least one.
    private static func rangeChunk(_ configuration: JobQueue.Configuration) -> UInt64 {
        max(1, configuration.rangeChunk / 8_192) * 8_192
    }

    /// The pieces of a range job (its lanes, sharing one run): the bounds are checked here, so that a bad range
    /// fails at submission.
    private static func range(_ request: borrowing JobRequest, workers: Int, chunk: UInt64, limits: KernelLimits)
        throws(PrimeKitError) -> (JobCandidate, PieceList, Double)
    {
        guard let ends = request.rangeEnds else {
            throw PrimeKitError(code: .invalidOptions, message: "a factorRange request needs first and last")
        }
        let first = try rangeEnd(ends.first, name: "first", maxDigits: limits.maxDigits)
        let last = try rangeEnd(ends.last, name: "last", maxDigits: limits.maxDigits)
        if let low = UInt64(first), let high = UInt64(last) {
            // Below 2^64 the range sieve checks the ends (its messages).
            _ = try KernelRange(first: low, last: high)
        } else {
            try checkWideRange(first: first, last: last)
        }
        return pieces(RangeRun(first: first, last: last, start: 0, primesBefore: 0,
                               lanes: RangeRun.lanes(first: first, last: last, start: 0, workers: workers, chunk: chunk),
                               chunk: chunk, limits: limits))
    }

    /// A range end: canonical decimal of at most `maxDigits` digits (one place for its message).
    static func rangeEnd(_ text: String, name: String, maxDigits: Int) throws(PrimeKitError) -> String {
        guard CandidateText.isCanonical(text) else {
            throw PrimeKitError(code: .invalidOptions,
                                message: "\(name) \"\(text.prefix(40))\" is not a canonical decimal integer")
        }
        guard text.utf8.count <= maxDigits else {
            throw PrimeKitError(code: .candidateTooLarge,
                                message: "\(name) has \(text.utf8.count) digits, more than the limit of \(maxDigits)")
        }
        return text
    }

    /// Checks the ends of a range reaching 2^64: first >= 2, first <= last, fewer than 2^128 numbers.
    static func checkWideRange(first: String, last: String) throws(PrimeKitError) {
        if first == "0" || first == "1" {
            throw PrimeKitError(code: .candidateOutOfRange, message: "first \(first) is below 2")
        }
        if RangeDecimal.less(last, first) {
            throw PrimeKitError(code: .invalidOptions,
                                message: "first \(first.prefix(40)) is above last \(last.prefix(40))")
        }
        guard let difference = RangeDecimal.difference(from: first, to: last), difference < UInt128.max else {
            throw PrimeKitError(code: .invalidOptions, message: "the range holds 2^128 numbers or more")
        }
    }

    private static func pieces(_ run: RangeRun) -> (JobCandidate, PieceList, Double) {
        let candidate = JobCandidate(text: RangeSummary.candidate(first: run.first, last: run.last), value: nil)
        let lanes = (0..<run.lanes).map { _ in
            PieceState(from: nil, bound: nil, weight: 1 / Double(run.lanes), kernel: nil, run: run)
        }
        return (candidate, PieceList(lanes), Double(run.count - run.start) + 1)
    }

    /// A range job from its checkpoint: the sieve's position (or the envelope's `redo`, written before
    /// checkpoints held the committed position itself), or the wide position of a range reaching 2^64, is where
    /// it goes on.
    private static func restoreRange(_ checkpoint: Checkpoint, workers: Int, chunk: UInt64, limits: KernelLimits)
        throws(PrimeKitError) -> (JobCandidate, PieceList, Double)
    {
        guard checkpoint.pieces.count == 1 else {
            throw PrimeKitError(code: .inconsistentCheckpoint, message: "checkpoint is inconsistent: a range job has one piece")
        }
        let first: String
        let last: String
        let start: UInt128
        if let wide = try Checkpoint.parseWidePosition(checkpoint.pieces[0].kernelText) {
            (first, last) = (wide.first, wide.last)
            start = RangeDecimal.difference(from: first, to: wide.next) ?? 0
        } else {
            let position = try KernelRange(checkpoint: checkpoint.pieces[0].kernelText).position()
            (first, last) = (String(position.first), String(position.last))
            start = UInt128(min(checkpoint.rangeRedo.map { $0 &- position.first } ?? position.done, position.total))
        }
        let lanes = RangeRun.lanes(first: first, last: last, start: start, workers: workers, chunk: chunk)
        return pieces(RangeRun(first: first, last: last, start: start, primesBefore: checkpoint.rangePrimes,
                               lanes: lanes, chunk: chunk, limits: limits))
    }

    /// Rebuilds the pieces of a checkpoint; the kernel verifies each one, and ``Checkpoint/check(_:kernels:)`` that
    /// they agree with the envelope and with each other. The pieces of a split job share what they found again.
    private static func restore(_ checkpoint: Checkpoint, limits: KernelLimits) throws(PrimeKitError)
        -> (JobCandidate, PieceList, Double)
    {
        var kernels: [KernelJob] = []
        for piece in checkpoint.pieces { kernels.append(try KernelJob.restore(piece.kernelText, limits: limits)) }
        let (text, factors) = try Checkpoint.check(checkpoint.pieces, kernels: kernels)
        // ECM shares of a complete job (Checkpoint.check saw that they are all of one set) share no limit.
        let ecmShares = kernels[0].shareInfo() != nil
        let shared = kernels.count > 1 && !ecmShares
            ? SharedCofactor(candidate: text, startsAtTwo: kernels[0].range().from <= 2, factors: factors) : nil
        var pieces: [PieceState] = []
        var lengths: [Double] = []
        for (piece, kernel) in zip(checkpoint.pieces, kernels) {
            let progress = kernel.progress()
            var state = ecmShares
                ? PieceState(from: nil, bound: nil, weight: 1, kernel: kernel)
                : PieceState(from: piece.from, bound: piece.bound, weight: 1, kernel: kernel, shared: shared)
            state.ecmShare = ecmShares
            state.progress = progress
            state.finished = progress.done
            state.factors = try kernel.factors(count: progress.factorsFound)
            pieces.append(state)
            let range = kernel.range()
            lengths.append(range.bound >= range.from ? Double(range.bound - range.from) + 1 : 1)
        }
        let total = lengths.reduce(0, +)
        for index in pieces.indices {
            pieces[index].weight = ecmShares ? 1 / Double(pieces.count) : lengths[index] / total
        }
        let work = max(1, total * CandidateText.unitsPerDivisor(digits: text.utf8.count))
        return (JobCandidate(text: text), PieceList(pieces), work)
    }
}
