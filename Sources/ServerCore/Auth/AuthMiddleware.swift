import Foundation
import HTTPTypes
import Hummingbird
import Logging
import ServerStorage

/// Authenticates `Authorization: Bearer <token>` and sets `context.principal`. Where ``acceptsBasic`` is set (the
/// read-only feeds a desktop tool holds a password for: OData, GeoJSON), `Authorization: Basic` is read too, the
/// token as the password (the user name is not checked: the token names its user), and a refusal offers both.
///
/// A valid token is always accepted, whatever came before it from the same address: behind a site's NAT
/// or a load balancer one address is many people. Missing or wrong tokens get 401; once an address has
/// sent too many of them within the window, its further failures get 429 with `Retry-After` instead.
/// The address is the peer's, or the client's as reported by a proxy in ``TrustedProxies``. Tokens are
/// hashed before lookup and never logged.
package struct AuthMiddleware: RouterMiddleware {
    package typealias Context = AppRequestContext
    let storage: any ServerStorage
    let throttle: AuthThrottle
    let proxies: TrustedProxies
    /// Whether HTTP Basic with the token as the password is accepted beside a bearer token.
    let acceptsBasic: Bool

    package init(storage: any ServerStorage, throttle: AuthThrottle, proxies: TrustedProxies = TrustedProxies(), acceptsBasic: Bool = false) {
        self.storage = storage
        self.throttle = throttle
        self.proxies = proxies
        self.acceptsBasic = acceptsBasic
    }

    /// The token of an `Authorization` header value: a bearer token, or (when accepted) the password of HTTP Basic.
    static func token(_ header: String, acceptsBasic: Bool) -> String? {
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, !parts[1].isEmpty, parts[1].utf8.count <= 512 else { return nil }
        switch parts[0].lowercased() {
        case "bearer":
            return String(parts[1])
        case "basic" where acceptsBasic:
            guard let decoded = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
                  let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":") else { return nil }
            let password = text[text.index(after: colon)...]
            return password.isEmpty ? nil : String(password)
        default:
            return nil
        }
    }

    package func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        guard let header = request.headers[.authorization] else {
            throw refusal(
                request, context,
                "Send your access token as \"Authorization: Bearer <token>\"\(acceptsBasic ? " (or as the password of HTTP Basic)" : ""). Ask your server's admin for one (fieldsheet-server user add).")
        }
        guard let token = Self.token(header, acceptsBasic: acceptsBasic), token.utf8.count <= 256 else {
            throw refusal(request, context, "The access token is not valid or was revoked. Ask your server's admin for a new one.")
        }
        let hash = AccessToken.hash(token)
        guard let principal = try await storage.principal(tokenHash: hash) else {
            // A revoked token is no guess: its holder is told, and its address is not counted against.
            if try await storage.tokenRevoked(tokenHash: hash) { throw Problem.deviceSignedOut }
            throw refusal(request, context, "The access token is not valid or was revoked. Ask your server's admin for a new one.")
        }
        var context = context
        context.principal = principal
        context.logger[metadataKey: "user"] = .string(principal.userName)
        if let tokenID = principal.tokenID, let report = DeviceHeaders.report(request.headers) {
            try await storage.recordDeviceSync(tokenID: tokenID, report: report)
        }
        return try await next(request, context)
    }

    /// Counts a failed authentication and says why it failed: 401, or 429 once the address has failed too often.
    private func refusal(_ request: Request, _ context: AppRequestContext, _ detail: String) -> Problem {
        let address = proxies.clientAddress(peer: context.remoteAddress, headers: request.headers)
        context.logger.info("Authentication failed", metadata: ["remote": .string(address)])
        guard let wait = throttle.recordFailure(from: address) else {
            var problem = Problem.unauthorized(detail)
            if acceptsBasic { problem.headers.append(HTTPField(name: .wwwAuthenticate, value: "Basic realm=\"FieldSheet\", charset=\"UTF-8\"")) }
            return problem
        }
        let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
        return Problem.tooManyAttempts(retryAfter: seconds, reason: detail)
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

    /// The caller's membership when they are the project's admin: 404 for a project they are not in (as
    /// ``membership()``), 403 for another role, saying "Only a project admin `does`; your role …".
    func adminMembership(_ does: String) throws -> Principal.Membership {
        let membership = try membership()
        guard membership.role == .admin else {
            throw Problem.forbidden("Only a project admin \(does); your role in this project is \(membership.role.rawValue).")
        }
        return membership
    }

    /// The authenticated principal (routes behind ``AuthMiddleware`` always have one).
    func requirePrincipal() throws -> Principal {
        guard let principal else { throw Problem.unauthorized("Send your access token as \"Authorization: Bearer <token>\".") }
        return principal
    }
}
