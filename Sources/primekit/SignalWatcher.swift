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
    /// - Parameter onFirst: Called once, on a dispatch queue, for the first SIGINT or SIGTERM.
    init(onFirst: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "primekit.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)  // the source sees it; the default action (terminate) must not
            sources.append(DispatchSource.makeSignalSource(signal: number, queue: queue))
        }
        self.sources = sources
        for source in sources {
            source.setEventHandler { [self] in
                let (count, temporaryPath) = state.withLock { state in
                    state.count += 1
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
