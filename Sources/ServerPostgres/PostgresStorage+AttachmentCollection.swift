import Foundation
import Logging
import PostgresNIO
import ServerStorage

/// Garbage collection of the attachments stored in the database (the rule: ``AttachmentCollectionPolicy``).
/// Several instances may sweep at once: each removal is one transaction that takes the project's sweep lock
/// alone (pushes writing attachment references take it shared) and the upload's row, and checks everything
/// again under them, so a second sweep finds nothing left to remove and a push never loses a reference.
extension PostgresStorage {
    /// The advisory lock between a project's sweeps (taken alone) and its pushes that write attachment
    /// references (taken shared).
    static func attachmentSweepLockKey(_ projectID: Int64) -> Int64 { lockKey("\(projectID)/attachment-sweep") }

    /// Whether nothing keeps the attachment of `u` (an `attachment_uploads` row): no record's current value and
    /// no conflict-log entry.
    static let unreferencedSQL = """
        NOT EXISTS (SELECT 1 FROM attachment_refs a WHERE a.project_id = u.project_id AND a.sha256 = u.sha256)
        AND NOT EXISTS (SELECT 1 FROM conflict_attachment_refs c WHERE c.project_id = u.project_id AND c.sha256 = u.sha256)
        """

    public func sweepAttachments(policy: AttachmentCollectionPolicy, now: Date, dryRun: Bool) async throws -> AttachmentSweep {
        var sweep = AttachmentSweep(dryRun: dryRun)
        let nowSeconds = now.timeIntervalSince1970
        let client = client
        // 1. Forget what is referenced again (or gone); note when each unreferenced complete attachment was
        //    first found so.
        if !dryRun {
            _ = try await transaction { connection in
                try await connection.query("""
                    DELETE FROM attachment_unreferenced m WHERE NOT EXISTS (
                        SELECT 1 FROM attachment_uploads u WHERE u.project_id = m.project_id AND u.sha256 = m.sha256 AND u.complete AND \(unescaped: Self.unreferencedSQL))
                    """, logger: .quiet)
                try await connection.query("""
                    INSERT INTO attachment_unreferenced (project_id, sha256, since)
                    SELECT u.project_id, u.sha256, \(nowSeconds) FROM attachment_uploads u WHERE u.complete AND \(unescaped: Self.unreferencedSQL)
                    ON CONFLICT DO NOTHING
                    """, logger: .quiet)
            }
        }
        // 2. The unreferenced complete attachments, with when they were stored and first found unreferenced.
        let unreferenced = try await perform {
            var rows: [(key: AttachmentKey, bytes: Int64, stored: Double, since: Double?)] = []
            for try await (project, sha256, bytes, stored, since) in try await client.query("""
                SELECT u.project_id, u.sha256, u.total, u.updated_at, m.since FROM attachment_uploads u
                LEFT JOIN attachment_unreferenced m ON m.project_id = u.project_id AND m.sha256 = u.sha256
                WHERE u.complete AND \(unescaped: Self.unreferencedSQL) ORDER BY u.project_id, u.sha256
                """, logger: .quiet).decode((Int64, String, Int64, Double, Double?).self) {
                rows.append((AttachmentKey(projectID: project, sha256: sha256), bytes, stored, since))
            }
            return rows
        }
        var candidates: [(key: AttachmentKey, bytes: Int64)] = []
        for row in unreferenced {
            if policy.collects(storedAt: Date(timeIntervalSince1970: row.stored), unreferencedSince: Date(timeIntervalSince1970: row.since ?? nowSeconds), now: now) {
                candidates.append((row.key, row.bytes))
            } else {
                sweep.waiting += 1
                sweep.waitingBytes += row.bytes
            }
        }
        // 3. Remove each under the project's sweep lock and the upload's row lock, checking again: still
        //    complete, unreferenced, past its grace period, and read by no download.
        let cutoff = nowSeconds - policy.unreferencedAge
        for candidate in candidates {
            if dryRun {
                sweep.collected.append(CollectedAttachment(key: candidate.key, reason: .unreferenced, bytes: candidate.bytes))
                continue
            }
            let key = candidate.key
            let leaseCheck = Date().timeIntervalSince1970
            let removed: Int64? = try await transaction { connection in
                _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.attachmentSweepLockKey(key.projectID)))", logger: .quiet).collect()
                var bytes: Int64?
                for try await total in try await connection.query("""
                    SELECT u.total FROM attachment_uploads u
                    JOIN attachment_unreferenced m ON m.project_id = u.project_id AND m.sha256 = u.sha256
                    WHERE u.project_id = \(key.projectID) AND u.sha256 = \(key.sha256) AND u.complete AND u.read_until < \(leaseCheck)
                      AND u.updated_at <= \(cutoff) AND m.since <= \(cutoff) AND \(unescaped: Self.unreferencedSQL)
                    FOR UPDATE OF u
                    """, logger: .quiet).decode(Int64.self) { bytes = total }
                guard let bytes else { return nil }
                try await connection.query("DELETE FROM attachments WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256)", logger: .quiet)
                try await connection.query("DELETE FROM attachment_unreferenced WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256)", logger: .quiet)
                try await connection.query("DELETE FROM attachment_holders WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256)", logger: .quiet)
                // Its chunks go with it (ON DELETE CASCADE); members' uploads of the same hash in progress stay.
                try await connection.query("DELETE FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND complete", logger: .quiet)
                return bytes
            }
            if let removed { sweep.collected.append(CollectedAttachment(key: key, reason: .unreferenced, bytes: removed)) }
        }
        // 4. Uploads nobody appended to for their grace period. The row's last append is checked again by the
        //    DELETE itself, after any chunk being committed now (which moves it) has committed.
        let uploadCutoff = nowSeconds - policy.abandonedUploadAge
        let abandoned = try await perform {
            var rows: [(key: AttachmentKey, uploader: Int64, bytes: Int64)] = []
            for try await (project, sha256, uploader, received) in try await client.query("""
                SELECT project_id, sha256, uploader_id, received FROM attachment_uploads WHERE NOT complete AND updated_at <= \(uploadCutoff)
                ORDER BY project_id, sha256, uploader_id
                """, logger: .quiet).decode((Int64, String, Int64, Int64).self) {
                rows.append((AttachmentKey(projectID: project, sha256: sha256), uploader, received))
            }
            return rows
        }
        for upload in abandoned {
            if dryRun {
                sweep.collected.append(CollectedAttachment(key: upload.key, reason: .abandonedUpload, bytes: upload.bytes))
                continue
            }
            let key = upload.key
            let uploader = upload.uploader
            let removed: Int64? = try await transaction { connection in
                for try await received in try await connection.query("""
                    DELETE FROM attachment_uploads
                    WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader) AND NOT complete AND updated_at <= \(uploadCutoff)
                    RETURNING received
                    """, logger: .quiet).decode(Int64.self) {
                    return received
                }
                return nil
            }
            if let removed { sweep.collected.append(CollectedAttachment(key: key, reason: .abandonedUpload, bytes: removed)) }
        }
        sweep.sort()
        return sweep
    }
}
