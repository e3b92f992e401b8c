import Hummingbird
import SyncCore

/// `GET /v1/health`: whether the server is up and reaches its database, with its clock. Needs no token.
/// A load balancer takes an instance that answers 503 (`database-unavailable`) out of rotation.
struct HealthController {
    struct Health: Codable, Sendable {
        var status: String
        var database: String
        var serverClock: HybridTimestamp
    }

    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("health") { _, _ in
            try await services.storage.ping()
            return try Response.json(Health(status: "ok", database: "ok", serverClock: services.clock.now()))
        }
    }
}
