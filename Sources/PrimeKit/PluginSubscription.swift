import DequeModule
import Foundation
import Synchronization

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
        /// Results and errors offered together by the queue's tap: kept as the tap's array (one retain, not one
        /// per event) and delivered in its order.
        case ends([EngineEvent])
    }

    /// What the delivery thread takes out of the lock: one event, or a run of them shared with other mailboxes.
    private enum Run {
        case one(EngineEvent)
        case many([EngineEvent])
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
    /// Deliveries are held while the plugin's `stop()` is asked. Read without the lock on every delivery.
    private let holdRequested = Atomic<Bool>(false)
    /// The delivery thread is (about to be) inside the plugin's `receive`.
    private let receiving = Atomic<Bool>(false)
    /// Set by ``close()``; read without the lock on every delivery.
    private let closedFlag = Atomic<Bool>(false)
    /// The delivery thread waits for events: the next producer signals it (once).
    private var sleeping = false
    private var threadEnded = false
    /// Runs of events this subscriber has delivered, handed back so that a producer releases them: the last
    /// reference to an event then goes away on a worker thread, where it was allocated, instead of on a delivery
    /// thread (freeing memory of another thread's arena costs the allocator a lock and its locality).
    private var delivered: [[EngineEvent]] = []

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

    /// Offers one batch of the queue's tap under one lock: progress snapshots (coalesced per job as usual), then
    /// the ends of jobs — `.finished` events, and `.error` ones when `withErrors` — which stay one slot.
    func offer(progress: [EngineEvent], ends: [EngineEvent], withErrors: Bool) {
        var released: [[EngineEvent]] = []
        condition.lock()
        swap(&released, &delivered)
        offerLocked(progress: progress, ends: ends, withErrors: withErrors)
        condition.unlock()
        withExtendedLifetime(released) {}  // released here, outside the lock
    }

    private func offerLocked(progress: [EngineEvent], ends: [EngineEvent], withErrors: Bool) {
        for event in progress { append(event) }
        guard !closed, !ends.isEmpty else { return }
        let wanted = streams.intersection([.results, .errors])
        guard !wanted.isEmpty else { return }
        if !latestProgress.isEmpty {
            for case .finished(let completion) in ends { latestProgress.removeValue(forKey: completion.jobID) }
        }
        let kept = wanted == .results && !withErrors || wanted == [.results, .errors] ? ends
            : ends.filter { wanted.contains($0.stream) }
        guard !kept.isEmpty else { return }
        slots.append((place(), .ends(kept)))
        wake()
    }

    /// Offers lifecycle events, of which only the newest ``capacity`` can survive: the older ones are counted as
    /// dropped without being queued first (a batch submission announces thousands of jobs at once).
    /// `droppedBefore` counts older announcements of the same batch that were never made.
    func offer(lifecycle events: [EngineEvent], droppedBefore: Int) {
        condition.lock()
        defer { condition.unlock() }
        guard !closed, streams.contains(.lifecycle) else { return }
        let kept = events.suffix(capacity)
        dropped += droppedBefore + events.count - kept.count
        for event in kept { append(event) }
    }

    func offer(_ event: EngineEvent) {
        condition.lock()
        defer { condition.unlock() }
        append(event)
    }

    private func append(_ event: EngineEvent) {
        guard !closed, streams.contains(event.stream) else { return }
        switch event {
        case .progress(let progress):
            if latestProgress.updateValue(progress, forKey: progress.jobID) == nil {
                slots.append((place(), .progress(progress.jobID)))
            }
        case .finished(let completion):
            if !latestProgress.isEmpty { latestProgress.removeValue(forKey: completion.jobID) }  // none after it
            slots.append((place(), .event(event)))
        case .error:
            slots.append((place(), .event(event)))
        case .pluginData(let data):
            guard tags.matches(data.tag) else { return }
            appendDroppable(event)
        case .lifecycle:
            appendDroppable(event)
        }
        wake()
    }

    private func wake() {
        if sleeping {
            sleeping = false
            condition.signal()
        }
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

    /// Takes the next event, or run of events, to deliver, under the lock.
    private func takeNext() -> Run? {
        while true {
            if let head = optional.first, slots.first.map({ head.0 < $0.0 }) ?? true {
                return .one(optional.removeFirst().1)
            }
            guard let slot = slots.popFirst() else { return nil }
            switch slot.1 {
            case .progress(let id):
                if let progress = latestProgress.removeValue(forKey: id) { return .one(.progress(progress)) }
            case .event(let event):
                return .one(event)
            case .ends(let events):
                return .many(events)
            }
        }
    }

    /// The most events delivered per trip into the lock, and the nap after a batch of a steady stream.
    static let batchLimit = 1024
    static let nap: TimeInterval = 0.004

    /// Delivers in batches: one trip into the lock (and at most one wake-up) for everything that piled up.
    private func deliverLoop() {
        var batch: [Run] = []
        batch.reserveCapacity(Self.batchLimit)
        var spent: [[EngineEvent]] = []
        var busy = false
        while true {
            condition.lock()
            if !spent.isEmpty {
                if delivered.isEmpty { swap(&delivered, &spent) } else { delivered.append(contentsOf: spent) }
                spent.removeAll(keepingCapacity: true)
            }
            if busy && !closed && slots.isEmpty && optional.isEmpty && dropped == 0 {
                // Just delivered a batch of a steady stream: nap without asking producers to signal, so the stream
                // is taken in batches instead of a futex wake-up per event (with eight plugins on two cores, a
                // 1 ms nap cost about a third of the delivery's CPU in wake-ups). Adds at most `nap` to a steady
                // stream's latency; a trickle (a small batch) does not nap: its next event is delivered at once.
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.nap))
            }
            while !closed && slots.isEmpty && optional.isEmpty && dropped == 0 {
                sleeping = true
                condition.wait()
            }
            sleeping = false
            if closed {
                condition.unlock()
                break
            }
            if dropped > 0 {
                batch.append(.one(.lifecycle(.eventsDropped(dropped))))
                dropped = 0
            }
            var count = 0
            while count < Self.batchLimit, let next = takeNext() {
                if case .many(let events) = next { count += events.count } else { count += 1 }
                batch.append(next)
            }
            busy = count >= 16
            let target = plugin
            condition.unlock()
            let ended = !deliver(batch, to: target)
            for case .many(let events) in batch { spent.append(events) }
            batch.removeAll(keepingCapacity: true)
            if ended { break }
        }
        condition.withLock {
            threadEnded = true
            plugin = nil
        }
    }

    /// Delivers a batch in order, unless deliveries end; returns false when they did.
    private func deliver(_ batch: [Run], to target: Plugin?) -> Bool {
        guard let target else { return true }  // unwrapped once, not per event
        // `running` (whether `receiving` is set) is passed inout rather than captured by a nested function: a
        // captured `var` is boxed and checked for exclusive access at run time on every event.
        var running = false
        defer { if running { receiving.store(false, ordering: .releasing) } }
        for run in batch {
            switch run {
            case .one(let event):
                guard mayDeliver(&running) else { return false }
                target.receive(event)
            case .many(let events):
                for index in events.indices {
                    guard mayDeliver(&running) else { return false }
                    target.receive(events[index])
                }
            }
        }
        return true
    }

    /// Whether the next event may be delivered: waits while `stop()` is being asked, false once the plugin stopped.
    /// `receiving` is set before the flags are read and `hold()` sets its flag before reading `receiving` (both
    /// sequentially consistent), so either this delivery sees the hold or the holder sees it running — and then
    /// waits for it to clear, which happens before the next event at the latest.
    @inline(__always)
    private func mayDeliver(_ running: inout Bool) -> Bool {
        while true {
            if !running {
                receiving.store(true, ordering: .sequentiallyConsistent)
                running = true
            }
            if !holdRequested.load(ordering: .sequentiallyConsistent)
                && !closedFlag.load(ordering: .sequentiallyConsistent) { return true }
            receiving.store(false, ordering: .sequentiallyConsistent)
            running = false
            condition.lock()
            while holdRequested.load(ordering: .sequentiallyConsistent) && !closed { condition.wait() }
            let ended = closed
            condition.unlock()
            if ended { return false }
        }
    }

    /// Ends deliveries: undelivered events are discarded; an event being delivered finishes first. The delivery
    /// thread then ends and drops its reference to the plugin.
    func close() {
        condition.withLock {
            closed = true
            closedFlag.store(true, ordering: .sequentiallyConsistent)
            slots.removeAll()
            optional.removeAll()
            latestProgress.removeAll()
            delivered.removeAll()
            streams = .none
            if !started {
                threadEnded = true
                plugin = nil
            }
            condition.signal()
        }
    }

    /// Holds deliveries (the one under way finishes) so `stop()` is never asked while `receive` runs.
    func hold() {
        holdRequested.store(true, ordering: .sequentiallyConsistent)
    }

    /// Lets held deliveries go on (the plugin refused to stop).
    func release() {
        condition.withLock {
            holdRequested.store(false, ordering: .sequentiallyConsistent)
            condition.broadcast()
        }
    }

    /// Returns when no delivery is under way (after ``hold()``), or when `timeout` passes.
    func waitUntilQuiet(timeout: Duration) async -> Bool {
        await wait(timeout: timeout) {
            !self.receiving.load(ordering: .sequentiallyConsistent) || self.threadEnded
        }
    }

    /// Returns when the delivery thread has ended (after ``close()``), or when `timeout` passes.
    /// - Returns: True when it ended.
    func waitUntilEnded(timeout: Duration) async -> Bool {
        await wait(timeout: timeout) { self.threadEnded }
    }

    /// Waits until `predicate` (checked under the lock) holds, or `timeout` passes. It polls with a back-off
    /// from 50 µs to 5 ms: these waits are short and rare (removal, shutdown), and polling cannot lose a wake-up.
    private func wait(timeout: Duration, until predicate: @escaping @Sendable () -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        var pause = Duration.microseconds(50)
        while true {
            if condition.withLock(predicate) { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .milliseconds(5))
        }
    }

    /// Events waiting for delivery (for tests and diagnostics).
    var backlog: Int { condition.withLock { slots.count + optional.count } }
}
