import Foundation
import FormModel
import GRDB

extension FormSession {
    /// Stores many typed inputs at once (`fieldsheet fill --set …`), durable together before it returns:
    /// parsed like `set(_:input:)`, written in one transaction with one outbox entry per field, so thousands of
    /// them cost time in proportion to their number. Nothing is written when any names an unknown field, a
    /// read-only one, or cannot be stored.
    /// - Returns: each input's issues with the answers as they end up, in the order given.
    @discardableResult
    public func set(inputs: [(field: String, input: String)]) async throws -> [[FieldIssue]] {
        try requireOpen()
        var edits: [DraftStore.Edit] = []
        var updated = answers
        for (key, input) in inputs {
            let field = try self.field(key)
            let value = AnswerValue.parse(input, for: field)
            guard updated[key] != value else { continue }
            updated[key] = value
            edits.append(DraftStore.Edit(field: key, label: field.label.text, value: value))
            for restore in restorations(for: key) where updated[restore.field] != restore.value {
                updated[restore.field] = restore.value
                edits.append(restore)
            }
        }
        if !edits.isEmpty {
            try await write(edits)
        }
        return inputs.map { validator.validate(field: $0.field, in: state) }
    }
}

extension DraftStore {
    /// One field's new value, for `writeEdits`.
    struct Edit: Sendable {
        var field: String
        var label: String
        var value: AnswerValue?
    }

    /// Edits of one record and their outbox entries, in one transaction: one row per edit, the record's row
    /// written once.
    func writeEdits(record: String, presentation: String, _ edits: [Edit]) async throws {
        let named = edits.prefix(3).map { "\"\($0.field)\" (\($0.label))" }.joined(separator: ", ") + (edits.count > 3 ? " and \(edits.count - 3) more" : "")
        try await write(doing: "saving the field\(edits.count == 1 ? "" : "s") \(named) of record \(record)") { db in
            try Self.writeEdits(db, record: record, presentation: presentation, edits)
        }
        checkpointer.noteCommit()
    }

    /// `writeEdits` inside the caller's transaction.
    static func writeEdits(_ db: Database, record: String, presentation: String, _ edits: [Edit]) throws {
        let encoded = edits.map { edit in (edit, edit.value.map { Self.answerJSON($0) }) }
        let now = Self.nowMillis()
        guard let serverRevision = try Int64.fetchOne(db.cachedStatement(sql: """
            UPDATE records SET updated_at = ? WHERE id = ? AND state != 'deleted' RETURNING server_revision
            """), arguments: [now, record])
        else {
            throw DraftStoreError(.unknownRecord, "Record \(record) is no longer on this device (deleted elsewhere); nothing of these \(edits.count) edits was saved.")
        }
        for (edit, json) in encoded {
            let (clock, _) = try Self.tick(db)
            try Self.setEdit(db, record: record, key: edit.field, json: json)
            let baseRevision = try Self.editBase(db, record: record, field: edit.field, serverRevision: serverRevision)
            try db.cachedStatement(sql: """
                INSERT INTO outbox (record_id, presentation_id, kind, field_id, value, base_revision, hlc, created_at)
                VALUES (?1, ?2, 'set', ?3, fs_seal(?4, 'outbox', ?1, ?3), ?5, ?6, ?7)
                """).execute(arguments: [record, presentation, edit.field, json, baseRevision, clock.rawValue, now])
        }
    }
}
