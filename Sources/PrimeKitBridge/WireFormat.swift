import PrimeKit

/// The wire shapes of results, progress and states (docs/protocol.md, "Results"): one encoder for the bridge and
/// the command line's `--json`.
package enum WireFormat {
    /// The protocol version this module speaks.
    package static let protocolVersion = 1

    /// The additions within ``protocolVersion`` this module makes (`protocolMinor` in `initialize`): 1 = the
    /// effort options of job/submit, `mode`, `parts` and each factor's `certainty` in factor results, and `stage`,
    /// `stageFraction`, `partsLeft` in progress.
    /// 2 = `factorRange` jobs, `job/rangeBlock` notifications and `job/ack`.
    /// 3 = `checkpoint/split`, `checkpoint/merge` and a share job's `ecmShare` in its factor result; `ecm`
    /// (`{curve, curves, b1, digits}`) in progress while a job is in stage "ecm".
    /// 4 = divisor pieces: `checkpoint/split` with `pieces`, `checkpoint/merge` of `pieces` (with the answer when
    /// they decide it), `finalCheckpoint` in job/submit and a trial-division factor result's `checkpoint`.
    package static let protocolMinor = 4

    /// A factor result: `{candidate, factors: [{prime, exponent, certainty}], cofactor, cofactorStatus, complete,
    /// isPrime, certainty, mode, parts}`.
    package static func write(_ result: FactorResult, into out: inout JSONWriter) {
        out.object { out in
            out.member("candidate", string: result.candidate)
            out.key("factors")
            out.array { out in
                for factor in result.factors {
                    out.object { out in
                        out.member("prime", string: factor.prime)
                        out.member("exponent", number: factor.exponent)
                        out.member("certainty", string: factor.certainty.rawValue)
                    }
                }
            }
            out.member("cofactor", string: result.cofactor)
            out.member("cofactorStatus", string: result.cofactorStatus.rawValue)
            out.member("complete", bool: result.complete)
            out.key("isPrime")
            if let isPrime = result.isPrime { out.bool(isPrime) } else { out.null() }
            out.member("certainty", string: result.certainty.rawValue)
            out.member("mode", string: result.mode == .trialDivision ? "trial" : "complete")
            out.key("parts")
            out.array { out in for part in result.parts { write(part, into: &out) } }
            if let share = result.ecmShare {
                out.key("ecmShare")
                out.object { out in
                    out.member("index", number: share.index)
                    out.member("count", number: share.count)
                    out.member("found", bool: share.found)
                    out.member("checkpoint", string: share.checkpoint)
                }
            }
            if let checkpoint = result.finalCheckpoint { out.member("checkpoint", string: checkpoint) }
        }
    }

    /// A composite part left unsplit: `{value, exponent, trialFrom, trialBound, work, curves, b1, b2, ecmDigits,
    /// method}`; the numbers that can pass 2^53 as decimal strings.
    static func write(_ part: CompositePart, into out: inout JSONWriter) {
        out.object { out in
            out.member("value", string: part.value)
            out.member("exponent", number: part.exponent)
            out.member("trialFrom", string: part.trialFrom)
            out.member("trialBound", string: part.trialBound)
            out.member("work", string: String(part.work))
            out.member("curves", number: part.curves)
            out.member("b1", string: String(part.b1))
            out.member("b2", string: String(part.b2))
            out.member("ecmDigits", number: part.ecmDigits)
            out.member("method", string: part.method)
        }
    }

    /// The plugin-shaped isPrime result: `{candidate, isPrime, complete, progress, factors | divisorCount,
    /// certainty}`; `certainty` says how a true or false is known and is absent when `isPrime` is null.
    package static func write(_ result: PrimalityResult, into out: inout JSONWriter) {
        out.object { out in
            out.member("candidate", string: result.candidate)
            out.key("isPrime")
            if let isPrime = result.isPrime { out.bool(isPrime) } else { out.null() }
            out.member("complete", bool: result.complete)
            out.member("progress", number: result.progress)
            if let factors = result.factors {
                out.key("factors")
                out.array { out in for divisor in factors { out.string(divisor) } }
            }
            if let count = result.divisorCount { out.member("divisorCount", number: count) }
            if result.isPrime != nil, let certainty = result.factorization?.certainty {
                out.member("certainty", string: result.isPrime == false ? Certainty.proven.rawValue : certainty.rawValue)
            }
        }
    }

    /// Either result, by the job's kind.
    package static func write(_ result: JobResult, into out: inout JSONWriter) {
        switch result {
        case .factorization(let factorization): write(factorization, into: &out)
        case .primality(let primality): write(primality, into: &out)
        case .rangeSummary(let summary): write(summary, into: &out)
        }
    }

    /// A range job's result: `{first, last, count, primeCount}`, the numbers as decimal strings (protocol minor 2).
    package static func write(_ summary: RangeSummary, into out: inout JSONWriter) {
        out.object { out in
            out.member("first", string: summary.firstText)
            out.member("last", string: summary.lastText)
            out.member("count", string: summary.countText)
            out.member("primeCount", string: String(summary.primeCount))
        }
    }

    /// A `job/rangeBlock` notification's members after `jobId`: `seq` (the block's index from 1), `first` (decimal)
    /// and `lines`, each number's line as the `factor` command prints it ("12: 2 2 3"; from 2^64 on as
    /// `primekit factor` does, "N: p q [q: probable prime]").
    static func writeRangeBlockMembers(_ block: RangeBlock, seq: UInt64, into out: inout JSONWriter) {
        out.member("seq", number: seq)
        out.member("first", string: block.firstText)
        out.key("lines")
        out.array { out in for line in block.lines { out.string(line) } }
    }

    /// One result as a line of JSON (with its newline), as `primekit factor --json` prints it.
    package static func line(_ result: JobResult) -> [UInt8] {
        var out = JSONWriter()
        write(result, into: &out)
        return out.bytes + [0x0A]
    }

    /// The wire name of a job state: `pending` (waiting for dependencies), `queued`, `running`, `paused`,
    /// `succeeded`, `failed`, `cancelled`.
    package static func name(_ state: JobState) -> String {
        state == .ready ? "queued" : state.rawValue
    }

    /// The job state a wire name stands for.
    package static func state(named name: String) -> JobState? {
        name == "queued" ? .ready : (name == "ready" ? nil : JobState(rawValue: name))
    }

    /// The wire name of a priority: `veryLow`, `low`, `normal`, `high`, `veryHigh`.
    package static func name(_ priority: JobPriority) -> String {
        switch priority {
        case .veryLow: "veryLow"
        case .low: "low"
        case .normal: "normal"
        case .high: "high"
        case .veryHigh: "veryHigh"
        }
    }

    /// The priority a wire name (or the numbers 0–4) stands for.
    package static func priority(named name: String) -> JobPriority? {
        JobPriority.allCases.first { self.name($0) == name }
    }

    /// The members of a `job/progress` notification after `jobId`: `seq, state, progress, next, tested, factors,
    /// stage, stageFraction, partsLeft`.
    static func writeProgressMembers(_ progress: JobProgress, into out: inout JSONWriter) {
        out.member("seq", number: progress.seq)
        out.member("state", string: name(progress.state))
        out.member("progress", number: (progress.percent * 100).rounded() / 100)
        out.member("next", string: String(progress.nextDivisor))
        out.member("tested", string: String(progress.divisorsTested))
        out.key("factors")
        out.array { out in for factor in progress.factors { out.string(factor) } }
        writeStageMembers(progress, into: &out)
        writeRangeMembers(progress, into: &out)
    }

    /// A range job's `numbersDone, numbersTotal` (decimal strings; protocol minor 2), nothing for other jobs.
    static func writeRangeMembers(_ progress: JobProgress, into out: inout JSONWriter) {
        guard progress.numbersTotal > 0 else { return }
        out.member("numbersDone", string: String(progress.numbersDone))
        out.member("numbersTotal", string: String(progress.numbersTotal))
    }

    /// `stage, stageFraction, partsLeft` of a progress report (protocol minor 1), and `ecm` in stage "ecm" (minor 3:
    /// `{curve, curves, b1, digits}`, `b1` a decimal string like every other bound).
    static func writeStageMembers(_ progress: JobProgress, into out: inout JSONWriter) {
        out.member("stage", string: progress.stage)
        out.member("stageFraction", number: (min(max(progress.stageFraction, 0), 1) * 10_000).rounded() / 10_000)
        out.member("partsLeft", number: progress.partsLeft)
        if let ecm = progress.ecm {
            out.key("ecm")
            out.object { out in
                out.member("curve", number: ecm.curve)
                out.member("curves", number: ecm.curves)
                out.member("b1", string: String(ecm.b1))
                out.member("digits", number: ecm.digits)
            }
        }
    }
}
