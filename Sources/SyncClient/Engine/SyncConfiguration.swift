import Foundation

/// Where and how a device syncs.
public struct SyncConfiguration: Sendable, Hashable {
    /// The server's base URL, e.g. `https://sync.example.org` (no `/v1`).
    public var serverURL: String
    /// The project's id on the server.
    public var project: String
    /// The bearer token from `fieldsheet-server user add`.
    public var token: String
    /// Records per push request (one coalesced mutation per record).
    public var pushBatchSize = 250
    /// Records per pull page.
    public var pullPageSize = 500
    /// Entities per page of an entity list's feed (the server also bounds a page by its bytes).
    public var entityPageSize = 1_000
    /// How requests are retried while the server does not answer.
    public var retry = RetryPolicy()
    /// Bytes of an attachment sent or fetched per request (4 MiB): what a transfer holds in memory, and
    /// the most a cut connection makes it send again.
    public var attachmentChunkBytes: Int64 = 4 << 20
    /// Whether each sync downloads every attachment of the records on this device that is not here yet
    /// (``AttachmentDownloads/ahead``), or only those of records that were opened
    /// (``AttachmentDownloads/onOpen``, the default).
    public var attachmentDownloads = AttachmentDownloads.onOpen
    /// How long an attachment that keeps failing waits before it is tried again.
    public var attachmentBackoff = AttachmentBackoff()

    /// A configuration with the default batch sizes and retry policy.
    public init(serverURL: String, project: String, token: String) {
        self.serverURL = serverURL
        self.project = project
        self.token = token
    }

    /// `…/v1/projects/{project}/{path}`.
    public func url(_ path: String) -> String {
        var base = serverURL
        while base.hasSuffix("/") { base.removeLast() }
        let project = self.project.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? self.project
        return "\(base)/v1/projects/\(project)/\(path)"
    }
}

/// How long a request is retried while the server does not answer: exponential backoff with jitter,
/// bounded by a number of attempts and a deadline so a sync started from a command line ends.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts per request, the first included.
    public var maxAttempts = 6
    /// The pause before the first retry; doubled after each one.
    public var initialDelay: TimeInterval = 0.2
    /// The longest pause between two attempts.
    public var maxDelay: TimeInterval = 5
    /// No retry starts later than this many seconds after the request's first attempt.
    public var deadline: TimeInterval = 60

    /// A policy; the defaults give up on a request after 6 attempts or 60 s.
    public init(maxAttempts: Int = 6, initialDelay: TimeInterval = 0.2, maxDelay: TimeInterval = 5, deadline: TimeInterval = 60) {
        self.maxAttempts = maxAttempts
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.deadline = deadline
    }

    /// The pause before retry number `attempt` (1 for the first retry): full backoff with half of it jittered.
    public func delay(beforeRetry attempt: Int) -> TimeInterval {
        let backoff = min(maxDelay, initialDelay * pow(2, Double(max(0, attempt - 1))))
        return backoff / 2 + Double.random(in: 0...(backoff / 2))
    }
}
