import Foundation
import PrimeKit
@testable import PrimeKitBridge
import Testing

/// Replays the golden transcripts of Tests/Vectors against the dispatcher in memory and the real executable.
struct VectorTests {
    static let files: [URL] = {
        let directory = repositoryRoot.appendingPathComponent("Tests/Vectors")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix(".jsonl") }.sorted().map { directory.appendingPathComponent($0) }
    }()

    @Test func thereAreVectors() {
        #expect(Self.files.count >= 1)
    }

    @Test(arguments: files)
    func vectorReplaysInMemory(_ file: URL) async throws {
        let session = await Session.start()
        try await Self.replay(file, log: session.log) { bytes in await session.server.handle(bytes) }
        #expect(await session.end() == 0)
    }

    @Test(arguments: files)
    func vectorReplaysOverPipes(_ file: URL) async throws {
        let server = try ServerProcess()
        try await Self.replay(file, log: server.log) { bytes in server.write(bytes + [0x0A]) }
        server.closeInput()
        #expect(await server.exitStatus() == 0)
    }

    /// How long a step waits for its message before it fails: a bound for a server that hangs, not a speed
    /// expectation (a loaded machine can hold the server back for seconds).
    static let stepLimit = Duration.seconds(60)

    /// Runs one transcript: sends its lines, checks responses in order and notifications as a set.
    static func replay(_ file: URL, log: MessageLog, send: ([UInt8]) async -> Void) async throws {
        let text = try String(contentsOf: file, encoding: .utf8)
        for (number, line) in text.split(separator: "\n").enumerated() where !line.allSatisfy(\.isWhitespace) {
            let step = try JSONParser.parse(Array(line.utf8))
            let place = "\(file.lastPathComponent):\(number + 1)"
            if let value = step["send"] {
                await send(value.encoded)
            } else if let raw = step["sendRaw"]?.text {
                await send(Array(raw.utf8))
            } else if let hex = step["sendHex"]?.text {
                let digits = Array(hex.filter { !$0.isWhitespace })
                let bytes = stride(from: 0, to: digits.count, by: 2).map { UInt8(String(digits[$0...$0 + 1]), radix: 16)! }
                await send(bytes)
            } else if let expected = step["expect"] {
                let response = try await log.nextResponse(timeout: stepLimit)
                #expect(matches(expected, response),
                        "\(place): expected \(String(decoding: expected.encoded, as: UTF8.self)), got \(String(decoding: response.encoded, as: UTF8.self))")
            } else if let expected = step["expectNotification"] {
                do {
                    _ = try await log.notification(timeout: stepLimit, place) { matches(expected, $0) }
                } catch {
                    let seen = log.messages.filter { $0["id"] == nil }.map { String(decoding: $0.encoded, as: UTF8.self) }
                    Issue.record("\(place): no notification \(String(decoding: expected.encoded, as: UTF8.self)); seen: \(seen.suffix(10))")
                    throw error
                }
            } else if step["comment"] == nil {
                Issue.record("\(place): unknown step")
            }
        }
    }
}
