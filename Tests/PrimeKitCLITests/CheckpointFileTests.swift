import Foundation
import PrimeKit
import Testing

/// A checkpoint file that was changed is refused whole (one line on standard error, exit status 2, nothing
/// answered), or it resumes to the same output — never to another answer, never with a line missing.
@Suite("Checkpoint files that were changed", .serialized)
struct CheckpointFileTests {
    /// 4 · 3 · 1000140937 · 5000596889 · (a 21-digit probable prime): long with bound 10^10.
    private let long = "14033596537696729212465464241888725265492"

    /// Runs the tool until its first progress line, sends SIGTERM and returns the checkpoint file's bytes.
    private func interruptedFile(_ arguments: [String], in directory: URL) throws -> [UInt8] {
        let path = directory.appendingPathComponent("run.checkpoint").path
        let launched = try Launched(arguments + ["--progress", "--checkpoint", path])
        #expect(launched.waitForStderr(containing: "primekit: progress"))
        launched.signal(SIGTERM)
        #expect(launched.finish().status == 130)
        return try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Writes `bytes` to a file and resumes it.
    private func resume(_ bytes: [UInt8], in directory: URL, name: String = "edited.checkpoint") throws -> ToolRun {
        let path = directory.appendingPathComponent(name).path
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        return try Tool.run(["resume", path, "--no-progress", "--checkpoint", path + ".next"])
    }

    private func expectRefused(_ run: ToolRun, _ what: String, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(run.status == 2, "\(what): exit status \(run.status)", sourceLocation: sourceLocation)
        #expect(run.stdout.isEmpty, "\(what): printed \(run.stdout)", sourceLocation: sourceLocation)
        #expect(run.stderrLines.count == 1, "\(what): \(run.stderr)", sourceLocation: sourceLocation)
        #expect(run.stderr.contains("is not a usable primekit checkpoint"), sourceLocation: sourceLocation)
    }

    @Test func aChangedRangeOptionIsRefused() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try interruptedFile(["factor", "--bound", "10000000000", long, "1000004"], in: directory)
        var lines = String(decoding: file, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[5] == "from -")
        lines[5] = "from 3"  // sed '6s/^from -$/from 3/'
        let run = try resume(Array(lines.joined(separator: "\n").utf8), in: directory)
        expectRefused(run, "from 3")
        #expect(run.stderr.contains("checksum"))
    }

    @Test func aChangedDigitOfANumberNotStartedIsRefused() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try interruptedFile(["factor", "--bound", "10000000000", long, "1000003"], in: directory)
        let text = String(decoding: file, as: UTF8.self)
        let item = try #require(text.range(of: "\nnumber 7\n1000003\n"))
        let edited = text.replacingCharacters(in: item, with: "\nnumber 7\n1090003\n")
        expectRefused(try resume(Array(edited.utf8), in: directory), "1000003 → 1090003")
    }

    @Test func everySingleCharacterChangeIsRefusedOrResumesToTheSameOutput() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // A one-piece complete job and a number behind it: a small real file. The job on RSA-100 is still running
        // when the signal comes, however fast or loaded the machine is, and its time limit ends it when resumed.
        // (A trial-division job short enough to resume here can end before the signal.)
        let file = try interruptedFile(["factor", "--time-limit", "3", rsa100, "77"], in: directory)
        #expect(String(decoding: file, as: UTF8.self).contains("\nnumber 2\n77\n"))
        let whole = try resume(file, in: directory, name: "whole.checkpoint")
        #expect(whole.status == 0)
        #expect(whole.stdoutLines.map(withoutEffort)
                == ["\(rsa100): [cofactor \(rsa100): composite, not split within the time limit (--time-limit 3)", "77: 7 11"])
        // Every edited file is written, and one `resume --check` process validates them all.
        let wholePath = directory.appendingPathComponent("whole.checkpoint").path
        var edits: [String: Int] = [:]
        for index in file.indices {
            var edited = file
            let byte = file[index]
            edited[index] = switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "8"): byte + 1
            case UInt8(ascii: "9"): UInt8(ascii: "0")
            case UInt8(ascii: "\n"): UInt8(ascii: " ")
            default: UInt8(ascii: "\n")
            }
            let path = directory.appendingPathComponent("edit-\(index).checkpoint").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(edited)))
            edits[path] = index
        }
        let paths = [wholePath] + edits.keys.sorted { edits[$0]! < edits[$1]! }
        let check = try Tool.run(["resume", "--check"] + paths)
        #expect(check.stdout.isEmpty)
        // One line per refused file, naming it; the unchanged file is not named.
        var refused: Set<String> = []
        for line in check.stderrLines {
            let named = paths.first { line.hasPrefix("primekit: \($0) is not a usable primekit checkpoint: ") }
            #expect(named != nil && named != wholePath, "unexpected line: \(line)")
            if let named { refused.insert(named) }
        }
        #expect(check.stderrLines.count == refused.count)
        #expect(check.status == (refused.isEmpty ? 0 : 2))
        // A file --check accepts resumes to the unchanged answer.
        for (path, index) in edits where !refused.contains(path) {
            let run = try Tool.run(["resume", path, "--no-progress", "--checkpoint", path + ".next"])
            #expect(run.stdoutLines.map(withoutEffort) == whole.stdoutLines.map(withoutEffort)
                    && run.status == whole.status, "byte \(index) changed the answer")
        }
        #expect(refused.count == file.count)
    }

    @Test func resumeCheckValidatesWithoutRunning() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try interruptedFile(["factor", "--bound", "10000000000", long, "1000003"], in: directory)
        let good = directory.appendingPathComponent("good.checkpoint").path
        #expect(FileManager.default.createFile(atPath: good, contents: Data(file)))
        let accepted = try Tool.run(["resume", "--check", good, good])
        #expect(accepted.status == 0 && accepted.stdout.isEmpty && accepted.stderr.isEmpty)
        // Nothing ran: the file is unchanged and no other file appeared.
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: good))) == file)
        let missing = good + ".missing"
        let mixed = try Tool.run(["resume", "--check", missing, good])
        #expect(mixed.status == 2 && mixed.stdout.isEmpty)
        #expect(mixed.stderrLines.count == 1 && mixed.stderr.contains(missing))
        let two = try Tool.run(["resume", good, good])
        #expect(two.status == 2)
    }

    @Test func itemLevelEditsAreRefused() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try interruptedFile(["factor", "--bound", "10000000000", long, "1000003", "1000004"],
                                       in: directory)
        let text = String(decoding: file, as: UTF8.self)
        // Head lines, items (tag line and payload), checksum line.
        let itemsAt = try #require(text.range(of: "\nitems 3\n"))
        let head = String(text[..<itemsAt.lowerBound])
        var rest = Substring(text[itemsAt.upperBound...])
        var items: [String] = []
        for _ in 0..<3 {
            let tagLine = rest.prefix { $0 != "\n" }
            let length = try #require(Int(tagLine.split(separator: " ")[1]))
            let payloadStart = rest.utf8.index(rest.utf8.startIndex, offsetBy: tagLine.utf8.count + 1)
            let itemEnd = rest.utf8.index(payloadStart, offsetBy: length + 1)
            items.append(String(rest[..<itemEnd]))
            rest = rest[itemEnd...]
        }
        let checksum = String(rest)
        #expect(checksum.hasPrefix("checksum "))
        func assemble(_ items: [String]) -> [UInt8] {
            Array((head + "\nitems \(items.count)\n" + items.joined() + checksum).utf8)
        }
        #expect(assemble(items) == file)
        let edits: [(String, [String])] = [
            ("drop the first item", Array(items.dropFirst())),
            ("drop the last item", Array(items.dropLast())),
            ("duplicate an item", [items[0], items[0], items[1], items[2]]),
            ("swap two items", [items[1], items[0], items[2]]),
            ("reverse the items", items.reversed()),
            ("keep one item", [items[2]]),
        ]
        for (name, edited) in edits {
            expectRefused(try resume(assemble(edited), in: directory), name)
        }
    }

    @Test func aFileWithoutAChecksumIsRefused() throws {
        let directory = try Tool.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = try interruptedFile(["factor", "--bound", "10000000000", long], in: directory)
        var lines = String(decoding: file, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        lines[0] = "primekit-cli-checkpoint 1"
        lines.removeLast(2)
        let run = try resume(Array((lines.joined(separator: "\n") + "\n").utf8), in: directory)
        expectRefused(run, "version 1")
        #expect(run.stderr.contains("no checksum"))
    }

    @Test func aRangeStartingAt3TriesNo2ButListsAProvenPrimeRemainder() throws {
        // 30: 3 and 5 are found in [3, 10]; what is left, 2, is prime (BPSW is a proof below 2^64), so the answer
        // is complete. 60 leaves 4, which is composite and outside the range tried.
        let run = try Tool.run(["factor", "--from", "3", "--bound", "10", "30", "60"])
        #expect(run.status == 0)
        #expect(run.stdoutLines == ["30: 2 3 5", "60: 3 5 [cofactor 4: composite, its factors are outside the divisor range tried]"])
    }
}
