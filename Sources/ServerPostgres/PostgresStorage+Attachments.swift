import Foundation
import Logging
import PostgresNIO
import FormModel
import ServerStorage
import SyncCore

extension PostgresStorage {
    /// Attachment bytes in the database itself (see ``PostgresAttachmentStore``).
    public var attachments: any AttachmentStore { PostgresAttachmentStore(storage: self) }

    public func attachmentStored(_ key: AttachmentKey, bytes: Int64, holder: Int64, mediaType: String) async throws -> Int64? {
        try await transaction { connection in
            // The upload's row, locked against a sweep removing it: once that committed, this finds no row.
            let held = try await connection.query("""
                SELECT 1 FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND complete FOR SHARE
                """, logger: .quiet).collect()
            guard !held.isEmpty else { return nil }
            try await connection.query("""
                INSERT INTO attachments (project_id, sha256, bytes, stored_at, stored_by, media_type)
                VALUES (\(key.projectID), \(key.sha256), \(bytes), \(Date().timeIntervalSince1970), \(holder), \(mediaType))
                ON CONFLICT DO NOTHING
                """, logger: .quiet)
            return try await Self.addHolder(connection, key, userID: holder)
        }
    }

    /// Notes that `userId` holds the stored attachment; the first time, every record whose reference to it they
    /// put there gets a new sequence (its `missingAttachments` no longer lists it). Returns the project's last
    /// sequence then, nil otherwise.
    static func addHolder(_ connection: PostgresConnection, _ key: AttachmentKey, userID: Int64) async throws -> Int64? {
        let added = try await connection.query("""
            INSERT INTO attachment_holders (project_id, sha256, user_id)
            SELECT project_id, sha256, \(userID) FROM attachments WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256)
            ON CONFLICT DO NOTHING RETURNING 1
            """, logger: .quiet).collect()
        guard !added.isEmpty else { return nil }
        var ids: [UUID] = []
        for try await id in try await connection.query("""
            SELECT DISTINCT record_id FROM attachment_refs WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND added_by = \(userID)
            ORDER BY record_id
            """, logger: .quiet).decode(UUID.self) { ids.append(id) }
        guard !ids.isEmpty else { return nil }
        let count = Int64(ids.count)
        // The serialized commit step, as in push: the counter row's lock is held until COMMIT.
        let rows = try await connection.query(
            "UPDATE projects SET last_sequence = last_sequence + \(count) WHERE id = \(key.projectID) RETURNING last_sequence",
            logger: .quiet).collect()
        guard let last = try rows.first?.decode(Int64.self) else { return nil }
        try await connection.query("""
            UPDATE records r SET sequence = n.sequence FROM unnest(\(ids)::uuid[], \(ids.indices.map { last - count + 1 + Int64($0) })::int8[]) AS n (id, sequence)
            WHERE r.project_id = \(key.projectID) AND r.id = n.id
            """, logger: .quiet)
        try await Self.announceChanges(connection, projectID: key.projectID, lastSequence: last)
        return last
    }

    public func isAttachmentStored(_ key: AttachmentKey) async throws -> Bool {
        let client = client
        return try await perform {
            try await !client.query("SELECT 1 FROM attachments WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256)").collect().isEmpty
        }
    }

    public func storedAttachment(_ key: AttachmentKey, userID: Int64) async throws -> StoredAttachment? {
        let client = client
        return try await perform {
            for try await (bytes, mediaType, held) in try await client.query("""
                SELECT s.bytes, s.media_type,
                    EXISTS (SELECT 1 FROM attachment_holders h WHERE h.project_id = s.project_id AND h.sha256 = s.sha256 AND h.user_id = \(userID))
                FROM attachments s WHERE s.project_id = \(key.projectID) AND s.sha256 = \(key.sha256)
                """).decode((Int64, String?, Bool).self) {
                return StoredAttachment(bytes: bytes, mediaType: mediaType, held: held)
            }
            return nil
        }
    }

    public func addAttachmentHolder(_ key: AttachmentKey, userID: Int64) async throws {
        _ = try await transaction { connection in try await Self.addHolder(connection, key, userID: userID) }
    }

    public func storedAttachmentBytes(projectID: Int64, storedBy: Int64?) async throws -> Int64 {
        let client = client
        return try await perform {
            let rows = if let storedBy {
                try await client.query("SELECT COALESCE(SUM(bytes), 0)::bigint FROM attachments WHERE project_id = \(projectID) AND stored_by = \(storedBy)")
            } else {
                try await client.query("SELECT COALESCE(SUM(bytes), 0)::bigint FROM attachments WHERE project_id = \(projectID)")
            }
            for try await sum in rows.decode(Int64.self) { return sum }
            return 0
        }
    }

    public func attachmentUses(_ key: AttachmentKey) async throws -> [AttachmentUse] {
        let client = client
        return try await perform {
            var uses: [AttachmentUse] = []
            for try await (id, field, type, name, author, shared, addedBy, grants) in try await client.query("""
                SELECT a.record_id, a.field_id, a.type, a.name, r.author_id, r.shared, a.added_by,
                    EXISTS (SELECT 1 FROM attachment_holders h WHERE h.project_id = a.project_id AND h.sha256 = a.sha256 AND h.user_id = a.added_by)
                FROM attachment_refs a JOIN records r ON r.project_id = a.project_id AND r.id = a.record_id
                WHERE a.project_id = \(key.projectID) AND a.sha256 = \(key.sha256) ORDER BY a.record_id, a.field_id
                """).decode((UUID, String, String, String, Int64, Bool, Int64, Bool).self) {
                uses.append(AttachmentUse(recordID: id, fieldID: field, authorID: author, shared: shared, type: type, name: name, addedBy: addedBy, grants: grants))
            }
            return uses
        }
    }

    public func attachments(projectID: Int64, recordID: UUID) async throws -> [RecordAttachment] {
        let client = client
        return try await perform {
            var result: [RecordAttachment] = []
            for try await (field, sha, bytes, type, name, stored) in try await client.query("""
                SELECT a.field_id, a.sha256, a.bytes, a.type, a.name, h.sha256 IS NOT NULL
                FROM attachment_refs a
                LEFT JOIN attachment_holders h ON h.project_id = a.project_id AND h.sha256 = a.sha256 AND h.user_id = a.added_by
                WHERE a.project_id = \(projectID) AND a.record_id = \(recordID) ORDER BY a.field_id
                """).decode((String, String, Int64, String, String, Bool).self) {
                result.append(RecordAttachment(fieldID: field, sha256: sha, bytes: bytes, type: type, name: name, stored: stored))
            }
            return result
        }
    }
}

extension PostgresStorage {
    /// Replaces the attachment references of each record with those its values hold now (in the push's
    /// transaction, so the index never disagrees with a committed record), each noting who put it there
    /// (``StoredRecord/attachmentAdders(previous:history:)``).
    static func writeAttachmentReferences(_ connection: PostgresConnection, projectID: Int64, _ records: [StoredRecord], history: [HistoryEntry]) async throws {
        var previous: [UUID: [String: (sha256: String, addedBy: Int64)]] = [:]
        for try await (recordID, fieldID, sha256, addedBy) in try await connection.query("""
            DELETE FROM attachment_refs WHERE project_id = \(projectID) AND record_id = ANY(\(records.map(\.id))::uuid[])
            RETURNING record_id, field_id, sha256, added_by
            """, logger: .quiet).decode((UUID, String, String, Int64).self) {
            previous[recordID, default: [:]][fieldID] = (sha256, addedBy)
        }
        let rows = records.flatMap { record in
            let references = record.attachmentReferences
            let adders = record.attachmentAdders(of: references, previous: previous[record.id] ?? [:], history: history)
            return references.map { (record.id, $0.fieldID, $0.reference, adders[$0.fieldID] ?? record.authorID) }
        }
        guard !rows.isEmpty else { return }
        try await connection.query("""
            INSERT INTO attachment_refs (project_id, record_id, field_id, sha256, bytes, type, name, added_by)
            SELECT \(projectID), * FROM unnest(
                \(rows.map(\.0))::uuid[], \(rows.map(\.1))::text[], \(rows.map(\.2.sha256))::text[], \(rows.map(\.2.bytes))::int8[],
                \(rows.map(\.2.type))::text[], \(rows.map(\.2.name))::text[], \(rows.map(\.3))::int8[])
            """, logger: .quiet)
    }
}
