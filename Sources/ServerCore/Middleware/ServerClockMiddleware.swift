import HTTPTypes
import Hummingbird

/// Sends the server's clock on every response (`X-FieldSheet-Clock`, a packed hybrid timestamp).
public struct ServerClockMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext
    public static let header = HTTPField.Name("X-FieldSheet-Clock")!
    let clock: ServerClock

    public init(clock: ServerClock) {
        self.clock = clock
    }

    public func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[Self.header] = String(clock.now().rawValue)
        return response
    }
}
