import Foundation
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    public func addProjectKey(projectID: Int64, key: ProjectPublicKey, createdAt: Date) async throws {
        try await transaction { connection in
            let rows = try await connection.query("""
                INSERT INTO project_keys (project_id, key_id, public_key, created_at)
                VALUES (\(projectID), \(key.id), \(key.publicKey), \(createdAt.timeIntervalSince1970))
                ON CONFLICT (project_id, key_id) DO NOTHING RETURNING key_id
                """, logger: .quiet)
            guard try await rows.collect().first != nil else {
                throw StorageError(.versionTaken, "The project already has a key with the id \(key.id).")
            }
        }
    }

    public func projectKeys(projectID: Int64) async throws -> [StoredProjectKey] {
        let client = client
        return try await perform {
            var keys: [StoredProjectKey] = []
            for try await (id, publicKey, created) in try await client.query("""
                SELECT key_id, public_key, created_at FROM project_keys WHERE project_id = \(projectID) ORDER BY created_at, key_id
                """).decode((String, String, Double).self) {
                keys.append(StoredProjectKey(key: ProjectPublicKey(id: id, publicKey: publicKey), createdAt: Date(timeIntervalSince1970: created)))
            }
            return keys
        }
    }
}
