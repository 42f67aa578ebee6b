// SIGINT and SIGTERM, received through DispatchSource signal sources (no work happens in a signal handler).
//
// The first signal asks the run to stop at its next slice and write a checkpoint. A second one, while that is
// under way, ends the process at once (removing a half-written temporary file), with status 130.

import Dispatch
import Foundation
import Synchronization

final class SignalWatcher: @unchecked Sendable {
    private let sources: [any DispatchSourceSignal]
    private let state = Mutex<(count: Int, temporaryPath: String?)>((0, nil))

    /// Starts watching.
    /// - Parameters:
    ///   - received: Signals already received another way (1: the next one ends the process at once).
    ///   - onFirst: Called once, on a dispatch queue, for the first SIGINT or SIGTERM.
    init(received: Int = 0, onFirst: @escaping @Sendable () -> Void) {
        state.withLock { $0.count = received }
        let queue = DispatchQueue(label: "primekit.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            // The source sees the signal; the default action (terminate) must not.
            let previous = signal(number, SIG_IGN)
            // A SIGINT ignored from the start (a command run with & by a non-interactive shell) stays ignored, as
            // it does for other Unix tools: Ctrl-C at that terminal was not meant for this process.
            if number == SIGINT, let previous, unsafeBitCast(previous, to: Int.self) == 1 { continue }
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: queue))
        }
        self.sources = sources
        for source in sources {
            source.setEventHandler { [self, source] in  // the watcher lives as long as the process
                // Signals that arrive before the handler runs are coalesced: two quick Ctrl-Cs count as two.
                let received = max(1, Int(source.data))
                let (count, temporaryPath) = state.withLock { state in
                    state.count += received
                    return (state.count, state.temporaryPath)
                }
                if count == 1 {
                    onFirst()
                } else {
                    if let temporaryPath { unlink(temporaryPath) }
                    reportError("interrupted again; exiting without a checkpoint")
                    _exit(ExitStatus.interrupted)
                }
            }
            source.resume()
        }
    }

    /// The temporary file being written, removed if a second signal ends the process.
    func writing(_ temporaryPath: String?) {
        state.withLock { $0.temporaryPath = temporaryPath }
    }
}
