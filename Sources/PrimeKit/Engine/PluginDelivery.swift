import DequeModule
import Foundation

/// The threads that deliver an engine's plugin mailboxes: one shared thread serves every mailbox that has events,
/// one batch at a time, in the order they became ready; a watchdog gives a plugin that blocks or runs slow a thread
/// of its own.
///
/// One thread for all plugins instead of one each: with eight plugins on two cores, eight delivery threads woke up,
/// took turns on the cores and passed the reference counts of shared events between them; one thread wakes once
/// for all of them and touches an event's count on one core.
///
/// **A slow plugin never stalls the others.** While the shared thread is inside one plugin's batch (its `receive`
/// calls), the watchdog looks at it every ``slowBatch``; a batch still running at the second look (after one to two
/// ``slowBatch``) *detaches* that thread: it stays with the slow plugin and, once the batch returns, goes on
/// delivering that plugin's mailbox only, as the plugin's own thread (named `primekit.plugin.<name>`) until the
/// plugin is removed, while a new shared thread takes over every other mailbox. Producers never wait for any of
/// these threads (see ``PluginSubscription``).
///
/// The shared thread and the watchdog start with the first mailbox that has events and end at ``stop()``; the
/// watchdog sleeps without a timeout while no batch is being delivered. An `NSCondition` guards everything below.
final class PluginDelivery: @unchecked Sendable {
    /// How long a batch may run before its plugin gets a thread of its own (checked once per this interval, so the
    /// others wait at most about twice this long).
    static let slowBatch: TimeInterval = 0.020
    /// The nap of the shared thread after a round with a batch of a steady stream (see ``PluginSubscription``).
    static let nap: TimeInterval = 0.004

    /// One shared thread's state, read by the watchdog (guarded by the pool's lock).
    private final class Server: @unchecked Sendable {
        /// The mailbox being delivered, or nil between batches.
        var serving: PluginSubscription?
        /// Counts batches, so the watchdog can tell a batch that went on from one that came after it.
        var batches: UInt64 = 0
    }

    private let condition = NSCondition()
    private var ready = Deque<PluginSubscription>()
    /// The shared thread serving `ready`, once started.
    private var server: Server?
    /// The shared thread waits for a mailbox to become ready: the next producer signals it.
    private var serverSleeping = false
    /// The watchdog waits, without a timeout, for a batch to begin.
    private var watchdogParked = false
    private var watchdogStarted = false
    private var stopped = false
    /// How many plugins were given a thread of their own (for tests and diagnostics).
    private var detachments = 0

    /// Puts a mailbox that has events (and was idle) in line for the shared thread. Called by producers after they
    /// released the mailbox's lock.
    func schedule(_ subscription: PluginSubscription) {
        condition.lock()
        ready.append(subscription)
        if server == nil && !stopped {
            startServer()
        } else if serverSleeping {
            serverSleeping = false
            condition.broadcast()  // the watchdog, if parked, would be woken by the batch anyway
        }
        if !watchdogStarted && !stopped {
            watchdogStarted = true
            let watchdog = Thread { [self] in watch() }
            watchdog.name = "primekit.plugins.watchdog"
            watchdog.start()
        }
        condition.unlock()
    }

    /// Ends the shared thread and the watchdog once the mailboxes already in line are served (they are closed by
    /// then, so serving them only lets them end). Plugins that have threads of their own end with their mailbox.
    func stop() {
        condition.withLock {
            stopped = true
            condition.broadcast()
        }
    }

    /// Plugins given a thread of their own so far.
    var detachedCount: Int { condition.withLock { detachments } }

    // MARK: - The shared thread

    /// Starts a shared thread; the pool's lock is held.
    private func startServer() {
        let fresh = Server()
        server = fresh
        let thread = Thread { [self] in serve(as: fresh) }
        thread.name = "primekit.plugins"
        thread.start()
    }

    private func serve(as me: Server) {
        var busy = false
        condition.lock()
        while true {
            guard let next = ready.popFirst() else {
                if stopped { break }
                if busy {
                    // After a round with a batch of a steady stream: nap without asking producers to signal, so the
                    // stream is taken in batches instead of one wake-up per event. A trickle is delivered at once.
                    busy = false
                    _ = condition.wait(until: Date(timeIntervalSinceNow: Self.nap))
                    continue
                }
                serverSleeping = true
                while serverSleeping && !stopped { condition.wait() }
                serverSleeping = false
                continue
            }
            me.serving = next
            me.batches &+= 1
            if watchdogParked {
                watchdogParked = false
                condition.broadcast()
            }
            condition.unlock()
            let (more, delivered) = next.deliverBatch()
            condition.lock()
            me.serving = nil
            if server !== me {
                // The watchdog detached this thread during the batch: it now belongs to `next`.
                condition.unlock()
                next.deliverOnOwnThread()
                return
            }
            busy = busy || delivered >= PluginSubscription.steadyBatch
            if more { ready.append(next) }
        }
        condition.unlock()
    }

    // MARK: - The watchdog

    private func watch() {
        /// The batch being timed: which server, which batch, since when.
        var watched: (server: Server, batch: UInt64, deadline: Date)?
        condition.lock()
        while !stopped {
            guard let current = server, let subscription = current.serving else {
                watched = nil
                watchdogParked = true
                while watchdogParked && !stopped { condition.wait() }
                watchdogParked = false
                continue
            }
            if let timed = watched, timed.server === current, timed.batch == current.batches {
                if Date() >= timed.deadline {
                    // Still the same batch: the plugin blocks or runs slow. Its thread stays with it.
                    subscription.detach()
                    detachments += 1
                    watched = nil
                    startServer()
                    continue
                }
                _ = condition.wait(until: timed.deadline)
            } else {
                let deadline = Date(timeIntervalSinceNow: Self.slowBatch)
                watched = (current, current.batches, deadline)
                _ = condition.wait(until: deadline)
            }
        }
        condition.unlock()
    }
}
