import ServerStorage
/// How to run the server: where it listens, where its data lives, and its limits.
public struct ServerConfiguration: Sendable {
    /// Where the data lives when neither `--data` nor `FIELDSHEET_DATA` says: a fixed system path, never
    /// one that depends on the directory or the user the server was started from.
    public static let defaultDataDirectory = "/var/lib/fieldsheet"

    public var host: String
    /// 0 picks a free port (the listening address is reported once the server runs).
    public var port: Int
    public var dataDirectory: String
    /// Where the data lives; nil: SQLite in ``dataDirectory``.
    public var storageLocation: StorageLocation?
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
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = ServerConfiguration.defaultDataDirectory, storageLocation: StorageLocation? = nil,
        limits: ServerLimits = ServerLimits(), trustedProxies: TrustedProxies = TrustedProxies(),
        attachmentCollection: AttachmentCollectionSchedule = AttachmentCollectionSchedule(), webhooks: WebhookOptions = WebhookOptions()
    ) {
        self.webhooks = webhooks
        self.attachmentCollection = attachmentCollection
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.storageLocation = storageLocation
        self.limits = limits
        self.trustedProxies = trustedProxies
    }

    /// The storage the server opens.
    public var storage: StorageLocation { storageLocation ?? .sqlite(directory: dataDirectory) }
}

/// What the controllers share: storage, clock, metrics, throttling, the form cache and the limits.
public struct ServerServices: Sendable {
    public let storage: any ServerStorage
    public let clock: ServerClock
    public let metrics: ServerMetrics
    public let throttle: AuthThrottle
    public let forms: FormCatalog
    public let limits: ServerLimits
    public let trustedProxies: TrustedProxies
    /// The tile server of the console's map (``ServerConfiguration/mapTiles``).
    public var mapTiles: MapTiles?
    /// The long-polls held now, against their caps.
    let heldPolls: HeldPolls

    public init(
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
