import Foundation
import Synchronization

/// ThreadSanitizer cannot see `Synchronization.Mutex` on Linux (it parks with raw futex calls, which TSan does not
/// intercept), so every access guarded by one looks like a race. When the process runs under TSan, its annotation
/// functions are found at run time and each critical section tells TSan about the lock; otherwise the lookups are
/// nil and cost one branch.
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
