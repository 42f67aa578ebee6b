/// Versions of what is linked.
public enum PrimeKitVersion {
    /// The package's version, `MAJOR.MINOR.PATCH`.
    public static let package = "0.1.0"
    /// The C kernel's version, `MAJOR.MINOR.PATCH` (`pk_version_string()` of the linked library).
    public static var kernel: String { KernelJob.version }
}
