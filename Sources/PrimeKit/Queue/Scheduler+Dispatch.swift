import DequeModule
import Foundation
import Synchronization

/// Choosing what a worker runs next: priorities, aging, batching of small jobs, preemption.
extension Scheduler {
    // MARK: - Dispatch

    /// Takes the best valid entry. The level: the highest priority, unless a lower level's oldest entry has waited
    /// long enough (`agingSlices` dispatches per level) to outrank it. Within a level, a piece that has not run yet
    /// goes first (first in first out: the start order), unless the oldest piece between slices has waited
    /// `agingSlices` dispatches; pieces between slices take turns (each goes to the back after its slice). So a new
    /// job never waits for the long jobs of its priority to end, and new work delays a long job by at most
    /// `agingSlices` dispatches of its level.
    /// - Parameter limit: When set, take an entry only if its job's estimated work is below it (else leave it).
    func dispatch(_ s: inout SchedulerState, _ effects: inout Effects, smallerThan limit: Double?)
        -> Assignment?
    {
        guard s.dispatchAllowed else { return nil }
        let aging = UInt64(max(1, configuration.agingSlices))
        while true {
            // Scored on the deques alone; only the winner's job is locked, once, to check the entry and take it.
            var bestLevel = -1
            var bestScore: UInt64 = 0
            let anyContinuing = s.continuingEntries > 0
            for level in stride(from: s.fresh.count - 1, through: 0, by: -1) {
                // The heads' stamps only: copying the entries would retain their jobs.
                let oldest: UInt64
                switch (s.fresh[level].headStamp, anyContinuing ? s.continuing[level].headStamp : nil) {
                case (nil, nil): continue
                case (let stamp?, nil), (nil, let stamp?): oldest = stamp
                case (let new?, let old?): oldest = min(new, old)
                }
                let score = UInt64(level) * aging + (s.clock - oldest)
                if bestLevel < 0 || score > bestScore {
                    bestLevel = level
                    bestScore = score
                }
            }
            guard bestLevel >= 0 else { return nil }
            let continuing: Bool
            if s.fresh[bestLevel].isEmpty {
                continuing = true
            } else if anyContinuing, let old = s.continuing[bestLevel].headStamp {
                continuing = s.clock - old >= aging
            } else {
                continuing = false
            }
            let entry = continuing ? s.continuing[bestLevel].first! : s.fresh[bestLevel].first!
            if let limit, entry.job.estimatedWork >= limit || !entry.job.onePiece { return nil }
            let budget = s.budget
            let taken: Assignment? = entry.job.core.withLock(anchoredTo: entry.job) { core in
                guard isDispatchable(entry, &core) else { return nil }
                core.pieces.update(entry.piece) {
                    $0.queued = false
                    $0.onWorker = true
                }
                if core.pieces.read(entry.piece, \.ecmShare) {
                    let running = core.pieces.reduce(0) { $0 + ($1.ecmShare && $1.onWorker ? 1 : 0) }
                    core.peakSharesOnWorkers = max(core.peakSharesOnWorkers, UInt8(clamping: running))
                }
                if core.state == .ready { transition(entry.job, &core, to: .running, &s, &effects) }
                let single = core.pieces.count == 1, priority = core.priority
                return core.pieces.update(entry.piece) { piece in  // read in place: no copy of the whole piece
                    Assignment(
                        job: entry.job, piece: entry.piece, kernel: piece.kernel, range: piece.range,
                        workBefore: piece.progress.workDone, factorsKnown: piece.factors.count, budget: budget,
                        single: single, priority: priority, continuing: continuing)
                }
            }
            if continuing {
                s.continuing[bestLevel].removeFirst()
                s.continuingEntries -= 1
            } else {
                s.fresh[bestLevel].removeFirst()
            }
            s.queuedEntries -= 1
            queuedHint.store(s.queuedEntries, ordering: .relaxed)
            guard let taken else { continue }  // a stale or held entry: dropped, look again
            s.clock += 1
            return taken
        }
    }

    /// Whether a deque entry may run now (its job's lock is held). An entry of a job waiting to come to rest (pause,
    /// cancel, checkpoint) is held: dropped from the deque and re-queued when the job settles.
    func isDispatchable(_ entry: ReadyEntry, _ core: inout JobCore) -> Bool {
        // A job's pieces can become fewer while entries of the old ones wait (ECM shares merged into one job).
        guard entry.piece < core.pieces.count,
              core.pieces.read(entry.piece, { $0.queued && $0.token == entry.token })
        else { return false }
        if core.holdRequested || !(core.state == .ready || core.state == .running) {
            core.pieces.update(entry.piece) { $0.queued = false }
            return false
        }
        return true
    }

    /// Puts a piece at the back of its priority's fresh entries (new work, which may preempt) or continuing entries
    /// (a piece between slices, which takes its turn after the others).
    func enqueue(_ job: Job, _ core: inout JobCore, piece: Int, continuing: Bool, _ s: inout SchedulerState,
                 _ effects: inout Effects) {
        s.nextToken += 1
        let token = s.nextToken
        core.pieces.update(piece) {
            $0.token = token
            $0.queued = true
        }
        let entry = ReadyEntry(job: job, piece: piece, token: s.nextToken, enqueuedAt: s.clock)
        let level = core.priority.rawValue
        if continuing {
            s.continuing[level].append(entry)
            s.continuingEntries += 1
        } else {
            s.fresh[level].append(entry)
        }
        s.queuedEntries += 1
        queuedHint.store(s.queuedEntries, ordering: .relaxed)
        guard s.dispatchAllowed else { return }
        if let parker = s.idle.popLast() {
            publishIdle(s)
            effects.add { parker.unpark() }
        } else if !continuing {
            preempt(for: core.priority, &s, &effects)
        }
    }

    /// Enqueues every unfinished piece that is not queued or on a worker. As new work only the first: a split job
    /// starts in its turn, and its other pieces wait among the pieces between slices (they take turns with the long
    /// work, and a job submitted after it does not wait for each of them to have had a slice).
    func enqueueRestingPieces(_ job: Job, _ core: inout JobCore, continuing: Bool, _ s: inout SchedulerState,
                              _ effects: inout Effects) {
        var any = false
        for index in core.pieces.indices
        where core.pieces.read(index, { !$0.finished && !$0.onWorker && !$0.queued }) {
            enqueue(job, &core, piece: index, continuing: continuing || any, &s, &effects)
            any = true
        }
        // Every piece finished (a restored checkpoint of a finished job): step one to collect the answer.
        if !any, core.piecesOnWorkers == 0, !core.merging, core.pieces.allSatisfy(\.finished) {
            core.pieces.update(0) { $0.finished = false }
            enqueue(job, &core, piece: 0, continuing: continuing, &s, &effects)
        }
    }

    /// A new job of `priority` is waiting and no worker is parked: cut a running slice short, so the job starts
    /// within about a millisecond instead of at the end of a slice — the slice of the lowest-priority running job
    /// when that is lower, else, when every worker runs a long job's later slice, one of those
    /// (``shareWorkers(with:_:_:)``).
    func preempt(for priority: JobPriority, _ s: inout SchedulerState, _ effects: inout Effects) {
        if !preemptForPriority(priority, &s, &effects) { shareWorkers(with: priority, &s, &effects) }
    }

    /// Interrupts the lowest-priority running job's piece if its priority is below `priority`; returns whether it
    /// found one.
    func preemptForPriority(_ priority: JobPriority, _ s: inout SchedulerState, _ effects: inout Effects) -> Bool {
        guard let lowest = s.slotPriorities.min(), lowest < priority.rawValue else { return false }
        var victim: (JobPriority, KernelJob)?
        for job in s.slots.joined() {
            job.core.withLock(anchoredTo: job) { core in
                guard core.priority < priority, victim == nil || core.priority < victim!.0 else { return }
                if let kernel = core.pieces.first(where: { $0.onWorker && $0.kernel != nil })?.kernel {
                    victim = (core.priority, kernel)
                }
            }
        }
        guard let kernel = victim?.1 else { return false }
        effects.add { kernel.interrupt() }
        return true
    }

    /// Every worker runs a long job's later slice (a piece that has had a slice before) and a new job of `priority`
    /// waits: the slice of the lowest priority among them, unless that is above `priority`, is cut short (its piece
    /// goes behind the new job, as at the end of any slice). A slice is cut once; a long job on its first slice is
    /// never cut, so it always gets at least one slice's work in.
    func shareWorkers(with priority: JobPriority, _ s: inout SchedulerState, _ effects: inout Effects) {
        guard s.longSliceCount > 0, s.longSliceCount >= s.workers, s.dispatchAllowed else { return }
        var victim = -1
        for slot in s.longSlices.indices where s.longSlices[slot] != nil {
            if victim < 0 || s.slotPriorities[slot] < s.slotPriorities[victim] { victim = slot }
        }
        guard victim >= 0, s.slotPriorities[victim] <= priority.rawValue, let kernel = s.longSlices[victim] else { return }
        setLongSlice(nil, slot: victim, &s)
        effects.add { kernel.interrupt() }
    }

    /// A job joined the intake while every worker seemed to run a long job's later slice: cut one short (under the
    /// queue's lock, once per such state; the intake's jobs are registered by the worker it frees).
    func shareWorkers(with priority: JobPriority) {
        var effects = Effects()
        state.withLock(anchoredTo: self) { s in shareWorkers(with: priority, &s, &effects) }
        effects.run()
    }

    /// Records the kernel job of the long piece a slot runs (nil: none), keeping the count and its hint.
    @inline(__always)
    func setLongSlice(_ kernel: KernelJob?, slot: Int, _ s: inout SchedulerState) {
        let had = s.longSlices[slot] != nil
        guard had || kernel != nil else { return }
        s.longSlices[slot] = kernel
        s.longSliceCount += (kernel == nil ? 0 : 1) - (had ? 1 : 0)
        longSliceHint.store(s.longSliceCount, ordering: .sequentiallyConsistent)
    }
}

extension Deque where Element == ReadyEntry {
    /// When the oldest entry was queued (nil when empty), read without copying the entry.
    @inline(__always)
    var headStamp: UInt64? { isEmpty ? nil : self[startIndex].enqueuedAt }
}
