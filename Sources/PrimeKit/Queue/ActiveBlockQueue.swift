import DequeModule
import Dispatch
import Synchronization

/// What `tearDown` does with work that has not run yet.
public enum TeardownPolicy: Sendable, Hashable {
    /// Drop pending blocks (their cancel handlers run) and cancel unfinished jobs.
    case cancel
    /// Run pending blocks now (even in the background) and let pending, ready and running jobs finish; jobs still
    /// paused afterwards are cancelled.
    case drain
}

/// Blocks that run one at a time, in order, only while the app is active (``JobQueue/performWhenActive(_:onCancel:)``).
/// They run on a serial dispatch queue of their own, never on the job workers or Swift's cooperative pool.
final class ActiveBlockQueue: Sendable {
    private struct Block: Sendable {
        let run: @Sendable () -> Void
        let cancel: (@Sendable () -> Void)?
    }

    private struct State: Sendable {
        var blocks: Deque<Block> = []
        var active = true
        var forced = false
        var draining = false
        var closed = false
        var emptyWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())
    private let executor = DispatchQueue(label: "primekit.active-blocks")

    /// Adds a block; runs it soon if active.
    func add(_ run: @escaping @Sendable () -> Void, onCancel: (@Sendable () -> Void)?) throws(PrimeKitError) {
        let start = try state.withLock(anchoredTo: self) { state throws(PrimeKitError) -> Bool in
            guard !state.closed else {
                throw PrimeKitError(code: .queueShutDown, message: "the queue was shut down")
            }
            state.blocks.append(Block(run: run, cancel: onCancel))
            return startDrainIfNeeded(&state)
        }
        if start { executor.async { self.drain() } }
    }

    var isActive: Bool { state.withLock(anchoredTo: self) { $0.active } }

    /// Becomes active (runs what is pending, in order) or inactive (holds blocks after the one running).
    func setActive(_ active: Bool) {
        let start = state.withLock(anchoredTo: self) { state -> Bool in
            state.active = active
            return startDrainIfNeeded(&state)
        }
        if start { executor.async { self.drain() } }
    }

    /// Drops every pending block and runs its cancel handler.
    func cancelPending(close: Bool = false) {
        // The deque itself is handed over: converting an empty one to an Array writes the shared empty-array
        // storage, which ThreadSanitizer reports as a race between two queues doing so at once.
        let dropped = state.withLock(anchoredTo: self) { state -> Deque<Block> in
            if close { state.closed = true }
            defer { state.blocks = [] }
            return state.blocks
        }
        for block in dropped { block.cancel?() }
        let waiters = state.withLock(anchoredTo: self) { state -> [CheckedContinuation<Void, Never>] in
            guard !state.draining else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs every pending block now, active or not, and returns when none is left; then accepts no more.
    func drainAndClose() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let (start, done) = state.withLock(anchoredTo: self) { state -> (Bool, Bool) in
                state.closed = true
                state.forced = true
                if state.blocks.isEmpty && !state.draining { return (false, true) }
                state.emptyWaiters.append(continuation)
                return (startDrainIfNeeded(&state), false)
            }
            if start { executor.async { self.drain() } }
            if done { continuation.resume() }
        }
    }

    private func startDrainIfNeeded(_ state: inout State) -> Bool {
        guard (state.active || state.forced), !state.draining, !state.blocks.isEmpty else { return false }
        state.draining = true
        return true
    }

    private func drain() {
        while true {
            let next = state.withLock(anchoredTo: self) { state -> Block? in
                if (state.active || state.forced), let block = state.blocks.popFirst() { return block }
                state.draining = false
                return nil
            }
            guard let next else { break }
            next.run()
        }
        let waiters = state.withLock(anchoredTo: self) { state -> [CheckedContinuation<Void, Never>] in
            guard state.blocks.isEmpty, !state.draining else { return [] }
            defer { state.emptyWaiters = [] }
            return state.emptyWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
