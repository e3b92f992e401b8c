import Foundation
import FormModel
import GRDB

/// One row of a records list, from columns alone (never the field values): what a home screen needs
/// to list ten thousand records without reading them.
public struct RecordListSummary: Sendable, Hashable {
    public var id: UUID
    public var formID: String
    public var formVersion: Int
    public var formTitle: String
    public var state: RecordState
    public var updatedAt: Date
    /// Unsent changes of the record in the outbox.
    public var waitingChanges: Int
    /// Conflicts of the record waiting for a person.
    public var openConflicts: Int
}

extension DraftStore {
    /// Every draft and submitted record, most recently changed first, with its outbox and open-conflict
    /// counts: one query over the records' columns and two indexes, no field values read.
    public func recordListSummaries() async throws -> [RecordListSummary] {
        try await read(doing: "listing records") { db in
            var titles: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, version, title FROM forms") {
                titles["\(row[0] as String) \(row[1] as Int)"] = row[2]
            }
            let rows = try Row.fetchCursor(db, sql: """
                SELECT r.id, r.form_id, r.form_version, r.state, r.updated_at,
                    (SELECT count(*) FROM outbox o WHERE o.record_id = r.id),
                    (SELECT count(*) FROM conflicts c WHERE c.record_id = r.id AND c.resolved_at IS NULL)
                FROM records r INDEXED BY records_by_state
                WHERE r.state IN ('draft', 'submitted') ORDER BY r.updated_at DESC, r.id DESC
                """)
            var summaries: [RecordListSummary] = []
            while let row = try rows.next() {
                guard let id = UUID(uuidString: row[0]), let state = RecordState(rawValue: row[3]) else { continue }
                let formID: String = row[1]
                let version: Int = row[2]
                summaries.append(RecordListSummary(
                    id: id, formID: formID, formVersion: version, formTitle: titles["\(formID) \(version)"] ?? formID, state: state,
                    updatedAt: Self.date(row[4]), waitingChanges: row[5], openConflicts: row[6]))
            }
            return summaries
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
