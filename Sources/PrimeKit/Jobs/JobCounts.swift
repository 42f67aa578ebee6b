/// How many jobs a queue holds in each state. Finished states count since the queue was created or last reset.
public struct JobCounts: Sendable, Hashable {
    public var pending = 0
    public var ready = 0
    public var running = 0
    public var paused = 0
    public var succeeded = 0
    public var failed = 0
    public var cancelled = 0

    /// All zero.
    public init() {}

    /// Jobs not finished yet (pending, ready, running, paused).
    public var unfinished: Int { pending + ready + running + paused }

    /// The count for one state.
    public subscript(state: JobState) -> Int {
        get {
            switch state {
            case .pending: pending
            case .ready: ready
            case .running: running
            case .paused: paused
            case .succeeded: succeeded
            case .failed: failed
            case .cancelled: cancelled
            }
        }
        set {
            switch state {
            case .pending: pending = newValue
            case .ready: ready = newValue
            case .running: running = newValue
            case .paused: paused = newValue
            case .succeeded: succeeded = newValue
            case .failed: failed = newValue
            case .cancelled: cancelled = newValue
            }
        }
    }
}
