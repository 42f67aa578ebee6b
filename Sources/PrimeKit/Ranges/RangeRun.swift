import DequeModule
import Synchronization

/// What a range job's worker, its consumer and the scheduler share: the sieve, the bounded buffer of blocks
/// delivered but not yet read, and whether the job waits for its consumer.
///
/// The sieve is stepped only by the worker that owns the job's piece and checkpointed only while the piece is at
/// rest (the scheduler's rule for every kernel handle); everything else is under the run's own mutex, which is
/// taken alone or inside the job's (never the other way round).
final class RangeRun: Sendable {
    /// The most blocks computed and not yet taken by the consumer (each at most 8,192 numbers): when the buffer
    /// holds this many, the job is not scheduled until the consumer takes one.
    static let capacity = 4

    /// The sieve over the whole range; its position is where the job has computed to, apart from a catch-up.
    let sieve: KernelRange
    let first: UInt64
    let last: UInt64

    private struct State {
        var buffer: Deque<RangeBlock> = []
        /// The next number to compute (by the catch-up sieve while there is one, else by `sieve`).
        var next: UInt64
        /// The first number the consumer has not committed: a checkpoint continues from here.
        var committed: UInt64
        /// Primes among the numbers before `committed`, and among those before `next`.
        var primesCommitted: UInt64
        var primesComputed: UInt64
        /// A restored job's sieve over the numbers its checkpoint had computed but not committed, stepped first.
        var catchUp: KernelRange?
        /// The job is running but not queued: its buffer was full after a slice.
        var parked = false
        var consumer: CheckedContinuation<RangeBlock?, any Error>?
        var parkWaiters: [CheckedContinuation<Void, Never>] = []
        /// How the job ended, once it did: nil for success, else the error the sequence throws.
        var ending: (any Error)??
    }

    private let state: Mutex<State>

    /// - Parameters:
    ///   - sieve: The sieve over the whole range, at the position computed so far.
    ///   - committed: The first number not committed (a restored job's `redo` line); nil: the sieve's position.
    ///   - primesBefore: Primes among the numbers before `committed`.
    init(sieve: KernelRange, committed: UInt64? = nil, primesBefore: UInt64) throws(PrimeKitError) {
        let position = sieve.position()
        // Positions wrap to 0 past 2^64 - 1: compare offsets from `first`.
        let computed = position.first &+ position.done
        let start = committed ?? computed
        self.sieve = sieve
        self.first = position.first
        self.last = position.last
        let catchUp = start &- position.first < position.done
            ? try KernelRange(first: start, last: computed &- 1) : nil
        self.state = Mutex(State(next: start, committed: start, primesCommitted: primesBefore,
                                 primesComputed: primesBefore, catchUp: catchUp))
    }

    /// Numbers in the range.
    var total: UInt64 { last - first + 1 }

    /// Numbers computed so far (a restored job counts from its committed position).
    var computed: UInt64 { state.withLock(anchoredTo: self) { $0.next &- first } }

    /// Whether the buffer is full (the job should not step).
    var isFull: Bool { state.withLock(anchoredTo: self) { $0.buffer.count >= Self.capacity } }

    /// Whether the job waits for its consumer (running, not queued, buffer full).
    var isWaitingForConsumer: Bool { state.withLock(anchoredTo: self) { $0.parked } }

    /// The sieve the next step uses: the catch-up sieve while there is one. Worker only.
    var activeSieve: (sieve: KernelRange, catchingUp: Bool) {
        state.withLock(anchoredTo: self) { state in state.catchUp.map { ($0, true) } ?? (sieve, false) }
    }

    /// The catch-up sieve delivered its last segment. Worker only.
    func endCatchUp() {
        state.withLock(anchoredTo: self) { $0.catchUp = nil }
    }

    /// Interrupts whichever sieve a worker is stepping.
    func interrupt() {
        let catchUp = state.withLock(anchoredTo: self) { $0.catchUp }
        catchUp?.interrupt()
        sieve.interrupt()
    }

    /// Hands a block a sieve delivered to the waiting consumer, or to the buffer. Worker only.
    func deliver(_ block: RangeBlock) {
        let primes = UInt64(block.primeCount)
        let consumer: CheckedContinuation<RangeBlock?, any Error>? = state.withLock(anchoredTo: self) { state in
            state.next = block.last &+ 1
            state.primesComputed += primes
            if let consumer = state.consumer {
                state.consumer = nil
                return consumer
            }
            state.buffer.append(block)
            return nil
        }
        consumer?.resume(returning: block)
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

    /// The piece's progress as the scheduler keeps it for every piece.
    func progress(done finished: Bool) -> KernelProgress {
        let done = computed
        return KernelProgress(percent: Double(done) / Double(total) * 100, nextDivisor: 0, divisorsTested: 0,
                              workDone: done, factorsFound: 0, stageFraction: Double(done) / Double(total),
                              partsLeft: 0, done: finished, stage: finished ? .done : .trial)
    }

    /// The job's answer once the sieve is done.
    func summary() -> RangeSummary {
        let primes = state.withLock(anchoredTo: self) { $0.primesComputed }
        return RangeSummary(first: first, last: last, count: total, primeCount: primes)
    }

    /// The job's checkpoint, taken at rest: the sieve's checkpoint, with the committed position and its primes.
    func checkpoint(kind: JobKind) throws(PrimeKitError) -> Checkpoint {
        let text = try sieve.checkpoint()
        let position = sieve.position()
        let (committed, primes) = state.withLock(anchoredTo: self) { ($0.committed, $0.primesCommitted) }
        let piece = Checkpoint.Piece(from: String(position.first), bound: String(position.last), kernelText: text)
        return Checkpoint(kind: kind, pieces: [piece], rangePrimes: primes,
                          rangeRedo: committed &- position.first < position.done ? committed : nil)
    }

    /// After a slice that found the buffer full: marks the job waiting for its consumer, unless the consumer took
    /// a block meanwhile. Called by the scheduler under the job's lock.
    /// - Returns: Whether the job now waits (else it must be queued again), and the Tasks waiting for that.
    func park() -> (Bool, [CheckedContinuation<Void, Never>]) {
        state.withLock(anchoredTo: self) { state in
            guard state.buffer.count >= Self.capacity else { return (false, []) }
            state.parked = true
            defer { state.parkWaiters = [] }
            return (true, state.parkWaiters)
        }
    }

    /// Ends the sequence. After a success (`error` nil) the consumer reads what is buffered, then the end; after a
    /// failure or cancellation the buffered blocks are dropped (they lie past the job's checkpoint) and the next
    /// read throws `error`.
    func end(_ error: (any Error)?) {
        let (consumer, waiters): (CheckedContinuation<RangeBlock?, any Error>?, [CheckedContinuation<Void, Never>]) =
            state.withLock(anchoredTo: self) { state in
                state.ending = .some(error)
                state.parked = false
                state.catchUp = nil
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
                if state.parked || state.ending != nil { return true }
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
                        let wake = state.parked
                        state.parked = false
                        return .block(block, wake: wake)
                    }
                    if let ending = state.ending { return .end(ending) }
                    if Task.isCancelled { return .end(CancellationError()) }
                    if state.consumer != nil { return .busy }
                    state.consumer = continuation
                    // An empty buffer: the job parks only with a full one, so there is nothing to wake.
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
