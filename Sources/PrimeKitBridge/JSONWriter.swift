/// Builds compact JSON text, keys in the order they are written (JSONEncoder on Linux does not keep an order).
///
/// ```swift
/// var out = JSONWriter()
/// out.object { out in
///     out.member("jobId", string: "j1")
///     out.member("state", string: "queued")
/// }
/// ```
package struct JSONWriter: Sendable {
    /// The text written so far.
    package private(set) var bytes: [UInt8] = []
    private var needsComma = false

    package init() {}

    /// Writes `text` as it is (already valid JSON).
    package mutating func raw(_ text: [UInt8]) {
        comma()
        bytes.append(contentsOf: text)
    }

    /// Writes `text` as it is (already valid JSON).
    package mutating func raw(_ text: String) {
        comma()
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes a JSON string.
    package mutating func string(_ text: String) {
        comma()
        var text = text
        text.withUTF8 { utf8 in
            bytes.append(UInt8(ascii: "\""))
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                switch byte {
                case UInt8(ascii: "\""): bytes += [0x5C, 0x22]
                case UInt8(ascii: "\\"): bytes += [0x5C, 0x5C]
                case 0x0A: bytes += [0x5C, UInt8(ascii: "n")]
                case 0x0D: bytes += [0x5C, UInt8(ascii: "r")]
                case 0x09: bytes += [0x5C, UInt8(ascii: "t")]
                default:
                    let hex = Array("0123456789abcdef".utf8)
                    bytes += Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            bytes.append(UInt8(ascii: "\""))
        }
    }

    /// Writes an integer.
    package mutating func number(_ value: some BinaryInteger) { raw(String(value)) }

    /// Writes a number: whole values without a fraction (`100`, not `100.0`).
    package mutating func number(_ value: Double) {
        if value == value.rounded(), abs(value) < 1e15 { raw(String(Int64(value))) } else { raw(String(value)) }
    }

    /// Writes true or false.
    package mutating func bool(_ value: Bool) { raw(value ? "true" : "false") }

    /// Writes null.
    package mutating func null() { raw("null") }

    /// Writes an object whose members `body` writes.
    package mutating func object(_ body: (inout JSONWriter) -> Void) {
        enclosed(UInt8(ascii: "{"), UInt8(ascii: "}"), body)
    }

    /// Writes an array whose elements `body` writes.
    package mutating func array(_ body: (inout JSONWriter) -> Void) {
        enclosed(UInt8(ascii: "["), UInt8(ascii: "]"), body)
    }

    private mutating func enclosed(_ open: UInt8, _ close: UInt8, _ body: (inout JSONWriter) -> Void) {
        comma()
        bytes.append(open)
        needsComma = false
        body(&self)
        bytes.append(close)
        needsComma = true
    }

    /// Writes a member name; the value written next belongs to it.
    package mutating func key(_ name: String) {
        string(name)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    package mutating func member(_ name: String, string value: String) { key(name); string(value) }
    package mutating func member(_ name: String, bool value: Bool) { key(name); bool(value) }
    package mutating func member(_ name: String, number value: some BinaryInteger) { key(name); number(value) }
    package mutating func member(_ name: String, number value: Double) { key(name); number(value) }
    package mutating func member(_ name: String, raw value: [UInt8]) { key(name); raw(value) }

    /// Writes a ``JSONValue`` (object keys sorted).
    package mutating func value(_ value: JSONValue) {
        switch value {
        case .null: null()
        case .bool(let flag): bool(flag)
        case .number(let text): raw(text)
        case .string(let text): string(text)
        case .array(let elements):
            array { out in for element in elements { out.value(element) } }
        case .object(let members):
            object { out in
                for name in members.keys.sorted() {
                    out.key(name)
                    out.value(members[name]!)
                }
            }
        }
    }

    private mutating func comma() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
        needsComma = true
    }
}
