import Foundation
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    public func attachmentStored(_ key: AttachmentKey, bytes: Int64, holder: Int64, mediaType: String) async throws -> Int64? {
        let files = files
        let last: Int64? = try await write { db in
            // Inside the writer: a sweep removes a file only while holding it too.
            guard files.holdsComplete(key) else { return nil }
            try db.execute(
                sql: "INSERT INTO attachments (project_id, sha256, bytes, stored_at, stored_by, media_type) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                arguments: [key.projectID, key.sha256, bytes, Date().timeIntervalSince1970, holder, mediaType])
            return try Self.addHolder(db, key, userID: holder)
        }
        if let last { changes.notify(projectID: key.projectID, lastSequence: last) }
        return last
    }

    /// Notes that `userId` holds the stored attachment; the first time, every record whose reference to it they
    /// put there gets a new sequence (its `missingAttachments` no longer lists it). Returns the project's last
    /// sequence then, nil otherwise.
    static func addHolder(_ db: Database, _ key: AttachmentKey, userID: Int64) throws -> Int64? {
        try db.execute(sql: """
            INSERT OR IGNORE INTO attachment_holders (project_id, sha256, user_id)
            SELECT project_id, sha256, ? FROM attachments WHERE project_id = ? AND sha256 = ?
            """, arguments: [userID, key.projectID, key.sha256])
        guard db.changesCount > 0 else { return nil }
        return try resequence(db, projectID: key.projectID, sql: """
            SELECT DISTINCT record_id FROM attachment_refs WHERE project_id = ? AND sha256 = ? AND added_by = ?
            """, arguments: [key.projectID, key.sha256, userID])
    }

    /// Gives each record whose id the query returns a new sequence, in the writing transaction; returns the
    /// project's last sequence, nil when there was none.
    static func resequence(_ db: Database, projectID: Int64, sql: String, arguments: StatementArguments) throws -> Int64? {
        let ids = try String.fetchAll(db, sql: sql, arguments: arguments)
        guard !ids.isEmpty else { return nil }
        let count = Int64(ids.count)
        guard let last = try Int64.fetchOne(
            db, sql: "UPDATE projects SET last_sequence = last_sequence + ? WHERE id = ? RETURNING last_sequence",
            arguments: [count, projectID]) else { return nil }
        var sequence = last - count + 1
        let update = try db.cachedStatement(sql: "UPDATE records SET sequence = ? WHERE project_id = ? AND id = ?")
        for id in ids {
            try update.execute(arguments: [sequence, projectID, id])
            sequence += 1
        }
        return last
    }

    public func isAttachmentStored(_ key: AttachmentKey) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM attachments WHERE project_id = ? AND sha256 = ?", arguments: [key.projectID, key.sha256]) ?? false
        }
    }

    public func storedAttachment(_ key: AttachmentKey, userID: Int64) async throws -> StoredAttachment? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: """
                SELECT s.bytes, s.media_type, EXISTS (SELECT 1 FROM attachment_holders h WHERE h.project_id = s.project_id AND h.sha256 = s.sha256 AND h.user_id = ?) AS held
                FROM attachments s WHERE s.project_id = ? AND s.sha256 = ?
                """, arguments: [userID, key.projectID, key.sha256]).map { row in
                StoredAttachment(bytes: row["bytes"], mediaType: row["media_type"], held: row["held"])
            }
        }
    }

    public func addAttachmentHolder(_ key: AttachmentKey, userID: Int64) async throws {
        if let last = try await write({ db in try Self.addHolder(db, key, userID: userID) }) {
            changes.notify(projectID: key.projectID, lastSequence: last)
        }
    }

    public func storedAttachmentBytes(projectID: Int64, storedBy: Int64?) async throws -> Int64 {
        try await pool.read { db in
            if let storedBy {
                return try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM attachments WHERE project_id = ? AND stored_by = ?", arguments: [projectID, storedBy]) ?? 0
            }
            return try Int64.fetchOne(db, sql: "SELECT COALESCE(SUM(bytes), 0) FROM attachments WHERE project_id = ?", arguments: [projectID]) ?? 0
        }
    }

    public func attachmentUses(_ key: AttachmentKey) async throws -> [AttachmentUse] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.record_id, a.field_id, a.type, a.name, r.author_id, r.shared, a.added_by,
                    EXISTS (SELECT 1 FROM attachment_holders h WHERE h.project_id = a.project_id AND h.sha256 = a.sha256 AND h.user_id = a.added_by) AS grants
                FROM attachment_refs a JOIN records r ON r.project_id = a.project_id AND r.id = a.record_id
                WHERE a.project_id = ? AND a.sha256 = ? ORDER BY a.record_id, a.field_id
                """, arguments: [key.projectID, key.sha256]).compactMap { row in
                guard let id = UUID(text: row["record_id"]) else { return nil }
                return AttachmentUse(
                    recordID: id, fieldID: row["field_id"], authorID: row["author_id"], shared: row["shared"], type: row["type"], name: row["name"],
                    addedBy: row["added_by"], grants: row["grants"])
            }
        }
    }

    public func attachments(projectID: Int64, recordID: UUID) async throws -> [RecordAttachment] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT a.field_id, a.sha256, a.bytes, a.type, a.name, h.sha256 IS NOT NULL AS stored
                FROM attachment_refs a
                LEFT JOIN attachment_holders h ON h.project_id = a.project_id AND h.sha256 = a.sha256 AND h.user_id = a.added_by
                WHERE a.project_id = ? AND a.record_id = ? ORDER BY a.field_id
                """, arguments: [projectID, recordID.lowercased]).map { row in
                RecordAttachment(fieldID: row["field_id"], sha256: row["sha256"], bytes: row["bytes"], type: row["type"], name: row["name"], stored: row["stored"])
            }
        }
    }
}

extension SQLiteStorage {
    /// Replaces the attachment references of each record with those its values hold now (in the push's
    /// transaction, so the index never disagrees with a committed record), each noting who put it there
    /// (``StoredRecord/attachmentAdders(previous:history:)``).
    static func writeAttachmentReferences(_ db: Database, projectID: Int64, _ records: [StoredRecord], history: [HistoryEntry]) throws {
        let clear = try db.cachedStatement(sql: "DELETE FROM attachment_refs WHERE project_id = ? AND record_id = ? RETURNING field_id, sha256, added_by")
        let insert = try db.cachedStatement(sql: """
            INSERT INTO attachment_refs (project_id, record_id, field_id, sha256, bytes, type, name, added_by) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        for record in records {
            let id = record.id.lowercased
            var previous: [String: (sha256: String, addedBy: Int64)] = [:]
            // A record written at revision 1 is stored for the first time: it has no references yet (they are
            // written only here, with their record), so the writer spares it a statement.
            if record.revision > 1 {
                for row in try Row.fetchAll(clear, arguments: [projectID, id]) { previous[row[0]] = (row[1], row[2]) }
            }
            let references = record.attachmentReferences
            guard !references.isEmpty else { continue }
            let adders = record.attachmentAdders(of: references, previous: previous, history: history)
            for (fieldID, reference) in references {
                try insert.execute(arguments: [
                    projectID, id, fieldID, reference.sha256, reference.bytes, reference.type, reference.name, adders[fieldID] ?? record.authorID,
                ])
            }
        }
    }
}
