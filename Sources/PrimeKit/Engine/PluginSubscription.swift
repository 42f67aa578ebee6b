import DequeModule
import Foundation
import Synchronization

/// One installed plugin: its subscription mask and tag filter, and its bounded mailbox, which the engine's
/// ``PluginDelivery`` hands to the plugin one event at a time — on the shared delivery thread, or on a thread of its
/// own once the plugin was found blocking or slow.
///
/// Producers (workers, the engine, other plugins' threads) only take the mailbox lock for a few instructions and
/// never wait for the consumer: progress is coalesced per job in place (one slot per job), results and errors are
/// queued in full, pluginData and lifecycle events beyond ``capacity`` drop the oldest and are counted (the count is
/// delivered as ``LifecycleEvent/eventsDropped(_:)``). Events are delivered in the order they were offered.
/// At most one thread delivers a mailbox at a time: the mailbox is put in line for the shared thread when its first
/// event arrives and stays *scheduled* until a batch leaves it empty.
/// An `NSCondition` (which ThreadSanitizer understands) guards everything below.
final class PluginSubscription: @unchecked Sendable {
    private enum Slot {
        case progress(JobID)
        case event(EngineEvent)
        /// Results and errors offered together by the queue's tap: kept as the tap's array (one retain, not one
        /// per event) and delivered in its order.
        case ends(ArraySlice<EngineEvent>)
    }

    /// What the delivery thread takes out of the lock: one event, or a run of them shared with other mailboxes.
    private enum Run {
        case one(EngineEvent)
        case many(ArraySlice<EngineEvent>)

        /// The events it holds.
        var count: Int {
            if case .many(let events) = self { return events.count }
            return 1
        }
    }

    let name: String
    let capacity: Int
    private(set) var plugin: Plugin?
    private let delivery: PluginDelivery
    private let condition = NSCondition()
    /// Progress, results and errors, in order; each with its place in the overall order.
    private var slots = Deque<(UInt64, Slot)>()
    /// pluginData and lifecycle events (at most `capacity` in all: the oldest are dropped), with their place: one
    /// event, or a batch submission's announcements as one run shared by every mailbox (one slot, not one per job).
    private var optional = Deque<(UInt64, Run)>()
    /// The events in `optional`.
    private var optionalCount = 0
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
    /// In line for the shared delivery thread, or being delivered by it (so no producer puts it in line again).
    private var scheduled = false
    /// A producer made the mailbox scheduled and puts it in line once it released the lock.
    private var mustSchedule = false
    /// The plugin has a delivery thread of its own (it blocked or ran slow on the shared one).
    private var ownThread = false
    /// The plugin's own thread waits for events: the next producer signals it (once).
    private var sleeping = false
    /// No thread delivers this mailbox any more (after ``close()``), and the plugin has been let go.
    private var ended = false
    /// The batch being delivered: used only by the one thread delivering this mailbox, kept between batches for its
    /// capacity.
    private var batch: [Run] = []

    init(plugin: Plugin, capacity: Int, delivery: PluginDelivery) {
        self.plugin = plugin
        self.name = plugin.name
        self.capacity = max(1, capacity)
        self.delivery = delivery
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
        condition.lock()
        offerLocked(progress: progress, ends: ends, withErrors: withErrors)
        let schedule = takeSchedule()
        condition.unlock()
        if schedule { delivery.schedule(self) }
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
        slots.append((place(), .ends(kept[...])))
        wake()
    }

    /// Offers lifecycle events, of which only the newest ``capacity`` can survive: the older ones are counted as
    /// dropped without being queued first (a batch submission announces thousands of jobs at once).
    /// `droppedBefore` counts older announcements of the same batch that were never made.
    func offer(lifecycle events: [EngineEvent], droppedBefore: Int) {
        condition.lock()
        if !closed && streams.contains(.lifecycle) && !events.isEmpty {
            let kept = events.suffix(capacity)
            dropped += droppedBefore + events.count - kept.count
            dropOldest(optionalCount + kept.count - capacity)
            optional.append((place(), kept.count == 1 ? .one(kept[kept.startIndex]) : .many(kept)))
            optionalCount += kept.count
            wake()
        }
        let schedule = takeSchedule()
        condition.unlock()
        if schedule { delivery.schedule(self) }
    }

    func offer(_ event: EngineEvent) {
        condition.lock()
        append(event)
        let schedule = takeSchedule()
        condition.unlock()
        if schedule { delivery.schedule(self) }
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

    /// After an event was queued: wakes the plugin's own thread if it sleeps, or puts an idle mailbox in line for
    /// the shared thread (after the lock is released: see ``takeSchedule()``). Nothing before ``start()``.
    private func wake() {
        guard started else { return }
        if ownThread {
            if sleeping {
                sleeping = false
                condition.signal()
            }
        } else if !scheduled {
            scheduled = true
            mustSchedule = true
        }
    }

    /// Whether this producer must put the mailbox in line (once the lock is released).
    private func takeSchedule() -> Bool {
        defer { mustSchedule = false }
        return mustSchedule
    }

    private var hasWork: Bool { !slots.isEmpty || !optional.isEmpty || dropped > 0 }

    private func place() -> UInt64 {
        defer { nextPlace += 1 }
        return nextPlace
    }

    private func appendDroppable(_ event: EngineEvent) {
        dropOldest(optionalCount + 1 - capacity)
        optional.append((place(), .one(event)))
        optionalCount += 1
    }

    /// Drops the oldest `count` events of `optional` (none when `count` is not positive), counting them.
    private func dropOldest(_ count: Int) {
        var left = count
        while left > 0, let head = optional.first {
            let gone = min(left, head.1.count)
            if gone == head.1.count {
                optional.removeFirst()
            } else if case .many(let run) = head.1 {
                optional[optional.startIndex].1 = .many(run.dropFirst(gone))
            }
            left -= gone
            optionalCount -= gone
            dropped += gone
        }
    }

    // MARK: - Delivering

    /// Lets deliveries begin (after the plugin's `initialize` returned true): what arrived meanwhile goes in line.
    func start() {
        condition.lock()
        started = true
        let pending = !closed && hasWork
        if pending { scheduled = true }
        condition.unlock()
        if pending { delivery.schedule(self) }
    }

    /// Takes the next event, or run of events, to deliver, under the lock.
    private func takeNext() -> Run? {
        while true {
            if let head = optional.first, slots.first.map({ head.0 < $0.0 }) ?? true {
                let run = optional.removeFirst().1
                optionalCount -= run.count
                return run
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

    /// The most events delivered per trip into the lock; a batch of at least ``steadyBatch`` events is part of a
    /// steady stream, after which the delivering thread naps (``PluginDelivery/nap``) instead of being woken per
    /// event.
    static let batchLimit = 1024
    static let steadyBatch = 16

    /// Takes the next batch out of the mailbox (the lock is held): the dropped count first, then up to
    /// ``batchLimit`` events.
    /// - Returns: How many events the batch holds.
    private func takeBatch() -> Int {
        var count = 0
        if dropped > 0 {
            batch.append(.one(.lifecycle(.eventsDropped(dropped))))
            dropped = 0
            count = 1
        }
        while count < Self.batchLimit, let next = takeNext() {
            count += next.count
            batch.append(next)
        }
        return count
    }

    /// Delivers the batch taken by ``takeBatch()`` outside the lock; false when deliveries ended meanwhile.
    private func deliverTaken(to target: Plugin?) -> Bool {
        let going = deliver(batch, to: target)
        batch.removeAll(keepingCapacity: true)
        return going
    }

    /// No thread will deliver this mailbox again: the plugin is let go (the lock is held).
    private func endLocked() {
        ended = true
        scheduled = false
        plugin = nil
    }

    /// Delivers one batch on the shared delivery thread (the mailbox is scheduled, so no other thread delivers it).
    /// - Returns: Whether events are left (the mailbox stays scheduled and goes back in line), and how many were
    ///   delivered.
    func deliverBatch() -> (more: Bool, delivered: Int) {
        condition.lock()
        if closed {
            endLocked()
            condition.unlock()
            return (false, 0)
        }
        let count = takeBatch()
        let target = plugin
        condition.unlock()
        let going = count == 0 || deliverTaken(to: target)
        condition.lock()
        defer { condition.unlock() }
        if ownThread { return (false, count) }  // detached meanwhile: this thread now delivers it on its own
        if closed || !going {
            endLocked()
            return (false, count)
        }
        if !hasWork {
            scheduled = false
            return (false, count)
        }
        return (true, count)
    }

    /// Marks the mailbox as having a thread of its own: the thread now delivering it (blocked or slow in the
    /// plugin) keeps delivering it once the batch returns. Called by ``PluginDelivery``'s watchdog.
    func detach() {
        condition.withLock { ownThread = true }
    }

    /// The rest of a detached thread's life: delivers this mailbox in batches until it is closed.
    func deliverOnOwnThread() {
        Thread.current.name = "primekit.plugin.\(name)"
        var busy = false
        while true {
            condition.lock()
            if busy && !closed && !hasWork {
                // Just delivered a batch of a steady stream: nap without asking producers to signal.
                _ = condition.wait(until: Date(timeIntervalSinceNow: PluginDelivery.nap))
            }
            while !closed && !hasWork {
                sleeping = true
                condition.wait()
            }
            sleeping = false
            if closed {
                endLocked()
                condition.unlock()
                return
            }
            let count = takeBatch()
            busy = count >= Self.steadyBatch
            let target = plugin
            condition.unlock()
            if !deliverTaken(to: target) {
                condition.withLock { endLocked() }
                return
            }
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
                guard mayDeliver(&running) else { return false }
                target.receive(contentsOf: events)
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

    /// Ends deliveries: undelivered events are discarded; an event being delivered finishes first. The thread
    /// delivering it (if any) then lets the plugin go; a thread of its own ends.
    func close() {
        condition.withLock {
            closed = true
            closedFlag.store(true, ordering: .sequentiallyConsistent)
            slots.removeAll()
            optional.removeAll()
            optionalCount = 0
            latestProgress.removeAll()
            streams = .none
            if !started || !scheduled && !ownThread { endLocked() }
            condition.broadcast()
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
            !self.receiving.load(ordering: .sequentiallyConsistent) || self.ended
        }
    }

    /// Returns when no thread delivers this mailbox any more and the plugin was let go (after ``close()``), or when
    /// `timeout` passes.
    /// - Returns: True when it ended.
    func waitUntilEnded(timeout: Duration) async -> Bool {
        await wait(timeout: timeout) { self.ended }
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
    var backlog: Int { condition.withLock { slots.count + optionalCount } }
}
