/// How urgently a job should run. Higher priorities start first; within a priority jobs start in submission order.
/// Waiting jobs age, so a low priority never starves (see ``JobQueue/Configuration/agingSlices``).
public enum JobPriority: Int, Sendable, Hashable, Comparable, CaseIterable, Codable {
    case veryLow = 0
    case low = 1
    case normal = 2
    case high = 3
    case veryHigh = 4

    public static func < (lhs: JobPriority, rhs: JobPriority) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}
