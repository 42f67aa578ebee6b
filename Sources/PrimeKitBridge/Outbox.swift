import DequeModule
import Foundation
import PrimeKit

/// Where the bridge's lines go: standard output in `primekit serve`, memory in tests.
package protocol BridgeOutput: AnyObject, Sendable {
    /// Writes complete lines (each ends with a newline).
    /// - Returns: False when the reader is gone (EPIPE): nothing more will be written.
    func write(_ bytes: [UInt8]) -> Bool
}

/// The one writer of the protocol stream. Responses, batch responses and `job/finished` lines are never dropped;
/// `job/progress` is coalesced (one waiting line per job, the latest replacing an older one in place), so a slow
/// reader makes progress lines fewer, never the queue longer. It also keeps the protocol's ordering promises:
/// - nothing about a job goes out before the response that announced it (`job/submit`; notifications that come
///   first wait in the job's gate);
/// - no `job/progress` after the `job/pause` response until a `job/resume` response, and none after `job/finished`;
/// - `seq` strictly increases per job.
/// Writes happen on the outbox's own thread, so neither workers nor the request reader wait for the client.
final class Outbox: @unchecked Sendable {
    private enum Entry {
        case line([UInt8])
        case progress(JobID)
    }

    /// What the outbox knows about a job.
    private enum Gate {
        /// Not announced yet: its latest progress and its finished line wait here.
        case held(progress: [UInt8]?, finished: [UInt8]?)
        /// Announced: `paused` after a pause response; `seq` of the last progress let through.
        case live(paused: Bool, seq: UInt64)
    }

    private let output: any BridgeOutput
    private let condition = NSCondition()
    private var entries = Deque<Entry>()
    private var progressLines: [JobID: [UInt8]] = [:]
    private var gates: [JobID: Gate] = [:]
    /// Range jobs whose blocks are still being sent: their `job/finished` waits until the last block is queued.
    private var rangeStreams: Set<JobID> = []
    /// A range job's `job/finished`, held until its last block is queued.
    private var rangeFinished: [JobID: [UInt8]] = [:]
    /// `job/rangeBlock` lines of a job not announced yet (at most the credit window), in order.
    private var rangeHeld: [JobID: [[UInt8]]] = [:]
    /// Bytes of lines that cannot be dropped, waiting to be written.
    private var waitingBytes = 0
    private var writing = false
    /// The writer sleeps on `wake` (not on `condition`), so a line queued while it is busy costs no wake-up.
    private let wake = DispatchSemaphore(value: 0)
    private var writerIdle = false
    /// Threads blocked in ``waitForRoom()`` or ``drain()``: the writer wakes them only when there are some.
    private var waiters = 0
    private var failed = false
    private var stopped = false
    private let highWater: Int
    private var onFailure: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - output: Where lines go.
    ///   - highWater: ``waitForRoom()`` blocks while more than this many bytes wait.
    init(output: any BridgeOutput, highWater: Int = 64 << 20) {
        self.output = output
        self.highWater = highWater
        let thread = Thread { [self] in run() }
        thread.name = "primekit.bridge.writer"
        thread.start()
    }

    /// Called once, on the writer thread, when the output fails (the client went away).
    func setFailureHandler(_ handler: @escaping @Sendable () -> Void) {
        condition.withLock { onFailure = handler }
    }

    /// Queues a response line.
    /// - Parameters:
    ///   - line: The line, newline included.
    ///   - announcing: Jobs this response introduces; their waiting notifications follow it.
    ///   - pausing: A job whose progress stops with this response.
    ///   - resuming: A job whose progress may flow again after this response.
    func respond(_ line: [UInt8], announcing: [JobID] = [], pausing: JobID? = nil, resuming: JobID? = nil) {
        condition.withLock {
            guard !failed else { return }
            append(.line(line))
            for id in announcing {
                if let lines = rangeHeld.removeValue(forKey: id) { for line in lines { append(.line(line)) } }
                if case .held(let progress, let finished)? = gates[id] {
                    if let finished {
                        gates[id] = nil
                        append(.line(finished))
                        continue
                    }
                    gates[id] = .live(paused: false, seq: 0)
                    if let progress { queueProgress(id, progress) }
                } else {
                    gates[id] = .live(paused: false, seq: 0)
                }
            }
            if let id = pausing, case .live(_, let seq)? = gates[id] {
                gates[id] = .live(paused: true, seq: seq)
                progressLines[id] = nil
            }
            if let id = resuming, case .live(_, let seq)? = gates[id] {
                gates[id] = .live(paused: false, seq: seq)
            }
            wakeWriter()
        }
    }

    /// Marks jobs as announced without a response (jobs recovered from a state directory).
    func announce(_ ids: [JobID]) {
        condition.withLock {
            for id in ids where gates[id] == nil { gates[id] = .live(paused: false, seq: 0) }
        }
    }

    /// Queues a `job/progress` line, or replaces the one of the same job still waiting.
    func progress(_ id: JobID, seq: UInt64, _ line: [UInt8]) {
        condition.withLock {
            guard !failed else { return }
            switch gates[id] {
            case nil:
                gates[id] = .held(progress: line, finished: nil)
            case .held(_, let finished):
                if finished == nil { gates[id] = .held(progress: line, finished: nil) }
            case .live(let paused, let last):
                guard !paused, seq > last else { return }
                gates[id] = .live(paused: false, seq: seq)
                queueProgress(id, line)
                wakeWriter()
            }
        }
    }

    /// Opens a range job's block stream: its `job/finished` waits for ``endRange(_:)``, also when it came already
    /// (a short job can finish between its submission and this call, while its response is not out yet: then
    /// the response would have released it ahead of the blocks, and the blocks, for a job no longer known, would
    /// have been held for ever).
    func startRange(_ id: JobID) {
        condition.withLock {
            rangeStreams.insert(id)
            if case .held(let progress, let finished?)? = gates[id] {
                gates[id] = .held(progress: progress, finished: nil)
                rangeFinished[id] = finished
            }
        }
    }

    /// Queues a `job/rangeBlock` line (after the response that announced the job).
    func rangeBlock(_ id: JobID, _ line: [UInt8]) {
        condition.withLock {
            guard !failed else { return }
            if case .live? = gates[id] {
                append(.line(line))
                wakeWriter()
            } else {
                rangeHeld[id, default: []].append(line)
            }
        }
    }

    /// Closes a range job's block stream: its held `job/finished`, if any, follows the last block.
    func endRange(_ id: JobID) {
        let finished: [UInt8]? = condition.withLock {
            rangeStreams.remove(id)
            return rangeFinished.removeValue(forKey: id)
        }
        if let finished { self.finished(id, finished) }
    }

    /// Queues a job's `job/finished` line: the last line about the job.
    func finished(_ id: JobID, _ line: [UInt8]) {
        condition.withLock {
            guard !failed else { return }
            if rangeStreams.contains(id) {
                rangeFinished[id] = line
                return
            }
            switch gates[id] {
            case nil, .held:
                gates[id] = .held(progress: nil, finished: line)
            case .live:
                gates[id] = nil
                progressLines[id] = nil
                append(.line(line))
                wakeWriter()
            }
        }
    }

    /// Blocks while too many bytes wait for the client (the request reader calls it: a client that stops reading
    /// stops being read).
    func waitForRoom() {
        condition.withLock {
            waiters += 1
            defer { waiters -= 1 }
            while waitingBytes > highWater && !failed && !stopped { condition.wait() }
        }
    }

    /// Blocks until everything queued so far is written (or the output failed).
    func drain() {
        condition.withLock {
            waiters += 1
            defer { waiters -= 1 }
            while (!entries.isEmpty || writing) && !failed {
                wakeWriter()
                condition.wait()
            }
        }
    }

    /// Drains, then ends the writer thread.
    func close() {
        drain()
        condition.withLock {
            stopped = true
            wakeWriter()
            condition.broadcast()
        }
    }

    /// What waits for the client: bytes of lines that cannot be dropped, and coalesced progress lines.
    var backlog: (bytes: Int, progressLines: Int) {
        condition.withLock { (waitingBytes, progressLines.count) }
    }

    /// Whether the output failed.
    var hasFailed: Bool { condition.withLock { failed } }

    // MARK: - Under the lock

    private func append(_ entry: Entry) {
        if case .line(let line) = entry { waitingBytes += line.count }
        entries.append(entry)
    }

    /// Under the lock: wakes the writer if it sleeps.
    private func wakeWriter() {
        if writerIdle {
            writerIdle = false
            wake.signal()
        }
    }

    private func queueProgress(_ id: JobID, _ line: [UInt8]) {
        if progressLines.updateValue(line, forKey: id) == nil { entries.append(.progress(id)) }
    }

    // MARK: - The writer thread

    private func run() {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(1 << 16)
        while true {
            let handler: (@Sendable () -> Void)?
            condition.lock()
            while entries.isEmpty && !stopped {
                writerIdle = true
                condition.unlock()
                wake.wait()
                condition.lock()
            }
            writerIdle = false
            if entries.isEmpty && stopped {
                condition.unlock()
                return
            }
            // Take what waits, up to about 1 MiB per write.
            while let entry = entries.first, buffer.count < 1 << 20 {
                entries.removeFirst()
                switch entry {
                case .line(let line):
                    buffer.append(contentsOf: line)
                    waitingBytes -= line.count
                case .progress(let id):
                    if let line = progressLines.removeValue(forKey: id) {
                        buffer.append(contentsOf: line)
                    }
                }
            }
            writing = true
            condition.unlock()

            let ok = buffer.isEmpty || output.write(buffer)
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 22)

            condition.lock()
            writing = false
            handler = ok ? nil : onFailure
            if !ok {
                failed = true
                onFailure = nil
                entries.removeAll()
                progressLines.removeAll()
                waitingBytes = 0
            }
            if waiters > 0 || !ok { condition.broadcast() }
            condition.unlock()
            if let handler { handler() }
            if !ok { return }
        }
    }
}

extension NSCondition {
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        lock()
        defer { unlock() }
        return try body()
    }
}
