import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import ServerStorage

/// Turns every error that reaches it into an `application/problem+json` response.
///
/// Errors the server did not anticipate become a bare 500 problem; what went wrong is logged with the
/// request id, never sent.
package struct ProblemMiddleware<Context: RequestContext>: RouterMiddleware {
    package init() {}

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let problem as Problem {
            return problem.response()
        } catch let error as HTTPError {
            return Self.problem(for: error).response()
        } catch is NIOTooManyBytesError {
            // A body (chunked, or longer than it said) grew past the limit while it was read.
            return Problem.tooLarge("The request body is larger than the server accepts. Send smaller batches.").response()
        } catch let error as HTTPParserError {
            // The request's framing broke while its body was read (a bad chunk, a body cut short):
            // the client's fault, and the connection cannot be trusted any further.
            return Problem(
                .badRequest, "malformed-http", title: "Malformed HTTP request",
                detail: "The request body could not be read: \(Self.describe(error)). Send a complete body of the length declared in Content-Length, or well-formed chunks.",
                headers: [.connection: "close"]
            ).response()
        } catch let error as DecodingError {
            return Self.problem(for: error).response()
        } catch {
            if let problem = Self.storageProblem(error, logger: context.logger) { return problem.response() }
            context.logger.error("Request failed", metadata: ["error.type": "\(String(reflecting: type(of: error)))"])
            return Problem.internalError.response()
        }
    }

    /// The answer to a storage failure a caller can act on: the database unreachable (503) or the disk full (507,
    /// from either backend, for any write); nil for any other error.
    static func storageProblem(_ error: any Error, logger: Logger) -> Problem? {
        switch error {
        case let error as StorageError where error.code == .insufficientStorage:
            logger.error("Disk full", metadata: ["error": "\(error.detail)"])
            return Problem.insufficientStorage()
        case AttachmentError.insufficientStorage:
            logger.error("Disk full")
            return Problem.insufficientStorage()
        case let error as StorageError where error.code == .unavailable:
            logger.warning("Database unavailable", metadata: ["error": "\(error.detail)"])
            return Problem.databaseUnavailable()
        default:
            return nil
        }
    }

    static func problem(for error: HTTPError) -> Problem {
        switch error.status {
        case .notFound: return .notFound("such resource")
        case .contentTooLarge: return .tooLarge("The request body is larger than the server accepts. Send smaller batches.")
        case .methodNotAllowed:
            return Problem(.methodNotAllowed, "method-not-allowed", title: "Method not allowed", detail: "This resource does not accept \(error.status.reasonPhrase) requests of that method. See Schema/openapi.yaml.")
        default:
            let status = error.status
            return Problem(status, "http-\(status.code)", title: status.reasonPhrase, detail: error.body ?? status.reasonPhrase)
        }
    }

    static func describe(_ error: HTTPParserError) -> String {
        switch error {
        case .invalidEOFState: "the connection ended before the body was complete"
        case .invalidChunkSize: "a chunk size is not a hexadecimal number"
        case .invalidContentLength: "the Content-Length header is not valid"
        case .unexpectedContentLength: "Content-Length and Transfer-Encoding were both sent"
        default: error.debugDescription
        }
    }

    static func problem(for error: DecodingError) -> Problem {
        func path(_ context: DecodingError.Context) -> String? {
            let path = context.codingPath.map { $0.intValue.map(String.init) ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? nil : path
        }
        switch error {
        case .keyNotFound(let key, let context):
            let parent = path(context).map { $0 + "." } ?? ""
            return .badRequest("The property \"\(key.stringValue)\" is missing.", field: parent + key.stringValue)
        case .typeMismatch(let type, let context):
            return .badRequest("Expected \(type) here. \(context.debugDescription)", field: path(context))
        case .valueNotFound(let type, let context):
            return .badRequest("Expected \(type) here but found null.", field: path(context))
        case .dataCorrupted(let context):
            return .badRequest("The body is not valid: \(context.debugDescription)", field: path(context))
        @unknown default:
            return .badRequest("The body could not be read.")
        }
    }
}
