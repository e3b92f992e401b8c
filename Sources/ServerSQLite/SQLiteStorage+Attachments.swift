import Foundation
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    public func attachmentStored(_ key: AttachmentKey, bytes: Int64) async throws -> Int64? {
        let files = files
        let last: Int64? = try await write { db in
            // Inside the writer: a sweep removes a file only while holding it too.
            guard files.holdsComplete(key) else { return nil }
            try db.execute(
                sql: "INSERT INTO attachments (project_id, sha256, bytes, stored_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [key.projectId, key.sha256, bytes, Date().timeIntervalSince1970])
            guard db.changesCount > 0 else { return nil }
            return try Self.resequence(db, projectId: key.projectId, sql: """
                SELECT DISTINCT record_id FROM attachment_refs WHERE project_id = ? AND sha256 = ?
                """, arguments: [key.projectId, key.sha256])
        }
        if let last { changes.notify(projectId: key.projectId, lastSequence: last) }
        return last
    }

    /// Gives each record whose id the query returns a new sequence, in the writing transaction; returns the
    /// project's last sequence, nil when there was none.
    static func resequence(_ db: Database, projectId: Int64, sql: String, arguments: StatementArguments) throws -> Int64? {
        let ids = try String.fetchAll(db, sql: sql, arguments: arguments)
        guard !ids.isEmpty else { return nil }
        let count = Int64(ids.count)
        guard let last = try Int64.fetchOne(
            db, sql: "UPDATE projects SET last_sequence = last_sequence + ? WHERE id = ? RETURNING last_sequence",
            arguments: [count, projectId]) else { return nil }
        var sequence = last - count + 1
        let update = try db.cachedStatement(sql: "UPDATE records SET sequence = ? WHERE project_id = ? AND id = ?")
        for id in ids {
            try update.execute(arguments: [sequence, projectId, id])
            sequence += 1
        }
        return last
    }

    public func isAttachmentStored(_ key: AttachmentKey) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM attachments WHERE project_id = ? AND sha256 = ?", arguments: [key.projectId, key.sha256]) ?? false
        }
    }

    public func storedAttachmentBytes(projectId: Int64) async throws -> Int64 {
        try await pool.read { db in
            try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM attachments WHERE project_id = ?", arguments: [projectId]) ?? 0
        }
    }

    public func attachmentUses(_ key: AttachmentKey) async throws -> [AttachmentUse] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.record_id, a.field_id, a.type, a.name, r.author_id, r.shared
                FROM attachment_refs a JOIN records r ON r.project_id = a.project_id AND r.id = a.record_id
                WHERE a.project_id = ? AND a.sha256 = ? ORDER BY a.record_id, a.field_id
                """, arguments: [key.projectId, key.sha256]).compactMap { row in
                guard let id = UUID(uuidString: row["record_id"]) else { return nil }
                return AttachmentUse(recordId: id, fieldId: row["field_id"], authorId: row["author_id"], shared: row["shared"], type: row["type"], name: row["name"])
            }
        }
    }

    public func attachments(projectId: Int64, recordId: UUID) async throws -> [RecordAttachment] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.field_id, a.sha256, a.bytes, a.type, a.name, s.sha256 IS NOT NULL AS stored
                FROM attachment_refs a LEFT JOIN attachments s ON s.project_id = a.project_id AND s.sha256 = a.sha256
                WHERE a.project_id = ? AND a.record_id = ? ORDER BY a.field_id
                """, arguments: [projectId, recordId.lowercased]).map { row in
                RecordAttachment(fieldId: row["field_id"], sha256: row["sha256"], bytes: row["bytes"], type: row["type"], name: row["name"], stored: row["stored"])
            }
        }
    }
}

extension SQLiteStorage {
    /// Replaces the attachment references of each record with those its values hold now (in the push's
    /// transaction, so the index never disagrees with a committed record).
    static func writeAttachmentReferences(_ db: Database, projectId: Int64, _ records: [StoredRecord]) throws {
        let clear = try db.cachedStatement(sql: "DELETE FROM attachment_refs WHERE project_id = ? AND record_id = ?")
        let insert = try db.cachedStatement(sql: """
            INSERT INTO attachment_refs (project_id, record_id, field_id, sha256, bytes, type, name) VALUES (?, ?, ?, ?, ?, ?, ?)
            """)
        for record in records {
            let id = record.id.lowercased
            try clear.execute(arguments: [projectId, id])
            for (fieldId, reference) in record.attachmentReferences {
                try insert.execute(arguments: [projectId, id, fieldId, reference.sha256, reference.bytes, reference.type, reference.name])
            }
        }
    }
}
