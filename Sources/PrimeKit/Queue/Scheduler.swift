import DequeModule
import Foundation
import Synchronization

/// The engine behind a ``JobQueue``: ready deques by priority with aging, worker threads running slices, and
/// every job state change. All job transitions happen here, under the queue's mutex (and the job's).
final class Scheduler: Sendable {
    let configuration: JobQueue.Configuration
    let limits: KernelLimits
    let state: Mutex<SchedulerState>
    let nextJobID = Atomic<UInt64>(0)
    /// The target slice length; settable while the queue runs.
    let sliceNanoseconds: Atomic<Int64>
    /// `targetWorkers`, readable without the lock.
    let workerTarget: Atomic<Int>
    /// `queuedEntries`, readable without the lock by idle workers.
    let queuedHint = Atomic<Int>(0)
    /// Jobs submitted one at a time while every worker was busy, not registered yet (see ``Intake``).
    let intake = Mutex(Intake())
    /// The intake's own identity for ThreadSanitizer's view of its lock (see `Locking.swift`).
    let intakeAnchor = IntakeAnchor()
    /// Jobs in `intake`, readable without its lock.
    let intakeCount = Atomic<Int>(0)
    /// Workers parked in `idle`, readable without the lock: a submission may skip the queue's lock only while
    /// this is zero.
    let parkedWorkers = Atomic<Int>(0)
    /// The lowest priority among the jobs on workers (`Int.max` when a worker has none): a submission of a higher
    /// priority takes the lock, to preempt.
    let lowestRunningPriority = Atomic<Int>(Int.max)
    /// `longSliceCount`, readable without the lock: while every worker runs a long job's later slice, a submission
    /// takes the lock once to cut one of those slices short (see ``Scheduler/shareWorkers(with:_:_:)``).
    let longSliceHint = Atomic<Int>(0)

    init(configuration: JobQueue.Configuration) {
        self.configuration = configuration
        self.limits = KernelLimits(maxDigits: configuration.maxDigits, bpswDigits: configuration.bpswDigits)
        self.state = Mutex(SchedulerState(targetWorkers: max(1, configuration.maxConcurrentJobs)))
        self.workerTarget = Atomic(max(1, configuration.maxConcurrentJobs))
        self.sliceNanoseconds = Atomic(Self.nanoseconds(configuration.sliceDuration))
    }

    // MARK: - Workers

    /// Starts worker threads up to the target count.
    func startWorkers() {
        let slots = state.withLock(anchoredTo: self) { s -> Range<Int> in
            let missing = max(0, s.targetWorkers - s.workers)
            s.workers += missing
            let first = s.slots.count
            s.slots += Array(repeating: [], count: missing)
            s.slotPriorities += Array(repeating: Int.max, count: missing)
            s.longSlices += Array(repeating: nil, count: missing)
            return first..<(first + missing)
        }
        for slot in slots {
            let parker = Parker()
            let thread = Thread { [self] in runWorker(parker, slot: slot) }
            thread.name = "primekit-worker"
            thread.stackSize = 1 << 20
            thread.start()
        }
    }

    static func nanoseconds(_ duration: Duration, floor: Int64 = 10_000) -> Int64 {
        let (seconds, overflow) = duration.components.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? floor : .max }
        return max(floor, seconds &+ duration.components.attoseconds / 1_000_000_000)
    }

    var maxConcurrentJobs: Int {
        get { workerTarget.load(ordering: .relaxed) }
        set {
            let wake = state.withLock(anchoredTo: self) { s -> [Parker] in
                s.targetWorkers = max(1, newValue)
                workerTarget.store(s.targetWorkers, ordering: .relaxed)
                defer {
                    s.idle.removeAll()
                    publishIdle(s)
                }
                return s.idle
            }
            for parker in wake { parker.unpark() }
            startWorkers()
        }
    }

    /// Installs or removes the queue-wide observer; `progress` asks it for every job's progress snapshots too.
    func setTap(_ tap: QueueTap?, progress: Bool) {
        state.withLock(anchoredTo: self) { s in
            s.tap = tap
            s.tapProgress = tap != nil && progress
            s.tapHoldsResults = tap?.holdsResults ?? false
        }
    }

    /// The most small jobs a worker takes per trip into the lock.
    static let batchLimit = 256
}
