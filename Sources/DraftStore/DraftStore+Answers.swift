import Foundation
import FormModel
import GRDB
internal import SyncCore

extension DraftStore {
    /// A record's stored fields (`records.fields`) and its unsent edits as one JSON object (`{"site": {"text":
    /// "Pump 4"}, "notes": null}`), as text.
    typealias StoredAnswers = (fields: String, local: String)

    /// The stored fields and unsent edits of a record (both `{}`-like when it has none; a record that does not
    /// exist has neither).
    static func fetchStoredAnswers(_ db: Database, record: String) throws -> StoredAnswers {
        // The unsent edits come as one JSON object built by SQLite, read in one pass: cheaper than reading
        // thousands of small values one by one.
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT fs_open_fields(r.fields, 'record', r.id), \(localEditsJSON(of: "r.id")) FROM records r WHERE r.id = ?"), arguments: [record]) else {
            return (emptyFields, "{}")
        }
        return (row[0], row[1])
    }

    /// The current answers of a record as `stored` holds them: the synced values overlaid by the unsent edits,
    /// read with the byte-level reader (the metadata of the synced fields is skipped, not decoded).
    static func answers(_ stored: StoredAnswers, record: String) throws -> [String: AnswerValue] {
        do {
            var answers: [String: AnswerValue] = [:]
            for (field, value) in try RecordFields.values(jsonBytes: Array(stored.fields.utf8)) {
                if let value { answers[field] = value }
            }
            // Read straight into the answers (nil: cleared), without a dictionary of the edits in between.
            var reader = JSONReader(Array(stored.local.utf8))
            try reader.beginObject()
            while let field = try reader.nextKey() {
                answers[field] = try AnswerValue.readOptional(from: &reader)
            }
            try reader.finish()
            return answers
        } catch {
            throw DraftStoreError(.databaseDamaged, "The stored answers of record \(record) cannot be read (\(error)).")
        }
    }
}
