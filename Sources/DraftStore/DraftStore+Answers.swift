import Foundation
import FormModel
import GRDB
import SyncCore

extension DraftStore {
    /// The current answers of a record: the synced values overlaid by the unsent edits, read with the
    /// byte-level reader (the metadata of the synced fields is skipped, not decoded). Opening a sheet on a
    /// 200-field draft is dominated by this read.
    static func fetchAnswers(_ db: Database, record: String) throws -> [String: AnswerValue] {
        // The unsent edits come as one JSON object built by SQLite, read in one pass: cheaper than reading
        // thousands of small values one by one.
        guard let row = try Row.fetchOne(db.cachedStatement(sql: "SELECT r.fields, \(localEditsJSON(of: "r.id")) FROM records r WHERE r.id = ?"), arguments: [record]) else {
            return [:]
        }
        do {
            var answers: [String: AnswerValue] = [:]
            for (field, value) in try RecordFields.values(jsonBytes: Array((row[0] as String).utf8)) {
                if let value { answers[field] = value }
            }
            for (field, value) in try fieldValues(json: row[1]) {
                answers[field] = value ?? nil
            }
            return answers
        } catch {
            throw DraftStoreError(.databaseDamaged, "The stored answers of record \(record) cannot be read (\(error)).")
        }
    }
}
