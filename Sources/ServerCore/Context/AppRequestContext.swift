import Hummingbird
import Logging
import ServerStorage

/// The per-request context: the caller's address, the request id and, once authenticated, the principal.
public struct AppRequestContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address (`local` when there is none, as in in-process tests).
    public let remoteAddress: String
    /// Set by ``AuthMiddleware``.
    public var principal: Principal?
    /// The CSRF token of the console session the request came with; nil for bearer tokens (which need none).
    public var consoleCSRF: String?
    /// Set by ``RequestIDMiddleware``.
    public var requestID: String = ""

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress?.ipAddress ?? "local"
    }
}
