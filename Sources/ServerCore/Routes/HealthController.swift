import Hummingbird
import SyncCore

/// `GET /v1/health`: whether the server is up, reaches its database and has room to write, with its clock.
/// Needs no token. 200 when all is well; 503 when the database does not answer (`database-unavailable`
/// problem) or when less than the reserve (`serve --storage-reserve-bytes`) is free on the data directory's
/// disk (a `degraded` health, `storage: low`): a load balancer takes such an instance out of rotation, since
/// it cannot be sure to take pushes and attachments.
struct HealthController {
    struct Health: Codable, Sendable {
        var status: String
        var database: String
        /// `ok`, `low` (less than the reserve free), or `unknown` where the server cannot see the disk (PostgreSQL).
        var storage: String
        /// Free bytes on the data directory's disk, when known.
        var freeBytes: Int64?
        var serverClock: HybridTimestamp
    }

    let services: ServerServices

    func addRoutes(to group: RouterGroup<AppRequestContext>) {
        group.get("health") { _, _ in
            try await services.storage.ping()
            let free = services.storage.freeBytes
            let low = free.map { $0 < services.limits.storageReserveBytes } ?? false
            let health = Health(
                status: low ? "degraded" : "ok", database: "ok", storage: free == nil ? "unknown" : (low ? "low" : "ok"),
                freeBytes: free, serverClock: services.clock.now())
            return try Response.json(health, status: low ? .serviceUnavailable : .ok)
        }
    }
}
