import DequeModule
import Synchronization

/// What a range job's worker, its consumer and the scheduler share: the sieve, the bounded buffer of blocks
/// delivered but not yet read, and whether the job waits for its consumer.
///
/// The sieve is stepped only by the worker that owns the job's piece and checkpointed only while the piece is at
/// rest (the scheduler's rule for every kernel handle); everything else is under the run's own mutex, which is
/// taken alone or inside the job's (never the other way round).
final class RangeRun: Sendable {
    /// The most blocks delivered and not yet read (each at most 8,192 numbers): when the buffer holds this many, the
    /// job is not scheduled until the consumer reads one.
    static let capacity = 4

    let sieve: RangeSieve
    let first: UInt64
    let last: UInt64

    private struct State {
        var buffer: Deque<RangeBlock> = []
        /// Numbers delivered (handed to the consumer or put in the buffer): the sieve's position.
        var done: UInt64
        /// Primes among them.
        var primes: UInt64
        /// The job is running but not queued: its buffer was full after a slice.
        var parked = false
        var consumer: CheckedContinuation<RangeBlock?, any Error>?
        var parkWaiters: [CheckedContinuation<Void, Never>] = []
        /// How the job ended, once it did: nil for success, else the error the sequence throws after the buffer.
        var ending: (any Error)??
    }

    private let state: Mutex<State>

    init(sieve: RangeSieve, primesBefore: UInt64) {
        let position = sieve.position()
        self.sieve = sieve
        self.first = position.first
        self.last = position.last
        self.state = Mutex(State(done: position.done, primes: primesBefore))
    }

    /// Numbers in the range.
    var total: UInt64 { last - first + 1 }

    /// Numbers delivered so far and primes among them.
    var delivered: (done: UInt64, primes: UInt64) {
        state.withLock(anchoredTo: self) { ($0.done, $0.primes) }
    }

    /// Whether the buffer is full (the job should not step).
    var isFull: Bool { state.withLock(anchoredTo: self) { $0.buffer.count >= Self.capacity } }

    /// Whether the job waits for its consumer (running, not queued, buffer full).
    var isWaitingForConsumer: Bool { state.withLock(anchoredTo: self) { $0.parked } }

    /// Hands a block the sieve delivered to the consumer, or to the buffer when nobody waits. Worker only.
    func deliver(_ block: RangeBlock) {
        let primes = UInt64(block.primeCount)
        let consumer: CheckedContinuation<RangeBlock?, any Error>? = state.withLock(anchoredTo: self) { state in
            state.done += UInt64(block.count)
            state.primes += primes
            if let consumer = state.consumer {
                state.consumer = nil
                return consumer
            }
            state.buffer.append(block)
            return nil
        }
        consumer?.resume(returning: block)
    }

    /// The piece's progress as the scheduler keeps it for every piece.
    func progress(done finished: Bool) -> KernelProgress {
        let done = delivered.done
        return KernelProgress(percent: Double(done) / Double(total) * 100, nextDivisor: 0, divisorsTested: 0,
                              workDone: done, factorsFound: 0, stageFraction: Double(done) / Double(total),
                              partsLeft: 0, done: finished, stage: finished ? .done : .trial)
    }

    /// The job's answer once the sieve is done.
    func summary() -> RangeSummary {
        let (_, primes) = delivered
        return RangeSummary(first: first, last: last, count: total, primeCount: primes)
    }

    /// After a slice that found the buffer full: marks the job waiting for its consumer, unless the consumer read
    /// meanwhile. Called by the scheduler under the job's lock.
    /// - Returns: Whether the job now waits (else it must be queued again), and the Tasks waiting for that.
    func park() -> (Bool, [CheckedContinuation<Void, Never>]) {
        state.withLock(anchoredTo: self) { state in
            guard state.buffer.count >= Self.capacity else { return (false, []) }
            state.parked = true
            defer { state.parkWaiters = [] }
            return (true, state.parkWaiters)
        }
    }

    /// Ends the sequence: the consumer reads what is buffered, then the end (nil on success, else `error`).
    func end(_ error: (any Error)?) {
        let (consumer, waiters): (CheckedContinuation<RangeBlock?, any Error>?, [CheckedContinuation<Void, Never>]) =
            state.withLock(anchoredTo: self) { state in
                state.ending = .some(error)
                state.parked = false
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
    func next(wake: @Sendable () -> Void) async throws -> RangeBlock? {
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
                    // An empty buffer: a job waiting for its consumer with nothing buffered cannot be (it parks only
                    // with a full one), so nothing to wake here.
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
/// ends after the last block when the job succeeds; when the job fails or is cancelled it throws that error
/// (`PrimeKitError`, `CancellationError`) after the blocks already delivered. It is empty for other jobs.
///
/// The engine buffers at most ``RangeRun/capacity`` blocks (4 × 8,192 numbers) that were delivered and not yet
/// read; while the buffer is full the job is not scheduled (it stays `running` and ``Job/waitUntilWaitingForConsumer()``
/// returns), so a consumer that stops reading stops the job, not the queue.
public struct RangeBlocks: AsyncSequence, Sendable {
    public typealias Element = RangeBlock

    let job: Job
    let run: RangeRun?

    public struct AsyncIterator: AsyncIteratorProtocol {
        let job: Job
        let run: RangeRun?

        public mutating func next() async throws -> RangeBlock? {
            guard let run else { return nil }
            let job = self.job
            return try await run.next { job.scheduler.wakeRange(job) }
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(job: job, run: run)
    }
}
