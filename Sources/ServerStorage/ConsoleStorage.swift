import Foundation
import SyncCore

/// What the web console reads and keeps besides the sync API's data: review counts, a keyset-paged table of
/// one form's records, the project's members, one record's conflict log, and signed-in browser sessions.
///
/// Every read takes the viewer's ``RecordVisibility``: a collector's pages hold only their own records.
public protocol ConsoleStorage: Sendable {
    /// How many records of each form the viewer may see, by review state (nil: never submitted, as drafts).
    /// Deleted records are not counted.
    func reviewCounts(projectID: Int64, visibility: RecordVisibility) async throws -> [ReviewCount]
    /// One page of a form's records, as ``RecordTableQuery`` says: filtered, sorted and after its cursor, with an
    /// index serving the order, so a page deep in 100,000 records costs what the first one does.
    func recordTable(projectID: Int64, query: RecordTableQuery, visibility: RecordVisibility) async throws -> [RecordTableRow]
    /// One page of a form's records for a feed another tool reads, as ``RecordFeedQuery`` says: filtered by its
    /// conditions, ordered by id after its cursor (the form's id index serves the order), deleted records left out.
    func feedRecords(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility) async throws -> [StoredRecord]
    /// How many records pass the query's form, conditions and visibility (its cursor, offset and limit ignored).
    func countFeedRecords(projectID: Int64, query: RecordFeedQuery, visibility: RecordVisibility) async throws -> Int
    /// The project's members by name, with their roles.
    func members(projectID: Int64) async throws -> [ProjectMember]
    /// The conflict log of one record (open and resolved), oldest first, when `viewer` may see the record.
    func conflictLog(projectID: Int64, viewer: Int64, recordID: UUID) async throws -> [ConflictLogEntry]

    /// Opens a session for the holder of an active token (by its SHA-256): stores the session id's hash, the
    /// token it was opened with, its CSRF token and its expiry; removes expired sessions. Nil, storing
    /// nothing, when the token is unknown or revoked.
    func openSession(tokenHash: Data, session: ConsoleSessionRecord) async throws -> Principal?
    /// The principal and CSRF token of a session that has not expired at `now` and whose token was not revoked.
    func session(idHash: Data, now: Date) async throws -> (principal: Principal, csrf: String)?
    /// Ends a session (signing out); nothing happens when there is none.
    func closeSession(idHash: Data) async throws
}

/// A session as stored: the SHA-256 of its id (the cookie), its CSRF token and when it expires.
public struct ConsoleSessionRecord: Sendable, Hashable {
    public var idHash: Data
    public var csrf: String
    public var createdAt: Date
    public var expiresAt: Date

    public init(idHash: Data, csrf: String, createdAt: Date, expiresAt: Date) {
        self.idHash = idHash
        self.csrf = csrf
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }
}

/// How many records of a form are in one review state.
public struct ReviewCount: Sendable, Hashable {
    public var formID: String
    /// Nil for records never submitted (drafts).
    public var reviewState: ReviewState?
    public var count: Int

    public init(formID: String, reviewState: ReviewState?, count: Int) {
        self.formID = formID
        self.reviewState = reviewState
        self.count = count
    }
}

/// A member of a project and their role.
public struct ProjectMember: Sendable, Hashable {
    public var name: String
    public var role: Role
    /// Tokens that are not revoked.
    public var activeTokens: Int
    /// The user's id (what the console's person pages are addressed by).
    public var userID: Int64

    public init(name: String, role: Role, activeTokens: Int, userID: Int64 = 0) {
        self.name = name
        self.role = role
        self.activeTokens = activeTokens
        self.userID = userID
    }
}

/// One page of the console's submissions table: a form's records, filtered, in one order, after a cursor.
public struct RecordTableQuery: Sendable, Hashable {
    /// The time a table is ordered by; records with the same time are ordered by id.
    public enum SortKey: String, Sendable, CaseIterable {
        /// The last change (`updated_at`).
        case updated
        /// When the server first stored the record (`created_at`, else its last change).
        case created
    }

    /// Where the previous page ended: the sort time and id of its last record.
    public struct Cursor: Sendable, Hashable {
        public var time: Double
        public var id: UUID

        public init(time: Double, id: UUID) {
            self.time = time
            self.id = id
        }

        /// `time~id`, as links carry it; the time round-trips exactly.
        public var text: String { "\(time)~\(id.lowercased)" }

        public init?(text: String) {
            let parts = text.split(separator: "~")
            guard parts.count == 2, let time = Double(parts[0]), time.isFinite, let id = UUID(text: String(parts[1])) else { return nil }
            self.init(time: time, id: id)
        }
    }

    public var formID: String
    public var reviewState: ReviewState?
    /// Only records whose author has this name.
    public var author: String?
    /// Only records last changed at or after this time.
    public var changedFrom: Date?
    /// Only records last changed before this time.
    public var changedBefore: Date?
    public var sort: SortKey
    public var descending: Bool
    public var after: Cursor?
    public var limit: Int

    public init(
        formID: String, reviewState: ReviewState? = nil, author: String? = nil, changedFrom: Date? = nil, changedBefore: Date? = nil,
        sort: SortKey = .updated, descending: Bool = true, after: Cursor? = nil, limit: Int = 50
    ) {
        self.formID = formID
        self.reviewState = reviewState
        self.author = author
        self.changedFrom = changedFrom
        self.changedBefore = changedBefore
        self.sort = sort
        self.descending = descending
        self.after = after
        self.limit = limit
    }

    /// Whether `record` passes the query's form and filters (review state, author, last change) as the table's
    /// statement applies them: for what reads a form's records one by one (the console's export of the table).
    public func matches(_ record: StoredRecord) -> Bool {
        guard record.form.id == formID else { return false }
        if let reviewState, record.review?.state != reviewState { return false }
        if let author, record.authorName != author { return false }
        if let changedFrom {
            guard let updated = record.times.updated, updated >= changedFrom else { return false }
        }
        if let changedBefore {
            guard let updated = record.times.updated, updated < changedBefore else { return false }
        }
        return true
    }

    /// The SQL expression of the sort time: the same text as the index it uses (`records_by_form_…`).
    public var sortExpression: String { sort == .updated ? "r.updated_at" : "(coalesce(r.created_at, r.updated_at))" }
}

/// A record of the submissions table with its cursor: the sort time exactly as the database holds it (a
/// `Date` would round it), so the next page starts right after it.
public struct RecordTableRow: Sendable, Hashable {
    public var record: StoredRecord
    public var cursor: RecordTableQuery.Cursor

    public init(record: StoredRecord, cursor: RecordTableQuery.Cursor) {
        self.record = record
        self.cursor = cursor
    }
}

extension RecordVisibility {
    /// The viewer, and whether they also see shared (once submitted) records: `author_id = ? OR (? AND shared)`.
    public var viewer: (userID: Int64, seesShared: Bool) {
        switch self {
        case .authoredBy(let userID): (userID, false)
        case .authoredByOrShared(let userID): (userID, true)
        }
    }
}
