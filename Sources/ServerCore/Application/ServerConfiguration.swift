import ServerStorage
/// How to run the server: where it listens and its limits. Where its data lives is the storage handed to
/// ``buildApplication(_:storage:logger:onServerRunning:)``.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port (the listening address is reported once the server runs).
    public var port: Int
    public var limits: ServerLimits
    /// Load balancers whose forwarding headers name the client (`serve --trusted-proxy`).
    public var trustedProxies: TrustedProxies
    /// When the server sweeps attachments nothing keeps any more.
    public var attachmentCollection: AttachmentCollectionSchedule
    /// How webhooks are delivered (`serve --webhook-…`).
    public var webhooks: WebhookOptions
    /// The tile server the console's map draws under its points (`serve --map-tiles`); nil: none (the default).
    public var mapTiles: MapTiles?

    public init(
        host: String = "127.0.0.1", port: Int = 8080,
        limits: ServerLimits = ServerLimits(), trustedProxies: TrustedProxies = TrustedProxies(),
        attachmentCollection: AttachmentCollectionSchedule = AttachmentCollectionSchedule(), webhooks: WebhookOptions = WebhookOptions()
    ) {
        self.webhooks = webhooks
        self.attachmentCollection = attachmentCollection
        self.host = host
        self.port = port
        self.limits = limits
        self.trustedProxies = trustedProxies
    }
}

/// What the controllers share: storage, clock, metrics, throttling, the form cache and the limits.
package struct ServerServices: Sendable {
    package let storage: any ServerStorage
    package let clock: ServerClock
    package let metrics: ServerMetrics
    package let throttle: AuthThrottle
    package let forms: FormCatalog
    package let limits: ServerLimits
    package let trustedProxies: TrustedProxies
    /// The tile server of the console's map (``ServerConfiguration/mapTiles``).
    package var mapTiles: MapTiles?
    /// The long-polls held now, against their caps.
    let heldPolls: HeldPolls

    package init(
        storage: any ServerStorage, limits: ServerLimits = ServerLimits(), metrics: ServerMetrics = ServerMetrics(),
        trustedProxies: TrustedProxies = TrustedProxies()
    ) {
        self.storage = storage
        self.clock = ServerClock(maximumDriftMillis: limits.maxClockDriftMillis)
        self.metrics = metrics
        self.throttle = AuthThrottle(limit: limits.authFailureLimit, window: limits.authFailureWindow)
        self.forms = FormCatalog(storage: storage)
        self.limits = limits
        self.trustedProxies = trustedProxies
        self.heldPolls = HeldPolls(limits: limits, notifier: storage.changes)
    }
}
