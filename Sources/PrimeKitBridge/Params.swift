import PrimeKit

/// A request's `params` object, read field by field; every problem becomes -32602 with `data: {field, reason, got}`.
struct Params {
    let members: [String: JSONValue]

    init(_ value: JSONValue?) throws(RPCError) {
        switch value {
        case nil: members = [:]
        case .object(let members)?: self.members = members
        case .array?: throw RPCError.invalidParams("params", "must be an object (named parameters)", got: value)
        case let other?: throw RPCError.invalidParams("params", "must be an object", got: other)
        }
    }

    subscript(name: String) -> JSONValue? {
        guard let value = members[name], value != .null else { return nil }
        return value
    }

    /// A string member.
    func string(_ name: String) throws(RPCError) -> String? {
        guard let value = self[name] else { return nil }
        guard case .string(let text) = value else { throw RPCError.invalidParams(name, "must be a string", got: value) }
        return text
    }

    /// A required string member.
    func requiredString(_ name: String) throws(RPCError) -> String {
        guard let text = try string(name) else { throw RPCError.invalidParams(name, "is required", got: nil) }
        return text
    }

    /// A whole number in `range`, as a JSON number.
    func integer(_ name: String, in range: ClosedRange<Int>) throws(RPCError) -> Int? {
        guard let value = self[name] else { return nil }
        return try Params.integer(value, field: name, in: range)
    }

    static func integer(_ value: JSONValue, field: String, in range: ClosedRange<Int>) throws(RPCError) -> Int {
        guard case .number(let text) = value else {
            throw RPCError.invalidParams(field, "must be a whole number", got: value)
        }
        guard let number = Int(text) else {
            throw RPCError.invalidParams(field, "must be a whole number", got: value)
        }
        guard range.contains(number) else {
            throw RPCError.invalidParams(field, "must be between \(range.lowerBound) and \(range.upperBound)",
                                         got: value)
        }
        return number
    }

    /// A count that may exceed 2^53 (`workLimit`): a decimal string or a JSON whole number, in `range`.
    func count(_ name: String, in range: ClosedRange<UInt64>) throws(RPCError) -> UInt64? {
        guard let value = self[name] else { return nil }
        let text: String
        switch value {
        case .string(let digits): text = digits
        case .number(let digits): text = digits
        default: throw RPCError.invalidParams(name, "must be a whole number or a string of decimal digits", got: value)
        }
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), text.utf8.first != 0x30 || text == "0"
        else { throw RPCError.invalidParams(name, "must be a whole number or a string of decimal digits", got: value) }
        guard let number = UInt64(text), range.contains(number) else {
            throw RPCError.invalidParams(name, "must be between \(range.lowerBound) and \(range.upperBound)", got: value)
        }
        return number
    }

    /// A boolean member.
    func bool(_ name: String) throws(RPCError) -> Bool? {
        guard let value = self[name] else { return nil }
        guard case .bool(let flag) = value else { throw RPCError.invalidParams(name, "must be true or false", got: value) }
        return flag
    }

    /// A big integer member (`from`, `bound`): a decimal string, never a JSON number.
    func decimal(_ name: String) throws(RPCError) -> String? {
        guard let value = self[name] else { return nil }
        guard case .string(let text) = value else {
            throw RPCError.invalidParams(name, Params.numberReason(value), got: value)
        }
        let problem = name == "from" ? CandidateCheck.fromProblem(text) : CandidateCheck.optionProblem(text)
        if let problem { throw RPCError.invalidParams(name, problem, got: value) }
        return text
    }

    /// A job id member: `"j12"`.
    func jobID(_ name: String = "jobId") throws(RPCError) -> JobID {
        guard let value = self[name] else { throw RPCError.invalidParams(name, "is required", got: nil) }
        return try Params.jobID(value, field: name)
    }

    static func jobID(_ value: JSONValue, field: String) throws(RPCError) -> JobID {
        guard case .string(let text) = value else {
            throw RPCError.invalidParams(field, "must be a job id string such as \"j1\"", got: value)
        }
        guard text.hasPrefix("j"), let number = UInt64(text.dropFirst()), number > 0,
              String(number) == text.dropFirst()
        else { throw RPCError.jobNotFound(text) }
        return JobID(rawValue: number)
    }

    /// Why a non-string is not accepted where a decimal string is expected.
    static func numberReason(_ value: JSONValue) -> String {
        if case .number = value {
            return "must be a string of decimal digits (a JSON number loses digits beyond 2^53)"
        }
        return "must be a string of decimal digits"
    }
}
