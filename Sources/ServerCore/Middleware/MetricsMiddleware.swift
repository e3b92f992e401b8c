import Hummingbird

/// Counts requests and measures their latency into ``ServerMetrics``.
package struct MetricsMiddleware: RouterMiddleware {
    package typealias Context = AppRequestContext
    let metrics: ServerMetrics

    package init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    package func handle(_ request: Request, context: AppRequestContext, next: (Request, AppRequestContext) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next(request, context)
        metrics.recordRequest(
            method: request.method.rawValue, route: context.endpointPath ?? "unmatched",
            status: response.status.code, duration: start.duration(to: .now))
        return response
    }
}
