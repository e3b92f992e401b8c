import Foundation
import FormModel
import SyncCore

/// Everything the server keeps, behind intent-level methods. Nothing above this protocol knows which
/// database holds the data: embedded SQLite (`SQLiteStorage`, in ServerSQLite) or PostgreSQL (`PostgresStorage`, in ServerPostgres).
///
/// Rules for implementations:
/// - `push` runs its whole batch in one transaction and returns only after it is durable
///   (on SQLite: WAL with `synchronous=FULL`).
/// - Change-feed sequence numbers are assigned inside the same serialized commit step, so that they
///   become visible in commit order and a reader paging by `sequence` never skips one. On SQLite the
///   single writer gives this for free; on PostgreSQL take the project's counter row with
///   `UPDATE projects SET last_sequence = last_sequence + n … RETURNING` inside the transaction: the row
///   lock is held until commit, so a later writer cannot take (let alone commit) higher numbers first.
public protocol ServerStorage: ChangeFeedStorage, ConsoleStorage, AttachmentIndexStorage, EntityStorage, WebhookStorage, AuditStorage, PeopleStorage, ProjectKeyStorage, FormStateStorage, SignatureStorage {
    /// Creates or upgrades the schema; run before the server accepts requests.
    func migrate() async throws
    /// Succeeds when the database answers a trivial query; throws ``StorageError/Code/unavailable`` when not.
    func ping() async throws
    /// Free bytes for an unprivileged process on the disk holding the data, when this server can tell (SQLite:
    /// the data directory's filesystem); nil when it cannot (PostgreSQL: that disk is the database server's).
    var freeBytes: Int64? { get }

    // MARK: Projects, users and tokens

    func createProject(name: String) async throws -> ProjectInfo
    func project(named name: String) async throws -> ProjectInfo?
    func projects() async throws -> [ProjectInfo]
    /// Adds the user (created when new) to the project with `role` and stores a new token hash for them.
    func addMember(userName: String, projectID: Int64, role: Role, tokenHash: Data) async throws
    /// Revokes every token of the user; returns how many were active.
    func revokeTokens(userName: String) async throws -> Int
    /// The user owning an active token with this SHA-256 hash, with their memberships.
    func principal(tokenHash: Data) async throws -> Principal?

    // MARK: Forms

    /// Every published version of every form of the project, by form id then version.
    func forms(projectID: Int64) async throws -> [PublishedForm]
    /// Every published version of one form of the project, by version (none: the form is not published there).
    func forms(projectID: Int64, formID: String) async throws -> [PublishedForm]
    func form(projectID: Int64, formID: String, version: Int) async throws -> PublishedForm?
    /// Ids of the fields that some record of the form holds a value for.
    func fieldsInUse(projectID: Int64, formID: String) async throws -> Set<String>
    /// Stores a new version; throws ``StorageError/versionTaken`` when that version exists.
    func insertForm(_ form: PublishedForm) async throws

    // MARK: Sync

    /// Runs one push batch in one transaction: reads what `plan` needs, lets it decide, writes its
    /// decision with sequence numbers in commit order, and commits. A throwing `plan` writes nothing.
    /// `entityIds`: the entities the batch's entity changes name; the snapshot holds those and the ones its
    /// records' stored entity changes name (``PushSnapshot/entityIDs(named:records:)``).
    func push(
        projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID],
        plan: @escaping @Sendable (PushSnapshot) throws -> PushPlan
    ) async throws -> PushPlan
    /// Writes `plan`, decided on `planned` (read by ``pushSnapshot(projectID:clientID:mutationIDs:recordIDs:entityIDs:)``
    /// outside any lock), as `push` writes a plan — when the snapshot in the push's transaction decides like
    /// `planned` (the same revisions, ``PushSnapshot/decidesLike(_:)``). Otherwise it writes nothing and throws
    /// ``PushSnapshotMoved`` with the snapshot the transaction read. A storage may compare the revisions
    /// without reading the records' content (SQLite does).
    func commit(
        _ plan: PushPlan, planned: PushSnapshot, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]
    ) async throws -> PushPlan
    /// What `push` would hand its `plan` now, read without taking any write lock: the server decides a
    /// push (merge, validation) on this snapshot outside the lock, then commits it through `push` only if
    /// the snapshot there is still the same (see `SyncController`).
    func pushSnapshot(projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]) async throws -> PushSnapshot
    /// Records changed after `after`, ordered by sequence: at most `limit`, and no more once their fields
    /// add up to `maxBytes` (a page always holds at least one record, however large). Fields stay as stored.
    func changes(projectID: Int64, after: Int64, limit: Int, maxBytes: Int, visibility: RecordVisibility) async throws -> FeedPage
    /// The conflict-log entries whose losing value `device` wrote (and another device's push replaced),
    /// logged with a change whose sequence is in `after...through` of records `visibility` lets the reader
    /// see, oldest first: what a pull page covering that range tells the device. (Their number is bounded by
    /// the range's record changes, each by the fields one push may change.)
    func lostConflicts(projectID: Int64, device: String, after: Int64, through: Int64, visibility: RecordVisibility) async throws -> [LostConflictRow]
    func record(projectID: Int64, id: UUID) async throws -> StoredRecord?
    /// A page of one form's records ordered by id, after `after` (for exports that stream).
    func records(projectID: Int64, formID: String, after: UUID?, limit: Int) async throws -> [StoredRecord]
    /// The conflict log of one record, oldest first.
    func conflicts(projectID: Int64, recordID: UUID) async throws -> [LoggedConflict]

    // MARK: Review, history and the conflict log
    // Reviews and resolutions are written through ``push(projectID:clientID:mutationIDs:recordIDs:plan:)``: a
    // plan that changes a record's review, or resolves a conflict, is committed like any other.

    /// Every history entry of the record, oldest first, with the names of their users.
    func history(projectID: Int64, recordID: UUID) async throws -> [HistoryEntry]
    /// The project's conflict log by id (oldest first), after `after`: open entries only, or all; only
    /// entries of records `viewer` may see (their own, and shared ones: drafts stay private).
    func conflictLog(projectID: Int64, viewer: Int64, openOnly: Bool, after: Int64, limit: Int) async throws -> [ConflictLogEntry]
    /// One entry of the project's conflict log, when `viewer` may see its record.
    func conflict(projectID: Int64, viewer: Int64, id: Int64) async throws -> ConflictLogEntry?
}

extension ServerStorage {
    /// Reads the whole snapshot in the push's transaction and compares its revisions.
    public func commit(
        _ plan: PushPlan, planned: PushSnapshot, projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID], entityIDs: [UUID]
    ) async throws -> PushPlan {
        try await push(projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: entityIDs) { current in
            guard current.decidesLike(planned) else { throw PushSnapshotMoved(snapshot: current) }
            return plan
        }
    }

    /// A push batch that changes no entity (reviews, resolutions).
    public func push(
        projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID],
        plan: @escaping @Sendable (PushSnapshot) throws -> PushPlan
    ) async throws -> PushPlan {
        try await push(projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: [], plan: plan)
    }

    /// The snapshot of a push batch that changes no entity.
    public func pushSnapshot(projectID: Int64, clientID: String, mutationIDs: [String], recordIDs: [UUID]) async throws -> PushSnapshot {
        try await pushSnapshot(projectID: projectID, clientID: clientID, mutationIDs: mutationIDs, recordIDs: recordIDs, entityIDs: [])
    }
}

/// A storage failure a caller can act on. Database errors themselves never leave the server.
public struct StorageError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable {
        case projectExists
        case unknownProject
        case unknownUser
        case versionTaken
        /// The database cannot be reached or did not answer in time; nothing was written. Retry later.
        case unavailable
        /// The database was migrated by a newer fieldsheet-server; it was left untouched.
        case newerSchema
        /// A plan resolved a conflict that someone else resolved first; nothing was written.
        case alreadyResolved
        /// The disk holding the database is full; nothing was written. Retry once the server's admin freed space.
        case insufficientStorage
        /// An entity list property would change its kind; nothing was written.
        case entityPropertyKind
        /// An entity id is taken by an entity of another list; nothing was written.
        case entityConflict
        /// The entity list does not exist.
        case unknownEntityList
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    /// The database is down, unreachable or too slow; the operation had no effect (or its effect is
    /// idempotent, as a push retried by mutation id is).
    public static func unavailable(_ detail: String = "The database cannot be reached.") -> StorageError {
        StorageError(.unavailable, detail)
    }

    /// The disk holding the database is full; the transaction was rolled back.
    public static func insufficientStorage(_ detail: String = "The disk holding the database is full.") -> StorageError {
        StorageError(.insufficientStorage, detail)
    }

    /// The refusal to open a database that records schema versions this server does not know.
    public static func newerSchema(_ where: String, unknown: [String], known: [String]) -> StorageError {
        StorageError(.newerSchema, """
            \(`where`) was migrated by a newer fieldsheet-server: it records schema \(unknown.count == 1 ? "version" : "versions") \
            \(unknown.joined(separator: ", ")), which this one (knowing \(known.joined(separator: ", "))) does not understand. \
            Nothing was changed. Upgrade fieldsheet-server to the version that wrote it, or newer, and start it again.
            """)
    }

    public static func == (lhs: StorageError, rhs: StorageError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    public var description: String { detail }
}
