import DraftStore
import Foundation

extension SyncService {
    /// Why a sync runs.
    public enum Reason: String, Sendable, Hashable {
        /// The service started.
        case start
        /// Changes were made on this device (seen in the outbox, or announced with ``SyncService/syncNow(_:)``).
        case localChange
        /// The server reported a change this device has not pulled.
        case serverChange
        /// An earlier sync failed; this is the retry after its backoff.
        case retry
        /// The optional periodic sync (``Timing/interval``).
        case timer
        /// Someone asked (a "Sync now" button).
        case requested
    }

    /// When the service syncs.
    public struct Timing: Sendable, Hashable {
        /// Quiet time after the last local change before a sync: typing in a form makes one sync, not one
        /// per keystroke.
        public var localChangeDelay: Duration
        /// After a failed sync, the first retry; each further failure doubles it, up to `maximumRetry`.
        public var firstRetry: Duration
        /// The longest wait between retries.
        public var maximumRetry: Duration
        /// How long one long-poll asks the server to hold (seconds, 1…60); keep it under the transport's
        /// stall timeout (30 s for ``CurlTransport`` by default).
        public var waitSeconds: Int
        /// A sync on a timer besides all of the above; nil (the default) for none: the server's change
        /// signal makes it unneeded.
        public var interval: Duration?

        /// Timing with the defaults: sync 1 s after the last change, retry after 5 s doubling up to 5 min, hold a long-poll 25 s, no timer.
        public init(localChangeDelay: Duration = .seconds(1), firstRetry: Duration = .seconds(5), maximumRetry: Duration = .seconds(300),
                    waitSeconds: Int = 25, interval: Duration? = nil) {
            self.localChangeDelay = localChangeDelay
            self.firstRetry = firstRetry
            self.maximumRetry = maximumRetry
            self.waitSeconds = waitSeconds
            self.interval = interval
        }

        /// The wait before retrying after `failures` failures in a row (at least one).
        public func delay(afterFailures failures: Int) -> Duration {
            var delay = firstRetry
            for _ in 1..<max(1, failures) where delay < maximumRetry { delay *= 2 }
            return min(delay, maximumRetry)
        }
    }
}

/// What a sync service reports as it goes, for an interface to show.
public enum SyncServiceEvent: Sendable, Hashable {
    /// A sync started, and why.
    case started(SyncService.Reason)
    /// A step of the sync under way.
    case progress(SyncEvent)
    /// A sync finished, with what it did.
    case finished(SyncService.Reason, SyncSummary)
    /// The sync stopped; nothing queued is lost, and the service retries after its backoff.
    case failed(SyncService.Reason, SyncError)
}

/// Where syncing stands: the device's queue (from the database, whoever changed it) and what this
/// service is doing.
public struct SyncServiceStatus: Sendable, Hashable {
    /// Queued changes, open conflicts, the last finished sync (by any process on this home); nil until read.
    public var device: SyncStatus?
    /// Whether a sync is under way, and its latest step.
    public var isSyncing = false
    /// The latest step of the sync under way.
    public var progress: SyncEvent?
    /// When this service last finished a sync.
    public var lastSuccess: Date?
    /// Why the last sync failed; nil once one succeeds.
    public var lastError: SyncError?
    /// Failed syncs in a row, and when the next retry is due.
    public var failures = 0
    /// When the next retry is due after a failure.
    public var nextRetry: Date?

    /// A status before anything is known.
    public init() {}
}
