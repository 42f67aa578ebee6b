/// A parsed JSON value. Numbers keep their literal text, so a bridge can tell `12` from `12.0` and report what a
/// client sent exactly; strings are valid Unicode (the parser refuses invalid UTF-8 and lone surrogates).
package enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    /// The number exactly as written (`-12`, `1.5e3`).
    case number(String)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// The JSON type's name, for error messages: "null", "boolean", "number", "string", "array", "object".
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .number: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The value as compact JSON text (object keys sorted, so equal values encode equally).
    package var encoded: [UInt8] {
        var writer = JSONWriter()
        writer.value(self)
        return writer.bytes
    }

    /// `self[key]` of an object, nil otherwise.
    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}

/// Why a line is not JSON.
package struct JSONParseError: Error, Sendable, Hashable {
    /// What is wrong, e.g. "invalid UTF-8 in a string at byte 17".
    package let message: String
    /// True when the bytes are not valid UTF-8 (as opposed to a syntax error).
    package let invalidUTF8: Bool
}

/// A strict JSON parser (RFC 8259) over bytes: no comments, no trailing commas, no NaN, nesting at most
/// ``maxDepth`` deep, invalid UTF-8 refused. One value per call, surrounded by optional whitespace.
package enum JSONParser {
    /// Deeper nesting is refused (a line of a million `[` must not exhaust the stack).
    package static let maxDepth = 256

    /// Parses one JSON text.
    /// - Parameter bytes: The text (one protocol line without its line ending).
    /// - Returns: The value.
    /// - Throws: ``JSONParseError``.
    package static func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let result: Result<JSONValue, JSONParseError>? = bytes.withContiguousStorageIfAvailable { buffer in
            var cursor = Cursor(buffer: buffer)
            return Result { () throws(JSONParseError) in try cursor.document() }
        }
        if let result { return try result.get() }
        return try parse(Array(bytes))
    }

    private struct Cursor {
        let buffer: UnsafeBufferPointer<UInt8>
        var index = 0
        var depth = 0

        init(buffer: UnsafeBufferPointer<UInt8>) { self.buffer = buffer }

        mutating func document() throws(JSONParseError) -> JSONValue {
            skipSpace()
            let value = try self.value()
            skipSpace()
            if index != buffer.count { throw syntax("unexpected text after the JSON value") }
            return value
        }

        func syntax(_ what: String) -> JSONParseError {
            JSONParseError(message: "\(what) at byte \(index)", invalidUTF8: false)
        }

        func badUTF8() -> JSONParseError {
            JSONParseError(message: "invalid UTF-8 at byte \(index)", invalidUTF8: true)
        }

        mutating func skipSpace() {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value() throws(JSONParseError) -> JSONValue {
            guard index < buffer.count else { throw syntax("unexpected end of input") }
            switch buffer[index] {
            case UInt8(ascii: "{"): return try object()
            case UInt8(ascii: "["): return try array()
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            case 0x80...: throw utf8AtValue()
            default: throw syntax("unexpected character '\(Unicode.Scalar(buffer[index]))'")
            }
        }

        /// A non-ASCII byte where a value should start: invalid UTF-8 is reported as such.
        func utf8AtValue() -> JSONParseError {
            var end = index
            while end < buffer.count, buffer[end] >= 0x80 { end += 1 }
            let slice = UnsafeBufferPointer(rebasing: buffer[index..<end])
            if String(validating: slice, as: UTF8.self) == nil { return badUTF8() }
            return syntax("unexpected character")
        }

        mutating func literal(_ word: StaticString) throws(JSONParseError) {
            let count = word.utf8CodeUnitCount
            guard buffer.count - index >= count else { throw syntax("unexpected end of input") }
            for offset in 0..<count where buffer[index + offset] != word.utf8Start[offset] {
                throw syntax("invalid literal")
            }
            index += count
        }

        mutating func number() throws(JSONParseError) -> String {
            let start = index
            func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
            if buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, isDigit(buffer[index]) else { throw syntax("invalid number") }
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
            } else {
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                index += 1
                guard index < buffer.count, isDigit(buffer[index]) else { throw syntax("invalid number") }
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                index += 1
                if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                    index += 1
                }
                guard index < buffer.count, isDigit(buffer[index]) else { throw syntax("invalid number") }
                while index < buffer.count, isDigit(buffer[index]) { index += 1 }
            }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
        }

        mutating func string() throws(JSONParseError) -> String {
            index += 1  // the opening quote
            let start = index
            var ascii = true
            // Fast path: no escapes (a million-digit candidate is one plain run of digits).
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    let run = UnsafeBufferPointer(rebasing: buffer[start..<index])
                    index += 1
                    if ascii { return String(decoding: run, as: UTF8.self) }
                    guard let text = String(validating: run, as: UTF8.self) else {
                        index = start
                        throw badUTF8()
                    }
                    return text
                }
                if byte == UInt8(ascii: "\\") { break }
                if byte < 0x20 { throw syntax("unescaped control character in a string") }
                if byte >= 0x80 { ascii = false }
                index += 1
            }
            guard index < buffer.count else { throw syntax("unterminated string") }
            // Slow path: escapes. Collect the bytes, validating each raw run.
            var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<index]))
            if !ascii, String(validating: bytes, as: UTF8.self) == nil {
                index = start
                throw badUTF8()
            }
            while index < buffer.count {
                let byte = buffer[index]
                switch byte {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let text = String(validating: bytes, as: UTF8.self) else { throw badUTF8() }
                    return text
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < buffer.count else { throw syntax("unterminated string") }
                    let escape = buffer[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""): bytes.append(0x22)
                    case UInt8(ascii: "\\"): bytes.append(0x5C)
                    case UInt8(ascii: "/"): bytes.append(0x2F)
                    case UInt8(ascii: "b"): bytes.append(0x08)
                    case UInt8(ascii: "f"): bytes.append(0x0C)
                    case UInt8(ascii: "n"): bytes.append(0x0A)
                    case UInt8(ascii: "r"): bytes.append(0x0D)
                    case UInt8(ascii: "t"): bytes.append(0x09)
                    case UInt8(ascii: "u"):
                        var scalar = try hex4()
                        if (0xD800..<0xDC00).contains(scalar) {
                            guard buffer.count - index >= 6, buffer[index] == UInt8(ascii: "\\"),
                                  buffer[index + 1] == UInt8(ascii: "u")
                            else { throw syntax("unpaired surrogate in a string") }
                            index += 2
                            let low = try hex4()
                            guard (0xDC00..<0xE000).contains(low) else { throw syntax("unpaired surrogate in a string") }
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else if (0xDC00..<0xE000).contains(scalar) {
                            throw syntax("unpaired surrogate in a string")
                        }
                        bytes.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                    default:
                        throw syntax("invalid escape in a string")
                    }
                default:
                    if byte < 0x20 { throw syntax("unescaped control character in a string") }
                    bytes.append(byte)
                    index += 1
                }
            }
            throw syntax("unterminated string")
        }

        mutating func hex4() throws(JSONParseError) -> UInt32 {
            guard buffer.count - index >= 4 else { throw syntax("invalid \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = buffer[index]
                let digit: UInt32
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - 0x30)
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - 0x61 + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - 0x41 + 10)
                default: throw syntax("invalid \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func array() throws(JSONParseError) -> JSONValue {
            depth += 1
            guard depth <= JSONParser.maxDepth else { throw syntax("nesting deeper than \(JSONParser.maxDepth)") }
            defer { depth -= 1 }
            index += 1
            var elements: [JSONValue] = []
            skipSpace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
                index += 1
                return .array(elements)
            }
            while true {
                skipSpace()
                elements.append(try value())
                skipSpace()
                guard index < buffer.count else { throw syntax("unterminated array") }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
                throw syntax("expected ',' or ']'")
            }
        }

        mutating func object() throws(JSONParseError) -> JSONValue {
            depth += 1
            guard depth <= JSONParser.maxDepth else { throw syntax("nesting deeper than \(JSONParser.maxDepth)") }
            defer { depth -= 1 }
            index += 1
            var members: [String: JSONValue] = [:]
            skipSpace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
                index += 1
                return .object(members)
            }
            while true {
                skipSpace()
                guard index < buffer.count else { throw syntax("unterminated object") }
                guard buffer[index] == UInt8(ascii: "\"") else { throw syntax("expected a member name") }
                let key = try string()
                skipSpace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw syntax("expected ':'") }
                index += 1
                skipSpace()
                members[key] = try value()  // a repeated name: the last one wins
                skipSpace()
                guard index < buffer.count else { throw syntax("unterminated object") }
                if buffer[index] == UInt8(ascii: ",") { index += 1; continue }
                if buffer[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
                throw syntax("expected ',' or '}'")
            }
        }
    }
}
