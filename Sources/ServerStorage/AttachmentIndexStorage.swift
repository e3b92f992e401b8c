import Foundation
import FormModel
import SyncCore

/// What the database knows about attachments: which are stored and verified, and which records reference
/// which hash (written at push time, in the push's transaction, from the records' values).
public protocol AttachmentIndexStorage: Sendable {
    /// Where the attachments' bytes live.
    var attachments: any AttachmentStore { get }
    /// Notes that the attachment is stored and verified. The first time, every record that references it
    /// gets a new change-feed sequence (so devices pull the record again, now without it among the missing);
    /// returns the project's last sequence then, nil when it was known already or no record references it.
    func attachmentStored(_ key: AttachmentKey, bytes: Int64) async throws -> Int64?
    /// Whether the database has noted the attachment as stored.
    func isAttachmentStored(_ key: AttachmentKey) async throws -> Bool
    /// The bytes of every attachment the project holds stored and verified (what its quota counts).
    func storedAttachmentBytes(projectId: Int64) async throws -> Int64
    /// Every reference to the hash in the project, with the referencing record's author and sharing.
    func attachmentUses(_ key: AttachmentKey) async throws -> [AttachmentUse]
    /// The attachments one record references, each with whether it is stored.
    func attachments(projectId: Int64, recordId: UUID) async throws -> [RecordAttachment]
    /// One garbage-collection sweep over every project's attachments: removes what
    /// ``AttachmentCollectionPolicy`` lets go at `now` (nothing when `dryRun`, which reports what it would remove)
    /// and notes which attachments it found unreferenced. Safe beside uploads, downloads, pushes and other sweeps.
    func sweepAttachments(policy: AttachmentCollectionPolicy, now: Date, dryRun: Bool) async throws -> AttachmentSweep
}

/// One field of one record that references an attachment.
public struct AttachmentUse: Sendable, Hashable {
    public var recordId: UUID
    public var fieldId: String
    public var authorId: Int64
    /// Whether the record was ever submitted (reviewers see it then).
    public var shared: Bool
    /// The media type the reference gives.
    public var type: String
    public var name: String

    public init(recordId: UUID, fieldId: String, authorId: Int64, shared: Bool, type: String, name: String) {
        self.recordId = recordId
        self.fieldId = fieldId
        self.authorId = authorId
        self.shared = shared
        self.type = type
        self.name = name
    }
}

/// An attachment as one record's field references it.
public struct RecordAttachment: Sendable, Hashable {
    public var fieldId: String
    public var sha256: String
    public var bytes: Int64
    public var type: String
    public var name: String
    /// Whether the server holds its bytes, verified.
    public var stored: Bool

    public init(fieldId: String, sha256: String, bytes: Int64, type: String, name: String, stored: Bool) {
        self.fieldId = fieldId
        self.sha256 = sha256
        self.bytes = bytes
        self.type = type
        self.name = name
        self.stored = stored
    }
}

extension StoredRecord {
    /// The attachments the record's values reference, by field id (repeat fields by their path key), sorted
    /// by field id: what the storage indexes when it writes the record.
    public var attachmentReferences: [(fieldId: String, reference: AttachmentReference)] {
        fields.values.compactMap { fieldId, value in
            guard case .attachment(let reference) = value else { return nil }
            return (fieldId, reference)
        }.sorted { $0.fieldId < $1.fieldId }
    }
}
