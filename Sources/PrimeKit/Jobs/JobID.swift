/// Identifies a job within its queue. Printed as `j1`, `j2`, … (the bridge's job ids).
public struct JobID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The queue-unique sequence number, starting at 1.
    public let rawValue: UInt64

    /// Creates an id from its sequence number.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    public var description: String {
        "j\(rawValue)"
    }

    public static func < (lhs: JobID, rhs: JobID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
