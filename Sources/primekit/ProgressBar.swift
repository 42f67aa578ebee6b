// The progress bar on standard error: percent, divisors per second and time left for the number being worked on,
// redrawn five times a second on a terminal. When forced onto something that is not a terminal (--progress), it
// writes a plain line about once a second instead.

import Dispatch
import Foundation
import PrimeKit
import Synchronization

final class ProgressBar: @unchecked Sendable {
    private struct Tracked {
        var job: Job
        var label: String
        var since: ContinuousClock.Instant
        var firstPercent: Double?
        var firstPercentAt: ContinuousClock.Instant?
        var lastTested: UInt64?
        var lastTestedAt: ContinuousClock.Instant?
        var rate: Double?
    }

    private struct State {
        var tracked: Tracked?
        var visible = false
        var lastLineAt: ContinuousClock.Instant?
    }

    private let terminal: Bool
    private let state = Mutex(State())
    private let timer: any DispatchSourceTimer

    /// A bar, or nil when `mode` and standard error say there should be none.
    init?(mode: ProgressMode) {
        let terminal = isatty(2) == 1
        switch mode {
        case .never: return nil
        case .automatic where !terminal: return nil
        default: break
        }
        self.terminal = terminal
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "primekit.progress"))
        timer.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
    }

    deinit {
        timer.cancel()
    }

    /// Follows `job` (the number whose answer is printed next), or nothing.
    func track(_ job: Job?, label: String) {
        state.withLock { state in
            if state.tracked?.job === job { return }
            clearLocked(&state)
            state.tracked = job.map { Tracked(job: $0, label: label, since: .now) }
        }
    }

    /// Erases the bar (before an answer is printed) until the next tick.
    func clear() {
        state.withLock { clearLocked(&$0) }
    }

    /// Erases the bar and stops drawing it.
    func stop() {
        timer.cancel()
        state.withLock { state in
            clearLocked(&state)
            state.tracked = nil
        }
    }

    private func clearLocked(_ state: inout State) {
        if state.visible && terminal { emit("\r\u{1B}[K") }
        state.visible = false
    }

    private func tick() {
        state.withLock { state in
            guard var tracked = state.tracked else { return }
            let now = ContinuousClock.now
            let progress = tracked.job.progress
            guard !tracked.job.state.isFinished, now - tracked.since >= .milliseconds(150) else { return }
            if tracked.firstPercent == nil {
                tracked.firstPercent = progress.percent
                tracked.firstPercentAt = now
            }
            if let lastTested = tracked.lastTested, let lastAt = tracked.lastTestedAt,
               progress.divisorsTested >= lastTested, now - lastAt >= .milliseconds(150)
            {
                let instant = Double(progress.divisorsTested - lastTested) / seconds(now - lastAt)
                tracked.rate = tracked.rate.map { $0 * 0.6 + instant * 0.4 } ?? instant
                tracked.lastTested = progress.divisorsTested
                tracked.lastTestedAt = now
            } else if tracked.lastTested == nil {
                tracked.lastTested = progress.divisorsTested
                tracked.lastTestedAt = now
            }
            var eta: Double?
            if let first = tracked.firstPercent, let firstAt = tracked.firstPercentAt, progress.percent > first {
                eta = (100 - progress.percent) * seconds(now - firstAt) / (progress.percent - first)
            }
            state.tracked = tracked
            // Past trial division, a complete job shows its stage (ECM, the quadratic sieve, ...) instead.
            let stage = progress.stage == "trial" ? nil
                : (name: progress.stage, fraction: progress.stageFraction, partsLeft: progress.partsLeft)
            if terminal {
                let line = Self.line(tracked.label, progress.percent, tracked.rate, eta, width: Self.columns(),
                                     stage: stage)
                emit("\r" + line + "\u{1B}[K")
                state.visible = true
            } else if state.lastLineAt.map({ now - $0 >= .seconds(1) }) ?? true {
                emit("primekit: progress " + Self.line(tracked.label, progress.percent, tracked.rate, eta, width: nil,
                                                       stage: stage) + "\n")
                state.lastLineAt = now
            }
        }
    }

    /// `600851475143 [#########-----------]  45.2%  ETA 0:07  12.3 M div/s`; past trial division, the stage and
    /// how far it is: `1234…(45 digits) ecm [####----------------]  21.0% of stage  1 part left`.
    static func line(_ label: String, _ percent: Double, _ rate: Double?, _ eta: Double?, width: Int?,
                     stage: (name: String, fraction: Double, partsLeft: Int)? = nil) -> String {
        let cells = 20
        if let stage {
            let filled = min(cells, max(0, Int(stage.fraction * Double(cells))))
            let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
            let percentText = String(format: "%5.1f%%", min(100, max(0, stage.fraction * 100)))
            var text = "\(label) \(stage.name) \(bar) \(percentText) of stage"
            if stage.partsLeft > 0 { text += "  \(stage.partsLeft) part\(stage.partsLeft == 1 ? "" : "s") left" }
            if let width, text.count >= width { text = String(text.prefix(max(0, width - 1))) }
            return text
        }
        let filled = min(cells, max(0, Int(percent / 100 * Double(cells))))
        let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
        let rateText = (rate.map(formatRate) ?? "–") + " div/s"
        let etaText = "ETA " + (eta.map(formatDuration) ?? "–")
        let percentText = String(format: "%5.1f%%", min(100, max(0, percent)))
        var text = "\(label) \(bar) \(percentText)  \(etaText)  \(rateText)"
        if let width, text.count >= width { text = String(text.prefix(max(0, width - 1))) }
        return text
    }

    static func formatRate(_ rate: Double) -> String {
        switch rate {
        case 1e9...: String(format: "%.2f G", rate / 1e9)
        case 1e6...: String(format: "%.1f M", rate / 1e6)
        case 1e3...: String(format: "%.1f k", rate / 1e3)
        default: String(format: "%.0f", rate)
        }
    }

    static func formatDuration(_ seconds: Double) -> String {
        guard seconds.isFinite, seconds < 1e9 else { return "–" }
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0 ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }

    private static func columns() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10 { return Int(size.ws_col) }
        return 80
    }

    private func emit(_ text: String) {
        let bytes = Array(text.utf8)
        bytes.withUnsafeBytes { _ = write(2, $0.baseAddress!, $0.count) }
    }
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}
