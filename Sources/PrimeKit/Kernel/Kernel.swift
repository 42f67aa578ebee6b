// The one place where PrimeKit calls the C kernel. Every `pk_` function used by the engine is called from this
// file; everything above it sees Swift types only.

internal import CPrimeKit

/// What one `pk_job_step` or `pk_range_step` call ended with.
package enum KernelStep: Sendable {
    /// The budget was spent and work remains (a range step may have delivered a segment: ``KernelRange/segment``).
    case more
    /// The job is finished (a range: its last segment was delivered by this step or an earlier one).
    case done
    /// The interrupt was seen; the job or range is intact (a range step delivered nothing).
    case interrupted
}

/// The stage a kernel job is in (`pk_progress.stage`), one byte per piece.
enum KernelStage: UInt8, Sendable, Hashable {
    case trial, power, prime, split, ecm, qs, done

    /// The kernel's name for it (`JobProgress.stage`).
    var name: String {
        switch self {
        case .trial: "trial"
        case .power: "power"
        case .prime: "prime"
        case .split: "split"
        case .ecm: "ecm"
        case .qs: "qs"
        case .done: "done"
        }
    }

    init(name: UnsafePointer<CChar>?, done: Bool) {
        guard let name else {
            self = done ? .done : .trial
            return
        }
        // The kernel's names differ in their first two letters: no String is made per progress read.
        switch (UInt8(bitPattern: name[0]), name[0] == 0 ? 0 : UInt8(bitPattern: name[1])) {
        case (UInt8(ascii: "p"), UInt8(ascii: "o")): self = .power
        case (UInt8(ascii: "p"), UInt8(ascii: "r")): self = .prime
        case (UInt8(ascii: "s"), _): self = .split
        case (UInt8(ascii: "e"), _): self = .ecm
        case (UInt8(ascii: "q"), _): self = .qs
        case (UInt8(ascii: "d"), _): self = .done
        default: self = done ? .done : .trial
        }
    }
}

/// A Swift copy of `pk_progress`.
struct KernelProgress: Sendable, Hashable {
    var percent: Double = 0
    var nextDivisor: UInt64 = 0
    var divisorsTested: UInt64 = 0
    var workDone: UInt64 = 0
    var factorsFound: Int = 0
    var stageFraction: Double = 0
    var partsLeft: Int32 = 0
    var done: Bool = false
    var stage: KernelStage = .trial
    /// In stage ECM: the level's factor size in digits, and the current curve, the level's expected curves and its
    /// B1 (each below 2^32 in the kernel's schedule); 0 otherwise.
    var ecmDigits: UInt8 = 0
    var ecmCurve: UInt32 = 0
    var ecmCurves: UInt32 = 0
    var ecmB1: UInt32 = 0
}

/// What `pk_job_divisors` answered.
enum KernelDivisors: Sendable {
    /// Every divisor, ascending, as the kernel's space-separated text ("1 2 3 6").
    case listed(String)
    /// More divisors than allowed; the count when it fits in `Int`.
    case tooMany(count: Int?)
    /// The factorization is not complete, so the divisors are not known.
    case incomplete
}

/// Limits the engine passes to the kernel for every job it creates or restores.
struct KernelLimits: Sendable, Hashable {
    var maxDigits: Int
    var bpswDigits: Int

    static var defaults: KernelLimits {
        var options = pk_options()
        pk_options_init(&options)
        return KernelLimits(maxDigits: options.max_digits, bpswDigits: options.bpsw_digits)
    }

    /// The kernel's default bound cap (2^32).
    static let defaultBoundCap: UInt64 = UInt64(PK_DEFAULT_BOUND_CAP)
}

/// `pk_options_init` once (it reads the environment); every job starts from a copy. Its pointer fields are nil.
/// The engine runs trial-division jobs (`PK_MODE_TRIAL`): its answers are those of trial division over the range,
/// with or without a bound.
nonisolated(unsafe) private let baseOptions: pk_options = {
    var options = pk_options()
    pk_options_init(&options)
    options.mode = Int32(PK_MODE_TRIAL.rawValue)
    return options
}()

/// Owns one `pk_job` and frees it in `deinit`.
///
/// Thread safety follows the kernel: one thread at a time may use a `KernelJob`, except ``interrupt()``, which is
/// safe from any thread while the caller holds a reference (the reference keeps `deinit` from running concurrently).
/// The engine guarantees the one-thread rule through its scheduling state, hence `@unchecked Sendable`.
final class KernelJob: @unchecked Sendable {
    private let handle: OpaquePointer
    /// A complete job (`PK_MODE_COMPLETE`) rather than trial division over a range.
    let complete: Bool

    private init(handle: OpaquePointer, complete: Bool) {
        self.handle = handle
        self.complete = complete
    }

    deinit {
        pk_job_destroy(handle)
    }

    /// The linked kernel's version, e.g. "0.1.0".
    static var version: String {
        String(cString: pk_version_string())
    }

    /// Creates a job for a canonical decimal candidate and an optional divisor range.
    /// `complete` asks for `PK_MODE_COMPLETE` (only without a range: a range means trial division), with
    /// `ecmDigits` and `workLimit` as its effort limits (0: none).
    static func create(candidate: String, from: String?, bound: String?, limits: KernelLimits,
                       complete: Bool = false, ecmDigits: Int = 0, workLimit: UInt64 = 0) throws(PrimeKitError)
        -> KernelJob
    {
        var options = baseOptions
        options.max_digits = limits.maxDigits
        options.bpsw_digits = limits.bpswDigits
        let complete = complete && from == nil && bound == nil
        if complete {
            options.mode = Int32(PK_MODE_COMPLETE.rawValue)
            guard ecmDigits >= 0, ecmDigits <= Int(UInt32.max) else { throw PrimeKitError(kernelStatus: statusCode(PK_E_OPTIONS)) }
            options.ecm_digits = UInt32(ecmDigits)
            options.work_limit = workLimit
        }
        var out: OpaquePointer?
        let status = withOptionalCString(from) { fromPointer in
            withOptionalCString(bound) { boundPointer in
                options.from = fromPointer
                options.bound = boundPointer
                return candidate.withCString { pk_job_create($0, &options, &out) }
            }
        }
        return try wrap(status: status, out, complete: complete)
    }

    /// Whether kernel checkpoint text is of a complete job (`PK_MODE_COMPLETE`; its `mode` line, format version 2).
    static func isComplete(checkpointText text: String) -> Bool {
        text.contains("\nmode \(PK_MODE_COMPLETE.rawValue)\n")
    }

    /// Rebuilds a job from kernel checkpoint text.
    static func restore(_ text: String, limits: KernelLimits) throws(PrimeKitError) -> KernelJob {
        var options = baseOptions
        options.max_digits = limits.maxDigits
        var out: OpaquePointer?
        var utf8 = Array(text.utf8)
        let status = utf8.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                pk_job_restore($0, buffer.count, &options, &out)
            }
        }
        return try wrap(status: status, out, complete: isComplete(checkpointText: text))
    }

    /// Merges finished pieces of one candidate's divisor range into one finished job.
    static func merge(_ pieces: [KernelJob]) throws(PrimeKitError) -> KernelJob {
        var out: OpaquePointer?
        let handles: [OpaquePointer?] = pieces.map { $0.handle }
        let status = handles.withUnsafeBufferPointer { pk_job_merge($0.baseAddress, $0.count, &out) }
        withExtendedLifetime(pieces) {}
        return try wrap(status: status, out, complete: false)
    }

    /// `count` cooperating shares of this complete job's ECM curves (`pk_job_ecm_share`), or nil when its next
    /// piece is not an ECM piece (the kernel's PK_E_OPTIONS). The job itself is not changed.
    func ecmShares(count: Int) throws(PrimeKitError) -> [KernelJob]? {
        guard complete, count >= 2, count <= Int(UInt32.max) else { return nil }
        var shares: [KernelJob] = []
        for index in 0..<count {
            var out: OpaquePointer?
            let status = pk_job_ecm_share(handle, UInt32(index), UInt32(count), &out)
            if status == statusCode(PK_E_OPTIONS) { return nil }
            shares.append(try Self.wrap(status: status, out, complete: true))
        }
        return shares
    }

    /// The share's place and whether it found a factor; nil for a job that is no ECM share.
    func shareInfo() -> (index: Int, count: Int, found: Bool)? {
        var index: UInt32 = 0
        var count: UInt32 = 0
        var found: Int32 = 0
        guard pk_job_ecm_share_info(handle, &index, &count, &found) == statusCode(PK_OK) else { return nil }
        return (Int(index), Int(count), found != 0)
    }

    /// The result of a share run alone, once it is over: the factors known when the shares were made, the
    /// cofactor as it stood, and the share's place, whether it found a factor and its final checkpoint. Nil for a
    /// job that is no ECM share.
    func ecmShareResult(candidate knownCandidate: String) throws(PrimeKitError) -> FactorResult? {
        guard complete, let info = shareInfo() else { return nil }
        let factors = try factors(count: progress().factorsFound)
        let cofactor = try Self.readString { pk_job_cofactor(handle, $0, $1, $2) }
        let checkpoint = Checkpoint(kind: .factor, pieces: [try Checkpoint.Piece(self)])
        return FactorResult(
            candidate: knownCandidate, factors: factors, cofactor: cofactor, cofactorStatus: .composite,
            complete: false, isPrime: false,
            certainty: factors.contains { $0.certainty == .probable } ? .probable : .proven, parts: [],
            mode: .complete,
            ecmShare: EcmShareOutcome(index: info.index, count: info.count, found: info.found,
                                      checkpoint: checkpoint.text))
    }

    /// The job the shares stand for, continued (`pk_job_ecm_merge`).
    static func mergeShares(_ shares: [KernelJob]) throws(PrimeKitError) -> KernelJob {
        var out: OpaquePointer?
        let handles: [OpaquePointer?] = shares.map { $0.handle }
        let status = handles.withUnsafeBufferPointer { pk_job_ecm_merge($0.baseAddress, $0.count, &out) }
        withExtendedLifetime(shares) {}
        return try wrap(status: status, out, complete: true)
    }

    private static func wrap(status: Int32, _ out: OpaquePointer?, complete: Bool) throws(PrimeKitError) -> KernelJob {
        guard status == statusCode(PK_OK), let out else {
            throw PrimeKitError(kernelStatus: status == statusCode(PK_OK) ? statusCode(PK_E_INTERNAL) : status)
        }
        return KernelJob(handle: out, complete: complete)
    }

    /// The job's divisor range as the kernel resolved it (a default bound is √candidate capped at 2^32).
    func range() -> (from: UInt64, bound: UInt64) {
        var from: UInt64 = 0
        var bound: UInt64 = 0
        _ = pk_job_range(handle, &from, &bound)
        return (from, bound)
    }

    /// Tells the job that no divisor above `limit` needs trying (only ever lowers; in memory only).
    func limit(_ limit: UInt64) {
        _ = pk_job_limit(handle, limit)
    }

    /// The cofactor `candidate` / Π factors and its integer square root, each capped at `UInt64.max`.
    static func cofactorRoot(candidate: String, factors: [PrimeFactor]) throws(PrimeKitError)
        -> (root: UInt64, cofactor: UInt64)
    {
        var root: UInt64 = 0
        var cofactor: UInt64 = 0
        let exponents = factors.map { UInt64($0.exponent) }
        // The primes, NUL-terminated one after the other in one buffer.
        var text: [CChar] = []
        var offsets: [Int] = []
        for factor in factors {
            offsets.append(text.count)
            text += factor.prime.utf8.map { CChar(bitPattern: $0) }
            text.append(0)
        }
        let status = text.withUnsafeBufferPointer { buffer in
            let primes: [UnsafePointer<CChar>?] = offsets.map { buffer.baseAddress! + $0 }
            return primes.withUnsafeBufferPointer { primes in
                exponents.withUnsafeBufferPointer { exps in
                    candidate.withCString {
                        pk_cofactor_root($0, primes.baseAddress, exps.baseAddress, factors.count, &root, &cofactor)
                    }
                }
            }
        }
        guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        return (root, cofactor)
    }

    /// Does at most `budget` units of work.
    func step(budget: UInt64) throws(PrimeKitError) -> KernelStep {
        let status = pk_job_step(handle, budget)
        switch status {
        case statusCode(PK_MORE): return .more
        case statusCode(PK_DONE): return .done
        case statusCode(PK_INTERRUPTED): return .interrupted
        default: throw PrimeKitError(kernelStatus: status)
        }
    }

    /// Asks a running (or the next) step to stop early. Safe from any thread.
    func interrupt() {
        pk_job_interrupt(handle)
    }

    /// Ends a complete job's trial division and splitting at its next poll: the following steps finish with the
    /// partial answer (`pk_job_conclude`). Does nothing to a trial-division job or a finished one.
    func conclude() {
        guard complete else { return }
        _ = pk_job_conclude(handle)
    }

    /// A snapshot of the job's progress.
    func progress() -> KernelProgress {
        var raw = pk_progress()
        raw.size = MemoryLayout<pk_progress>.size
        guard pk_job_progress(handle, &raw) == statusCode(PK_OK) else { return KernelProgress() }
        return KernelProgress(
            percent: raw.percent, nextDivisor: raw.next_divisor, divisorsTested: raw.divisors_tested,
            workDone: raw.work_done, factorsFound: raw.factors_found, stageFraction: raw.stage_fraction,
            partsLeft: Int32(clamping: raw.parts_left), done: raw.done != 0,
            stage: KernelStage(name: raw.stage, done: raw.done != 0), ecmDigits: UInt8(clamping: raw.ecm_digits),
            ecmCurve: UInt32(clamping: raw.ecm_curve), ecmCurves: UInt32(clamping: raw.ecm_curves),
            ecmB1: UInt32(clamping: raw.ecm_b1))
    }

    /// The distinct prime factors found so far, ascending, with exponents and certainty.
    func factors(count: Int) throws(PrimeKitError) -> [PrimeFactor] {
        var factors: [PrimeFactor] = []
        factors.reserveCapacity(count)
        for index in 0..<count {
            var exponent: UInt64 = 0
            let prime = try Self.readString { pk_job_factor(handle, index, $0, $1, $2, &exponent) }
            var certainty = Int32(PK_CERTAINTY_PROVEN.rawValue)
            if complete {
                let status = pk_job_factor_certainty(handle, index, &certainty)
                guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
            }
            factors.append(PrimeFactor(prime: prime, exponent: Int(exponent),
                                       certainty: certainty == Int32(PK_CERTAINTY_PROBABLE.rawValue) ? .probable : .proven))
        }
        return factors
    }

    /// The composite parts a finished complete job left, ascending, with what was tried on each.
    func parts(count: Int) throws(PrimeKitError) -> [CompositePart] {
        var parts: [CompositePart] = []
        parts.reserveCapacity(count)
        for index in 0..<count {
            var info = pk_part_info()
            info.size = MemoryLayout<pk_part_info>.size
            let value = try Self.readString { pk_job_part(handle, index, $0, $1, $2, &info) }
            parts.append(CompositePart(
                value: value, exponent: Int(info.exponent), trialFrom: String(info.trial_from),
                trialBound: String(info.trial_bound), work: info.work, curves: info.curves, b1: info.b1, b2: info.b2,
                ecmDigits: Int(info.ecm_digits), method: info.method.map { String(cString: $0) } ?? "none"))
        }
        return parts
    }

    /// The candidate as decimal.
    func candidate() throws(PrimeKitError) -> String {
        try Self.readString { pk_job_candidate(handle, $0, $1, $2) }
    }

    /// The resumable state as kernel checkpoint text.
    func checkpoint() throws(PrimeKitError) -> String {
        try Self.readString { pk_job_checkpoint(handle, $0, $1, $2) }
    }

    /// The answer of a finished job as a factor result (docs/protocol.md).
    /// - Parameter candidate: The candidate when the caller knows it (saves reading it back).
    func factorResult(candidate knownCandidate: String? = nil) throws(PrimeKitError) -> FactorResult {
        var raw = pk_result()
        raw.size = MemoryLayout<pk_result>.size
        let status = pk_job_result(handle, &raw)
        guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        let factors = try factors(count: raw.factor_count)
        let parts = complete ? try parts(count: raw.part_count) : []
        let cofactor = try Self.readString { pk_job_cofactor(handle, $0, $1, $2) }
        let cofactorStatus: CofactorStatus
        switch raw.cofactor_status {
        case Int32(PK_COFACTOR_ONE.rawValue): cofactorStatus = .one
        case Int32(PK_COFACTOR_PROBABLE_PRIME.rawValue): cofactorStatus = .probablePrime
        case Int32(PK_COFACTOR_COMPOSITE.rawValue): cofactorStatus = .composite
        default: cofactorStatus = .unknown
        }
        let isPrime: Bool?
        switch raw.is_prime {
        case PK_PRIME_YES: isPrime = true
        case PK_PRIME_NO: isPrime = false
        default: isPrime = nil
        }
        let candidateText: String
        if let knownCandidate { candidateText = knownCandidate } else { candidateText = try candidate() }
        return FactorResult(
            candidate: candidateText, factors: factors, cofactor: cofactor, cofactorStatus: cofactorStatus,
            complete: raw.complete != 0, isPrime: isPrime,
            certainty: raw.certainty == Int32(PK_CERTAINTY_PROBABLE.rawValue) ? .probable : .proven,
            parts: parts, mode: complete ? .complete : .trialDivision)
    }

    /// Every divisor of the candidate when the factorization is complete and there are at most `maxCount`.
    func divisors(maxCount: Int) throws(PrimeKitError) -> KernelDivisors {
        var count = 0
        var length = 0
        // Small answers (the common case) fit a stack buffer: one call, no heap buffer.
        let first: Result<KernelDivisors?, PrimeKitError> = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 2048) {
            buffer in
            let status = pk_job_divisors(handle, maxCount, buffer.baseAddress, buffer.count, &length, &count)
            switch status {
            case statusCode(PK_OK): return .success(.listed(Self.text(UnsafeBufferPointer(rebasing: buffer[..<length]))))
            case statusCode(PK_E_BUFFER): return .success(nil)
            case statusCode(PK_E_INCOMPLETE): return .success(.incomplete)
            case statusCode(PK_E_TOO_MANY):
                return .success(.tooMany(count: count == Int(bitPattern: UInt(SIZE_MAX)) ? nil : count))
            default: return .failure(PrimeKitError(kernelStatus: status))
            }
        }
        if let answer = try first.get() { return answer }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let status = buffer.withUnsafeMutableBufferPointer {
            pk_job_divisors(handle, maxCount, $0.baseAddress, $0.count, &length, &count)
        }
        guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        return .listed(buffer.withUnsafeBufferPointer { Self.text(UnsafeBufferPointer(rebasing: $0[..<length])) })
    }

    /// The C buffer's bytes as a String, one copy (the kernel writes ASCII digits and spaces).
    private static func text(_ text: UnsafeBufferPointer<CChar>) -> String {
        text.withMemoryRebound(to: UInt8.self) { String(decoding: $0, as: UTF8.self) }
    }

    /// Reads a string in the kernel's caller-buffer convention, trying a small stack buffer first.
    private static func readString(
        _ call: (UnsafeMutablePointer<CChar>?, Int, UnsafeMutablePointer<Int>) -> Int32
    ) throws(PrimeKitError) -> String {
        var length = 0
        let first: Result<String?, PrimeKitError> = withUnsafeTemporaryAllocation(of: CChar.self, capacity: 96) {
            buffer in
            let status = call(buffer.baseAddress, buffer.count, &length)
            if status == statusCode(PK_OK) { return .success(String(cString: buffer.baseAddress!)) }
            if status == statusCode(PK_E_BUFFER) { return .success(nil) }
            return .failure(PrimeKitError(kernelStatus: status))
        }
        if let text = try first.get() { return text }
        var buffer = [CChar](repeating: 0, count: length + 1)
        let status = buffer.withUnsafeMutableBufferPointer { call($0.baseAddress, $0.count, &length) }
        guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        return buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    }
}

/// The kernel's one-call answer for a candidate below 2^32 over the default range (`pk_small_factor`): no kernel
/// job, no allocation in C. It is the answer a kernel job would give, so a tiny job takes this path instead of
/// creating, stepping and reading a job — which costs more than the divisions themselves.
///
/// A result keeps only the candidate and whether it is prime (eight bytes, no references); the factors and
/// divisors are found again, in one more call of at most a microsecond or two, when somebody reads them — most
/// answers of small jobs never are, and writing them out costs about as much as finding them.
struct SmallAnswer: Sendable {
    /// The candidate.
    let n: UInt32
    /// True when the candidate is prime.
    let isPrime: Bool
    /// What the job asked for (the answer is the same either way below 2^32).
    let mode: FactorMode

    /// Factors `value`; nil unless 2 <= `value` < 2^32.
    init?(value: UInt64?, mode: FactorMode) {
        guard let value, value >= 2, let n = UInt32(exactly: value) else { return nil }
        guard let raw = Self.factor(n) else { return nil }
        self.n = n
        self.mode = mode
        self.isPrime = raw.factor_count == 1 && raw.exponents.0 == 1
    }

    /// The kernel's final progress for this answer (found again when somebody reads it, like the factors)
    /// and every prime factor with its exponent, ascending, from one kernel call.
    func progressAndFactors() -> (progress: KernelProgress, factors: [PrimeFactor]) {
        guard let raw = Self.factor(n) else { return (KernelProgress(), []) }
        let progress = KernelProgress(percent: 100, nextDivisor: UInt64(raw.next_divisor),
                                      divisorsTested: UInt64(raw.divisors_tested),
                                      workDone: UInt64(raw.divisors_tested), factorsFound: raw.factor_count,
                                      stageFraction: 1, done: true, stage: .done)
        return (progress, Self.primeFactors(raw))
    }

    private static func factor(_ n: UInt32) -> pk_small_answer? {
        var raw = pk_small_answer()
        raw.size = MemoryLayout<pk_small_answer>.size
        return pk_small_factor(n, &raw) == statusCode(PK_OK) ? raw : nil
    }

    /// The candidate, decimal.
    var candidate: String { String(n) }

    /// The answer for a job of `kind`: the factors (and an isPrime composite's divisors) are written out from it
    /// when somebody reads them.
    func result(kind: JobKind) -> JobResult {
        let factorization = FactorResult(small: self)
        switch kind {
        case .factor, .factorRange: return .factorization(factorization)
        case .isPrime: return .primality(PrimalityResult(small: self, factorization: factorization))
        }
    }

    /// Every prime factor with its exponent, ascending.
    func primeFactors() -> [PrimeFactor] {
        guard let raw = Self.factor(n) else { return [] }
        return Self.primeFactors(raw)
    }

    private static func primeFactors(_ raw: pk_small_answer) -> [PrimeFactor] {
        var factors: [PrimeFactor] = []
        factors.reserveCapacity(raw.factor_count)
        withUnsafeBytes(of: raw.primes) { primes in
            withUnsafeBytes(of: raw.exponents) { exponents in
                for index in 0..<raw.factor_count {
                    let prime = primes.load(fromByteOffset: index * 4, as: UInt32.self)
                    let exponent = exponents.load(fromByteOffset: index * 4, as: UInt32.self)
                    factors.append(PrimeFactor(prime: String(prime), exponent: Int(exponent)))
                }
            }
        }
        return factors
    }

    /// Every divisor as the kernel's text ("1 2 3 6"); a number below 2^32 has at most 1,920 of them.
    func divisorText() -> String {
        guard let raw = Self.factor(n) else { return "" }
        return withUnsafePointer(to: raw) { answer in
            var length = 0
            let small: String? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    guard pk_small_divisors(answer, Int.max, chars.baseAddress, chars.count, &length, nil)
                            == statusCode(PK_OK) else { return nil }
                    return String(decoding: UnsafeBufferPointer(rebasing: buffer[..<length]), as: UTF8.self)
                }
            }
            if let small { return small }
            return String(unsafeUninitializedCapacity: length + 1) { buffer in
                buffer.withMemoryRebound(to: CChar.self) { chars in
                    _ = pk_small_divisors(answer, Int.max, chars.baseAddress, chars.count, &length, nil)
                }
                return length
            }
        }
    }
}

/// The raw value of a `pk_status` constant as the `int` the kernel's functions return.
private func statusCode(_ status: pk_status) -> Int32 {
    Int32(truncatingIfNeeded: status.rawValue)
}

private func withOptionalCString<R>(_ string: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
    guard let string else { return body(nil) }
    return string.withCString { body($0) }
}

extension PrimeKitError {
    /// Maps a negative `pk_status` to the public error. This is the only place kernel statuses become errors.
    init(kernelStatus status: Int32) {
        let code: Code
        switch status {
        case statusCode(PK_E_ARG): code = .invalidArgument
        case statusCode(PK_E_PARSE): code = .invalidCandidate
        case statusCode(PK_E_RANGE): code = .candidateOutOfRange
        case statusCode(PK_E_TOO_LARGE): code = .candidateTooLarge
        case statusCode(PK_E_OPTIONS): code = .invalidOptions
        case statusCode(PK_E_NOMEM): code = .outOfMemory
        case statusCode(PK_E_BUFFER): code = .internalError
        case statusCode(PK_E_NOT_DONE): code = .notFinished
        case statusCode(PK_E_INCOMPLETE): code = .incompleteFactorization
        case statusCode(PK_E_TOO_MANY): code = .tooManyDivisors
        case statusCode(PK_E_INDEX): code = .internalError
        case statusCode(PK_E_CHECKPOINT): code = .invalidCheckpoint
        case statusCode(PK_E_CHECKPOINT_VERSION): code = .unsupportedCheckpointVersion
        case statusCode(PK_E_CHECKPOINT_STATE): code = .inconsistentCheckpoint
        default: code = .internalError
        }
        let name = String(cString: pk_status_name(status))
        let message = String(cString: pk_status_message(status))
        self.init(code: code, message: "\(message) (\(name))")
    }
}

/// The kernel's batch calls for many numbers below 2^128 (`pk_factor_u64_array`, `pk_factor_u128_array`): complete
/// factorizations with no job and no allocation per number.
enum KernelBatch {
    /// Factors every number of `numbers` (each 2 <= n < 2^128) and hands each answer to `visit` in order, as
    /// (index, primes, exponents, probable flags), the buffers valid only during the call.
    static func factor(_ numbers: [UInt128],
                       _ visit: (Int, UnsafeBufferPointer<UInt128>, UnsafeBufferPointer<UInt8>,
                                 UnsafeBufferPointer<Bool>) -> Void) throws(PrimeKitError)
    {
        guard !numbers.isEmpty else { return }
        let capacity = Int(PK_U128_MAX_FACTORS)
        let primes = UnsafeMutableBufferPointer<UInt128>.allocate(capacity: capacity)
        let exponents = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: capacity)
        let probable = UnsafeMutableBufferPointer<Bool>.allocate(capacity: capacity)
        probable.initialize(repeating: false)
        defer {
            primes.deallocate()
            exponents.deallocate()
            probable.deallocate()
        }
        func hand(_ index: Int, _ count: Int) {
            visit(index, UnsafeBufferPointer(rebasing: primes[..<count]), UnsafeBufferPointer(rebasing: exponents[..<count]),
                  UnsafeBufferPointer(rebasing: probable[..<count]))
        }
        if numbers.allSatisfy({ $0 >> 64 == 0 }) {
            let words = numbers.map { UInt64(truncatingIfNeeded: $0) }
            let answers = UnsafeMutableBufferPointer<pk_u64_answer>.allocate(capacity: words.count)
            defer { answers.deallocate() }
            let status = pk_factor_u64_array(words, words.count, answers.baseAddress, MemoryLayout<pk_u64_answer>.size)
            guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
            for index in 0..<words.count {
                let answer = answers.baseAddress! + index
                let count = Int(answer.pointee.factor_count)
                copy(&answer.pointee.primes, count, into: primes) { (prime: UInt64) in UInt128(prime) }
                copy(&answer.pointee.exponents, count, into: exponents) { (exponent: UInt8) in exponent }
                hand(index, count)
            }
            return
        }
        let wide = numbers.map { pk_uint128(lo: UInt64(truncatingIfNeeded: $0), hi: UInt64(truncatingIfNeeded: $0 >> 64)) }
        let answers = UnsafeMutableBufferPointer<pk_u128_answer>.allocate(capacity: wide.count)
        defer { answers.deallocate() }
        let status = pk_factor_u128_array(wide, wide.count, answers.baseAddress, MemoryLayout<pk_u128_answer>.size)
        guard status == statusCode(PK_OK) else { throw PrimeKitError(kernelStatus: status) }
        for index in 0..<wide.count {
            let answer = answers.baseAddress! + index
            let count = Int(answer.pointee.factor_count)
            copy(&answer.pointee.primes, count, into: primes) { (prime: pk_uint128) in
                UInt128(prime.hi) << 64 | UInt128(prime.lo)
            }
            copy(&answer.pointee.exponents, count, into: exponents) { (exponent: UInt8) in exponent }
            copy(&answer.pointee.certainty, count, into: probable) { (certainty: UInt8) in
                certainty == UInt8(PK_CERTAINTY_PROBABLE.rawValue)
            }
            hand(index, count)
        }
    }

    /// Copies the first `count` elements of a fixed-size C array of an answer (imported as a tuple of `Element`)
    /// into `out`, converted by `convert`.
    @inline(__always)
    private static func copy<Tuple, Element, Out>(_ array: inout Tuple, _ count: Int,
                                                  into out: UnsafeMutableBufferPointer<Out>,
                                                  _ convert: (Element) -> Out) {
        withUnsafePointer(to: &array) { raw in
            raw.withMemoryRebound(to: Element.self, capacity: count) { list in
                for slot in 0..<count { out[slot] = convert(list[slot]) }
            }
        }
    }
}
