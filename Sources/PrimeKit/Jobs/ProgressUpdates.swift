import Synchronization

/// An `AsyncSequence` of progress snapshots that keeps only the newest undelivered one (a slow consumer sees the
/// latest state, never a backlog). It ends when the job or batch finishes, or when the consuming Task is cancelled.
public struct ProgressUpdates<Element: Sendable>: AsyncSequence, Sendable {
    public typealias Failure = Never

    private let subscribe: @Sendable () -> ProgressChannel<Element>

    init(subscribe: @escaping @Sendable () -> ProgressChannel<Element>) {
        self.subscribe = subscribe
    }

    /// Iterates one subscription; each iterator is a subscription of its own.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let channel: ProgressChannel<Element>

        public mutating func next() async -> Element? {
            await channel.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(channel: subscribe())
    }
}

/// A one-slot, latest-wins mailbox between the engine and one consumer.
final class ProgressChannel<Element: Sendable>: Sendable {
    private struct State {
        var pending: Element?
        var waiter: CheckedContinuation<Element?, Never>?
        var finished = false
    }

    private let state = Mutex(State())

    /// Offers a snapshot; replaces an undelivered older one.
    func send(_ element: Element) {
        let waiter: CheckedContinuation<Element?, Never>? = state.withLock(anchoredTo: self) { state in
            if state.finished { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.pending = element
            return nil
        }
        waiter?.resume(returning: element)
    }

    /// Forgets an undelivered snapshot (a paused job must not report progress after its pause returned).
    func dropPending() {
        state.withLock(anchoredTo: self) { $0.pending = nil }
    }

    /// Ends the sequence after the undelivered snapshot, if any.
    func finish() {
        let waiter: CheckedContinuation<Element?, Never>? = state.withLock(anchoredTo: self) { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    func next() async -> Element? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let immediate: Element?? = state.withLock(anchoredTo: self) { state in
                    if let pending = state.pending {
                        state.pending = nil
                        return .some(pending)
                    }
                    if state.finished || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            let waiter: CheckedContinuation<Element?, Never>? = state.withLock(anchoredTo: self) { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }
}
