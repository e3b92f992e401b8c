import Foundation
import GRDB
import ServerStorage

extension SQLiteStorage {
    public func formStates(projectID: Int64) async throws -> [String: FormAvailability] {
        try await pool.read { db in
            var states: [String: FormAvailability] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT s.form_id, s.closed, u.name, s.changed_at FROM form_states s LEFT JOIN users u ON u.id = s.changed_by
                WHERE s.project_id = ?
                """, arguments: [projectID]) {
                let state = FormAvailability(formID: row[0], closed: row[1], changedBy: row[2], changedAt: Date(timeIntervalSince1970: row[3]))
                states[state.formID] = state
            }
            return states
        }
    }

    public func setFormClosed(projectID: Int64, formID: String, closed: Bool, userID: Int64) async throws {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO form_states (project_id, form_id, closed, changed_by, changed_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (project_id, form_id) DO UPDATE SET closed = excluded.closed, changed_by = excluded.changed_by, changed_at = excluded.changed_at
                """, arguments: [projectID, formID, closed, userID, Date().timeIntervalSince1970])
        }
    }

    public func storeFormUpload(projectID: Int64, fileName: String, definition: String, userID: Int64) async throws -> Int64 {
        let now = Date().timeIntervalSince1970
        return try await write { db in
            try db.execute(
                sql: "INSERT INTO form_uploads (project_id, file_name, definition, uploaded_by, uploaded_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [projectID, fileName, definition, userID, now])
            let id = db.lastInsertedRowID
            // After the insert: the newest row stays, so SQLite never gives a new upload the id of a removed one
            // (an old page's publish link must not name another upload).
            try db.execute(
                sql: "DELETE FROM form_uploads WHERE project_id = ? AND uploaded_at < ? AND id <> ?",
                arguments: [projectID, now - FormUpload.lifetime, id])
            return id
        }
    }

    public func formUpload(projectID: Int64, id: Int64) async throws -> FormUpload? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: """
                SELECT file_name, definition, uploaded_by, uploaded_at FROM form_uploads WHERE project_id = ? AND id = ?
                """, arguments: [projectID, id]).map {
                FormUpload(id: id, projectID: projectID, fileName: $0[0], definition: $0[1], uploadedBy: $0[2], uploadedAt: Date(timeIntervalSince1970: $0[3]))
            }
        }
    }
}
