import HTTPTypes
import Hummingbird

/// Sends the server's clock on every response (`X-FieldSheet-Clock`, a packed hybrid timestamp).
package struct ServerClockMiddleware: RouterMiddleware {
    package typealias Context = AppRequestContext
    package static let header = HTTPField.Name("X-FieldSheet-Clock")!
    let clock: ServerClock

    package init(clock: ServerClock) {
        self.clock = clock
    }

    package func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[Self.header] = String(clock.now().rawValue)
        return response
    }
}
