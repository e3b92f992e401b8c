import Foundation
import FormModel
import SyncCore

/// What the database knows about attachments: which are stored and verified, and which records reference
/// which hash (written at push time, in the push's transaction, from the records' values).
public protocol AttachmentIndexStorage: Sendable {
    /// Where the attachments' bytes live.
    var attachments: any AttachmentStore { get }
    /// Notes that `holder` sent the attachment's bytes, verified, and holds it now. The first time anyone
    /// does, the attachment is noted as stored (charged to `holder`, of `mediaType`) and every record that
    /// references it gets a new change-feed sequence (so devices pull the record again, now without it among
    /// the missing); returns the project's last sequence then, nil when it was stored already or no record
    /// references it.
    func attachmentStored(_ key: AttachmentKey, bytes: Int64, holder: Int64, mediaType: String) async throws -> Int64?
    /// Whether the database has noted the attachment as stored.
    func isAttachmentStored(_ key: AttachmentKey) async throws -> Bool
    /// The stored attachment and whether `userId` holds it; nil when it is not stored.
    func storedAttachment(_ key: AttachmentKey, userID: Int64) async throws -> StoredAttachment?
    /// Notes that `userId` holds the stored attachment (it was shown to them through a record that granted it).
    func addAttachmentHolder(_ key: AttachmentKey, userID: Int64) async throws
    /// The bytes of every attachment the project holds stored and verified (only those `storedBy` stored
    /// first, when given): what its quotas count beside the uploads in progress.
    func storedAttachmentBytes(projectID: Int64, storedBy: Int64?) async throws -> Int64
    /// Every reference to the hash in the project, with the referencing record's author and sharing, who put
    /// it there and whether they hold the attachment.
    func attachmentUses(_ key: AttachmentKey) async throws -> [AttachmentUse]
    /// The attachments one record references, each with whether its bytes are there for it (stored, and held
    /// by the member who put the reference in: what a pull's `missingAttachments` leaves out).
    func attachments(projectID: Int64, recordID: UUID) async throws -> [RecordAttachment]
    /// One garbage-collection sweep over every project's attachments: removes what
    /// ``AttachmentCollectionPolicy`` lets go at `now` (nothing when `dryRun`, which reports what it would remove)
    /// and notes which attachments it found unreferenced. Safe beside uploads, downloads, pushes and other sweeps.
    func sweepAttachments(policy: AttachmentCollectionPolicy, now: Date, dryRun: Bool) async throws -> AttachmentSweep
}

/// One field of one record that references an attachment.
public struct AttachmentUse: Sendable, Hashable {
    public var recordID: UUID
    public var fieldID: String
    public var authorID: Int64
    /// Whether the record was ever submitted (reviewers see it then).
    public var shared: Bool
    /// The media type the reference gives.
    public var type: String
    public var name: String
    /// Who put the reference into the record (the pushing member whose change set the field to this hash).
    public var addedBy: Int64
    /// Whether ``addedBy`` holds the attachment: only then does the reference grant its bytes to those who
    /// may read the record.
    public var grants: Bool

    public init(recordID: UUID, fieldID: String, authorID: Int64, shared: Bool, type: String, name: String, addedBy: Int64, grants: Bool) {
        self.recordID = recordID
        self.fieldID = fieldID
        self.authorID = authorID
        self.shared = shared
        self.type = type
        self.name = name
        self.addedBy = addedBy
        self.grants = grants
    }
}

/// A stored attachment as the database notes it, for one member.
public struct StoredAttachment: Sendable, Hashable {
    public var bytes: Int64
    /// The media type read from its first bytes when it was stored; nil for attachments stored by a version
    /// that did not note it.
    public var mediaType: String?
    /// Whether the member asking holds it (sent its bytes, or was shown them).
    public var held: Bool

    public init(bytes: Int64, mediaType: String?, held: Bool) {
        self.bytes = bytes
        self.mediaType = mediaType
        self.held = held
    }
}

/// An attachment as one record's field references it.
public struct RecordAttachment: Sendable, Hashable {
    public var fieldID: String
    public var sha256: String
    public var bytes: Int64
    public var type: String
    public var name: String
    /// Whether the server holds its bytes, verified, for this reference: the member who put it into the
    /// record holds them (else the record still waits for them, as a pull's `missingAttachments` says).
    public var stored: Bool

    public init(fieldID: String, sha256: String, bytes: Int64, type: String, name: String, stored: Bool) {
        self.fieldID = fieldID
        self.sha256 = sha256
        self.bytes = bytes
        self.type = type
        self.name = name
        self.stored = stored
    }
}

extension StoredRecord {
    /// Who put each of the record's attachment references in, by field id: the one before, for a field that
    /// keeps its hash (`previous`, what the index held); else the member whose change last touched the record
    /// in `history`, else its author.
    public func attachmentAdders(previous: [String: (sha256: String, addedBy: Int64)], history: [HistoryEntry]) -> [String: Int64] {
        attachmentAdders(of: attachmentReferences, previous: previous, history: history)
    }

    /// ``attachmentAdders(previous:history:)`` of `references`, the record's ``attachmentReferences`` as the
    /// caller has them already.
    public func attachmentAdders(
        of references: [(fieldID: String, reference: AttachmentReference)], previous: [String: (sha256: String, addedBy: Int64)], history: [HistoryEntry]
    ) -> [String: Int64] {
        guard !references.isEmpty else { return [:] }
        let pusher = history.last { $0.recordID == id }?.userID ?? authorID
        var adders: [String: Int64] = [:]
        for (fieldID, reference) in references {
            if let before = previous[fieldID], before.sha256 == reference.sha256 { adders[fieldID] = before.addedBy } else { adders[fieldID] = pusher }
        }
        return adders
    }

    /// The attachments the record's values reference, by field id (repeat fields by their path key), sorted
    /// by field id: what the storage indexes when it writes the record.
    public var attachmentReferences: [(fieldID: String, reference: AttachmentReference)] {
        // Read from the fields' states in place: no dictionary of every answer is built to find the few (most
        // often no) attachments.
        var references: [(fieldID: String, reference: AttachmentReference)] = []
        for (fieldID, state) in fields.states {
            guard case .attachment(let reference)? = state.value else { continue }
            references.append((fieldID, reference))
        }
        if references.count > 1 { references.sort { $0.fieldID < $1.fieldID } }
        return references
    }
}
