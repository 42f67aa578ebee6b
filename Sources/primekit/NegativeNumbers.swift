// Lets a candidate that starts with "-" (a negative number, "-2.5") reach the candidate check with its own clear
// message instead of being taken for an option, while a mistyped option still gets a usage error.

import ArgumentParser

enum NegativeNumbers {
    /// Marks arguments that look like negative numbers so the parser does not read them as short options.
    static let marker = "\u{1}neg:"

    /// An option value or argument as the user wrote it (the marker removed).
    static func plain(_ value: String) -> String {
        value.hasPrefix(marker) ? String(value.dropFirst(marker.count)) : value
    }

    /// Arguments after "--" are left alone (the parser already takes them as values).
    static func protect(_ arguments: [String]) -> [String] {
        var protected: [String] = []
        var afterTerminator = false
        for argument in arguments {
            if argument == "--" { afterTerminator = true }
            if !afterTerminator, looksNegative(argument) {
                protected.append(marker + argument)
            } else {
                protected.append(argument)
            }
        }
        return protected
    }

    /// The numbers as the user wrote them: markers removed, and the "--" the parser passes through dropped.
    static func values(_ values: [String]) -> [String] {
        var values = values
        if let terminator = values.firstIndex(of: "--") { values.remove(at: terminator) }
        return values.map(plain)
    }

    /// "-5", "-2.5", "-.5", "-0x10": a minus sign followed by a digit or a point.
    static func looksNegative(_ argument: String) -> Bool {
        let bytes = Array(argument.utf8)
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "-") else { return false }
        return (bytes[1] >= 0x30 && bytes[1] <= 0x39) || bytes[1] == UInt8(ascii: ".")
    }

    /// Arguments before "--" that start with "-" and are not numbers are unknown options (exit status 2).
    static func rejectOptions(in values: [String]) throws {
        for value in values.prefix(while: { $0 != "--" }) where value.hasPrefix("-") && value.count > 1 {
            throw ValidationError("Unknown option '\(value)'")
        }
    }
}
