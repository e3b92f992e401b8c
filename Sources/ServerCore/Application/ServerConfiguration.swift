/// How to run the server: where it listens, where its data lives, and its limits.
public struct ServerConfiguration: Sendable {
    public var host: String
    /// 0 picks a free port (the listening address is reported once the server runs).
    public var port: Int
    public var dataDirectory: String
    /// Where the data lives; nil: SQLite in ``dataDirectory``.
    public var storageLocation: StorageLocation?
    public var limits: ServerLimits

    public init(
        host: String = "127.0.0.1", port: Int = 8080, dataDirectory: String = "./fieldsheet-data", storageLocation: StorageLocation? = nil,
        limits: ServerLimits = ServerLimits()
    ) {
        self.host = host
        self.port = port
        self.dataDirectory = dataDirectory
        self.storageLocation = storageLocation
        self.limits = limits
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

    public init(storage: any ServerStorage, limits: ServerLimits = ServerLimits(), metrics: ServerMetrics = ServerMetrics()) {
        self.storage = storage
        self.clock = ServerClock(maximumDriftMillis: limits.maxClockDriftMillis)
        self.metrics = metrics
        self.throttle = AuthThrottle(limit: limits.authFailureLimit, window: limits.authFailureWindow)
        self.forms = FormCatalog(storage: storage)
        self.limits = limits
    }
}
