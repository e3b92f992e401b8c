import Foundation
import FormModel
import GRDB
import SyncCore

extension DraftStore {
    /// The current answers of a record: the synced values overlaid by the unsent edits, read with the
    /// byte-level reader (the metadata of the synced fields is skipped, not decoded). Opening a sheet on a
    /// 200-field draft is dominated by this read.
    static func fetchAnswers(_ db: Database, record: String) throws -> [String: AnswerValue] {
        guard let fields = try String.fetchOne(db.cachedStatement(sql: "SELECT fields FROM records WHERE id = ?"), arguments: [record]) else {
            return [:]
        }
        do {
            var answers: [String: AnswerValue] = [:]
            for (field, value) in try RecordFields.values(jsonBytes: Array(fields.utf8)) {
                if let value { answers[field] = value }
            }
            for (field, value) in try fetchEdits(db, record: record) {
                answers[field] = value ?? nil
            }
            return answers
        } catch let error as DraftStoreError {
            throw error
        } catch {
            throw DraftStoreError(.databaseDamaged, "The stored answers of record \(record) cannot be read (\(error)).")
        }
    }
}
