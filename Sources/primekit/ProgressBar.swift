// Progress on standard error: the status line both progress displays draw on, and the bar of the number being
// worked on (percent, divisors per second, time left).

import Dispatch
import Foundation
import PrimeKit
import Synchronization

/// A line on standard error, drawn by a timer: redrawn five times a second on a terminal (erased before an answer
/// is printed); forced onto something that is not a terminal (--progress), a plain `primekit: progress` line about
/// once a second. What it says comes from `render`, called under the line's lock with the terminal's width (nil
/// off a terminal); nil draws nothing this time.
final class StatusLine: @unchecked Sendable {
    private let terminal: Bool
    private let state = Mutex<(visible: Bool, lastLine: ContinuousClock.Instant?)>((false, nil))
    private let timer: any DispatchSourceTimer
    private let render: @Sendable (_ width: Int?) -> String?

    /// A line, or nil when `mode` and standard error say there should be none.
    init?(mode: ProgressMode, render: @escaping @Sendable (_ width: Int?) -> String?) {
        let terminal = isatty(2) == 1
        switch mode {
        case .never: return nil
        case .automatic where !terminal: return nil
        default: break
        }
        self.terminal = terminal
        self.render = render
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "primekit.progress"))
        timer.schedule(deadline: .now() + .milliseconds(200), repeating: .milliseconds(200))
        timer.setEventHandler { [weak self] in self?.tick() }
        timer.resume()
    }

    deinit {
        timer.cancel()
    }

    /// Erases the line (before an answer is printed) until the next tick.
    func clear() {
        state.withLock { clearLocked(&$0) }
    }

    /// Erases the line and stops drawing it.
    func stop() {
        timer.cancel()
        state.withLock { clearLocked(&$0) }
    }

    private func clearLocked(_ state: inout (visible: Bool, lastLine: ContinuousClock.Instant?)) {
        if state.visible && terminal { emit("\r\u{1B}[K") }
        state.visible = false
    }

    private func tick() {
        state.withLock { state in
            let now = ContinuousClock.now
            if terminal {
                guard let line = render(Self.columns()) else { return }
                emit("\r" + line + "\u{1B}[K")
                state.visible = true
            } else if state.lastLine.map({ now - $0 >= .seconds(1) }) ?? true {
                guard let line = render(nil) else { return }
                emit("primekit: progress " + line + "\n")
                state.lastLine = now
            }
        }
    }

    private static func columns() -> Int {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 10 { return Int(size.ws_col) }
        return 80
    }

    private func emit(_ text: String) {
        _ = writeAll(2, Array(text.utf8))
    }
}

/// The bar of the number being worked on: percent, divisors per second and time left (past trial division, the
/// stage and how far it is).
final class ProgressBar: Sendable {
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

    /// The followed job, shared with the status line's renderer.
    private final class Following: Sendable {
        let tracked = Mutex<Tracked?>(nil)
    }

    private let following = Following()
    private let line: StatusLine

    /// A bar, or nil when `mode` and standard error say there should be none.
    init?(mode: ProgressMode) {
        let following = self.following
        guard let line = StatusLine(mode: mode, render: { width in Self.render(following, width: width) }) else {
            return nil
        }
        self.line = line
    }

    /// Follows `job` (the number whose answer is printed next), or nothing.
    func track(_ job: Job?, label: String) {
        let changed = following.tracked.withLock { tracked in
            if tracked?.job === job { return false }
            tracked = job.map { Tracked(job: $0, label: label, since: .now) }
            return true
        }
        if changed { line.clear() }
    }

    /// Erases the bar (before an answer is printed) until the next tick.
    func clear() {
        line.clear()
    }

    /// Erases the bar and stops drawing it.
    func stop() {
        line.stop()
        following.tracked.withLock { $0 = nil }
    }

    private static func render(_ following: Following, width: Int?) -> String? {
        following.tracked.withLock { state in
            guard var tracked = state else { return nil }
            let now = ContinuousClock.now
            let progress = tracked.job.progress
            guard !tracked.job.state.isFinished, now - tracked.since >= .milliseconds(150) else { return nil }
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
            state = tracked
            // Past trial division, a complete job shows its stage (ECM, the quadratic sieve, ...) instead.
            let stage = progress.stage == "trial" ? nil
                : (name: progress.stage, fraction: progress.stageFraction, partsLeft: progress.partsLeft,
                   detail: progress.ecm?.description)
            return line(tracked.label, progress.percent, tracked.rate, eta, width: width, stage: stage)
        }
    }

    /// `600851475143 [#########-----------]  45.2%  ETA 0:07  12.3 M div/s`; past trial division, the stage and
    /// how far it is: `1234…(45 digits) ecm [####----------------]  21.0% of stage  curve 12 of 90 at B1 = 50000
    /// (25 digits)  1 part left`.
    static func line(_ label: String, _ percent: Double, _ rate: Double?, _ eta: Double?, width: Int?,
                     stage: (name: String, fraction: Double, partsLeft: Int, detail: String?)? = nil) -> String {
        let cells = 20
        if let stage {
            let filled = min(cells, max(0, Int(stage.fraction * Double(cells))))
            let bar = "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: cells - filled) + "]"
            let percentText = String(format: "%5.1f%%", min(100, max(0, stage.fraction * 100)))
            var text = "\(label) \(stage.name) \(bar) \(percentText) of stage"
            if let detail = stage.detail { text += "  \(detail)" }
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

}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
}
