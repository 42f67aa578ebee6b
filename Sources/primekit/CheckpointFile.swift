// The file `primekit` writes when it is interrupted, and reads back for `primekit resume`.
//
//   primekit-cli-checkpoint 2
//   command factor                 (or is-prime)
//   json 0                         output options, so a resumed run prints the same format
//   exponents 0
//   exit-status 0
//   from -                         the divisor range options ("-": the default) for numbers not yet started
//   bound -
//   ecm-digits 30                  only when factor --ecm-digits was given
//   failed 0                       1 when an earlier number of the run failed (the exit status says so)
//   items 2
//   job 1234                       an engine checkpoint of a started number, in exactly 1234 bytes
//   <bytes>
//   number 12                      a number not started yet (or to recompute), in exactly 12 bytes
//   <bytes>
//   range 97                       factor --range: a sub-range's kernel checkpoint (pk_range_checkpoint), 97 bytes
//   <bytes>
//   span 25                        factor --range: the numbers "A B" from A to B, not started, in 25 bytes
//   <bytes>
//   checksum 0123456789abcdef      FNV-1a 64 of every byte before this line (PrimeKit's TextChecksum)
//
// Every payload is followed by a newline. The file is written to a temporary name in the same directory, flushed
// to disk and renamed, so a reader sees the old file or the whole new one. A file is used only whole: a checksum
// that does not match, a line out of place, or an engine checkpoint the engine refuses rejects all of it before
// any number is answered. Version 1 (no checksum line) is refused. A file holds either number and job items, or
// range and span items (of `factor --range`, with no divisor range and no exit status) — never both.

import Foundation
import PrimeKit
import PrimeKitBridge

/// What a run works through, in order: numbers as written, or jobs restored from engine checkpoints.
enum WorkItem: Sendable {
    case number(String)
    case job(Checkpoint)
}

/// The contents of a checkpoint file.
struct CheckpointFile: Sendable {
    static let header = "primekit-cli-checkpoint 2"

    var settings: RunSettings
    var failed: Bool
    var items: [WorkItem]
    /// What a `factor --range` run has left (then `items` is empty).
    var ranges: [RangeWork] = []

    /// The file's bytes.
    func encoded() -> [UInt8] {
        var text = Self.header + "\n"
        text += "command \(settings.command.rawValue)\n"
        text += "json \(settings.json ? 1 : 0)\n"
        text += "exponents \(settings.exponents ? 1 : 0)\n"
        text += "exit-status \(settings.exitStatus ? 1 : 0)\n"
        text += "from \(settings.from ?? "-")\n"
        text += "bound \(settings.bound ?? "-")\n"
        if let ecmDigits = settings.ecmDigits { text += "ecm-digits \(ecmDigits)\n" }
        if let timeLimit = settings.timeLimit { text += "time-limit \(timeLimit)\n" }
        text += "failed \(failed ? 1 : 0)\n"
        text += "items \(items.count + ranges.count)\n"
        var bytes = Array(text.utf8)
        let tagged = items.map { item in
            switch item {
            case .number(let number): ("number", number)
            case .job(let checkpoint): ("job", checkpoint.text)
            }
        } + ranges.map { range in
            switch range {
            case .position(let text): ("range", text)
            case .span(let first, let last): ("span", first + " " + last)
            }
        }
        for (tag, payload) in tagged {
            bytes += Array("\(tag) \(payload.utf8.count)\n".utf8)
            bytes += Array(payload.utf8)
            bytes.append(UInt8(ascii: "\n"))
        }
        bytes += Array(TextChecksum.line(for: bytes).utf8)
        return bytes
    }

    /// Parses a checkpoint file.
    /// - Throws: ``CLIError`` saying what is wrong with it.
    init(bytes: [UInt8], path: String) throws(CLIError) {
        var position = 0
        var end = bytes.count
        func bad(_ why: String) -> CLIError {
            CLIError("\(path) is not a usable primekit checkpoint: \(why)", status: ExitStatus.usage)
        }
        func line() throws(CLIError) -> String {
            guard let newline = bytes[position..<end].firstIndex(of: UInt8(ascii: "\n")) else {
                throw bad("it is truncated")
            }
            defer { position = newline + 1 }
            return String(decoding: bytes[position..<newline], as: UTF8.self)
        }
        func field(_ name: String) throws(CLIError) -> String {
            let text = try line()
            guard text.hasPrefix(name + " ") else { throw bad("expected a \"\(name)\" line") }
            return String(text.dropFirst(name.count + 1))
        }
        func flag(_ name: String) throws(CLIError) -> Bool {
            switch try field(name) {
            case "0": return false
            case "1": return true
            default: throw bad("bad \"\(name)\" line")
            }
        }
        func range(_ name: String) throws(CLIError) -> String? {
            let value = try field(name)
            if value == "-" { return nil }
            guard CandidateCheck.optionProblem(value) == nil else { throw bad("bad \"\(name)\" line") }
            return value
        }
        let first = try line()
        guard first.hasPrefix("primekit-cli-checkpoint ") else {
            throw bad("it does not start with \"primekit-cli-checkpoint\"")
        }
        guard first == Self.header else {
            let version = first.dropFirst(24)
            throw bad(version == "1" ? "format version 1 has no checksum, so it cannot be validated"
                                     : "format version \(version) is not supported")
        }
        do {
            end = try TextChecksum.verify(bytes)
        } catch {
            throw bad(error.reason)
        }
        guard let command = RunSettings.Command(rawValue: try field("command")) else { throw bad("unknown command") }
        var settings = RunSettings(command: command)
        settings.json = try flag("json")
        settings.exponents = try flag("exponents")
        settings.exitStatus = try flag("exit-status")
        settings.from = try range("from")
        settings.bound = try range("bound")
        if bytes[position..<end].starts(with: Array("ecm-digits ".utf8)) {
            let text = try field("ecm-digits")
            guard let digits = Int(text), String(digits) == text, (1...70).contains(digits) else {
                throw bad("bad \"ecm-digits\" line")
            }
            settings.ecmDigits = digits
        }
        if bytes[position..<end].starts(with: Array("time-limit ".utf8)) {
            let text = try field("time-limit")
            guard RunSettings.timeLimit(parsing: text) != nil else { throw bad("bad \"time-limit\" line") }
            settings.timeLimit = text
        }
        failed = try flag("failed")
        let countText = try field("items")
        guard let count = Int(countText), count >= 0, String(count) == countText else { throw bad("bad \"items\" line") }
        var items: [WorkItem] = []
        var ranges: [RangeWork] = []
        for _ in 0..<count {
            let parts = try line().split(separator: " ")
            guard parts.count == 2, let length = Int(parts[1]), length >= 0, String(length) == parts[1],
                  length < end - position,
                  bytes[position + length] == UInt8(ascii: "\n")
            else { throw bad("an item is truncated or malformed") }
            let payload = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
            position += length + 1
            switch parts[0] {
            case "number" where ranges.isEmpty:
                items.append(.number(payload))
            case "range" where items.isEmpty:
                do {
                    _ = try KernelRange(checkpoint: payload)
                } catch {
                    throw bad("item \(ranges.count + 1): \(error.message)")
                }
                ranges.append(.position(payload))
            case "span" where items.isEmpty:
                let ends = payload.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
                guard ends.count == 2, RangeRun.problem(first: ends[0], last: ends[1]) == nil else {
                    throw bad("item \(ranges.count + 1): a malformed span")
                }
                ranges.append(.span(first: ends[0], last: ends[1]))
            case "job" where ranges.isEmpty:
                do {
                    items.append(.job(try Checkpoint(text: payload)))
                } catch {
                    throw bad("item \(items.count + 1): \(error.message)")
                }
            case "number", "job", "range", "span":
                throw bad("it mixes range items with numbers")
            default:
                throw bad("unknown item \"\(parts[0])\"")
            }
        }
        guard position == end else { throw bad("it has data after its last item") }
        if !ranges.isEmpty, settings.command != .factor || settings.from != nil || settings.bound != nil
            || settings.exitStatus || settings.ecmDigits != nil || settings.timeLimit != nil {
            throw bad("range items with options a range run does not take")
        }
        self.settings = settings
        self.items = items
        self.ranges = ranges
    }

    init(settings: RunSettings, failed: Bool, items: [WorkItem], ranges: [RangeWork] = []) {
        self.settings = settings
        self.failed = failed
        self.items = items
        self.ranges = ranges
    }

    /// Reads and parses a checkpoint file.
    static func read(path: String) throws(CLIError) -> CheckpointFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "does not exist"
            throw CLIError("checkpoint \(path) \(reason)", status: ExitStatus.usage)
        }
        return try CheckpointFile(bytes: [UInt8](data), path: path)
    }
}

/// Writes files so that readers see the old contents or the whole new ones.
enum AtomicFile {
    /// Writes `bytes` to `temporaryPath` (owner-only), flushes it to disk and renames it to `path`, as the engine's
    /// checkpoint store writes its files.
    /// - Throws: ``CLIError`` naming the step that failed.
    static func write(_ bytes: [UInt8], to path: String, temporaryPath: String) throws(CLIError) {
        do {
            try DurableFile.replace(path, with: bytes, temporary: temporaryPath)
        } catch {
            let step = ["open": "cannot create", "write": "cannot write", "fsync": "cannot flush to disk",
                        "rename": "cannot rename \(temporaryPath) to"][error.operation] ?? "cannot \(error.operation)"
            throw CLIError("\(step) \(error.path): \(String(cString: strerror(error.errno)))")
        }
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}
