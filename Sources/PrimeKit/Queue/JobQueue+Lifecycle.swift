/// The app lifecycle: background and foreground, page navigation (reset), blocks that run only while active, and
/// teardown.
extension JobQueue {
    /// True unless the queue is in the background.
    public var isActive: Bool { activeBlocks.isActive }

    /// The app went to the background: every running job stops at its next slice with a checkpoint, nothing new
    /// starts, and ``performWhenActive(_:onCancel:)`` blocks are held.
    /// - Returns: The checkpoints of the jobs this paused, by job id (to persist if the app may be killed).
    @discardableResult
    public func enterBackground() async -> [JobID: Checkpoint] {
        activeBlocks.setActive(false)
        scheduler.hold(background: true)
        await scheduler.wait(for: .quiet)
        return scheduler.queuePausedCheckpoints()
    }

    /// The app came back: jobs paused by ``enterBackground()`` continue (unless the queue is also suspended) and
    /// held blocks run.
    public func enterForeground() {
        scheduler.release(background: true)
        activeBlocks.setActive(true)
    }

    /// Cancels every job (reason ``CancellationReason/reset``) and drops pending blocks, then leaves the queue
    /// ready for new work — what a page navigation does. Suspension and background state are kept.
    /// - Returns: The ids of the jobs the reset cancelled, in id order: exactly those of its jobs that ended
    ///   `cancelled` (a job whose last slice was ending on a worker at that moment may have succeeded or failed
    ///   instead, and is not listed).
    @discardableResult
    public func reset() async -> [JobID] {
        activeBlocks.cancelPending()
        let asked = scheduler.cancelAll(reason: .reset)
        await scheduler.wait(for: .empty)
        scheduler.clearFinishedCounts()
        // Every job asked is finished now: its state is final.
        return asked.filter { $0.state == .cancelled }.map(\.id)
    }

    /// Runs `block` once the queue is active (at once if it is), after every block submitted before it; blocks
    /// run one at a time on a serial thread of their own.
    /// - Parameters:
    ///   - block: The work.
    ///   - onCancel: Runs instead of `block` if the block is dropped by ``reset()`` or ``tearDown(_:)``.
    /// - Throws: ``PrimeKitError`` `queueShutDown` after ``tearDown(_:)``.
    public func performWhenActive(_ block: @escaping @Sendable () -> Void,
                                  onCancel: (@Sendable () -> Void)? = nil) throws(PrimeKitError) {
        try activeBlocks.add(block, onCancel: onCancel)
    }

    /// Shuts the queue down. Afterwards submissions and blocks are refused with `queueShutDown`.
    /// - Parameter policy: ``TeardownPolicy/cancel`` drops pending blocks and cancels jobs;
    ///   ``TeardownPolicy/drain`` runs pending blocks and lets queued jobs finish first.
    public func tearDown(_ policy: TeardownPolicy) async {
        switch policy {
        case .cancel:
            activeBlocks.cancelPending(close: true)
        case .drain:
            await activeBlocks.drainAndClose()
            scheduler.release(background: false)
            scheduler.release(background: true)
            await scheduler.wait(for: .idle)
        }
        scheduler.shutdown()
        await scheduler.wait(for: .empty)
    }
}
