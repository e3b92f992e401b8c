import Hummingbird
import SyncCore

/// `GET /v1/health`: whether the server is up, with its clock. Needs no token.
struct HealthController {
    struct Health: Codable, Sendable {
        var status: String
        var serverClock: HybridTimestamp
    }

    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("health") { _, _ in
            try Response.json(Health(status: "ok", serverClock: services.clock.now()))
        }
    }
}
