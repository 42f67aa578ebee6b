import Foundation

/// A failed file operation of the checkpoint store (or of ``DurableFile``).
package struct StoreIOError: Error, Sendable, CustomStringConvertible {
    package let operation: String
    package let path: String
    package let errno: Int32

    package var description: String {
        "\(operation) \(path): \(String(cString: strerror(errno)))"
    }
}

/// The file operations the checkpoint store needs — the seam through which tests inject failures (disk full,
/// read-only file system). Every path is absolute.
protocol StoreFileSystem: Sendable {
    /// Creates the directory (and parents) if missing and makes it owner-only (0700).
    func makeOwnerOnlyDirectory(_ path: String) throws(StoreIOError)
    /// Creates `path` owner-only (0600), writes `bytes`, fsyncs and closes it. A failure may leave a partial file.
    func writeAndSync(_ bytes: [UInt8], to path: String) throws(StoreIOError)
    /// rename(2): atomically replaces `to`.
    func rename(_ from: String, to: String) throws(StoreIOError)
    /// fsyncs a directory, so renames and removals in it are durable.
    func syncDirectory(_ path: String) throws(StoreIOError)
    func remove(_ path: String) throws(StoreIOError)
    func read(_ path: String) throws(StoreIOError) -> [UInt8]
    /// The names in a directory (not `.` and `..`).
    func list(_ path: String) throws(StoreIOError) -> [String]
}

extension StoreFileSystem {
    /// Replaces `path` with `bytes` so that a reader sees the old file or the whole new one: writes `temporary`
    /// (owner-only), fsyncs it, renames it over `path`, and with `syncingDirectory` fsyncs `directory`, so the
    /// rename survives a crash. A failure throws naming its step and leaves `temporary` for the caller to remove.
    func replace(_ path: String, with bytes: [UInt8], temporary: String, directory: String,
                 syncingDirectory: Bool = true) throws(StoreIOError) {
        try writeAndSync(bytes, to: temporary)
        try rename(temporary, to: path)
        if syncingDirectory { try syncDirectory(directory) }
    }
}

/// Files written the way the checkpoint store writes its own, for the tool's checkpoint files.
package enum DurableFile {
    /// ``StoreFileSystem/replace(_:with:temporary:directory:syncingDirectory:)`` on the real file system; on failure
    /// the temporary file is removed.
    package static func replace(_ path: String, with bytes: [UInt8], temporary: String) throws(StoreIOError) {
        let directory = (path as NSString).deletingLastPathComponent
        let files = POSIXStoreFileSystem()
        do {
            try files.replace(path, with: bytes, temporary: temporary, directory: directory.isEmpty ? "." : directory)
        } catch {
            try? files.remove(temporary)
            throw error
        }
    }
}

/// The real file system, through POSIX calls.
struct POSIXStoreFileSystem: StoreFileSystem {
    func makeOwnerOnlyDirectory(_ path: String) throws(StoreIOError) {
        var partial = ""
        for component in path.split(separator: "/", omittingEmptySubsequences: false) {
            partial += partial.isEmpty && component.isEmpty ? "/" : (partial.hasSuffix("/") ? "" : "/") + component
            if partial == "/" || component.isEmpty { continue }
            if mkdir(partial, 0o700) != 0 && errno != EEXIST {
                throw StoreIOError(operation: "mkdir", path: partial, errno: errno)
            }
        }
        if chmod(path, 0o700) != 0 { throw StoreIOError(operation: "chmod", path: path, errno: errno) }
    }

    func writeAndSync(_ bytes: [UInt8], to path: String) throws(StoreIOError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreIOError(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                Glibc.write(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw StoreIOError(operation: "write", path: path, errno: errno)
            }
            offset += written
        }
        if fsync(fd) != 0 { throw StoreIOError(operation: "fsync", path: path, errno: errno) }
    }

    func rename(_ from: String, to: String) throws(StoreIOError) {
        if Glibc.rename(from, to) != 0 { throw StoreIOError(operation: "rename", path: to, errno: errno) }
    }

    func syncDirectory(_ path: String) throws(StoreIOError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreIOError(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        if fsync(fd) != 0 { throw StoreIOError(operation: "fsync", path: path, errno: errno) }
    }

    func remove(_ path: String) throws(StoreIOError) {
        if unlink(path) != 0 && errno != ENOENT { throw StoreIOError(operation: "unlink", path: path, errno: errno) }
    }

    func read(_ path: String) throws(StoreIOError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw StoreIOError(operation: "open", path: path, errno: errno) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress!, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw StoreIOError(operation: "read", path: path, errno: errno)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            if bytes.count > 64 << 20 { throw StoreIOError(operation: "read", path: path, errno: EFBIG) }
        }
    }

    func list(_ path: String) throws(StoreIOError) -> [String] {
        guard let directory = opendir(path) else { throw StoreIOError(operation: "opendir", path: path, errno: errno) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// One stored file: a header of `name value` lines, the payload, and a last line `end <checksum>` whose checksum
/// (64-bit FNV-1a, hex) covers every byte before it — so a torn write (no end line, or a checksum that does not
/// match) and a changed byte are both detected. The kernel's checkpoint text inside carries its own checksum too.
///
/// ```
/// primekit-store 1
/// record job                 (or result)
/// key k0123456789abcdef
/// generation 7
/// job 12                     (the job's id in the process that wrote it)
/// kind isPrime
/// priority normal
/// state running
/// length 812
/// <payload: 812 bytes>
/// end 9f3a…
/// ```
struct StoreRecord: Sendable, Hashable {
    enum Kind: String, Sendable {
        case job, result
    }

    static let magic = "primekit-store 1"

    var kind: Kind
    var key: String
    var generation: UInt64
    /// The job's id in the process that wrote the record.
    var jobID: UInt64
    var jobKind: JobKind
    var priority: JobPriority
    var state: String
    var payload: String

    func encoded() -> [UInt8] {
        var text = "\(Self.magic)\nrecord \(kind.rawValue)\nkey \(key)\ngeneration \(generation)\n"
        text += "job \(jobID)\nkind \(jobKind.rawValue)\npriority \(priority.rawValue)\nstate \(state)\n"
        text += "length \(payload.utf8.count)\n\(payload)\n"
        var bytes = Array(text.utf8)
        bytes += Array("end \(Self.hex(Self.checksum(bytes[...])))\n".utf8)
        return bytes
    }

    /// Why a file could not be read as a record.
    enum Defect: Error, Sendable, CustomStringConvertible {
        case foreign
        case unsupportedVersion(String)
        case torn
        case checksumMismatch
        case malformed(String)

        var description: String {
            switch self {
            case .foreign: "not a PrimeKit store file"
            case .unsupportedVersion(let line): "unsupported store format (\(line))"
            case .torn: "torn write: the file ends before its end line"
            case .checksumMismatch: "checksum mismatch"
            case .malformed(let what): "malformed \(what)"
            }
        }
    }

    static func decode(_ bytes: [UInt8]) throws(Defect) -> StoreRecord {
        guard bytes.starts(with: Array("primekit-store ".utf8)) else { throw .foreign }
        guard bytes.starts(with: Array((magic + "\n").utf8)) else {
            let line = String(decoding: bytes.prefix(while: { $0 != 10 }).prefix(40), as: UTF8.self)
            throw .unsupportedVersion(line)
        }
        // The end line: "end " + 16 hex digits + "\n".
        let endLength = 4 + 16 + 1
        guard bytes.count > endLength, bytes.last == 10 else { throw .torn }
        let endStart = bytes.count - endLength
        let endLine = String(decoding: bytes[endStart..<(bytes.count - 1)], as: UTF8.self)
        guard endLine.hasPrefix("end "), endStart > 0, bytes[endStart - 1] == 10 else { throw .torn }
        guard endLine == "end " + hex(checksum(bytes[..<endStart])) else {
            throw .checksumMismatch
        }
        var position = 0
        func field(_ name: String) throws(Defect) -> String {
            guard let newline = bytes[position..<endStart].firstIndex(of: 10) else { throw .malformed(name) }
            let line = String(decoding: bytes[position..<newline], as: UTF8.self)
            position = newline + 1
            guard line.hasPrefix(name + " ") else { throw .malformed(name) }
            return String(line.dropFirst(name.count + 1))
        }
        _ = try field("primekit-store")
        guard let kind = Kind(rawValue: try field("record")) else { throw .malformed("record") }
        let key = try field("key")
        guard isValidKey(key) else { throw .malformed("key") }
        guard let generation = UInt64(try field("generation")) else { throw .malformed("generation") }
        guard let jobID = UInt64(try field("job")) else { throw .malformed("job") }
        guard let jobKind = JobKind(rawValue: try field("kind")) else { throw .malformed("kind") }
        guard let priorityValue = Int(try field("priority")), let priority = JobPriority(rawValue: priorityValue)
        else { throw .malformed("priority") }
        let state = try field("state")
        guard let length = Int(try field("length")), length >= 0, position + length + 1 == endStart,
              bytes[position + length] == 10
        else { throw .malformed("length") }
        let payload = String(decoding: bytes[position..<(position + length)], as: UTF8.self)
        return StoreRecord(kind: kind, key: key, generation: generation, jobID: jobID, jobKind: jobKind,
                           priority: priority, state: state, payload: payload)
    }

    static func checksum(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.withUnsafeBufferPointer { buffer in
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in buffer {
                hash ^= UInt64(byte)
                hash &*= 0x0000_0100_0000_01b3
            }
            return hash
        }
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// Keys are `k` and 16 lowercase hex digits.
    static func isValidKey(_ key: String) -> Bool {
        key.utf8.count == 17 && key.hasPrefix("k")
            && key.utf8.dropFirst().allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    static func newKey() -> String {
        "k" + hex(UInt64.random(in: 0...UInt64.max))
    }
}

/// A finished job's outcome as stored: JSON of the result (with an isPrime job's factorization) or of the error.
struct StoredOutcome: Codable, Sendable {
    var jobID: UInt64
    var candidate: String
    var factorization: FactorResult?
    var primality: PrimalityResult?
    var rangeSummary: RangeSummary?
    var errorCode: Int?
    var errorMessage: String?

    init(_ completion: JobCompletion) {
        jobID = completion.jobID.rawValue
        candidate = completion.candidate
        switch completion.outcome {
        case .succeeded(.factorization(let result)):
            factorization = result
        case .succeeded(.primality(let result)):
            primality = result
            factorization = result.factorization
        case .succeeded(.rangeSummary(let summary)):
            rangeSummary = summary
        case .failed(let error):
            errorCode = error.code.rawValue
            errorMessage = error.message
        case .cancelled:
            break
        }
    }

    /// What contradicts the record holding this outcome (its job id, state, kind), or in the outcome itself; nil when
    /// it is consistent.
    func inconsistency(with record: StoreRecord) -> String? {
        if record.jobID != jobID { return "job \(record.jobID) in the header, \(jobID) in the result" }
        let failed = errorCode != nil
        if failed != (factorization == nil && primality == nil && rangeSummary == nil) {
            return "neither a result nor an error"
        }
        if record.state != (failed ? JobState.failed : JobState.succeeded).rawValue {
            return "state \(record.state) for a job that \(failed ? "failed" : "succeeded")"
        }
        if failed { return errorMessage == nil ? "an error without a message" : nil }
        if (rangeSummary != nil) != (record.jobKind == .factorRange) {
            return "a result that is not of kind \(record.jobKind.rawValue)"
        }
        if (primality != nil) != (record.jobKind == .isPrime) { return "a result that is not of kind \(record.jobKind.rawValue)" }
        if let factorization, factorization.candidate != candidate { return "the result is of another candidate" }
        if let primality, primality.candidate != candidate { return "the result is of another candidate" }
        return nil
    }

    var outcome: Result<JobResult, PrimeKitError> {
        if var primality {
            primality.factorization = factorization
            return .success(.primality(primality))
        }
        if let factorization { return .success(.factorization(factorization)) }
        if let rangeSummary { return .success(.rangeSummary(rangeSummary)) }
        return .failure(PrimeKitError(code: PrimeKitError.Code(rawValue: errorCode ?? 15),
                                      message: errorMessage ?? "unknown error"))
    }
}
