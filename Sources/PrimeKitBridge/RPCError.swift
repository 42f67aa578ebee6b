import PrimeKit

/// A JSON-RPC error the bridge answers with (docs/protocol.md, "Errors"). Codes never change once released.
package struct RPCError: Error, Sendable, Hashable {
    package let code: Int
    package let message: String
    /// The `data` member, already encoded (nil: no data).
    package let data: [UInt8]?

    package init(code: Int, message: String, data: [UInt8]? = nil) {
        self.code = code
        self.message = message
        self.data = data
    }

    package static let parseError = -32700
    package static let invalidRequest = -32600
    package static let methodNotFound = -32601
    package static let invalidParams = -32602
    package static let internalError = -32603
    package static let busy = -32000
    package static let messageTooLarge = -32001
    package static let shuttingDown = -32002
    package static let jobNotFound = 1001
    package static let invalidState = 1002
    package static let invalidCheckpoint = 1003
    package static let candidateTooLarge = 1004

    /// -32602 with `data: {field, reason, got}`; `got` is the offending value (strings cut to 40 characters).
    static func invalidParams(_ field: String, _ reason: String, got: JSONValue?) -> RPCError {
        var data = JSONWriter()
        data.object { out in
            out.member("field", string: field)
            out.member("reason", string: reason)
            if let got {
                out.key("got")
                out.value(shortened(got))
            }
        }
        return RPCError(code: invalidParams, message: "invalid params: \(field): \(reason)", data: data.bytes)
    }

    /// 1001 for an id the bridge does not know.
    static func jobNotFound(_ id: String) -> RPCError {
        var data = JSONWriter()
        data.object { $0.member("jobId", string: id) }
        return RPCError(code: jobNotFound, message: "job \(id) not found", data: data.bytes)
    }

    /// 1002 with `data: {jobId, state}`.
    static func invalidState(_ id: JobID, _ state: JobState, _ why: String) -> RPCError {
        var data = JSONWriter()
        data.object { out in
            out.member("jobId", string: id.description)
            out.member("state", string: WireFormat.name(state))
        }
        return RPCError(code: invalidState, message: "job \(id) is \(WireFormat.name(state)): \(why)", data: data.bytes)
    }

    /// The bridge's code for an engine error (the engine's code name goes in `data.kind`).
    static func from(_ error: PrimeKitError, field: String? = nil) -> RPCError {
        let code: Int
        switch error.code {
        case .invalidCheckpoint, .unsupportedCheckpointVersion, .inconsistentCheckpoint: code = invalidCheckpoint
        case .candidateTooLarge: code = candidateTooLarge
        case .invalidState: code = invalidState
        case .queueShutDown: code = shuttingDown
        case .invalidArgument, .invalidCandidate, .candidateOutOfRange, .invalidOptions, .dependencyCycle,
             .foreignJob:
            code = invalidParams
        default: code = internalError
        }
        var data = JSONWriter()
        data.object { out in
            out.member("kind", string: error.code.description)
            if let field { out.member("field", string: field) }
        }
        return RPCError(code: code, message: error.message, data: data.bytes)
    }

    /// The error object `{code, message, data?}`.
    func write(into out: inout JSONWriter) {
        out.object { out in
            out.member("code", number: code)
            out.member("message", string: message)
            if let data { out.member("data", raw: data) }
        }
    }

    private static func shortened(_ value: JSONValue) -> JSONValue {
        switch value {
        case .string(let text) where text.count > 40:
            return .string(String(text.prefix(40)) + "… (\(text.utf8.count) bytes)")
        case .number(let text) where text.count > 40:
            return .string(String(text.prefix(40)) + "… (\(text.utf8.count) characters)")
        case .array, .object:
            let text = String(decoding: value.encoded, as: UTF8.self)
            return text.count > 40 ? .string(String(text.prefix(40)) + "…") : value
        default:
            return value
        }
    }
}
