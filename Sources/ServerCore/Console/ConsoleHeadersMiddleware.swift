import HTTPTypes
import Hummingbird

/// The headers every console response carries, error pages included: a strict Content-Security-Policy (only
/// the console's own style sheet and icon load; no script runs; forms post only to the console; no framing),
/// no MIME sniffing, no referrer, and no caching of pages that hold records.
struct ConsoleHeadersMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext

    static let contentSecurityPolicy = policy(images: "'self'")

    /// The policy with `images` as the sources images may load from.
    static func policy(images: String) -> String {
        "default-src 'none'; style-src 'self'; img-src \(images); form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        // A page may widen the policy for itself (the map, for its tile server's images); none may leave it out.
        if response.headers[.contentSecurityPolicy] == nil { response.headers[.contentSecurityPolicy] = Self.contentSecurityPolicy }
        response.headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        response.headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        response.headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        response.headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}
