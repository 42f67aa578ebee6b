/// Where a job is in its life.
///
/// ```
/// pending ──► ready ──► running ──► succeeded | failed | cancelled
///    ▲          │  ▲       │
///    └──────────┘  │       ▼
///                  └──── paused          (every unfinished state can also go to cancelled)
/// ```
/// A paused job resumes into `ready` (it re-enters the queue) and becomes `running` when a worker takes it.
/// A `ready` job goes back to `pending` when it gains a dependency that has not succeeded yet.
public enum JobState: String, Sendable, Hashable, Codable, CaseIterable {
    /// Waiting for its dependencies to succeed.
    case pending
    /// Queued, waiting for a worker.
    case ready
    /// Started: a worker is running a slice of it, or it waits between slices.
    case running
    /// Stopped with a checkpoint; `resume()` continues it.
    case paused
    /// Finished with a result.
    case succeeded
    /// Finished with an error.
    case failed
    /// Finished by cancellation (directly, through a dependency, a reset or a cancelled Task).
    case cancelled

    /// True for `succeeded`, `failed` and `cancelled`.
    public var isFinished: Bool {
        switch self {
        case .succeeded, .failed, .cancelled: true
        case .pending, .ready, .running, .paused: false
        }
    }

    /// Whether the state machine allows going from `self` to `next`. The engine checks every transition here.
    /// - Parameter next: The state to go to.
    /// - Returns: True when the transition is allowed.
    public func canTransition(to next: JobState) -> Bool {
        switch (self, next) {
        case (.pending, .ready), (.pending, .cancelled):
            true
        case (.ready, .running), (.ready, .paused), (.ready, .pending), (.ready, .cancelled):
            true
        case (.running, .paused), (.running, .succeeded), (.running, .failed), (.running, .cancelled):
            true
        case (.paused, .ready), (.paused, .cancelled):
            true
        default:
            false
        }
    }
}
