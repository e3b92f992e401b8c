import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// Gives every request an id (the caller's `X-Request-Id` when it is sane, else a new one), puts it in
/// the logger's metadata and returns it in `X-Request-Id`.
package struct RequestIDMiddleware: RouterMiddleware {
    package typealias Context = AppRequestContext
    static let header = HTTPField.Name("X-Request-Id")!

    package init() {}

    package func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        var context = context
        let incoming = request.headers[Self.header].flatMap { value in
            value.count <= 64 && value.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") } ? value : nil
        }
        let id = incoming ?? UUID().lowercased
        context.requestID = id
        context.logger[metadataKey: "request_id"] = .string(id)
        var response = try await next(request, context)
        response.headers[Self.header] = id
        return response
    }
}
