import Foundation
import FormModel
import GRDB
public import SyncCore

/// One row of a records list, from columns alone (never the field values): what a home screen needs
/// to list ten thousand records without reading them.
public struct RecordListSummary: Sendable, Hashable {
    /// The record's id.
    public var id: UUID
    /// The id of the record's form.
    public var formID: String
    /// The form version the record was started on.
    public var formVersion: Int
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

    /// The records with `ids`, values included, read in one transaction (for a search over values;
    /// ids that are gone are skipped).
    public func records(_ ids: [UUID]) async throws -> [StoredRecord] {
        try await read(doing: "reading \(ids.count) records") { db in
            try ids.compactMap { try Self.fetchRecord(db, id: $0) }
        }
    }
}
