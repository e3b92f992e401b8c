import Foundation
import Logging
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    public func formStates(projectID: Int64) async throws -> [String: FormAvailability] {
        let client = client
        return try await perform {
            var states: [String: FormAvailability] = [:]
            for try await (formID, closed, name, changed) in try await client.query("""
                SELECT s.form_id, s.closed, u.name, s.changed_at FROM form_states s LEFT JOIN users u ON u.id = s.changed_by
                WHERE s.project_id = \(projectID)
                """).decode((String, Bool, String?, Double).self) {
                states[formID] = FormAvailability(formID: formID, closed: closed, changedBy: name, changedAt: Date(timeIntervalSince1970: changed))
            }
            return states
        }
    }

    public func setFormClosed(projectID: Int64, formID: String, closed: Bool, userID: Int64) async throws {
        let now = Date().timeIntervalSince1970
        _ = try await transaction { connection in
            _ = try await connection.query("""
                INSERT INTO form_states (project_id, form_id, closed, changed_by, changed_at) VALUES (\(projectID), \(formID), \(closed), \(userID), \(now))
                ON CONFLICT (project_id, form_id) DO UPDATE SET closed = excluded.closed, changed_by = excluded.changed_by, changed_at = excluded.changed_at
                """, logger: .quiet)
            return true
        }
    }

    public func storeFormUpload(projectID: Int64, fileName: String, definition: String, userID: Int64) async throws -> Int64 {
        let now = Date().timeIntervalSince1970
        let expired = now - FormUpload.lifetime
        return try await transaction { connection in
            _ = try await connection.query(
                "DELETE FROM form_uploads WHERE project_id = \(projectID) AND uploaded_at < \(expired)", logger: .quiet)
            let rows = try await connection.query("""
                INSERT INTO form_uploads (project_id, file_name, definition, uploaded_by, uploaded_at)
                VALUES (\(projectID), \(fileName), \(definition), \(userID), \(now)) RETURNING id
                """, logger: .quiet).collect()
            guard let id = try rows.first?.decode(Int64.self) else { throw StorageError(.unknownProject, "There is no project with id \(projectID).") }
            return id
        }
    }

    public func formUpload(projectID: Int64, id: Int64) async throws -> FormUpload? {
        let client = client
        return try await perform {
            for try await (fileName, definition, by, at) in try await client.query("""
                SELECT file_name, definition, uploaded_by, uploaded_at FROM form_uploads WHERE project_id = \(projectID) AND id = \(id)
                """).decode((String, String, Int64, Double).self) {
                return FormUpload(id: id, projectID: projectID, fileName: fileName, definition: definition, uploadedBy: by, uploadedAt: Date(timeIntervalSince1970: at))
            }
            return nil
        }
    }
}
