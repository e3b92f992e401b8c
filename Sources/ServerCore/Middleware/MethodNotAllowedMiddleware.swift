import HTTPTypes
import Hummingbird
import Synchronization

/// Answers a request for a path the server has with a method that path does not take: `405 Method Not
/// Allowed` with `Allow` listing the methods it takes (Schema/openapi.yaml), instead of the 404 of a path that
/// does not exist.
struct MethodNotAllowedMiddleware: RouterMiddleware {
    typealias Context = AppRequestContext
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as HTTPError where error.status == .notFound {
            // The router's own 404: no route has this path and method (handlers answer with a `Problem`).
            let methods = routes.methods(path: request.uri.path)
            guard !methods.isEmpty, !methods.contains(request.method.rawValue) else { throw error }
            let allowed = methods.joined(separator: ", ")
            throw Problem(
                .methodNotAllowed, "method-not-allowed", title: "Method not allowed",
                detail: "\(request.uri.path) takes \(allowed), not \(request.method.rawValue). See Schema/openapi.yaml.",
                headers: [.allow: allowed])
        }
    }
}

/// The path templates of a router's routes and the methods each takes, filled once every route is added.
final class RouteTable: Sendable {
    private let templates = Mutex<[(segments: [Substring], method: String)]>([])

    /// Takes the routes of `router` (call after the last route is added).
    func fill(from router: Router<AppRequestContext>) {
        let routes = router.routes.map { (Self.segments($0.path.description), $0.method.rawValue) }
        templates.withLock { $0 = routes }
    }

    /// The methods the routes whose template matches `path` take, in a fixed order; empty when none matches.
    func methods(path: String) -> [String] {
        let wanted = Self.segments(path)
        let found = templates.withLock { templates in
            Set(templates.filter { Self.matches($0.segments, wanted) }.map(\.method))
        }
        return ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].filter(found.contains) + found.subtracting(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"]).sorted()
    }

    static func segments(_ path: String) -> [Substring] {
        path.split(separator: "/", omittingEmptySubsequences: true)
    }

    static func matches(_ template: [Substring], _ path: [Substring]) -> Bool {
        if let last = template.last, last == "**" { return path.count >= template.count - 1 && zip(template.dropLast(), path).allSatisfy(matches) }
        return template.count == path.count && zip(template, path).allSatisfy(matches)
    }

    static func matches(_ template: Substring, _ segment: Substring) -> Bool {
        template == segment || template == "*" || template.hasPrefix(":") || template.hasPrefix("{")
    }
}
