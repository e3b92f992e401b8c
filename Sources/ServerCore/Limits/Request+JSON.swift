import Foundation
import Hummingbird
import NIOCore
import SyncCore

extension Request {
    /// Reads a JSON body within the limits (``jsonBody(limits:)``), refuses `null` where `T`'s contract
    /// allows none (``NullableContract``), and decodes it.
    mutating func decodeJSON<T: Decodable>(_ type: T.Type, limits: ServerLimits) async throws -> T {
        let data = try await jsonBody(limits: limits)
        if let path = JSONNulls.firstDisallowed(in: data, allowed: (T.self as? any NullableContract.Type)?.nullablePaths ?? []) {
            throw Problem.badRequest(
                path.isEmpty ? "The body is null; send a JSON object." : "\(path) is null, which the API does not allow here (Schema/openapi.yaml). Leave the property out or send a value.",
                field: path.isEmpty ? nil : path)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch let error as DecodingError {
            throw ProblemMiddleware<AppRequestContext>.problem(for: error)
        }
    }

    /// The body as bytes, refused with 413 when it is larger than `limits.maxBodyBytes`.
    mutating func boundedBodyBytes(limits: ServerLimits) async throws -> [UInt8] {
        let tooLarge = Problem.tooLarge("The body is larger than \(limits.maxBodyBytes) bytes. Send fewer mutations per push.")
        if let length = headers[.contentLength].flatMap(Int.init), length > limits.maxBodyBytes { throw tooLarge }
        do {
            var buffer = try await collectBody(upTo: limits.maxBodyBytes)
            return buffer.readBytes(length: buffer.readableBytes) ?? []
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
    }

    /// A body declared as JSON, read within the size limit and checked for nesting depth: 415 when it is
    /// not declared as JSON, 413 when too large, 400 when nested too deeply.
    mutating func jsonBody(limits: ServerLimits) async throws -> Data {
        try requireJSONContentType()
        let data = try await boundedBody(limits: limits)
        if JSONDepthLimit.depth(of: data, stoppingAfter: limits.maxJSONDepth) > limits.maxJSONDepth {
            throw Problem(.badRequest, "too-deep", title: "JSON nested too deeply", detail: "The body nests arrays and objects deeper than \(limits.maxJSONDepth) levels; no FieldSheet request needs that.")
        }
        return data
    }

    /// Refuses (415) a body whose Content-Type is missing or is not `application/json` (UTF-8).
    func requireJSONContentType() throws {
        guard let value = headers[.contentType] else {
            throw Problem.unsupportedMediaType("The request has no Content-Type. Send the body as JSON with \"Content-Type: application/json\".")
        }
        let parameters = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        let charset = parameters.dropFirst().first { $0.hasPrefix("charset=") }?.dropFirst("charset=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        guard parameters.first == "application/json", charset == nil || charset == "utf-8" else {
            throw Problem.unsupportedMediaType("The body is sent as \"\(value)\"; this API reads only JSON in UTF-8. Send it with \"Content-Type: application/json\".")
        }
    }

    /// The body, refused with 413 when it is larger than `limits.maxBodyBytes`.
    mutating func boundedBody(limits: ServerLimits) async throws -> Data {
        let tooLarge = Problem.tooLarge("The body is larger than \(limits.maxBodyBytes) bytes. Send fewer mutations per push.")
        if let length = headers[.contentLength].flatMap(Int.init), length > limits.maxBodyBytes { throw tooLarge }
        do {
            let buffer = try await collectBody(upTo: limits.maxBodyBytes)
            return Data(buffer.readableBytesView)
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge
        } catch is NIOTooManyBytesError {
            throw tooLarge
        }
    }
}

extension PushRequest: NullableContract {
    /// A field change's `value` is null when the field was cleared; nothing else in a push may be.
    static var nullablePaths: [String] { ["mutations.*.changes.*.value"] }
}

extension Response {
    /// A JSON response of bytes already written.
    static func jsonBytes(_ bytes: [UInt8], status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// A JSON response of `value`.
    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .withoutEscapingSlashes
        let data = try encoder.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: data)))
    }
}
