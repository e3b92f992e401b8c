import Foundation
import Hummingbird
import ServerStorage

/// Who is asking for a console page: a bearer token in `Authorization` (scripts; checked and throttled exactly as
/// the API does, no CSRF token needed), or a session cookie. A posted form of a session must carry the session's
/// CSRF token. Without either, a page asks the browser to sign in.
struct ConsoleAuthMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let services: ServerServices

    struct CSRFField: Decodable {
        var csrf: String?
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        if request.headers[.authorization] != nil {
            let bearer = AuthMiddleware(storage: services.storage, throttle: services.throttle, proxies: services.trustedProxies)
            return try await bearer.handle(request, context: context, next: next)
        }
        guard let cookie = request.cookies[ConsoleSessions.cookieName]?.value,
              let session = try await services.storage.session(idHash: ConsoleSessions.hash(cookie), now: Date())
        else {
            guard request.method == .get || request.method == .head else {
                throw Problem.unauthorized("Your session has ended. Sign in again, then send the form again.")
            }
            var next = request.uri.path
            if let query = request.uri.query, !query.isEmpty { next += "?" + query }
            let encoded = next.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? "/console"
            return ConsoleRenderer.redirect(to: "/console/login?next=\(encoded)")
        }
        var context = context
        context.principal = session.principal
        context.consoleCSRF = session.csrf
        context.logger[metadataKey: "user"] = .string(session.principal.userName)
        var request = request
        if request.method == .post {
            // A file upload is a multipart form; every other form is URL-encoded.
            let token: String?
            if MultipartForm.isMultipart(request) {
                token = try await MultipartForm.read(&request).part("csrf")?.text
            } else {
                token = try await request.consoleForm(CSRFField.self).csrf
            }
            guard ConsoleSessions.tokensMatch(session.csrf, token) else {
                throw Problem.forbidden("The form's security token does not match your session: it came from another page or an older session. Reload the page and send it again.")
            }
        }
        return try await next(request, context)
    }
}
