import DequeModule
import Synchronization

/// What a range job's workers, its consumer and the scheduler share: the sieves, the bounded buffer of blocks
/// computed in order but not yet read, and which of the job's pieces wait.
///
/// The numbers from `start` on are cut into chunks taken in order by the job's pieces (its lanes, one per worker
/// when the job is split, else one). A chunk never straddles 2^64 or 2^128: below 2^64 a lane sieves its chunk with
/// a handle of its own, one segment per slice; from 2^64 to 2^128 it factors 64 numbers per slice with the kernel's
/// batch call; from 2^128 on it factors one number at a time with a complete kernel job, one kernel step per slice.
/// Blocks of the chunk being delivered (the head) go to the buffer in order; a lane ahead of the head keeps its
/// chunk's blocks until their turn. At most `lanes` chunks are out at once, so memory stays bounded.
///
/// Positions are offsets from `first` (below 2^128). A lane's work is stepped only by the worker running that lane;
/// everything else is under the run's own mutex, which is taken alone or inside the job's (never the other way
/// round).
final class RangeRun: Sendable {
    /// The most blocks computed in order and not yet taken by the consumer (each at most 8,192 numbers): when the
    /// buffer holds this many, the head lane does not step until the consumer takes one.
    static let capacity = 4

    /// The most lanes a range job gets (each may hold a chunk ahead of the one being read).
    static let maxLanes = 4

    /// Numbers per batch call (one block) from 2^64 to 2^128, and per chunk there when the job has several lanes.
    static let batchBlock: UInt128 = 64
    static let batchChunk: UInt128 = 2_048

    /// The range, canonical decimal.
    let first: String
    let last: String
    /// `first` when it is below 2^128.
    private let firstValue: UInt128?
    /// Numbers in the range.
    let count: UInt128
    /// The offset of the first number this run computes (a restored job's first number not delivered).
    let start: UInt128
    /// How many pieces step the run.
    let lanes: Int
    /// Complete jobs' limits (from 2^128 on).
    private let limits: KernelLimits
    /// The chunks from `start` on: the sieved ones, then the batch ones, then the complete ones.
    private let regions: [Region]
    private let chunkCount: UInt128

    /// Numbers in a region of the range, cut into chunks.
    private struct Region {
        enum Kind { case sieve, batch, complete }
        let kind: Kind
        /// Offsets: the region is [low, high), its chunks `length` numbers each (the last one may be shorter).
        let low: UInt128
        let high: UInt128
        let length: UInt128
        var chunks: UInt128 { high > low ? (high - low - 1) / length + 1 : 0 }
    }

    /// A lane's work from 2^64 on: the offsets left of its chunk and the number being factored completely.
    private final class Cursor: Sendable {
        let kind: Region.Kind
        let high: UInt128
        /// The next offset to factor. Only the lane's worker touches it.
        let next: Mutex<UInt128>
        /// The complete job of the number at `next` (from 2^128 on), once made; shared with `interrupt()`.
        let job = Mutex<KernelJob?>(nil)

        init(kind: Region.Kind, low: UInt128, high: UInt128) {
            self.kind = kind
            self.high = high
            self.next = Mutex(low)
        }
    }

    private enum Work {
        case sieve(KernelRange)
        case cursor(Cursor)

        func interrupt() {
            switch self {
            case .sieve(let sieve): sieve.interrupt()
            case .cursor(let cursor): cursor.job.withLock(anchoredTo: cursor) { $0?.interrupt() }
            }
        }
    }

    private struct Lane {
        let chunk: UInt128
        let work: Work
        /// The chunk's blocks while it is ahead of the head.
        var ahead: [RangeBlock] = []
    }

    private struct State {
        var buffer: Deque<RangeBlock> = []
        /// The offset of the next number to go to the buffer (every number before it was computed, in order).
        var next: UInt128
        /// The offset of the first number the consumer has not committed: a checkpoint continues from here.
        var committed: UInt128
        /// Primes among the numbers before `committed`, and among those before `next`.
        var primesCommitted: UInt64
        var primesComputed: UInt64
        /// Each lane's chunk, while it has one.
        var lanes: [Lane?]
        var nextChunk: UInt128 = 0
        /// The chunk whose blocks go to the buffer.
        var head: UInt128 = 0
        /// Chunks computed whole before their turn.
        var ahead: [UInt128: [RangeBlock]] = [:]
        /// Lanes that found nothing they could do (not queued: the scheduler queues them again on a wake).
        var parked: Set<Int> = []
        /// Lanes with no chunk left to take.
        var finished: Set<Int> = []
        var consumer: CheckedContinuation<RangeBlock?, any Error>?
        var parkWaiters: [CheckedContinuation<Void, Never>] = []
        /// How the job ended, once it did: nil for success, else the error the sequence throws.
        var ending: (any Error)??

        /// Whether every lane that can still work waits (the consumer must read first).
        var waitingForConsumer: Bool { !parked.isEmpty && parked.count + finished.count == lanes.count }
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - first, last: The range, canonical decimal, 2 <= first <= last, fewer than 2^128 numbers.
    ///   - start: The offset of the first number to compute (a restored job's first number not committed).
    ///   - primesBefore: Primes among the numbers before `start`.
    ///   - lanes: The pieces that step the run (one chunk each at a time); 1 does each region in one chunk.
    ///   - chunk: Numbers per sieved chunk when there are several lanes.
    init(first: String, last: String, start: UInt128, primesBefore: UInt64, lanes: Int, chunk: UInt64,
         limits: KernelLimits = .defaults) {
        self.first = first
        self.last = last
        self.firstValue = UInt128(first)
        let count = (RangeDecimal.difference(from: first, to: last) ?? UInt128.max - 1) + 1
        self.count = count
        self.start = min(start, count)
        self.lanes = max(1, lanes)
        self.limits = limits
        self.regions = Self.regions(first: firstValue, count: count, start: min(start, count), several: lanes > 1,
                                    chunk: UInt128(chunk))
        self.chunkCount = regions.reduce(0) { $0 + $1.chunks }
        self.state = Mutex(State(next: min(start, count), committed: min(start, count), primesCommitted: primesBefore,
                                 primesComputed: primesBefore, lanes: Array(repeating: nil, count: max(1, lanes))))
    }

    /// The regions of [start, count): below 2^64, below 2^128, the rest; each in one chunk unless `several`.
    private static func regions(first: UInt128?, count: UInt128, start: UInt128, several: Bool, chunk: UInt128)
        -> [Region]
    {
        // Offsets where the numbers reach 2^64 and 2^128.
        let sieveEnd = first.map { $0 >= RangeDecimal.sieveLimit ? 0 : min(count, RangeDecimal.sieveLimit - $0) } ?? 0
        let batchEnd = first.map { min(count, UInt128.max - $0 + 1) } ?? 0
        let whole = UInt128.max
        return [
            Region(kind: .sieve, low: start, high: max(start, sieveEnd), length: several ? chunk : whole),
            Region(kind: .batch, low: max(start, sieveEnd), high: max(start, batchEnd),
                   length: several ? batchChunk : whole),
            Region(kind: .complete, low: max(start, batchEnd), high: count, length: several ? 1 : whole),
        ].filter { $0.high > $0.low }
    }

    /// How many lanes a range job that goes on from offset `start` gets on `workers` workers: one per worker (at
    /// most ``maxLanes``) while there is a chunk for each, and one for fewer than two chunks.
    static func lanes(first: String, last: String, start: UInt128, workers: Int, chunk: UInt64) -> Int {
        guard workers > 1, let difference = RangeDecimal.difference(from: first, to: last), start <= difference else {
            return 1
        }
        let chunks = regions(first: UInt128(first), count: difference + 1, start: start, several: true,
                             chunk: UInt128(chunk)).reduce(0) { $0 + $1.chunks }
        return chunks < 2 ? 1 : Int(min(chunks, UInt128(min(workers, maxLanes))))
    }

    /// The chunk's work: its region and its offsets [low, high].
    private func describe(_ chunk: UInt128) -> (Region.Kind, low: UInt128, high: UInt128) {
        var index = chunk
        for region in regions {
            guard index >= region.chunks else {
                let low = region.low + index * region.length
                let high = region.high - low <= region.length ? region.high - 1 : low + region.length - 1
                return (region.kind, low, high)
            }
            index -= region.chunks
        }
        preconditionFailure("a chunk beyond the range")
    }

    /// Numbers in the range (`UInt64.max` for 2^64 or more).
    var total: UInt64 { UInt64(clamping: count) }

    /// Numbers computed in order so far, a restored job counting from its committed position (`UInt64.max` for 2^64
    /// or more).
    var computed: UInt64 { UInt64(clamping: state.withLock(anchoredTo: self) { $0.next }) }

    /// Whether every number has gone to the buffer.
    var isComplete: Bool { state.withLock(anchoredTo: self) { $0.head >= chunkCount } }

    /// Whether the job waits for its consumer (running, no lane queued, the head lane's buffer full).
    var isWaitingForConsumer: Bool { state.withLock(anchoredTo: self) { $0.waitingForConsumer } }

    /// Interrupts every lane's sieve or complete job.
    func interrupt() {
        let works = state.withLock(anchoredTo: self) { $0.lanes.compactMap { $0?.work } }
        for work in works { work.interrupt() }
    }

    /// What one slice of a lane did.
    enum LaneStep {
        /// It sieved or factored (or was interrupted): `numbers` new numbers computed.
        case stepped(KernelStep, numbers: Int)
        /// Nothing to do until the consumer reads or the head moves on.
        case blocked
        /// No chunk is left for this lane.
        case finished
    }

    /// One slice of lane `lane`: takes the next chunk when it has none, then one step of its work, the block
    /// handed over in order. Worker only (the worker that runs the lane's piece).
    func step(lane: Int, budget: UInt64) throws(PrimeKitError) -> LaneStep {
        enum Plan { case work(Work), take(UInt128), blocked, finished }
        let plan: Plan = state.withLock(anchoredTo: self) { state in
            state.parked.remove(lane)
            if let current = state.lanes[lane] {
                return current.chunk == state.head && state.buffer.count >= Self.capacity ? .blocked : .work(current.work)
            }
            if state.nextChunk >= chunkCount {
                state.finished.insert(lane)
                return .finished
            }
            if state.nextChunk >= state.head + UInt128(lanes) { return .blocked }
            state.nextChunk += 1
            return .take(state.nextChunk - 1)
        }
        let work: Work
        switch plan {
        case .blocked: return .blocked
        case .finished: return .finished
        case .work(let current): work = current
        case .take(let chunk):
            let (kind, low, high) = describe(chunk)
            switch kind {
            case .sieve:
                // Below 2^64: firstValue is known and low, high are offsets of numbers below 2^64.
                let base = firstValue!
                work = .sieve(try KernelRange(first: UInt64(base + low), last: UInt64(base + high)))
            case .batch, .complete:
                work = .cursor(Cursor(kind: kind, low: low, high: high))
            }
            state.withLock(anchoredTo: self) { $0.lanes[lane] = Lane(chunk: chunk, work: work) }
        }
        let step: KernelStep
        var block: RangeBlock?
        switch work {
        case .sieve(let sieve):
            step = try sieve.step(budget: budget)
            block = try sieve.deliveredBlock()
            if block != nil { block!.offset = UInt128(block!.first) - firstValue! }
        case .cursor(let cursor):
            (step, block) = try advance(cursor, budget: budget)
        }
        let consumer: (CheckedContinuation<RangeBlock?, any Error>, RangeBlock)? = state.withLock(anchoredTo: self) {
            state in
            guard var current = state.lanes[lane] else { return nil }
            var ready: [RangeBlock] = []
            if let block {
                if current.chunk == state.head { ready.append(block) } else { current.ahead.append(block) }
            }
            if step == .done {
                state.lanes[lane] = nil
                if current.chunk == state.head {
                    state.head += 1
                    // Chunks finished ahead of their turn follow, then what the lane now at the head has so far.
                    while let blocks = state.ahead.removeValue(forKey: state.head) {
                        ready += blocks
                        state.head += 1
                    }
                    if let index = state.lanes.firstIndex(where: { $0?.chunk == state.head }) {
                        ready += state.lanes[index]!.ahead
                        state.lanes[index]!.ahead = []
                    }
                } else {
                    state.ahead[current.chunk] = current.ahead
                }
            } else {
                state.lanes[lane] = current
            }
            return Self.append(ready, &state)
        }
        if let (continuation, first) = consumer { continuation.resume(returning: first) }
        return .stepped(step == .interrupted ? .interrupted : .more, numbers: block?.count ?? 0)
    }

    /// One step of a chunk from 2^64 on: a batch call over the next numbers (below 2^128), or a step of the complete
    /// job of the next number; the block of the numbers it finished, if any.
    private func advance(_ cursor: Cursor, budget: UInt64) throws(PrimeKitError) -> (KernelStep, RangeBlock?) {
        let low = cursor.next.withLock(anchoredTo: cursor) { $0 }
        switch cursor.kind {
        case .sieve:
            preconditionFailure("a sieved chunk has no cursor")
        case .batch:
            let base = firstValue!
            let high = cursor.high - low < Self.batchBlock ? cursor.high : low + Self.batchBlock - 1
            let numbers = Array((base + low)...(base + high))
            var factors: [[PrimeFactor]] = []
            factors.reserveCapacity(numbers.count)
            try KernelBatch.factor(numbers) { _, primes, exponents, probable in
                factors.append((0..<primes.count).map {
                    PrimeFactor(prime: String(primes[$0]), exponent: Int(exponents[$0]),
                                certainty: probable[$0] ? .probable : .proven)
                })
            }
            var block = RangeBlock(first: String(base + low), factors: factors)
            block.offset = low
            cursor.next.withLock(anchoredTo: cursor) { $0 = high + 1 }
            return (high == cursor.high ? .done : .more, block)
        case .complete:
            let number = RangeDecimal.adding(first, low)
            let job: KernelJob
            if let current = cursor.job.withLock(anchoredTo: cursor, { $0 }) {
                job = current
            } else {
                job = try KernelJob.create(candidate: number, from: nil, bound: nil, limits: limits, complete: true)
                cursor.job.withLock(anchoredTo: cursor) { $0 = job }
            }
            let step = try job.step(budget: budget)
            guard step == .done else { return (step, nil) }
            let result = try job.factorResult(candidate: number)
            guard result.complete, result.cofactor == "1" else {
                throw PrimeKitError(code: .incompleteFactorization,
                                    message: "the complete job of \(number.prefix(40)) ended without every factor")
            }
            cursor.job.withLock(anchoredTo: cursor) { $0 = nil }
            var block = RangeBlock(first: number, factors: [result.factors])
            block.offset = low
            cursor.next.withLock(anchoredTo: cursor) { $0 = low + 1 }
            return (low == cursor.high ? .done : .more, block)
        }
    }

    /// Blocks in order to the waiting consumer (the first) and the buffer; the consumer to resume, if any.
    private static func append(_ blocks: [RangeBlock], _ state: inout State)
        -> (CheckedContinuation<RangeBlock?, any Error>, RangeBlock)?
    {
        var handed: (CheckedContinuation<RangeBlock?, any Error>, RangeBlock)?
        for block in blocks {
            state.next = block.offset + UInt128(block.count)
            state.primesComputed += UInt64(block.primeCount)
            if handed == nil, let consumer = state.consumer {
                state.consumer = nil
                handed = (consumer, block)
            } else {
                state.buffer.append(block)
            }
        }
        return handed
    }

    /// The consumer has taken `block` for good: a checkpoint made from now on continues after it. Blocks are
    /// committed in order; one that does not follow the last committed is ignored.
    func commit(_ block: RangeBlock) {
        let primes = UInt64(block.primeCount)
        state.withLock(anchoredTo: self) { state in
            guard block.offset == state.committed else { return }
            state.committed = block.offset + UInt128(block.count)
            state.primesCommitted += primes
        }
    }

    /// A lane's progress as the scheduler keeps it for every piece: the numbers computed in order.
    func progress() -> KernelProgress {
        let (done, complete) = state.withLock(anchoredTo: self) { ($0.next, $0.head >= chunkCount) }
        let fraction = Double(done) / Double(count)
        return KernelProgress(percent: fraction * 100, nextDivisor: 0, divisorsTested: 0,
                              workDone: UInt64(clamping: done), factorsFound: 0, stageFraction: fraction,
                              partsLeft: 0, done: complete, stage: complete ? .done : .trial)
    }

    /// The job's answer once every number is computed.
    func summary() -> RangeSummary {
        let primes = state.withLock(anchoredTo: self) { $0.primesComputed }
        return RangeSummary(firstText: first, lastText: last, countText: String(count), primeCount: primes)
    }

    /// The job's checkpoint, taken at rest: a sieve over the whole range at the committed position (a range
    /// reaching 2^64: the wide position text, ``Checkpoint/widePosition(first:last:next:)``), with the primes
    /// before it.
    func checkpoint(kind: JobKind) throws(PrimeKitError) -> Checkpoint {
        let (committed, primes) = state.withLock(anchoredTo: self) { ($0.committed, $0.primesCommitted) }
        let text: String
        if let low = UInt64(first), let high = UInt64(last) {
            let sieve = try KernelRange(first: low, last: high)
            try sieve.seek(done: UInt64(committed))
            text = try sieve.checkpoint()
        } else {
            text = Checkpoint.widePosition(first: first, last: last, next: RangeDecimal.adding(first, committed))
        }
        let piece = Checkpoint.Piece(from: first, bound: last, kernelText: text)
        return Checkpoint(kind: kind, pieces: [piece], rangePrimes: primes)
    }

    /// After a slice of `lane` that found nothing to do: marks the lane waiting, unless it could go on now (the
    /// consumer read or the head moved meanwhile). Called by the scheduler under the job's lock.
    /// - Returns: Whether the lane waits (else it must be queued again), and the Tasks waiting for the job to wait
    ///   for its consumer when it now does.
    func park(lane: Int) -> (Bool, [CheckedContinuation<Void, Never>]) {
        state.withLock(anchoredTo: self) { state in
            guard !canStep(lane, state) else { return (false, []) }
            state.parked.insert(lane)
            guard state.waitingForConsumer else { return (true, []) }
            defer { state.parkWaiters = [] }
            return (true, state.parkWaiters)
        }
    }

    /// The parked lanes that could go on now, no longer parked (the scheduler queues them). Taken after each slice.
    func unparkRunnable() -> [Int] {
        state.withLock(anchoredTo: self) { state in
            guard !state.parked.isEmpty else { return [] }
            let runnable = state.parked.filter { canStep($0, state) }
            state.parked.subtract(runnable)
            return runnable.sorted()
        }
    }

    /// Every parked lane, no longer parked (the consumer read: the scheduler queues them).
    func unparkAll() -> [Int] {
        state.withLock(anchoredTo: self) { state in
            defer { state.parked = [] }
            return state.parked.sorted()
        }
    }

    private func canStep(_ lane: Int, _ state: State) -> Bool {
        if let current = state.lanes[lane] { return current.chunk != state.head || state.buffer.count < Self.capacity }
        return state.nextChunk >= chunkCount || state.nextChunk < state.head + UInt128(lanes)
    }

    /// Ends the sequence. After a success (`error` nil) the consumer reads what is buffered, then the end; after a
    /// failure or cancellation the buffered blocks are dropped (they lie past the job's checkpoint) and the next
    /// read throws `error`.
    func end(_ error: (any Error)?) {
        let (consumer, waiters): (CheckedContinuation<RangeBlock?, any Error>?, [CheckedContinuation<Void, Never>]) =
            state.withLock(anchoredTo: self) { state in
                state.ending = .some(error)
                state.parked = []
                state.lanes = state.lanes.map { _ in nil }
                state.ahead = [:]
                if error != nil { state.buffer.removeAll() }
                defer {
                    state.consumer = nil
                    state.parkWaiters = []
                }
                return (state.consumer, state.parkWaiters)
            }
        for waiter in waiters { waiter.resume() }
        guard let consumer else { return }
        if let error { consumer.resume(throwing: error) } else { consumer.resume(returning: nil) }
    }

    /// Returns once the job waits for its consumer or has ended.
    func waitUntilWaiting() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock(anchoredTo: self) { state -> Bool in
                if state.waitingForConsumer || state.ending != nil { return true }
                state.parkWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// The next block for the consumer; when this frees room for a job waiting for it, `wake` is called.
    /// - Parameter committing: Commit the block as it is returned (else the consumer calls ``commit(_:)``).
    func next(committing: Bool, wake: @Sendable () -> Void) async throws -> RangeBlock? {
        let block = try await take(wake: wake)
        if committing, let block { commit(block) }
        return block
    }

    private func take(wake: @Sendable () -> Void) async throws -> RangeBlock? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<RangeBlock?, any Error>) in
                enum Now { case block(RangeBlock, wake: Bool), end((any Error)?), busy, wait }
                let now: Now = state.withLock(anchoredTo: self) { state in
                    if let block = state.buffer.popFirst() {
                        return .block(block, wake: !state.parked.isEmpty)
                    }
                    if let ending = state.ending { return .end(ending) }
                    if Task.isCancelled { return .end(CancellationError()) }
                    if state.consumer != nil { return .busy }
                    state.consumer = continuation
                    // An empty buffer: no lane waits for room in it (a lane held by the window waits for the head).
                    return .wait
                }
                switch now {
                case .block(let block, let shouldWake):
                    if shouldWake { wake() }
                    continuation.resume(returning: block)
                case .end(let error):
                    if let error { continuation.resume(throwing: error) } else { continuation.resume(returning: nil) }
                case .busy:
                    continuation.resume(throwing: PrimeKitError(
                        code: .invalidState, message: "a range job's blocks are read by one consumer at a time"))
                case .wait:
                    break
                }
            }
        } onCancel: {
            let consumer = state.withLock(anchoredTo: self) { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(throwing: CancellationError())
        }
    }
}

/// A range job's blocks, in order (``Job/rangeBlocks``): each block once, to one consumer at a time. The sequence
/// ends after the last block when the job succeeds; when the job fails or is cancelled the next read throws that
/// error (`PrimeKitError`, `CancellationError`), and blocks computed but not read are dropped. It is empty for
/// other jobs.
///
/// A block is **committed** when the iterator returns it: a checkpoint of the job made afterwards continues after
/// it, one made before continues with it (so a block read after a checkpoint comes again from a job restored from
/// that checkpoint — never a number skipped).
///
/// The engine buffers at most ``RangeRun/capacity`` blocks (4 × 8,192 numbers) computed and not yet read; while the
/// buffer is full the job is not scheduled (it stays `running` and ``Job/waitUntilWaitingForConsumer()`` returns),
/// so a consumer that stops reading stops the job, not the queue.
public struct RangeBlocks: AsyncSequence, Sendable {
    public typealias Element = RangeBlock

    let job: Job
    let run: RangeRun?
    let committing: Bool

    public struct AsyncIterator: AsyncIteratorProtocol {
        let job: Job
        let run: RangeRun?
        let committing: Bool

        public mutating func next() async throws -> RangeBlock? {
            guard let run else { return nil }
            let job = self.job
            return try await run.next(committing: committing) { job.scheduler.wakeRange(job) }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(job: job, run: run, committing: committing)
    }
}
