import Foundation
import Hummingbird
import ServerStorage

/// `GET /console/login`, `POST /console/login` (a token becomes a session cookie) and `POST /console/logout`.
struct SignInController {
    let services: ServerServices

    struct SignInPage {
        var chrome: ConsoleChrome
        var loginCSRF: String
        var next: String
        var problem: String?
    }

    struct SignInForm: Decodable {
        var token: String?
        var csrf: String?
        var next: String?
    }

    func addPublicRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("login", use: form)
        group.post("login", use: signIn)
    }

    func addSignedInRoutes(to group: RouterGroup<AppRequestContext>) {
        group.post("logout", use: signOut)
    }

    @Sendable func form(_ request: Request, context: AppRequestContext) async throws -> Response {
        let next = ConsoleSessions.safeReturnPath(request.uri.queryParameters.get("next"))
        let notice = request.uri.queryParameters.get("signedOut") != nil ? "You are signed out." : nil
        return signInPage(request, context, next: next, notice: notice)
    }

    @Sendable func signIn(_ request: Request, context: AppRequestContext) async throws -> Response {
        var request = request
        let form = try await request.consoleForm(SignInForm.self)
        let next = ConsoleSessions.safeReturnPath(form.next)
        guard let expected = request.cookies[ConsoleSessions.signInCookieName]?.value, ConsoleSessions.tokensMatch(expected, form.csrf) else {
            return signInPage(request, context, next: next, status: .forbidden,
                              problem: "The sign-in form expired or came from another page (this browser must accept cookies). Try again.")
        }
        let address = services.trustedProxies.clientAddress(peer: context.remoteAddress, headers: request.headers)
        let token = form.token?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        let now = Date()
        let session = ConsoleSessions.newSecret()
        let record = ConsoleSessionRecord(
            idHash: ConsoleSessions.hash(session), csrf: ConsoleSessions.newSecret(), createdAt: now,
            expiresAt: now.addingTimeInterval(ConsoleSessions.lifetime))
        guard !token.isEmpty, token.utf8.count <= 256,
              let principal = try await services.storage.openSession(tokenHash: AccessToken.hash(token), session: record)
        else {
            context.logger.info("Console sign-in failed", metadata: ["remote": .string(address)])
            if services.throttle.retryAfter(for: address) == nil {
                await services.audit(.signInFailed, request: request, context: context, actor: "(unknown token)")
            }
            if let wait = services.throttle.recordFailure(from: address) {
                let seconds = max(1, Int(wait.components.seconds) + (wait.components.attoseconds > 0 ? 1 : 0))
                return signInPage(request, context, next: next, status: .tooManyRequests, headers: [.retryAfter: String(seconds)],
                                  problem: "Too many failed sign-ins from your address. Wait \(seconds) seconds, then try again.")
            }
            return signInPage(request, context, next: next, status: .unauthorized,
                              problem: "That access token is not valid or was revoked. Paste the whole token (it starts with fst_), or ask your server's admin for a new one.")
        }
        context.logger.info("Console sign-in", metadata: ["user": .string(principal.userName)])
        await services.audit(.signIn, request: request, context: context, subject: principal.userName, actor: principal.userName)
        let secure = ConsoleSessions.overTLS(request, context, proxies: services.trustedProxies)
        var response = ConsoleRenderer.redirect(to: next)
        response.setCookie(ConsoleSessions.cookie(ConsoleSessions.cookieName, session, maxAge: Int(ConsoleSessions.lifetime), secure: secure))
        response.setCookie(ConsoleSessions.cookie(ConsoleSessions.signInCookieName, "", maxAge: 0, secure: secure))
        return response
    }

    @Sendable func signOut(_ request: Request, context: AppRequestContext) async throws -> Response {
        if let cookie = request.cookies[ConsoleSessions.cookieName]?.value {
            try await services.storage.closeSession(idHash: ConsoleSessions.hash(cookie))
        }
        var response = ConsoleRenderer.redirect(to: "/console/login?signedOut=1")
        response.setCookie(ConsoleSessions.cookie(
            ConsoleSessions.cookieName, "", maxAge: 0, secure: ConsoleSessions.overTLS(request, context, proxies: services.trustedProxies)))
        return response
    }

    /// The sign-in page with a fresh form token, set in its cookie too.
    private func signInPage(
        _ request: Request, _ context: AppRequestContext, next: String, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:],
        notice: String? = nil, problem: String? = nil
    ) -> Response {
        let token = ConsoleSessions.newSecret()
        var context = context
        context.principal = nil
        let page = SignInPage(chrome: ConsoleChrome(title: "Sign in", context: context, notice: notice), loginCSRF: token, next: next, problem: problem)
        var response = ConsoleRenderer.page("login", page, status: status, headers: headers)
        response.setCookie(ConsoleSessions.cookie(
            ConsoleSessions.signInCookieName, token, maxAge: 3600, secure: ConsoleSessions.overTLS(request, context, proxies: services.trustedProxies)))
        return response
    }
}
