import Foundation
import GRDB
import ServerStorage

/// Garbage collection of the attachment files (the rule: ``AttachmentCollectionPolicy``).
extension SQLiteStorage {
    /// Whether anything keeps the attachment `?1`/`?2` (project, hash): a record's current value or a
    /// conflict-log entry.
    static let referencedSQL = """
        SELECT EXISTS (SELECT 1 FROM attachment_refs WHERE project_id = ?1 AND sha256 = ?2)
            OR EXISTS (SELECT 1 FROM conflict_attachment_refs WHERE project_id = ?1 AND sha256 = ?2)
        """
    /// Complete files removed per write transaction.
    static let sweepBatch = 64

    public func sweepAttachments(policy: AttachmentCollectionPolicy, now: Date, dryRun: Bool) async throws -> AttachmentSweep {
        var sweep = AttachmentSweep(dryRun: dryRun)
        let inventory = files.inventory()
        let complete = inventory.filter(\.complete)
        // 1. Which complete files nothing references now, and since when a sweep knows it.
        let (unreferenced, marks) = try await pool.read { db in
            let referenced = try db.cachedStatement(sql: Self.referencedSQL)
            let unreferenced = try complete.filter { try !(Bool.fetchOne(referenced, arguments: [$0.key.projectID, $0.key.sha256]) ?? false) }
            var marks: [AttachmentKey: Date] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT project_id, sha256, since FROM attachment_unreferenced") {
                marks[AttachmentKey(projectID: row[0], sha256: row[1])] = Date(timeIntervalSince1970: row[2])
            }
            return (unreferenced, marks)
        }
        // 2. Note the newly unreferenced; forget those referenced again (or gone).
        if !dryRun {
            let unreferencedKeys = Set(unreferenced.map(\.key))
            try await write { db in
                let forget = try db.cachedStatement(sql: "DELETE FROM attachment_unreferenced WHERE project_id = ? AND sha256 = ?")
                for key in marks.keys where !unreferencedKeys.contains(key) {
                    try forget.execute(arguments: [key.projectID, key.sha256])
                }
                let note = try db.cachedStatement(sql: "INSERT OR IGNORE INTO attachment_unreferenced (project_id, sha256, since) VALUES (?, ?, ?)")
                for file in unreferenced where marks[file.key] == nil {
                    try note.execute(arguments: [file.key.projectID, file.key.sha256, now.timeIntervalSince1970])
                }
            }
        }
        // 3. Remove those past their grace period, checking again under the writer's lock, which pushes
        //    hold to write references.
        var candidates: [FileAttachmentStore.StoredFile] = []
        for file in unreferenced {
            if policy.collects(storedAt: file.modified, unreferencedSince: marks[file.key] ?? now, now: now) {
                candidates.append(file)
            } else {
                sweep.waiting += 1
                sweep.waitingBytes += file.bytes
            }
        }
        if dryRun {
            sweep.collected += candidates.map { CollectedAttachment(key: $0.key, reason: .unreferenced, bytes: $0.bytes) }
        } else {
            let cutoff = now.addingTimeInterval(-policy.unreferencedAge).timeIntervalSince1970
            let files = files
            for start in stride(from: 0, to: candidates.count, by: Self.sweepBatch) {
                let batch = candidates[start..<min(candidates.count, start + Self.sweepBatch)]
                sweep.collected += try await pool.writeWithoutTransaction { db in
                    var removed: [CollectedAttachment] = []
                    try db.inTransaction(.immediate) {
                        let referenced = try db.cachedStatement(sql: Self.referencedSQL)
                        for file in batch {
                            guard try !(Bool.fetchOne(referenced, arguments: [file.key.projectID, file.key.sha256]) ?? false),
                                  let since = try Double.fetchOne(db, sql: "SELECT since FROM attachment_unreferenced WHERE project_id = ? AND sha256 = ?", arguments: [file.key.projectID, file.key.sha256]),
                                  since <= cutoff
                            else { continue }
                            try db.execute(sql: "DELETE FROM attachments WHERE project_id = ? AND sha256 = ?", arguments: [file.key.projectID, file.key.sha256])
                            try db.execute(sql: "DELETE FROM attachment_unreferenced WHERE project_id = ? AND sha256 = ?", arguments: [file.key.projectID, file.key.sha256])
                            try db.execute(sql: "DELETE FROM attachment_holders WHERE project_id = ? AND sha256 = ?", arguments: [file.key.projectID, file.key.sha256])
                            // Unlinked before the commit, still holding the writer: a HEAD's note that the
                            // attachment is stored (taken under the writer too) cannot slip in between.
                            if let bytes = try files.removeComplete(file.key) {
                                removed.append(CollectedAttachment(key: file.key, reason: .unreferenced, bytes: bytes))
                            }
                        }
                        return .commit
                    }
                    return removed
                }
            }
        }
        // 4. Uploads nobody appended to for their grace period, unless one holds the file now.
        let uploadCutoff = now.addingTimeInterval(-policy.abandonedUploadAge)
        for file in inventory where !file.complete && policy.collectsUpload(lastAppend: file.modified, now: now) {
            if dryRun {
                sweep.collected.append(CollectedAttachment(key: file.key, reason: .abandonedUpload, bytes: file.bytes))
            } else if let bytes = try files.removeAbandonedPartial(file, lastAppendBefore: uploadCutoff) {
                sweep.collected.append(CollectedAttachment(key: file.key, reason: .abandonedUpload, bytes: bytes))
            }
        }
        sweep.sort()
        return sweep
    }
}
