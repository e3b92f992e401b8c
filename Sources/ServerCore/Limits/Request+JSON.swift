import Foundation
import Hummingbird

extension Request {
    /// Reads the body within the size limit, checks its nesting depth, and decodes it as JSON.
    mutating func decodeJSON<T: Decodable>(_ type: T.Type, limits: ServerLimits) async throws -> T {
        let data = try await boundedBody(limits: limits)
        if JSONDepthLimit.depth(of: data, stoppingAfter: limits.maxJSONDepth) > limits.maxJSONDepth {
            throw Problem(.badRequest, "too-deep", title: "JSON nested too deeply", detail: "The body nests arrays and objects deeper than \(limits.maxJSONDepth) levels; no FieldSheet request needs that.")
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
        }
    }
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
