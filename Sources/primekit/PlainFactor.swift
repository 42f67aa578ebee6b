// The plain `factor` (no numbers on the command line, no option but --exponents): numbers read from standard input
// are factored by the kernel's batch calls on this thread and one helper thread, and their lines written in a few
// large writes, without the argument parser, the engine or Swift tasks. At the first token that is not a canonical
// number below 2^128 (a bigger number, an invalid one), the run is handed over, from that token on, to the general
// path (Runner), which reads the rest of standard input.
//
// Ctrl-C or SIGTERM: the numbers of the slice being factored are answered, and those read but not answered go to a
// checkpoint file, as the general path does.

import Glibc
import PrimeKit
import Synchronization

enum PlainFactor {
    enum Outcome {
        /// The run is over, with this exit status.
        case finished(Int32)
        /// The general path continues the run from this input.
        case handOver(StandardInputPrefix)
    }

    /// Set by the signal handler (SIGINT, SIGTERM); read between slices.
    private static let interrupted = Atomic<Bool>(false)

    /// Bytes read at a time, at most.
    private static let bufferSize = 1 << 20
    /// A thread factors numbers in batches of about this many numbers below 2^32, or fewer bigger ones (see
    /// ``BatchChunk/weight(of:)``), and looks for a signal between batches.
    private static let sliceWeight = 1 << 12
    /// A buffer is cut into pieces the two threads take in turn; the pieces' lines are written in order.
    private static let pieces = 16

    static func run(exponents: Bool) -> Outcome {
        let signals = Signals()
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: bufferSize)
        defer { buffer.deallocate() }
        var filled = 0
        var ended = false
        let work = Work(exponents: exponents)
        while true {
            // Read what is there (at least once, waiting), without waiting for more than is ready.
            var failed = false
            while !ended, filled < bufferSize {
                let count = read(0, buffer + filled, bufferSize - filled)
                if count < 0 {
                    if errno == EINTR {
                        if interrupted.load(ordering: .relaxed) { break }
                        continue
                    }
                    failed = true  // the general path reads again and reports it
                    break
                }
                if count == 0 {
                    ended = true
                    break
                }
                filled += count
                if !Self.moreIsReady() { break }
            }
            // Complete tokens only: up to the last space, or everything at the end of input.
            var limit = filled
            if !ended, !failed {
                while limit > 0, !isSpace(buffer[limit - 1]) { limit -= 1 }
                if filled - limit > 40 {
                    // A token this long is not a number below 2^128: the general path takes it from its start.
                    signals.restore()
                    return .handOver(StandardInputPrefix(bytes: Array(UnsafeBufferPointer(start: buffer + limit,
                                                                                          count: filled - limit)),
                                                         endsInput: false))
                }
            }
            let stop = work.answer(UnsafePointer(buffer), limit, interrupted: { interrupted.load(ordering: .relaxed) })
            if interrupted.load(ordering: .relaxed) {
                // What is read but not answered goes to the checkpoint.
                var rest: [String] = []
                var position = stop?.offset ?? limit
                while position < limit {
                    while position < limit, isSpace(buffer[position]) { position += 1 }
                    let start = position
                    while position < limit, !isSpace(buffer[position]) { position += 1 }
                    if position > start {
                        rest.append(String(decoding: UnsafeBufferPointer(start: buffer + start, count: position - start),
                                           as: UTF8.self))
                    }
                }
                return .finished(signals.interrupt(rest: rest, exponents: exponents))
            }
            if let start = stop?.offset ?? (failed ? limit : nil) {
                signals.restore()
                return .handOver(StandardInputPrefix(bytes: Array(UnsafeBufferPointer(start: buffer + start,
                                                                                      count: filled - start)),
                                                     endsInput: ended))
            }
            // Keep the unfinished token.
            buffer.update(from: buffer + limit, count: filled - limit)
            filled -= limit
            if ended && filled == 0 { return .finished(ExitStatus.ok) }
        }
    }

    /// Answers numbers given on the command line the same way, when the batch path takes every one of them (each a
    /// canonical number from 2 to 2^128 - 1); nil, having written nothing, when it does not.
    static func run(arguments: ArraySlice<String>, exponents: Bool) -> Int32? {
        var text: [UInt8] = []
        text.reserveCapacity(arguments.reduce(0) { $0 + $1.utf8.count + 1 })
        for argument in arguments {
            let start = text.count
            text.append(contentsOf: argument.utf8)
            let taken = text.withUnsafeBufferPointer { BatchChunk.parse(UnsafeBufferPointer(rebasing: $0[start...])) }
            guard taken != nil else { return nil }
            text.append(0x0A)
        }
        let signals = Signals()
        let work = Work(exponents: exponents)
        let stop = text.withUnsafeBufferPointer { bytes in
            work.answer(bytes.baseAddress!, bytes.count, interrupted: { interrupted.load(ordering: .relaxed) })
        }
        guard interrupted.load(ordering: .relaxed) else { return ExitStatus.ok }
        // What was not answered goes to the checkpoint, as for standard input.
        let rest = text[(stop?.offset ?? text.count)...].split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
        return signals.interrupt(rest: rest, exponents: exponents)
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }

    /// Whether standard input has bytes to read at once (so a number typed at a terminal is answered at once).
    private static func moreIsReady() -> Bool {
        var descriptor = pollfd(fd: 0, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN) != 0
    }

    /// Where a piece stopped before its end: at a token the batch path does not take, or at an interrupt.
    struct Stop {
        var offset: Int
    }

    /// Answers a buffer of whole tokens: it is cut at spaces into pieces that this thread and a helper take in
    /// turn; each thread parses, factors and formats its pieces, and the pieces' lines are written in order.
    private final class Work: @unchecked Sendable {
        private let exponents: Bool
        /// One writer per piece, kept from buffer to buffer.
        private let writers: UnsafeMutableBufferPointer<ByteWriter>
        private let stops: UnsafeMutableBufferPointer<Stop?>
        private var bounds: [Int] = []
        private var text: UnsafePointer<UInt8>?
        private var interrupted: () -> Bool = { false }
        private let next = Atomic<Int>(0)
        private var helper: HelperThread?

        init(exponents: Bool) {
            self.exponents = exponents
            writers = .allocate(capacity: PlainFactor.pieces)
            for index in 0..<PlainFactor.pieces {
                (writers.baseAddress! + index).initialize(to: ByteWriter(capacity: 1 << 14))
            }
            stops = .allocate(capacity: PlainFactor.pieces)
            stops.initialize(repeating: nil)
        }

        /// Answers the tokens of `text[0..<count]`, writing their lines to standard output.
        /// - Returns: nil when all are answered, else where the first piece that stopped early stopped (the
        ///   lines of the pieces after it are not written).
        func answer(_ text: UnsafePointer<UInt8>, _ count: Int, interrupted: @escaping () -> Bool) -> Stop? {
            guard count > 0 else { return nil }
            // A line typed at a terminal is one piece on this thread; a few big numbers are already several.
            let pieces = min(PlainFactor.pieces, max(1, count / 64))
            bounds.removeAll(keepingCapacity: true)
            bounds.append(0)
            for index in 1..<pieces {
                var cut = max(bounds[bounds.count - 1], count * index / pieces)
                while cut < count, !PlainFactor.isSpace(text[cut]) { cut += 1 }
                bounds.append(cut)
            }
            bounds.append(count)
            self.text = text
            self.interrupted = interrupted
            next.store(0, ordering: .relaxed)
            if pieces > 1 {
                if helper == nil { helper = HelperThread() }
                helper!.start { [self] in run(worker: 1) }
                run(worker: 0)
                helper!.wait()
            } else {
                run(worker: 0)
            }
            for index in 0..<pieces {
                writers[index].write(to: 1)
                if let stop = stops[index] { return stop }
            }
            return nil
        }

        private func run(worker: Int) {
            // The values, and where each token starts and ends, of the batch being gathered.
            var values: [UInt128] = []
            var spans: [(start: Int, end: Int)] = []
            while true {
                let piece = next.add(1, ordering: .relaxed).oldValue
                guard piece < bounds.count - 1 else { break }
                stops[piece] = answerPiece(bounds[piece]..<bounds[piece + 1], writer: writers.baseAddress! + piece,
                                           values: &values, spans: &spans)
            }
        }

        private func answerPiece(_ range: Range<Int>, writer out: UnsafeMutablePointer<ByteWriter>,
                                 values: inout [UInt128], spans: inout [(start: Int, end: Int)]) -> Stop? {
            let text = self.text!
            // Written through a local copy: the writers lie side by side, and two threads writing into one cache
            // line would take turns owning it.
            var writer = out.pointee
            writer.reset()
            defer { out.pointee = writer }
            var position = range.lowerBound
            let end = range.upperBound
            while true {
                // Gather a batch of about `sliceWeight`, up to a token the batch path does not take.
                values.removeAll(keepingCapacity: true)
                spans.removeAll(keepingCapacity: true)
                var weight = 0
                var refused: Int?
                while position < end, weight < PlainFactor.sliceWeight {
                    while position < end, PlainFactor.isSpace(text[position]) { position += 1 }
                    let start = position
                    while position < end, !PlainFactor.isSpace(text[position]) { position += 1 }
                    guard position > start else { break }
                    guard let value = BatchChunk.parse(UnsafeBufferPointer(start: text + start,
                                                                           count: position - start)) else {
                        refused = start
                        break
                    }
                    values.append(value)
                    spans.append((start, position))
                    weight += BatchChunk.weight(of: value)
                }
                if interrupted() { return Stop(offset: spans.first?.start ?? refused ?? position) }
                if !values.isEmpty {
                    do {
                        try WordFactorization.factor(values) { index, factors in
                            let span = spans[index]
                            BatchChunk.appendLine(UnsafeBufferPointer(start: text + span.start,
                                                                      count: span.end - span.start),
                                                  factors, exponents: exponents, to: &writer)
                        }
                    } catch {
                        // Every value was checked to be at least 2 when it was read; this cannot happen.
                        fatalError("batch factorization refused a checked number: \(error)")
                    }
                }
                if let refused { return Stop(offset: refused) }
                if position >= end { return nil }
            }
        }
    }

    /// The run's signal handling: a handler that only sets a flag (no SA_RESTART, so a waiting read returns),
    /// the dispositions it replaced (restored when the run is handed over), and the checkpoint on interrupt.
    private final class Signals {
        private var previous: [(Int32, sigaction)] = []
        private var mask = sigset_t()

        init() {

            _ = PlainFactor.interrupted.load(ordering: .relaxed)  // initialised before a handler can run
            for number in [SIGINT, SIGTERM] {
                var old = sigaction()
                sigaction(number, nil, &old)
                // A SIGINT ignored from the start (a command run with & by a non-interactive shell) stays ignored.
                if number == SIGINT, unsafeBitCast(old.__sigaction_handler.sa_handler, to: Int.self) == 1 { continue }
                var action = sigaction()
                action.__sigaction_handler.sa_handler = { _ in PlainFactor.interrupted.store(true, ordering: .relaxed) }
                sigemptyset(&action.sa_mask)
                action.sa_flags = 0
                sigaction(number, &action, nil)
                previous.append((number, old))
            }
            // They may come blocked from the parent; the handler must see them here, on the thread that reads
            // (threads started later block them again, see HelperThread). Unblocked only now that the handler is
            // in place, as one already pending is delivered at once.
            var signals = sigset_t()
            sigemptyset(&signals)
            sigaddset(&signals, SIGINT)
            sigaddset(&signals, SIGTERM)
            pthread_sigmask(SIG_UNBLOCK, &signals, &mask)
        }

        /// Puts back the dispositions found at the start.
        func restore() {
            for (number, old) in previous {
                var old = old
                sigaction(number, &old, nil)
            }
            pthread_sigmask(SIG_SETMASK, &mask, nil)
        }

        /// Writes the checkpoint of the numbers left (if any) and returns the exit status.
        func interrupt(rest: [String], exponents: Bool) -> Int32 {
            guard !rest.isEmpty else {
                reportError("interrupted")
                return ExitStatus.interrupted
            }
            // From here a second signal ends the process at once, removing a half-written file.
            let watcher = SignalWatcher(received: 1) {}
            var settings = RunSettings(command: .factor)
            settings.exponents = exponents
            return Runner.saveCheckpoint(rest.map(WorkItem.number), settings: settings, failed: false,
                                         path: "primekit-\(getpid()).checkpoint", chosen: false, signals: watcher,
                                         fromStandardInput: true)
        }
    }
}

/// One plain thread that runs a closure when asked, with SIGINT and SIGTERM blocked (they go to the main thread,
/// whose read they interrupt).
private final class HelperThread: @unchecked Sendable {
    private let go = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private let done = UnsafeMutablePointer<sem_t>.allocate(capacity: 1)
    private var work: (() -> Void)?

    init() {
        sem_init(go, 0, 0)
        sem_init(done, 0, 0)
        var blocked = sigset_t()
        var saved = sigset_t()
        sigemptyset(&blocked)
        sigaddset(&blocked, SIGINT)
        sigaddset(&blocked, SIGTERM)
        // The new thread inherits the mask; this thread's is put back at once.
        pthread_sigmask(SIG_BLOCK, &blocked, &saved)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()  // lives as long as the process
        pthread_create(&thread, nil, { context in
            let helper = Unmanaged<HelperThread>.fromOpaque(context!).takeUnretainedValue()
            helper.loop()
            return nil
        }, context)
        pthread_detach(thread)
        pthread_sigmask(SIG_SETMASK, &saved, nil)
    }

    private func loop() {
        while true {
            while sem_wait(go) != 0 {}
            work?()
            work = nil
            sem_post(done)
        }
    }

    /// Runs `work` on the thread; ``wait()`` must follow before the next call.
    func start(_ work: @escaping () -> Void) {
        self.work = work
        sem_post(go)
    }

    func wait() {
        while sem_wait(done) != 0 {}
    }
}
