import Foundation
import PrimeKit

/// job/submit, job/pause, job/resume, job/cancel, job/status, job/list.
extension BridgeServer {
    func submit(_ params: Params) throws(RPCError) -> Answer {
        var request: JobRequest
        if let value = params["checkpoint"] {
            for field in ["kind", "candidate", "from", "bound", "first", "last"] + Self.effortFields
            where params[field] != nil {
                throw RPCError.invalidParams(field, "not allowed with a checkpoint (it holds the job's own)",
                                             got: params[field])
            }
            guard case .string(let text) = value else {
                throw RPCError.invalidParams("checkpoint", "must be the checkpoint's text", got: value)
            }
            let checkpoint: Checkpoint
            do {
                checkpoint = try Checkpoint(text: text)
            } catch {
                throw RPCError.from(error, field: "checkpoint")
            }
            request = .restore(checkpoint)
        } else {
            let kindName = try params.requiredString("kind")
            guard let kind = JobKind(rawValue: kindName) else {
                throw RPCError.invalidParams("kind", "must be \"factor\", \"isPrime\" or \"factorRange\"",
                                             got: .string(kindName))
            }
            if kind == .factorRange {
                request = try Self.rangeRequest(params)
            } else {
            for field in ["first", "last"] where params[field] != nil {
                throw RPCError.invalidParams(field, "belongs to factorRange jobs only", got: params[field])
            }
            let candidate = try candidate(params)
            let from = try params.decimal("from")
            let bound = try params.decimal("bound")
            request = kind == .factor ? .factor(candidate, from: from, bound: bound)
                                      : .isPrime(candidate, from: from, bound: bound)
            request = try Self.effort(params, trialRange: from != nil || bound != nil, applyTo: request)
            }
        }
        if let value = params["priority"] {
            request.priority = try Self.priority(value)
        }
        if let milliseconds = try params.integer("progressIntervalMs", in: 1...86_400_000) {
            request.progressInterval = .milliseconds(milliseconds)
        }
        if let value = params["dependsOn"] {
            request.dependencies = try dependencies(value)
        }
        if let keep = try params.bool("finalCheckpoint") {
            request.keepsFinalCheckpoint = keep
        }
        // The bridge's own count includes jobs that finished but are not reported yet, so it is an upper bound:
        // the queue's exact count (a lock shared with the workers) is read only near the limit.
        var active = registry.withLock(anchoredTo: self) { $0.live.count }
        if active >= limits.maxActiveJobs { active = engine.queue.counts.unfinished }
        guard active < limits.maxActiveJobs else {
            var data = JSONWriter()
            data.object { out in
                out.member("retryAfterMs", number: 100)
                out.member("activeJobs", number: active)
            }
            throw RPCError(code: RPCError.busy, message: "busy: \(active) unfinished jobs, the limit is "
                           + "\(limits.maxActiveJobs)", data: data.bytes)
        }
        let job: Job
        do {
            job = try engine.submit(request)
        } catch where request.kind == .factorRange
                    && (error.code == .invalidOptions || error.code == .candidateOutOfRange
                        || error.code == .candidateTooLarge) {
            // The ends were refused: `first` below 2, or above `last`, or an end longer than the digit limit.
            let field = error.code == .candidateOutOfRange
                || (error.code == .candidateTooLarge && error.message.hasPrefix("first")) ? "first" : "last"
            throw RPCError.invalidParams(field, error.message, got: params[field])
        } catch where error.code == .invalidOptions {
            // The kernel refused the divisor range: name the member to blame.
            let field = params["bound"] != nil ? "bound" : (params["from"] != nil ? "from" : "candidate")
            throw RPCError.invalidParams(field, error.message, got: params[field])
        } catch {
            throw RPCError.from(error, field: error.code == .candidateTooLarge ? "candidate" : nil)
        }
        let waiting = registry.withLock(anchoredTo: self) { registry in
            registry.live[job.id] = job
            return registry.settledWaiters > 0
        }
        if waiting { settled.withLock { settled.broadcast() } }  // the plugin may be waiting for this job's handle
        if job.kind == .factorRange { startRangeStream(job) }
        var answer = Answer.ok { out in
            out.member("jobId", string: job.id.description)
            out.member("state", string: WireFormat.name(job.state))
        }
        answer.announcing = [job.id]
        return answer
    }

    /// A `factorRange` request from `first` and `last` (decimal strings); nothing else of a new job's
    /// members but the common ones (`priority`, `progressIntervalMs`, `dependsOn`) goes with them.
    private static func rangeRequest(_ params: Params) throws(RPCError) -> JobRequest {
        for field in ["candidate", "from", "bound"] + effortFields where params[field] != nil {
            throw RPCError.invalidParams(field, "does not go with factorRange (it takes first and last)",
                                         got: params[field])
        }
        guard let first = try params.decimal("first") else { throw RPCError.invalidParams("first", "is required", got: nil) }
        guard let last = try params.decimal("last") else { throw RPCError.invalidParams("last", "is required", got: nil) }
        return .factorRange(first, last)
    }

    /// Starts sending a range job's blocks (its `job/finished` follows the last one).
    func startRangeStream(_ job: Job) {
        let stream = RangeStream(job: job, outbox: outbox) { [weak self] id in
            guard let self else { return }
            _ = rangeStreams.withLock(anchoredTo: self) { $0.removeValue(forKey: id) }
        }
        rangeStreams.withLock(anchoredTo: self) { $0[job.id] = stream }
        stream.start()
    }

    /// `job/ack`: `{jobId, seq}`, the client has read the range job's blocks up to `seq`; more may be sent.
    func acknowledge(_ params: Params) throws(RPCError) -> Answer {
        let id = try params.jobID()
        guard let seq = try params.count("seq", in: 0...UInt64.max) else {
            throw RPCError.invalidParams("seq", "is required", got: nil)
        }
        let stream = rangeStreams.withLock(anchoredTo: self) { $0[id] }
        guard let stream else {
            let (kind, state) = registry.withLock(anchoredTo: self) { registry -> (JobKind?, JobState?) in
                if let live = registry.live[id] { return (live.kind, live.state) }
                if let finished = registry.finished[id] { return (finished.kind, finished.state) }
                return (nil, registry.previous[id].map(Self.state(of:)))
            }
            if let kind, let state, kind != .factorRange {
                throw RPCError.invalidState(id, state, "only a factorRange job's blocks are acknowledged")
            }
            if state != nil {
                // Its stream has ended: every block was sent. Nothing left to acknowledge.
                return .ok { out in out.member("jobId", string: id.description) }
            }
            throw RPCError.jobNotFound(id.description)
        }
        guard let sent = stream.acknowledge(seq) else {
            throw RPCError.invalidParams("seq", "is above the last block sent", got: params["seq"])
        }
        return .ok { out in
            out.member("jobId", string: id.description)
            out.member("sent", number: sent)
        }
    }

    /// The members that choose how hard a new job searches (docs/protocol.md, job/submit).
    static let effortFields = ["mode", "ecmDigits", "workLimit", "timeLimitMs"]

    /// `mode`, `ecmDigits`, `workLimit` and `timeLimitMs` applied to a new job's request. A job given `from` or
    /// `bound` is a trial-division job; `"mode":"complete"` and the effort limits do not go with it.
    static func effort(_ params: Params, trialRange: Bool, applyTo request: JobRequest) throws(RPCError)
        -> JobRequest {
        var request = request
        var trial = trialRange
        if let value = params["mode"] {
            guard case .string(let name) = value, name == "complete" || name == "trial" else {
                throw RPCError.invalidParams("mode", "must be \"complete\" or \"trial\"", got: value)
            }
            if name == "complete" && trialRange {
                let field = params["from"] != nil ? "from" : "bound"
                throw RPCError.invalidParams("mode", "\"complete\" does not go with \(field) (a divisor range makes "
                                             + "a trial-division job)", got: value)
            }
            trial = trial || name == "trial"
        }
        let ecmDigits = try params.integer("ecmDigits", in: 1...70)
        let workLimit = try params.count("workLimit", in: 1...UInt64.max)
        let timeLimit = try params.integer("timeLimitMs", in: 1...9_007_199_254_740_991)
        if trial {
            for field in effortFields.dropFirst() where params[field] != nil {
                throw RPCError.invalidParams(field, "applies to complete jobs only, not to trial division ("
                                             + (trialRange ? "from or bound given" : "\"mode\":\"trial\"") + ")",
                                             got: params[field])
            }
            return trialRange ? request : request.trialDivision()
        }
        if ecmDigits != nil || workLimit != nil || timeLimit != nil {
            request = request.effort(ecmDigits: ecmDigits, workLimit: workLimit,
                                     timeLimit: timeLimit.map { Duration.milliseconds($0) })
        }
        return request
    }

    /// The candidate: a string of decimal digits, at least 2, at most ``BridgeLimits/maxDigits`` digits.
    func candidate(_ params: Params) throws(RPCError) -> String {
        guard let value = params["candidate"] else { throw RPCError.invalidParams("candidate", "is required", got: nil) }
        guard case .string(let text) = value else {
            throw RPCError.invalidParams("candidate", Params.numberReason(value), got: value)
        }
        let digits = text.utf8.count
        let maxDigits = min(limits.maxDigits, engine.settings.effective.maxDigits)
        if digits > maxDigits, CandidateCheck.problem(with: text, maxDigits: .max) == nil {
            var data = JSONWriter()
            data.object { out in
                out.member("field", string: "candidate")
                out.member("digits", number: digits)
                out.member("maxDigits", number: maxDigits)
            }
            throw RPCError(code: RPCError.candidateTooLarge,
                           message: "candidate has \(digits) digits, more than the limit of \(maxDigits)",
                           data: data.bytes)
        }
        if let problem = CandidateCheck.problem(with: text, maxDigits: .max) {
            throw RPCError.invalidParams("candidate", problem.reason, got: value)
        }
        return text
    }

    private static func priority(_ value: JSONValue) throws(RPCError) -> JobPriority {
        switch value {
        case .string(let name):
            if let priority = WireFormat.priority(named: name) { return priority }
        case .number:
            return JobPriority(rawValue: try Params.integer(value, field: "priority", in: 0...4))!
        default:
            break
        }
        throw RPCError.invalidParams("priority", "must be veryLow, low, normal, high or veryHigh (or 0–4)", got: value)
    }

    private func dependencies(_ value: JSONValue) throws(RPCError) -> [Job] {
        guard case .array(let elements) = value else {
            throw RPCError.invalidParams("dependsOn", "must be an array of job ids", got: value)
        }
        var jobs: [Job] = []
        for element in elements {
            let id = try Params.jobID(element, field: "dependsOn")
            enum Found { case job(Job), succeeded, failedEarlier, unknown }
            let found: Found = registry.withLock(anchoredTo: self) { registry in
                if let job = registry.live[id] ?? registry.finished[id]?.job { return .job(job) }
                if registry.finished[id]?.state == .succeeded { return .succeeded }
                if let stored = registry.previous[id] {
                    return Self.state(of: stored) == .succeeded ? .succeeded : .failedEarlier
                }
                return .unknown
            }
            switch found {
            case .job(let job): jobs.append(job)
            case .succeeded: continue  // already satisfied
            case .failedEarlier:
                throw RPCError(code: RPCError.invalidState,
                               message: "dependency \(id) failed in an earlier run; it cannot succeed")
            case .unknown: throw RPCError.jobNotFound(id.description)
            }
        }
        return jobs
    }

    /// The unfinished job with the `jobId` of `params`, or the right error.
    private func liveJob(_ params: Params, for action: String) throws(RPCError) -> Job {
        let id = try params.jobID()
        let (live, finished) = registry.withLock(anchoredTo: self) { registry -> (Job?, JobState?) in
            (registry.live[id], registry.finished[id]?.state ?? registry.previous[id].map(Self.state(of:)))
        }
        if let live { return live }
        if let finished { throw RPCError.invalidState(id, finished, "finished jobs cannot \(action)") }
        throw RPCError.jobNotFound(id.description)
    }

    static func state(of stored: StoredResult) -> JobState {
        if case .success = stored.outcome { return .succeeded }
        return .failed
    }

    func pause(_ params: Params) throws(RPCError) -> Reply {
        let job = try liveJob(params, for: "be paused")
        if job.state == .pending {
            throw RPCError.invalidState(job.id, .pending, "a job waiting for its dependencies cannot be paused")
        }
        return .later { [self] in
            do {
                let checkpoint = try await engine.pause(job)
                var answer = Answer.ok { out in
                    out.member("jobId", string: job.id.description)
                    out.member("state", string: "paused")
                    out.member("checkpoint", string: checkpoint.text)
                }
                answer.pausing = job.id
                return answer
            } catch {
                return .error(RPCError.invalidState(job.id, job.state, "it cannot be paused"))
            }
        }
    }

    func resume(_ params: Params) throws(RPCError) -> Answer {
        let job = try liveJob(params, for: "be resumed")
        do {
            try job.resume()
        } catch {
            throw RPCError.invalidState(job.id, job.state, "only a paused job can be resumed")
        }
        var answer = Answer.ok { out in
            out.member("jobId", string: job.id.description)
            out.member("state", string: WireFormat.name(job.state))
        }
        answer.resuming = job.id
        return answer
    }

    func cancel(_ params: Params) throws(RPCError) -> Reply {
        let id = try params.jobID()
        let (live, finished) = registry.withLock(anchoredTo: self) { ($0.live[id], $0.finished[id]) }
        if let finished, finished.state != .cancelled {
            throw RPCError.invalidState(id, finished.state, "a finished job cannot be cancelled")
        }
        guard let job = live ?? finished?.job else {
            if let previous = registry.withLock(anchoredTo: self, { $0.previous[id] }) {
                throw RPCError.invalidState(id, Self.state(of: previous), "a finished job cannot be cancelled")
            }
            throw RPCError.jobNotFound(id.description)
        }
        return .later {
            // Pause first so the checkpoint is exactly where the job stopped, then cancel.
            var checkpoint: Checkpoint?
            if job.state == .running || job.state == .ready { checkpoint = try? await job.pause() }
            job.cancel()
            if checkpoint == nil { checkpoint = try? await job.checkpoint() }
            let state = job.state
            guard state == .cancelled else {
                return .error(RPCError.invalidState(id, state, "it finished before it could be cancelled"))
            }
            return .ok { out in
                out.member("jobId", string: id.description)
                out.member("state", string: "cancelled")
                if let checkpoint { out.member("checkpoint", string: checkpoint.text) }
            }
        }
    }

    func status(_ params: Params) throws(RPCError) -> Reply {
        let id = try params.jobID()
        let wantsCheckpoint = try params.bool("checkpoint") ?? false
        let (live, finished, previous) = registry.withLock(anchoredTo: self) { ($0.live[id], $0.finished[id], $0.previous[id]) }
        if let finished {
            return .now(.ok { out in
                out.member("jobId", string: id.description)
                out.member("kind", string: finished.kind.rawValue)
                out.member("state", string: WireFormat.name(finished.state))
                out.member("progress", number: (finished.progress * 100).rounded() / 100)
                out.raw(finished.members)
            })
        }
        if let previous {
            let members: [UInt8]
            switch previous.outcome {
            case .success(let result): members = BridgePlugin.outcomeMembers(.succeeded(result))
            case .failure(let error): members = BridgePlugin.outcomeMembers(.failed(error))
            }
            return .now(.ok { out in
                out.member("jobId", string: id.description)
                out.member("kind", string: previous.kind.rawValue)
                out.member("state", string: WireFormat.name(Self.state(of: previous)))
                out.member("progress", number: Self.state(of: previous) == .succeeded ? 100 : 0)
                out.raw(members)
            })
        }
        guard let job = live else { throw RPCError.jobNotFound(id.description) }
        let snapshot = job.progress
        @Sendable func body(_ checkpoint: Checkpoint?) -> Answer {
            .ok { out in
                out.member("jobId", string: id.description)
                out.member("kind", string: job.kind.rawValue)
                out.member("state", string: WireFormat.name(job.state))
                out.member("priority", string: WireFormat.name(job.priority))
                out.member("progress", number: (snapshot.percent * 100).rounded() / 100)
                out.member("next", string: String(snapshot.nextDivisor))
                out.member("tested", string: String(snapshot.divisorsTested))
                out.key("factors")
                out.array { out in for factor in snapshot.factors { out.string(factor) } }
                WireFormat.writeStageMembers(snapshot, into: &out)
                WireFormat.writeRangeMembers(snapshot, into: &out)
                let dependencies = job.dependencies
                if !dependencies.isEmpty {
                    out.key("dependsOn")
                    out.array { out in for dependency in dependencies { out.string(dependency.id.description) } }
                }
                if let checkpoint { out.member("checkpoint", string: checkpoint.text) }
            }
        }
        guard wantsCheckpoint || job.state == .paused else { return .now(body(nil)) }
        return .later {
            body(try? await job.checkpoint())
        }
    }

    func list(_ params: Params) throws(RPCError) -> Answer {
        var wanted: Set<JobState>?
        if let value = params["state"] {
            let names: [JSONValue]
            if case .array(let elements) = value { names = elements } else { names = [value] }
            var states = Set<JobState>()
            for name in names {
                guard case .string(let text) = name, let state = WireFormat.state(named: text) else {
                    throw RPCError.invalidParams("state", "must be pending, queued, running, paused, succeeded, "
                                                 + "failed or cancelled (or an array of them)", got: name)
                }
                states.insert(state)
            }
            wanted = states
        }
        struct Row { let id: JobID; let kind: JobKind; let state: JobState; let progress: Double }
        var rows = registry.withLock(anchoredTo: self) { registry in
            var rows: [Row] = []
            for (id, job) in registry.live {
                rows.append(Row(id: id, kind: job.kind, state: job.state, progress: job.progress.percent))
            }
            for (id, finished) in registry.finished {
                rows.append(Row(id: id, kind: finished.kind, state: finished.state, progress: finished.progress))
            }
            for (id, stored) in registry.previous where registry.finished[id] == nil && registry.live[id] == nil {
                let state = Self.state(of: stored)
                rows.append(Row(id: id, kind: stored.kind, state: state, progress: state == .succeeded ? 100 : 0))
            }
            return rows
        }
        if let wanted { rows.removeAll { !wanted.contains($0.state) } }
        rows.sort { $0.id < $1.id }
        return .ok { out in
            out.key("jobs")
            out.array { out in
                for row in rows {
                    out.object { out in
                        out.member("jobId", string: row.id.description)
                        out.member("kind", string: row.kind.rawValue)
                        out.member("state", string: WireFormat.name(row.state))
                        out.member("progress", number: (row.progress * 100).rounded() / 100)
                    }
                }
            }
        }
    }
}
