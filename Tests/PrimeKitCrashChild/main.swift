// A child process for the crash-recovery tests: runs an Engine on a state directory, resumes what it recovers,
// and reports each durable checkpoint on stdout ("saved <key> <generation>") until it is killed.
//
//   PrimeKitCrashChild <state directory> <checkpoint interval in ms>
import Foundation
import PrimeKit

/// Writes one line with write(2): the bytes are in the pipe before the next instruction, so a SIGKILL right after
/// loses nothing that was reported.
func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
            if written <= 0 { return }
            offset += written
        }
    }
}

/// Reports the store's durable checkpoints.
final class SavedReporter: Plugin {
    func initialize(engine: Engine, arguments: [String: any Sendable]) -> Bool {
        engine.subscribe(self, to: .pluginData, tags: .exactly([CheckpointStore.savedTag]))
        return true
    }

    func stop() -> PluginStopResult { .stopped }

    func receive(_ event: EngineEvent) {
        if case .pluginData(let data) = event, let saved = data.data as? StoreSaved {
            say("saved \(saved.key) \(saved.generation)")
        }
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let intervalMs = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: PrimeKitCrashChild <state directory> <interval ms>\n".utf8))
    exit(2)
}
var settings = EngineSettings()
settings.stateDirectory = arguments[1]
settings.checkpointInterval = .milliseconds(intervalMs)
settings.maxConcurrentJobs = 2
settings.sliceDuration = .milliseconds(2)
var options = Engine.Options()
options.resumeRecoveredJobs = true
let engine = await Engine(settings: settings, options: options)
engine.add(SavedReporter())
say("ready \(engine.recoveredJobs.count) \(engine.store?.unreadResults.count ?? 0) \(engine.startupErrors.count)")
await engine.queue.waitUntilIdle()
await engine.store?.persistNow()
say("idle")
while true { try? await Task.sleep(for: .seconds(3600)) }
