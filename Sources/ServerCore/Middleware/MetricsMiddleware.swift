import Hummingbird

/// Counts requests and measures their latency into ``ServerMetrics``.
public struct MetricsMiddleware: RouterMiddleware {
    public typealias Context = AppRequestContext
    let metrics: ServerMetrics

    public init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.recordRequest(
            method: request.method.rawValue, route: context.endpointPath ?? "unmatched",
            status: response.status.code, duration: start.duration(to: .now))
        return response
    }
}
