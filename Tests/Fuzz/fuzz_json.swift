// fuzz_json — the bridge's JSON parser, writer and line framer on arbitrary bytes.
//
// Properties:
// - JSONParser.parse never crashes; a value it accepts re-encodes (JSONValue.encoded) to text that parses
//   to an equal value and encodes to the same bytes again (the encoding is canonical);
// - the encoded text is one line: no raw newline or other control byte;
// - LineFramer, fed the input in chunks whose sizes come from the input itself, reports exactly the lines
//   and over-long lines a reference split of the whole input gives (split on \n, one trailing \r dropped,
//   blank lines skipped, lines longer than the limit reported once); every line is parsed too.

func check(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition {
        fatalError("property failed: \(message())")
    }
}

func roundTrip(_ bytes: UnsafeBufferPointer<UInt8>) {
    guard let value = try? JSONParser.parse(bytes) else { return }
    let text = value.encoded
    check(!text.contains(where: { $0 < 0x20 }), "encoded text holds a control byte: \(text)")
    let again: JSONValue
    do {
        again = try JSONParser.parse(text)
    } catch {
        fatalError("encoded text does not parse (\(error.message)): \(String(decoding: text, as: UTF8.self))")
    }
    check(again == value, "round trip changed the value: \(value) -> \(again)")
    check(again.encoded == text, "encoding is not canonical: \(String(decoding: text, as: UTF8.self))")
}

enum Event: Equatable {
    case line([UInt8])
    case tooLong
}

/// The framing rules applied to the whole input at once.
func referenceLines(_ bytes: UnsafeBufferPointer<UInt8>, maxLineBytes: Int) -> [Event] {
    var events: [Event] = []
    var pieces = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
    if bytes.last == 0x0A || bytes.isEmpty { pieces.removeLast() }  // nothing follows the last newline
    for piece in pieces {
        var line = Array(piece)
        if line.last == 0x0D { line.removeLast() }
        if line.count > maxLineBytes {
            events.append(.tooLong)
        } else if !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
            events.append(.line(line))
        }
    }
    return events
}

func framedLines(_ bytes: UnsafeBufferPointer<UInt8>, maxLineBytes: Int, chunkSizes: [Int]) -> [Event] {
    var framer = LineFramer(maxLineBytes: maxLineBytes)
    var events: [Event] = []
    var start = 0
    var next = 0
    while start < bytes.count {
        let size = chunkSizes.isEmpty ? bytes.count : chunkSizes[next % chunkSizes.count]
        next += 1
        let end = min(bytes.count, start + size)
        framer.feed(UnsafeBufferPointer(rebasing: bytes[start..<end]),
                    line: { line in
                        check(line.count <= maxLineBytes, "a line of \(line.count) bytes passed the limit")
                        check(!line.contains(0x0A), "a line holds a newline")
                        events.append(.line(Array(line)))
                    },
                    tooLong: { events.append(.tooLong) })
        start = end
    }
    framer.finish(line: { events.append(.line(Array($0))) }, tooLong: { events.append(.tooLong) })
    return events
}

func framing(_ data: UnsafeBufferPointer<UInt8>) {
    // Header: the line limit (1 ... 64 or large) and four chunk sizes (0 means "the rest").
    guard data.count >= 5 else { return }
    let maxLineBytes = data[0] < 0xF0 ? Int(data[0] % 64) + 1 : 1 << 20
    let chunkSizes = data[1..<5].map { $0 == 0 ? Int.max / 2 : Int($0 % 32) + 1 }
    let body = UnsafeBufferPointer(rebasing: data[5...])
    let expected = referenceLines(body, maxLineBytes: maxLineBytes)
    let whole = framedLines(body, maxLineBytes: maxLineBytes, chunkSizes: [])
    let chunked = framedLines(body, maxLineBytes: maxLineBytes, chunkSizes: chunkSizes)
    check(whole == expected, "one-chunk framing differs from the reference: \(whole) vs \(expected)")
    check(chunked == expected, "chunked framing \(chunkSizes) differs from the reference: \(chunked) vs \(expected)")
    for case .line(let line) in whole {
        line.withUnsafeBufferPointer { roundTrip($0) }
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    roundTrip(bytes)
    framing(bytes)
    return 0
}
