import DequeModule
import Foundation

/// One installed plugin: its subscription mask and tag filter, its bounded mailbox, and the thread that delivers
/// the mailbox to the plugin one event at a time.
///
/// Producers (workers, the engine, other plugins' threads) only take the mailbox lock for a few instructions and
/// never wait for the consumer: progress is coalesced per job in place (one slot per job), results and errors are
/// queued in full, pluginData and lifecycle events beyond ``capacity`` drop the oldest and are counted (the count is
/// delivered as ``LifecycleEvent/eventsDropped(_:)``). Events are delivered in the order they were offered.
/// An `NSCondition` (which ThreadSanitizer understands) guards everything below.
final class PluginSubscription: @unchecked Sendable {
    private enum Slot {
        case progress(JobID)
        case event(EngineEvent)
    }

    let name: String
    let capacity: Int
    private(set) var plugin: Plugin?
    private let condition = NSCondition()
    /// Progress, results and errors, in order; each with its place in the overall order.
    private var slots = Deque<(UInt64, Slot)>()
    /// pluginData and lifecycle events (at most `capacity`: the oldest are dropped), with their place.
    private var optional = Deque<(UInt64, EngineEvent)>()
    private var nextPlace: UInt64 = 0
    private var latestProgress: [JobID: JobProgress] = [:]
    private var dropped = 0
    private var streams: Streams = .none
    private var tags: TagFilter = .all
    private var started = false
    private var closed = false
    private var delivering = false
    private var threadEnded = false
    private var endWaiters: [CheckedContinuation<Void, Never>] = []

    init(plugin: Plugin, capacity: Int) {
        self.plugin = plugin
        self.name = plugin.name
        self.capacity = max(1, capacity)
    }

    func owns(_ plugin: Plugin) -> Bool {
        condition.withLock { self.plugin === plugin }
    }

    // MARK: - Subscription

    var mask: Streams { condition.withLock { streams } }

    func subscribe(_ more: Streams, tags filter: TagFilter?) {
        condition.withLock {
            streams.formUnion(more)
            if let filter { tags = filter }
        }
    }

    func unsubscribe(_ less: Streams) {
        condition.withLock {
            streams.subtract(less)
            if less.contains(.progress) {
                latestProgress.removeAll()
            }
        }
    }

    // MARK: - Producing (never blocks on the consumer)

    func offer(_ event: EngineEvent) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, streams.contains(event.stream) else { return }
        switch event {
        case .progress(let progress):
            if latestProgress.updateValue(progress, forKey: progress.jobID) == nil {
                slots.append((place(), .progress(progress.jobID)))
            }
        case .finished(let completion):
            latestProgress.removeValue(forKey: completion.jobID)  // no progress after the result
            slots.append((place(), .event(event)))
        case .error:
            slots.append((place(), .event(event)))
        case .pluginData(let data):
            guard tags.matches(data.tag) else { return }
            appendDroppable(event)
        case .lifecycle:
            appendDroppable(event)
        }
        if !delivering { condition.signal() }
    }

    private func place() -> UInt64 {
        defer { nextPlace += 1 }
        return nextPlace
    }

    private func appendDroppable(_ event: EngineEvent) {
        if optional.count >= capacity {
            optional.removeFirst()
            dropped += 1
        }
        optional.append((place(), event))
    }

    // MARK: - Delivering

    /// Starts the delivery thread (after the plugin's `initialize` returned true).
    func start() {
        condition.withLock { started = true }
        let thread = Thread { [self] in deliverLoop() }
        thread.name = "primekit.plugin.\(name)"
        thread.start()
    }

    private func deliverLoop() {
        while true {
            condition.lock()
            delivering = false
            while !closed && slots.isEmpty && optional.isEmpty && dropped == 0 { condition.wait() }
            if closed {
                condition.unlock()
                break
            }
            var next: EngineEvent?
            if dropped > 0 {
                next = .lifecycle(.eventsDropped(dropped))
                dropped = 0
            } else if let head = optional.first, slots.first.map({ head.0 < $0.0 }) ?? true {
                next = optional.removeFirst().1
            } else {
                switch slots.removeFirst().1 {
                case .progress(let id):
                    next = latestProgress.removeValue(forKey: id).map { .progress($0) }
                case .event(let event):
                    next = event
                }
            }
            let target = plugin
            delivering = true
            condition.unlock()
            if let next, let target { target.receive(next) }
        }
        let waiters: [CheckedContinuation<Void, Never>] = condition.withLock {
            threadEnded = true
            plugin = nil
            defer { endWaiters = [] }
            return endWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Ends deliveries: undelivered events are discarded; an event being delivered finishes first. The delivery
    /// thread then ends and drops its reference to the plugin.
    func close() {
        condition.withLock {
            closed = true
            slots.removeAll()
            optional.removeAll()
            latestProgress.removeAll()
            streams = .none
            if !started {
                threadEnded = true
                plugin = nil
            }
            condition.signal()
        }
    }

    /// Returns when the delivery thread has ended (after ``close()``), or when `timeout` passes.
    /// - Returns: True when it ended.
    func waitUntilEnded(timeout: Duration) async -> Bool {
        let ended = condition.withLock { threadEnded }
        if ended { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await withCheckedContinuation { continuation in
                    let now = self.condition.withLock {
                        if self.threadEnded { return true }
                        self.endWaiters.append(continuation)
                        return false
                    }
                    if now { continuation.resume() }
                }
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            if !first {
                // Timed out: release the waiter so the group can finish.
                let waiters = self.condition.withLock {
                    defer { self.endWaiters = [] }
                    return self.endWaiters
                }
                for waiter in waiters { waiter.resume() }
            }
            group.cancelAll()
            return first
        }
    }

    /// Events waiting for delivery (for tests and diagnostics).
    var backlog: Int { condition.withLock { slots.count + optional.count } }
}
