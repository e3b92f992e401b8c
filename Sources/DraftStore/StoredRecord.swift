import Foundation
import FormModel
public import SyncCore

/// A record as stored on the device, with every field's value and sync metadata.
public struct StoredRecord: Sendable, Hashable {
    /// The record's id, made on the device that created it.
    public var id: UUID
    /// The record's form and the version of it the record is on (started on, or moved to).
    public var form: FormKey
    /// Draft or submitted.
    public var state: RecordState
    /// When the record was created, on the clock of the device that created it (this one, or the author's
    /// for a record that came from the server).
    public var createdAt: Date
    /// When the record last changed where that change was made: here for an edit made here, else as the
    /// server sent it (the author's device, or the server for a review).
    public var updatedAt: Date
    /// When the record was last submitted where that happened; nil for a draft, or a record stored before
    /// devices kept it.
    public var submittedAt: Date? = nil
    /// The server's revision of the record this device last saw; 0 when never synced.
    public var serverRevision: Int64
    /// The fields as the server last had them (the sync base), with their merge metadata: the record
    /// representation shared by device, wire and server.
    package var synced: RecordFields
    /// Edits made on this device that the server has not acknowledged yet, on top of `synced`
    /// (`nil`: cleared here).
    package var pending: FieldValues
    /// The office's review as the server last sent it; nil for drafts and for records only `received`.
    public var review: RecordReview? = nil
    /// Attachments the record refers to that the server said, at the last pull, it does not hold yet
    /// (by hash): the record is waiting for them.
    public var missingOnServer: [String] = []

    /// The current answers, by field id (unanswered fields absent): `synced` overlaid by `pending`.
    public var answers: [String: AnswerValue] {
        DeviceSync.answers(synced: synced, local: pending)
    }
}

/// One line of a record listing: no field values, so listing thousands stays cheap.
public struct RecordSummary: Sendable, Hashable {
    /// The record's id.
    public var id: UUID
    /// The record's form and the version of it the record is on.
    public var form: FormKey
    /// The form's title ("New Follow-up Job").
    public var formTitle: String
    /// Draft or submitted.
    public var state: RecordState
    /// When the record was created, on the clock of the device that created it.
    public var createdAt: Date
    /// When the record last changed, where that change was made.
    public var updatedAt: Date
    /// The office's review as the server last sent it; nil for drafts and for records only `received`.
    public var review: RecordReview? = nil
    /// Attachments the record refers to that the server said, at the last pull, it does not hold yet
    /// (by hash): the record is waiting for them.
    public var missingOnServer: [String] = []
}

/// A stored form version, as listed.
public struct FormSummary: Sendable, Hashable {
    /// The form's id.
    public var id: String
    /// The newest stored version.
    public var version: Int
    /// The newest version's title.
    public var title: String
    /// Every stored version, oldest first.
    public var versions: [Int]
}

/// What `DraftStore.importForms` did with each form.
public enum FormImportOutcome: Sendable, Hashable {
    /// The form version was new and is now stored.
    case imported(FormKey)
    /// The same version with the same definition was already stored.
    case unchanged(FormKey)
}

/// A presentation that was still open when its process stopped, closed on the next open as a
/// non-cancel dismissal (`processKilled`): everything typed was kept.
public struct RecoveredPresentation: Sendable, Hashable {
    /// The record the presentation showed.
    public var recordID: UUID
    /// The id of the record's form.
    public var formID: String
    /// The record's state after recovery (unchanged by it).
    public var state: RecordState
}
