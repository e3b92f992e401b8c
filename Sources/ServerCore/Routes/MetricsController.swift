import Hummingbird

/// `GET /metrics`: the Prometheus text exposition of ``ServerMetrics``.
struct MetricsController {
    let services: ServerServices

    func addRoutes(to router: Router<AppRequestContext>) {
        router.get("metrics") { _, _ in
            Response(
                status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(bytes: services.metrics.exposition())))
        }
    }
}
