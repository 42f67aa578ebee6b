import Foundation
@testable import PrimeKitBridge
import Testing

struct JSONParserTests {
    private func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8))
    }

    @Test func parsesEveryKindOfValue() throws {
        let value = try parse(#" {"a": [1, -2.5e3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"], "b": {}} "#)
        #expect(value == .object([
            "a": .array([.number("1"), .number("-2.5e3"), .bool(true), .bool(false), .null,
                         .string("x\"\\/\u{8}\u{c}\n\r\té😀")]),
            "b": .object([:]),
        ]))
    }

    @Test func keepsNumbersAsWritten() throws {
        #expect(try parse("12") == .number("12"))
        #expect(try parse("12.0") == .number("12.0"))
        #expect(try parse("-0") == .number("-0"))
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "NaN", "'a'", "\"a", "{\"a\" 1}",
                      "[1 2]", "tru", "nul", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00x\"", "{} {}",
                      "\"tab\there\"", "//", "[", "{\"a\":}"])
    func refusesInvalidJSON(_ text: String) {
        #expect(throws: JSONParseError.self) { try parse(text) }
    }

    @Test func refusesInvalidUTF8AsSuch() throws {
        for bytes: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
                               [0x5B, 0xC3, 0x28, 0x5D], [0x22, 0x5C, 0x6E, 0xC3, 0x22]] {
            do {
                _ = try JSONParser.parse(bytes)
                Issue.record("accepted \(bytes)")
            } catch {
                #expect(error.invalidUTF8, "\(bytes): \(error.message)")
            }
        }
        #expect(try JSONParser.parse(Array("\"é\"".utf8)) == .string("é"))
    }

    @Test func refusesDeepNestingWithoutExhaustingTheStack() {
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONParseError.self) { try parse(deep) }
        let ok = String(repeating: "[", count: JSONParser.maxDepth) + String(repeating: "]", count: JSONParser.maxDepth)
        #expect((try? parse(ok)) != nil)
    }

    @Test func parsesAMillionDigitStringQuickly() throws {
        let digits = String(repeating: "7", count: 1_000_000)
        #expect(try parse("{\"candidate\":\"\(digits)\"}")["candidate"] == .string(digits))
    }

    @Test func writerRoundTripsThroughTheParser() throws {
        let value = JSONValue.object(["k": .array([.string("a\"b\\c\n\u{1}é"), .number("5"), .null, .bool(true)])])
        #expect(try JSONParser.parse(value.encoded) == value)
        var out = JSONWriter()
        out.object { out in
            out.member("z", number: 1)
            out.member("a", string: "x")
            out.key("list")
            out.array { out in out.number(1.5); out.number(100.0) }
        }
        #expect(String(decoding: out.bytes, as: UTF8.self) == #"{"z":1,"a":"x","list":[1.5,100]}"#)
    }
}

struct LineFramerTests {
    private func frame(_ chunks: [String], max: Int = 10) -> [String] {
        var framer = LineFramer(maxLineBytes: max)
        var out: [String] = []
        for chunk in chunks {
            Array(chunk.utf8).withUnsafeBufferPointer { buffer in
                framer.feed(buffer, line: { out.append(String(decoding: $0, as: UTF8.self)) },
                            tooLong: { out.append("<too long>") })
            }
        }
        framer.finish(line: { out.append(String(decoding: $0, as: UTF8.self)) }, tooLong: { out.append("<too long>") })
        return out
    }

    @Test func splitsLinesAcrossChunks() {
        #expect(frame(["ab", "c\nde", "f\n\ng\r\n", "h"]) == ["abc", "def", "g", "h"])
        #expect(frame(["a\r\n  \n\t\nb\n"]) == ["a", "b"])
    }

    @Test func reportsAnOverLongLineOnceAndKeepsGoing() {
        #expect(frame(["0123456789\n", "0123456789A\nok\n"]) == ["0123456789", "<too long>", "ok"])
        #expect(frame(["01234", "56789", "ABCDE", "FGH", "\nok\n"]) == ["<too long>", "ok"])
        #expect(frame(["0123456789\r\n"]) == ["0123456789"])
        #expect(frame(["0123456789AB"]) == ["<too long>"])
    }
}
