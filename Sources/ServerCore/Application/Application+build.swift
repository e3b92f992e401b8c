import Hummingbird
import HummingbirdCore
import Logging

/// The application type the server runs.
public typealias FieldSheetApplication = Application<RouterResponder<AppRequestContext>>

/// Builds the application over an opened storage (fieldsheet-server opens the one its options name). A storage
/// without background work (SQLite) is migrated here, before any listener opens; one with a service
/// (PostgreSQL's connection pool) runs it beside the HTTP server, and the migration runs once it is up, still
/// before the server listens (`PostgresStorage.migrate()` is safe when several instances start at once).
/// - Parameter onServerRunning: called with the bound host and port once the server listens.
public func buildApplication(
    _ configuration: ServerConfiguration, storage handle: StorageHandle, logger: Logger,
    onServerRunning: @escaping @Sendable (String, Int) async -> Void = { _, _ in }
) async throws -> FieldSheetApplication {
    let storage = handle.storage
    var services = ServerServices(storage: storage, limits: configuration.limits, trustedProxies: configuration.trustedProxies)
    services.mapTiles = configuration.mapTiles
    var app = buildApplication(configuration, services: services, logger: logger, onServerRunning: onServerRunning)
    if configuration.attachmentCollection.interval != nil {
        app.addServices(AttachmentCollector(storage: storage, schedule: configuration.attachmentCollection, metrics: services.metrics, logger: logger))
    }
    if let service = handle.service {
        app.addServices(service)
        app.beforeServerStarts { try await storage.migrate() }
    } else {
        try await storage.migrate()
    }
    // After the storage's service: services stop in reverse order, so deliveries under way finish (and record
    // their outcome) before the database connections close.
    app.addServices(WebhookDeliveryService(storage: storage, options: configuration.webhooks, logger: logger))
    return app
}

/// Builds the application on the given services (tests pass their own storage).
package func buildApplication(
    _ configuration: ServerConfiguration, services: ServerServices, logger: Logger,
    onServerRunning: @escaping @Sendable (String, Int) async -> Void = { _, _ in }
) -> FieldSheetApplication {
    let host = configuration.host
    let limits = configuration.limits
    let connections = ConnectionCap(maximum: limits.maxConnections, metrics: services.metrics)
    return Application(
        router: buildRouter(services),
        server: .guardedHTTP1(limits: limits, metrics: services.metrics, connections: connections),
        configuration: .init(
            address: .hostname(configuration.host, port: configuration.port), serverName: "fieldsheet-server",
            availableConnectionsDelegate: connections.delegate),
        onServerRunning: { channel in await onServerRunning(host, channel.localAddress?.port ?? configuration.port) },
        logger: logger)
}

/// The routes: `/v1/health`, `/metrics`, the project routes behind authentication, and the web console at `/console`.
package func buildRouter(_ services: ServerServices) -> Router<AppRequestContext> {
    let router = Router(context: AppRequestContext.self)
    // Outermost first; middleware applies to routes added after it.
    router.add(middleware: RequestIDMiddleware())
    router.add(middleware: ServerClockMiddleware(clock: services.clock))
    router.add(middleware: MetricsMiddleware(metrics: services.metrics))
    router.add(middleware: ProblemMiddleware())
    let routes = RouteTable()
    router.add(middleware: MethodNotAllowedMiddleware(routes: routes))
    MetricsController(services: services).addRoutes(to: router)
    let v1 = router.group("v1")
    HealthController(services: services).addRoutes(to: v1)
    LoginController(services: services).addRoutes(to: v1)
    let project = v1.group("projects/:project").add(middleware: AuthMiddleware(storage: services.storage, throttle: services.throttle, proxies: services.trustedProxies))
    FormsController(services: services).addRoutes(to: project)
    SyncController(services: services).addRoutes(to: project)
    DeviceKeyController(services: services).addRoutes(to: project)
    EntitiesController(services: services).addRoutes(to: project)
    ReviewController(services: services).addRoutes(to: project)
    AttachmentsController(services: services).addRoutes(to: project)
    // The read-only feeds a desktop tool reads (Power BI, Excel, QGIS) also take HTTP Basic, the token as the password.
    let feeds = v1.group("projects/:project").add(
        middleware: AuthMiddleware(storage: services.storage, throttle: services.throttle, proxies: services.trustedProxies, acceptsBasic: true))
    ODataController(services: services).addRoutes(to: feeds)
    GeoJSONController(services: services).addRoutes(to: feeds)
    ConsoleRoutes(services: services).addRoutes(to: router)
    routes.fill(from: router)
    return router
}
