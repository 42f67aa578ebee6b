import Foundation
import Synchronization

/// ThreadSanitizer cannot see `Synchronization.Mutex` on Linux (it parks with raw futex calls, which TSan does not
/// intercept), so every access guarded by one looks like a race. When the process runs under TSan, its annotation
/// functions are found at run time and each critical section tells TSan about the lock; otherwise the lookups are
/// nil and cost one branch.
///
/// Why not a lock TSan sees by itself: a `pthread_mutex_t` in a class of its own (a job's lock then costs an
/// allocation) made the engine benchmark's one-by-one part take 37 % more instructions (callgrind, 100,000 jobs:
/// 583 M -> 800 M), batch submission 31 % more and 20 % more page faults, and its CPU per job 15-30 % more in six
/// alternating pairs. State is guarded by `Mutex`; a thread that waits for a condition uses `NSCondition` (off the
/// hot path: the store, plugin mailboxes), and an idle worker parks on a semaphore.
package enum SanitizerHooks {
    package typealias Annotation = @convention(c) (UnsafeMutableRawPointer?) -> Void

    package static let acquire: Annotation? = symbol("__tsan_acquire")
    package static let release: Annotation? = symbol("__tsan_release")

    private static func symbol(_ name: String) -> Annotation? {
        dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: Annotation.self) }
    }
}

extension Mutex where Value: ~Copyable {
    /// `withLock`, with the critical section announced to ThreadSanitizer under the address of `anchor` (the object
    /// that owns this mutex).
    package borrowing func withLock<Result, E: Error>(
        anchoredTo anchor: AnyObject, _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        try withLock { (value: inout sending Value) throws(E) -> sending Result in
            let address = Unmanaged.passUnretained(anchor).toOpaque()
            SanitizerHooks.acquire?(address)
            defer { SanitizerHooks.release?(address) }
            return try body(&value)
        }
    }
}
