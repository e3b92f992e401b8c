import Foundation
import FormModel
import GRDB
public import SyncCore

/// One row of a records list, from columns alone (never the field values): what a home screen needs
/// to list ten thousand records without reading them.
public struct RecordListSummary: Sendable, Hashable {
    /// The record's id.
    public var id: UUID
    /// The record's form and the version of it the record is on.
    public var form: FormKey
    /// The form's title, as listed.
    public var formTitle: String
    /// Draft or submitted.
    public var state: RecordState
    /// When the record last changed on this device.
    public var updatedAt: Date
    /// Unsent changes of the record in the outbox.
    public var waitingChanges: Int
    /// Conflicts of the record waiting for a person.
    public var openConflicts: Int
    /// The office's review as the server last sent it (`needsChanges` when the collector should fix the
    /// record, with the reviewer's comment); nil for drafts and for records never reviewed.
    public var review: RecordReview? = nil
}

extension DraftStore {
    /// The records `query` selects (every draft and submitted record by default), most recently changed
    /// first, with their outbox and open-conflict counts: one query over the records' columns and two
    /// indexes, no field values read unless `query` has a text filter.
    public func recordListSummaries(_ query: RecordListQuery = RecordListQuery()) async throws -> [RecordListSummary] {
        try await read(doing: "listing records") { db in
            try Self.fetchRecordList(db, query)
        }
    }

    /// The records with `ids`, values included (with `answers: .topLevel`, those of the forms' own fields only),
    /// read in one transaction (for a list's headlines, a details pane or a search over values; ids that are gone
    /// are skipped).
    public func records(_ ids: [UUID], answers scope: RecordAnswers = .all) async throws -> [StoredRecord] {
        try await read(doing: "reading \(ids.count) records") { db in
            try ids.compactMap { try Self.fetchRecord(db, id: $0, answers: scope) }
        }
    }
}

/// Which of a record's answers a read brings.
public enum RecordAnswers: Sendable, Hashable {
    /// Every answer, those of repeat instances included.
    case all
    /// The answers of the form's own fields only — those of its pages, keyed by their field id, as
    /// `FormDefinition.allFields` lists them — without the answers inside repeat instances (keys with a `/`).
    /// What a list's headline, a details pane and ``RecordSearch`` show: a record of 5,000 repeat instances holds
    /// 30,000 answers, and this read decodes none of them. Such a record's ``StoredRecord/answers`` (and its sync
    /// metadata) hold those fields alone: it is for showing, never for a session or a sync.
    case topLevel
}
