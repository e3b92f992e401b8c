import SyncCore

/// Limits on what one request may ask of the server.
public struct ServerLimits: Sendable, Hashable {
    /// Largest request body accepted (413 beyond).
    public var maxBodyBytes = 8 * 1024 * 1024
    /// Largest attachment an upload may declare (413 beyond); its bytes stream to storage, never whole in memory.
    public var maxAttachmentBytes: Int64 = 256 * 1024 * 1024
    /// Free space on the data directory's disk kept for the database, so that pushes and reviews can always
    /// commit: an attachment upload that would leave less free is refused (507 `insufficient-storage`), and
    /// `/v1/health` answers 503 `degraded` while less is free. Checked where the server can see its disk
    /// (SQLite); with PostgreSQL a full database disk still answers 507.
    public var storageReserveBytes: Int64 = 64 * 1024 * 1024
    /// Most bytes of attachments one project may hold (stored ones and uploads in progress, plus the rest of
    /// the upload asking); an upload past it is refused with 507 `attachment-quota-exceeded`. Nil: no quota
    /// (the default).
    public var projectAttachmentQuotaBytes: Int64?
    /// Most bytes of attachments one member may hold in a project (those they stored first and their uploads
    /// in progress, plus the rest of the upload asking); past it, 507 `attachment-quota-exceeded`. Nil: no
    /// quota (the default).
    public var userAttachmentQuotaBytes: Int64?
    /// Most mutations in one push (413 beyond).
    public var maxBatchSize = PushRequest.defaultMaximumMutations
    /// Deepest nesting of arrays and objects in a request body (400 beyond).
    public var maxJSONDepth = 32
    /// Largest pull page; the default when none is asked for.
    public var maxPageSize = 1_000
    public var defaultPageSize = 500
    /// A pull page stops adding records once their fields add up to this many bytes (a single larger
    /// record still travels, alone on its page).
    public var maxPageBytes = 4 * 1024 * 1024
    /// Longest answer a field may hold, in UTF-8 bytes (text, raw input; a multiple choice's choices
    /// together, see `AnswerValue.wholeTextBytes`); 413 beyond.
    public var maxValueBytes = 64 * 1024
    /// Largest a record may grow to (its fields as stored, in bytes), and most repeat instances it may hold
    /// (all repeats, at any depth, together); a change that grows a record past either is refused for that
    /// record (`record-too-large`). A record already past them may still shrink.
    public var maxRecordBytes = 2 * 1024 * 1024
    public var maxRecordInstances = 2_000
    /// Longest all the pattern checks of one push may take together; a value not checked in time is refused
    /// as `patternTooExpensive` (each check is bounded on its own too, see `PatternMatcher`).
    public var patternBudget: Duration = .milliseconds(500)
    /// Long-polls (`GET …/changes?wait=S`) held at once for one token, for one device (`client` parameter)
    /// and in all (never more than half of `maxConnections`); a poll past a cap is answered at once with
    /// what the feed has and `Retry-After: heldPollRetryAfterSeconds` (see ``HeldPolls``).
    public var maxHeldPollsPerToken = 8
    public var maxHeldPollsPerDevice = 2
    public var maxHeldPolls = 500
    public var heldPollRetryAfterSeconds = 5
    /// Failed authentications from one address within `authFailureWindow` before it gets 429.
    public var authFailureLimit = 20
    public var authFailureWindow: Duration = .seconds(60)
    /// Seconds a login code made in the console stays valid (`serve --login-code-lifetime`, in hours there).
    public var loginCodeLifetime: Double = LoginCode.defaultLifetime
    /// How far ahead of the server's wall clock a device clock may be before it is clamped.
    public var maxClockDriftMillis: Int64 = 5 * 60 * 1000

    // Slow and idle clients (see ``ConnectionDeadlines``).
    /// Time for a request's complete head to arrive, from the connection's start or the request's first byte.
    public var headerTimeout: Duration = .seconds(20)
    /// Time for a request's body to arrive once its head is in, extended by one second for every
    /// `bodyMinBytesPerSecond` bytes received.
    public var bodyTimeout: Duration = .seconds(20)
    public var bodyMinBytesPerSecond = 500
    /// Time a kept-alive connection may sit between requests.
    public var idleTimeout: Duration = .seconds(60)
    /// Time a client may leave what the server sends unread (its socket full) before it is cut off.
    public var sendTimeout: Duration = .seconds(60)
    /// Most connections open at once; past it new connections wait in the listen backlog.
    public var maxConnections = 1_000

    public init() {}
}
