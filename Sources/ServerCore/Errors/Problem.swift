import Foundation
import Hummingbird
import SyncCore

/// An error a remote caller may see, sent as `application/problem+json` (RFC 9457).
///
/// `type` is stable (`https://fieldsheet.dev/problems/<slug>`); `detail` says what happened and what to
/// do; `field` names the offending field or request property. Never carries a stack trace or SQL.
package struct Problem: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    package static let typeBase = "https://fieldsheet.dev/problems/"

    package var status: HTTPResponse.Status
    /// The last path component of `type`, like `validation` or `not-found`.
    package var slug: String
    package var title: String
    package var detail: String
    package var field: String?
    package var headers: HTTPFields

    package init(_ status: HTTPResponse.Status, _ slug: String, title: String, detail: String, field: String? = nil, headers: HTTPFields = [:]) {
        self.status = status
        self.slug = slug
        self.title = title
        self.detail = detail
        self.field = field
        self.headers = headers
    }

    package var type: String { Self.typeBase + slug }

    package var details: ProblemDetails {
        ProblemDetails(type: type, title: title, status: status.code, detail: detail, field: field)
    }

    package var description: String { "\(status.code) \(slug): \(detail)" }

    package func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    /// The problem as an HTTP response.
    package func response() -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let body = (try? encoder.encode(details)) ?? Data()
        var headers = self.headers
        headers[.contentType] = "application/problem+json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }
}

extension Problem {
    /// The one answer for a project, record or route that does not exist or that the caller may not see.
    package static func notFound(_ what: String) -> Problem {
        Problem(.notFound, "not-found", title: "Not found", detail: "There is no \(what) here, or you may not see it. Check the address and your project membership.")
    }

    package static func unauthorized(_ detail: String) -> Problem {
        Problem(.unauthorized, "unauthorized", title: "Authentication required", detail: detail, headers: [.wwwAuthenticate: "Bearer"])
    }

    /// A request with a token whose device a project admin revoked (or whose person they removed): not a wrong
    /// token, so the device can tell its person why it stopped syncing.
    package static let deviceSignedOut = Problem(
        .unauthorized, "device-signed-out", title: "Device signed out",
        detail: "This device was signed out by your project's admin.", headers: [.wwwAuthenticate: "Bearer"])

    package static func forbidden(_ detail: String, field: String? = nil) -> Problem {
        Problem(.forbidden, "forbidden", title: "Not allowed", detail: detail, field: field)
    }

    package static func badRequest(_ detail: String, field: String? = nil) -> Problem {
        Problem(.badRequest, "bad-request", title: "Malformed request", detail: detail, field: field)
    }

    /// A body that is not declared as JSON.
    package static func unsupportedMediaType(_ detail: String) -> Problem {
        Problem(.unsupportedMediaType, "unsupported-media-type", title: "Body is not JSON", detail: detail, field: "Content-Type")
    }

    package static func validation(_ detail: String, field: String?) -> Problem {
        Problem(.unprocessableContent, "validation", title: "Invalid record", detail: detail, field: field)
    }

    package static func tooLarge(_ detail: String, slug: String = "too-large", field: String? = nil) -> Problem {
        Problem(.contentTooLarge, slug, title: "Request too large", detail: detail, field: field)
    }

    /// A failed authentication from an address that has failed too often; `reason` says what was wrong
    /// with this one. A valid token is never answered so.
    package static func tooManyAttempts(retryAfter seconds: Int, reason: String) -> Problem {
        Problem(
            .tooManyRequests, "too-many-failed-authentications", title: "Too many failed authentications",
            detail: "\(reason) Too many requests with a missing or wrong token came from your address: wait \(seconds) seconds before trying again. A valid token is accepted at any time.",
            headers: [.retryAfter: String(seconds)])
    }

    /// The database is down, unreachable or too slow. Nothing of the request was acknowledged; a push
    /// retried with the same mutation ids is applied once.
    package static func databaseUnavailable(retryAfter seconds: Int = 2) -> Problem {
        Problem(
            .serviceUnavailable, "database-unavailable", title: "Database unavailable",
            detail: "The server cannot reach its database right now. Nothing was acknowledged: retry after \(seconds) seconds with the same request (pushes are idempotent by mutation id).",
            headers: [.retryAfter: String(seconds)])
    }

    /// The server's disk is full, or an upload would eat into the space kept for the database
    /// (`serve --storage-reserve-bytes`). Nothing of the request was written; what an upload received before stays.
    package static func insufficientStorage(_ detail: String = "The server's disk is full: nothing was written. Retry later (pushes are idempotent by mutation id); the server's admin must free space.") -> Problem {
        Problem(.init(code: 507, reasonPhrase: "Insufficient Storage"), "insufficient-storage", title: "Server storage full", detail: detail)
    }

    package static let internalError = Problem(
        .internalServerError, "internal", title: "Internal server error",
        detail: "The server failed to handle the request. Nothing was acknowledged; retry later, and report the X-Request-Id if it persists.")
}
