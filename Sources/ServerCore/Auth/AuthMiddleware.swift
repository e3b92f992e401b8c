import Hummingbird
import Logging

/// Authenticates `Authorization: Bearer <token>` and sets `context.principal`.
///
/// Missing or wrong tokens get 401; an address with too many recent failures gets 429 with
/// `Retry-After`, whatever token it sends. Tokens are hashed before lookup and never logged.
public struct AuthMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext
    let storage: any ServerStorage
    let throttle: AuthThrottle

    public init(storage: any ServerStorage, throttle: AuthThrottle) {
        self.storage = storage
        self.throttle = throttle
    }

    public func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        if let wait = throttle.retryAfter(for: context.remoteAddress) {
            let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
            throw Problem.tooManyAttempts(retryAfter: seconds)
        }
        guard let header = request.headers[.authorization] else {
            throttle.recordFailure(from: context.remoteAddress)
            throw Problem.unauthorized("Send your access token as \"Authorization: Bearer <token>\". Ask your server's admin for one (fieldsheet-server user add).")
        }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 256,
              let principal = try await storage.principal(tokenHash: AccessToken.hash(String(parts[1])))
        else {
            throttle.recordFailure(from: context.remoteAddress)
            context.logger.info("Authentication failed", metadata: ["remote": .string(context.remoteAddress)])
            throw Problem.unauthorized("The access token is not valid or was revoked. Ask your server's admin for a new one.")
        }
        var context = context
        context.principal = principal
        context.logger[metadataKey: "user"] = .string(principal.userName)
        return try await next(request, context)
    }
}

extension AppRequestContext {
    /// The caller's membership in the project named by the `project` path parameter.
    ///
    /// A project the caller does not belong to answers exactly like one that does not exist.
    func membership() throws -> Principal.Membership {
        guard let principal, let name = parameters.get("project"), let membership = principal.memberships[name] else {
            throw Problem.notFound("project")
        }
        return membership
    }

    /// The authenticated principal (routes behind ``AuthMiddleware`` always have one).
    func requirePrincipal() throws -> Principal {
        guard let principal else { throw Problem.unauthorized("Send your access token as \"Authorization: Bearer <token>\".") }
        return principal
    }
}
