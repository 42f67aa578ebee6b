/// How a job ended without a result; passed to `onFailure` callbacks.
public enum JobFailure: Error, Sendable, Hashable {
    /// The job failed with this error.
    case failed(PrimeKitError)
    /// The job was cancelled for this reason.
    case cancelled(CancellationReason)
}
