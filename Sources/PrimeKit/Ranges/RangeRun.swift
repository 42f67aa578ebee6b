import DequeModule
import Synchronization

/// What a range job's workers, its consumer and the scheduler share: the sieves, the bounded buffer of blocks
/// computed in order but not yet read, and which of the job's pieces wait.
///
/// The numbers from `start` on are cut into chunks taken in order by the job's pieces (its lanes, one per worker
/// when the job is split, else one): each lane sieves its chunk with a handle of its own, one segment per slice.
/// Blocks of the chunk being delivered (the head) go to the buffer in order; a lane ahead of the head keeps its
/// chunk's blocks until their turn. At most `lanes` chunks are out at once, so memory stays bounded.
///
/// A lane's sieve is stepped only by the worker running that lane; everything else is under the run's own mutex,
/// which is taken alone or inside the job's (never the other way round).
final class RangeRun: Sendable {
    /// The most blocks computed in order and not yet taken by the consumer (each at most 8,192 numbers): when the
    /// buffer holds this many, the head lane does not step until the consumer takes one.
    static let capacity = 4

    /// The most lanes a range job gets (each may hold a chunk ahead of the one being read).
    static let maxLanes = 4

    let first: UInt64
    let last: UInt64
    /// The first number this run computes (a restored job's first number not delivered).
    let start: UInt64
    /// How many pieces step the run.
    let lanes: Int
    private let chunkLength: UInt64
    private let chunkCount: Int

    private struct Lane {
        let chunk: Int
        let sieve: KernelRange
        /// The chunk's blocks while it is ahead of the head.
        var ahead: [RangeBlock] = []
    }

    private struct State {
        var buffer: Deque<RangeBlock> = []
        /// The next number to go to the buffer (every number before it was computed, in order).
        var next: UInt64
        /// The first number the consumer has not committed: a checkpoint continues from here.
        var committed: UInt64
        /// Primes among the numbers before `committed`, and among those before `next`.
        var primesCommitted: UInt64
        var primesComputed: UInt64
        /// Each lane's chunk, while it has one.
        var lanes: [Lane?]
        var nextChunk = 0
        /// The chunk whose blocks go to the buffer.
        var head = 0
        /// Chunks computed whole before their turn.
        var ahead: [Int: [RangeBlock]] = [:]
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
    ///   - first, last: The range.
    ///   - start: The first number to compute (a restored job's first number not committed).
    ///   - primesBefore: Primes among the numbers before `start`.
    ///   - lanes: The pieces that step the run (one chunk each at a time); 1 sieves the rest in one chunk.
    ///   - chunk: Numbers per chunk when there are several lanes.
    init(first: UInt64, last: UInt64, start: UInt64, primesBefore: UInt64, lanes: Int, chunk: UInt64) {
        self.first = first
        self.last = last
        self.start = start
        let remaining = start &- first > last - first ? 0 : last - start + 1
        let length = lanes > 1 ? chunk : max(remaining, 1)
        self.chunkLength = length
        self.chunkCount = remaining == 0 ? 0 : Int((remaining - 1) / length) + 1
        self.lanes = max(1, lanes)
        self.state = Mutex(State(next: start, committed: start, primesCommitted: primesBefore,
                                 primesComputed: primesBefore, lanes: Array(repeating: nil, count: max(1, lanes))))
    }

    /// How many lanes a range job that goes on from `start` gets on `workers` workers: one per worker (at most
    /// ``maxLanes``) while there is a chunk for each, and one for fewer than two chunks.
    static func lanes(start: UInt64, last: UInt64, workers: Int, chunk: UInt64) -> Int {
        guard workers > 1, start <= last else { return 1 }
        let chunks = (last - start) / chunk + 1
        return chunks < 2 ? 1 : Int(min(chunks, UInt64(min(workers, maxLanes))))
    }

    /// Numbers in the range.
    var total: UInt64 { last - first + 1 }

    /// Numbers computed in order so far (a restored job counts from its committed position).
    var computed: UInt64 { state.withLock(anchoredTo: self) { $0.next &- first } }

    /// Whether every number has gone to the buffer.
    var isComplete: Bool { state.withLock(anchoredTo: self) { $0.head >= chunkCount } }

    /// Whether the job waits for its consumer (running, no lane queued, the head lane's buffer full).
    var isWaitingForConsumer: Bool { state.withLock(anchoredTo: self) { $0.waitingForConsumer } }

    /// Interrupts every lane's sieve.
    func interrupt() {
        let sieves = state.withLock(anchoredTo: self) { $0.lanes.compactMap { $0?.sieve } }
        for sieve in sieves { sieve.interrupt() }
    }

    /// What one slice of a lane did.
    enum LaneStep {
        /// It sieved (or was interrupted): `numbers` new numbers computed.
        case stepped(KernelStep, numbers: Int)
        /// Nothing to do until the consumer reads or the head moves on.
        case blocked
        /// No chunk is left for this lane.
        case finished
    }

    /// One slice of lane `lane`: takes the next chunk when it has none, then one step of its sieve, the block
    /// handed over in order. Worker only (the worker that runs the lane's piece).
    func step(lane: Int, budget: UInt64) throws(PrimeKitError) -> LaneStep {
        enum Plan { case sieve(KernelRange), take(Int), blocked, finished }
        let plan: Plan = state.withLock(anchoredTo: self) { state in
            state.parked.remove(lane)
            if let current = state.lanes[lane] {
                return current.chunk == state.head && state.buffer.count >= Self.capacity ? .blocked : .sieve(current.sieve)
            }
            if state.nextChunk >= chunkCount {
                state.finished.insert(lane)
                return .finished
            }
            if state.nextChunk >= state.head + lanes { return .blocked }
            state.nextChunk += 1
            return .take(state.nextChunk - 1)
        }
        let sieve: KernelRange
        switch plan {
        case .blocked: return .blocked
        case .finished: return .finished
        case .sieve(let current): sieve = current
        case .take(let chunk):
            let low = start + UInt64(chunk) * chunkLength
            let high = last - low < chunkLength ? last : low + chunkLength - 1
            sieve = try KernelRange(first: low, last: high)
            state.withLock(anchoredTo: self) { $0.lanes[lane] = Lane(chunk: chunk, sieve: sieve) }
        }
        let step = try sieve.step(budget: budget)
        let block = try sieve.deliveredBlock()
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

    /// Blocks in order to the waiting consumer (the first) and the buffer; the consumer to resume, if any.
    private static func append(_ blocks: [RangeBlock], _ state: inout State)
        -> (CheckedContinuation<RangeBlock?, any Error>, RangeBlock)?
    {
        var handed: (CheckedContinuation<RangeBlock?, any Error>, RangeBlock)?
        for block in blocks {
            state.next = block.last &+ 1
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
            guard block.first == state.committed else { return }
            state.committed = block.last &+ 1
            state.primesCommitted += primes
        }
    }

    /// A lane's progress as the scheduler keeps it for every piece: the numbers computed in order.
    func progress() -> KernelProgress {
        let (done, complete) = state.withLock(anchoredTo: self) { ($0.next &- first, $0.head >= chunkCount) }
        return KernelProgress(percent: Double(done) / Double(total) * 100, nextDivisor: 0, divisorsTested: 0,
                              workDone: done, factorsFound: 0, stageFraction: Double(done) / Double(total),
                              partsLeft: 0, done: complete, stage: complete ? .done : .trial)
    }

    /// The job's answer once every number is computed.
    func summary() -> RangeSummary {
        let primes = state.withLock(anchoredTo: self) { $0.primesComputed }
        return RangeSummary(first: first, last: last, count: total, primeCount: primes)
    }

    /// The job's checkpoint, taken at rest: a sieve over the whole range at the committed position, with the
    /// primes before it.
    func checkpoint(kind: JobKind) throws(PrimeKitError) -> Checkpoint {
        let (committed, primes) = state.withLock(anchoredTo: self) { ($0.committed, $0.primesCommitted) }
        let sieve = try KernelRange(first: first, last: last)
        try sieve.seek(done: committed &- first)
        let piece = Checkpoint.Piece(from: String(first), bound: String(last), kernelText: try sieve.checkpoint())
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
        return state.nextChunk >= chunkCount || state.nextChunk < state.head + lanes
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
