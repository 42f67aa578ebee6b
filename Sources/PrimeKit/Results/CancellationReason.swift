/// Why a job was cancelled. A dependent of a failed or cancelled job carries the cause, transitively.
public indirect enum CancellationReason: Sendable, Hashable, CustomStringConvertible {
    /// `cancel()` or `cancelAll()` was called.
    case requested
    /// The Task awaiting the job's result was cancelled.
    case taskCancelled
    /// The queue was reset (what a page navigation does).
    case reset
    /// The queue was torn down or released.
    case shutdown
    /// A dependency failed with this error.
    case dependencyFailed(JobID, PrimeKitError)
    /// A dependency was cancelled for this reason.
    case dependencyCancelled(JobID, CancellationReason)

    /// The reason at the start of a dependency chain (`self` when there is no chain).
    public var rootCause: CancellationReason {
        if case .dependencyCancelled(_, let inner) = self { return inner.rootCause }
        return self
    }

    public var description: String {
        switch self {
        case .requested: "cancelled"
        case .taskCancelled: "the awaiting task was cancelled"
        case .reset: "the queue was reset"
        case .shutdown: "the queue was shut down"
        case .dependencyFailed(let id, let error): "dependency \(id) failed: \(error.message)"
        case .dependencyCancelled(let id, let reason): "dependency \(id) was cancelled (\(reason))"
        }
    }
}
