// Starting the built tools from tests, shared by the test targets.

import Foundation

/// The parent's ends of a launched child's standard streams.
public struct ChildPipes: Sendable {
    /// Writes to the child's standard input.
    public let stdin: FileHandle
    /// Reads the child's standard output.
    public let stdout: FileHandle
    /// Reads the child's standard error.
    public let stderr: FileHandle
}

/// Runs `process` with its three standard streams on fresh pipes and returns the parent's ends.
///
/// The pipes are close-on-exec, and launches through here are serialised (one lock for every test target), so a child
/// started at the same moment by a test running in parallel never inherits them between `pipe()` and `FD_CLOEXEC` —
/// an inherited write end would keep this child's standard input from ever reaching its end.
public func launch(_ process: Process) throws -> ChildPipes {
    launchLock.lock()
    defer { launchLock.unlock() }
    let input = try closeOnExecPipe(), output = try closeOnExecPipe(), errors = try closeOnExecPipe()
    process.standardInput = input.read
    process.standardOutput = output.write
    process.standardError = errors.write
    try process.run()
    try input.read.close()
    try output.write.close()
    try errors.write.close()
    return ChildPipes(stdin: input.write, stdout: output.read, stderr: errors.read)
}

private let launchLock = NSLock()

private func closeOnExecPipe() throws -> (read: FileHandle, write: FileHandle) {
    var descriptors: [Int32] = [0, 0]
    guard pipe(&descriptors) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EMFILE) }
    _ = fcntl(descriptors[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(descriptors[1], F_SETFD, FD_CLOEXEC)
    return (FileHandle(fileDescriptor: descriptors[0], closeOnDealloc: true),
            FileHandle(fileDescriptor: descriptors[1], closeOnDealloc: true))
}
