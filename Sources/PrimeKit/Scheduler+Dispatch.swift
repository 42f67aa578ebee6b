import DequeModule
import Foundation
import Synchronization

/// Choosing what a worker runs next: priorities, aging, batching of small jobs, preemption.
extension Scheduler {
    // MARK: - Dispatch

    /// Takes the best valid entry: the highest priority, unless a lower level's oldest entry has waited long enough
    /// (`agingSlices` dispatches per level) to outrank it. Within a level, first in first out.
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
            for level in stride(from: s.levels.count - 1, through: 0, by: -1) {
                guard let head = s.levels[level].first else { continue }
                let score = UInt64(level) * aging + (s.clock - head.enqueuedAt)
                if bestLevel < 0 || score > bestScore {
                    bestLevel = level
                    bestScore = score
                }
            }
            guard bestLevel >= 0 else { return nil }
            let entry = s.levels[bestLevel].first!
            if let limit, entry.job.estimatedWork >= limit || entry.job.pieceCount > 1 { return nil }
            let budget = s.budget
            let taken: Assignment? = entry.job.core.withLock(anchoredTo: entry.job) { core in
                guard isDispatchable(entry, &core) else { return nil }
                core.pieces.update(entry.piece) {
                    $0.queued = false
                    $0.onWorker = true
                }
                if core.state == .ready { transition(entry.job, &core, to: .running, &s, &effects) }
                let single = core.pieces.count == 1, priority = core.priority
                return core.pieces.update(entry.piece) { piece in  // read in place: no copy of the whole piece
                    Assignment(
                        job: entry.job, piece: entry.piece, kernel: piece.kernel, range: piece.range,
                        workBefore: piece.progress.workDone, factorsKnown: piece.factors.count, budget: budget,
                        single: single, priority: priority)
                }
            }
            s.levels[bestLevel].removeFirst()
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
        guard core.pieces.read(entry.piece, { $0.queued && $0.token == entry.token }) else { return false }
        if core.holdRequested || !(core.state == .ready || core.state == .running) {
            core.pieces.update(entry.piece) { $0.queued = false }
            return false
        }
        return true
    }

    /// Puts a piece in its priority's deque: at the back (new work) or the front (a job continuing between slices).
    func enqueue(_ job: Job, _ core: inout JobCore, piece: Int, front: Bool, _ s: inout SchedulerState,
                         _ effects: inout Effects) {
        s.nextToken += 1
        let token = s.nextToken
        core.pieces.update(piece) {
            $0.token = token
            $0.queued = true
        }
        let entry = ReadyEntry(job: job, piece: piece, token: s.nextToken, enqueuedAt: s.clock)
        let level = core.priority.rawValue
        if front { s.levels[level].prepend(entry) } else { s.levels[level].append(entry) }
        s.queuedEntries += 1
        queuedHint.store(s.queuedEntries, ordering: .relaxed)
        guard s.dispatchAllowed else { return }
        if let parker = s.idle.popLast() {
            publishIdle(s)
            effects.add { parker.unpark() }
        } else if !front {
            preemptForPriority(core.priority, &s, &effects)
        }
    }

    /// Enqueues every unfinished piece that is not queued or on a worker.
    func enqueueRestingPieces(_ job: Job, _ core: inout JobCore, front: Bool, _ s: inout SchedulerState,
                                      _ effects: inout Effects) {
        var any = false
        for index in core.pieces.indices
        where core.pieces.read(index, { !$0.finished && !$0.onWorker && !$0.queued }) {
            enqueue(job, &core, piece: index, front: front, &s, &effects)
            any = true
        }
        // Every piece finished (a restored checkpoint of a finished job): step one to collect the answer.
        if !any, core.piecesOnWorkers == 0, !core.merging, core.pieces.allSatisfy(\.finished) {
            core.pieces.update(0) { $0.finished = false }
            enqueue(job, &core, piece: 0, front: front, &s, &effects)
        }
    }

    /// A job of `priority` is waiting and every worker is busy: cut the slice of the lowest-priority running job
    /// short, so the new job starts within about a millisecond instead of a whole slice.
    func preemptForPriority(_ priority: JobPriority, _ s: inout SchedulerState, _ effects: inout Effects) {
        guard let lowest = s.slotPriorities.min(), lowest < priority.rawValue else { return }
        var victim: (JobPriority, KernelJob)?
        for listed in s.slots.joined() {
            let job = listed.takeUnretainedValue()
            job.core.withLock(anchoredTo: job) { core in
                guard core.priority < priority, victim == nil || core.priority < victim!.0 else { return }
                if let kernel = core.pieces.first(where: { $0.onWorker && $0.kernel != nil })?.kernel {
                    victim = (core.priority, kernel)
                }
            }
        }
        if let kernel = victim?.1 { effects.add { kernel.interrupt() } }
    }
}
