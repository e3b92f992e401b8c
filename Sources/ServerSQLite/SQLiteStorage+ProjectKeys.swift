import Foundation
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    public func addProjectKey(projectID: Int64, key: ProjectPublicKey, createdAt: Date) async throws {
        try await write { db in
            if try Bool.fetchOne(db, sql: "SELECT 1 FROM project_keys WHERE project_id = ? AND key_id = ?", arguments: [projectID, key.id]) == true {
                throw StorageError(.versionTaken, "The project already has a key with the id \(key.id).")
            }
            try db.execute(
                sql: "INSERT INTO project_keys (project_id, key_id, public_key, created_at) VALUES (?, ?, ?, ?)",
                arguments: [projectID, key.id, key.publicKey, createdAt.timeIntervalSince1970])
        }
    }

    public func projectKeys(projectID: Int64) async throws -> [StoredProjectKey] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT key_id, public_key, created_at FROM project_keys WHERE project_id = ? ORDER BY created_at, rowid", arguments: [projectID])
                .map { StoredProjectKey(key: ProjectPublicKey(id: $0[0], publicKey: $0[1]), createdAt: Date(timeIntervalSince1970: $0[2])) }
        }
    }
}
