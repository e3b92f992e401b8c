import Foundation
import GRDB

/// An attachment the sync engine has to move: its hash, size, type and how often it failed in a row.
package struct BlobTransfer: Sendable, Hashable {
    package var sha256: String
    package var bytes: Int64
    package var type: String
    package var failures: Int

    package init(sha256: String, bytes: Int64, type: String, failures: Int) {
        self.sha256 = sha256
        self.bytes = bytes
        self.type = type
        self.failures = failures
    }
}

extension DraftStore {
    // MARK: - Uploads

    /// Attachments attached here that the server may lack and that are not backing off, oldest first.
    package func uploadsDue(now: Date = Date()) async throws -> [BlobTransfer] {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        return try await read(doing: "listing attachments to upload") { db in
            try Row.fetchAll(db, sql: """
                SELECT sha256, bytes, type, failures FROM blobs
                WHERE upload = 'waiting' AND (retry_at IS NULL OR retry_at <= ?) ORDER BY added_at, sha256
                """, arguments: [millis]).map { BlobTransfer(sha256: $0["sha256"], bytes: $0["bytes"], type: $0["type"], failures: $0["failures"]) }
        }
    }

    /// The bytes `range` of the stored attachment `sha256`, read from its file.
    package func attachmentBytes(_ sha256: String, _ range: ClosedRange<Int64>) throws -> Data {
        try blobDirectory.bytes(sha256, range)
    }

    /// Records how many bytes of `sha256` the server holds.
    package func noteUploadProgress(_ sha256: String, serverHolds: Int64) async throws {
        try await write(doing: "recording the upload of attachment \(sha256)") { db in
            try db.execute(sql: "UPDATE blobs SET transferred = ? WHERE sha256 = ?", arguments: [serverHolds, sha256])
        }
    }

    /// Records that the server holds all of `sha256`, verified: nothing more to send.
    package func noteUploaded(_ sha256: String) async throws {
        try await write(doing: "recording the upload of attachment \(sha256)") { db in
            try db.execute(sql: """
                UPDATE blobs SET upload = 'done', transferred = bytes, failures = 0, retry_at = NULL, last_error = NULL
                WHERE sha256 = ?
                """, arguments: [sha256])
        }
    }

    /// Records a failed transfer of `sha256`: why, and not before when it is tried again.
    package func noteTransferFailed(_ transfer: BlobTransfer, message: String, retryAt: Date) async throws {
        try await write(doing: "recording a failed transfer of attachment \(transfer.sha256)") { db in
            try db.execute(sql: """
                INSERT INTO blobs (sha256, bytes, type, failures, retry_at, last_error, added_at) VALUES (?, ?, ?, 1, ?, ?, ?)
                ON CONFLICT (sha256) DO UPDATE SET failures = blobs.failures + 1, retry_at = excluded.retry_at, last_error = excluded.last_error
                """, arguments: [transfer.sha256, transfer.bytes, transfer.type, Int64(retryAt.timeIntervalSince1970 * 1000), message, Self.nowMillis()])
        }
    }

    // MARK: - Downloads

    /// Asks for the attachments `record` refers to that are not on this device: the next sync downloads
    /// them. Opening a record does this by itself. Returns how many are missing.
    @discardableResult
    public func requestDownloads(record: UUID) async throws -> Int {
        let key = record.lowercased
        return try await write(doing: "asking for the attachments of record \(key)") { db in
            try Self.requestDownloads(db, record: key)
        }
    }

    /// ``requestDownloads(record:)`` inside the caller's transaction. `stored`: the record's fields and unsent
    /// edits as the caller has just read them (``fetchStoredAnswers(_:record:)``, which opening a record does
    /// anyway), so they are not opened again: in an encrypted store a record of 5,000 repeat instances would
    /// have its 10,000 unsent edits decrypted twice.
    static func requestDownloads(_ db: Database, record: String, stored: StoredAnswers? = nil) throws -> Int {
        // What the record refers to: its synced values, its unsent edits (a conflict settled with the server's
        // photo is one) and its logged conflicts. Not the open presentations' snapshots, which copy the first two.
        // Every opening runs this, so values that name no attachment at all are passed over without parsing
        // them (a record of 200 repeat instances holds some 150 KB of fields, or 2,000 unsent edits).
        var arguments: StatementArguments = [record, nowMillis()]
        let opened: String
        let fieldsAndEdits: String
        if let stored {
            arguments += [stored.fields, stored.local]
            opened = ""
            fieldsAndEdits = """
                SELECT v.value FROM json_each(?3, '$.values') v WHERE instr(?3, '"attachment"') > 0 AND v.type = 'object'
                UNION ALL SELECT v.value FROM json_each(?4) v WHERE instr(?4, '"attachment"') > 0 AND v.type = 'object'
                """
        } else {
            opened = "opened (fields) AS MATERIALIZED (SELECT fs_open_fields(fields, 'record', id) FROM records WHERE id = ?1),"
            fieldsAndEdits = """
                SELECT v.value FROM opened r, json_each(r.fields, '$.values') v
                    WHERE instr(r.fields, '"attachment"') > 0 AND v.type = 'object'
                UNION ALL SELECT v FROM (SELECT fs_open(value, 'edit', record_id, key) AS v FROM record_edits WHERE record_id = ?1) WHERE instr(v, '"attachment"') > 0
                """
        }
        // One of two texts, each prepared once per connection: every opening of a record runs it.
        let missing = try String.fetchAll(db.cachedStatement(sql: """
            WITH \(opened)
            answers (value) AS (
                \(fieldsAndEdits)
                UNION ALL SELECT fs_open(local_value, 'conflict', record_id, field_id, 'local') FROM conflicts WHERE record_id = ?1
                UNION ALL SELECT fs_open(remote_value, 'conflict', record_id, field_id, 'remote') FROM conflicts WHERE record_id = ?1
            ),
            refs (sha256, bytes, type) AS (
                SELECT json_extract(value, '$.attachment.sha256'), json_extract(value, '$.attachment.bytes'), json_extract(value, '$.attachment.type')
                FROM answers WHERE json_type(value, '$.attachment') = 'object'
            )
            INSERT INTO blobs (sha256, bytes, type, download, added_at)
            SELECT sha256, max(bytes), max(type), 'wanted', ?2 FROM refs
            WHERE length(sha256) = 64 AND bytes >= 0 AND type IS NOT NULL GROUP BY sha256
            ON CONFLICT (sha256) DO UPDATE SET download = 'wanted' WHERE blobs.stored = 0
            RETURNING sha256
            """), arguments: arguments)
        // The rows written are exactly those of attachments not here, now wanted.
        return missing.count
    }

    /// Attachments to download now: those asked for, and with `ahead` every one a record refers to that
    /// is not here; not those backing off after failures.
    package func downloadsDue(ahead: Bool, now: Date = Date()) async throws -> [BlobTransfer] {
        let millis = Int64(now.timeIntervalSince1970 * 1000)
        return try await read(doing: "listing attachments to download") { db in
            let wanted = ahead ? "1" : "b.download = 'wanted'"
            return try Row.fetchAll(db, sql: """
                SELECT r.sha256, max(r.bytes) AS bytes, max(r.type) AS type, coalesce(max(b.failures), 0) AS failures
                FROM attachment_references r LEFT JOIN blobs b ON b.sha256 = r.sha256
                WHERE length(r.sha256) = 64 AND r.bytes >= 0 AND r.type IS NOT NULL
                    AND coalesce(b.stored, 0) = 0 AND (b.retry_at IS NULL OR b.retry_at <= ?) AND (\(wanted))
                GROUP BY r.sha256 ORDER BY r.sha256
                """, arguments: [millis]).map { BlobTransfer(sha256: $0["sha256"], bytes: $0["bytes"], type: $0["type"], failures: $0["failures"]) }
        }
    }

    /// Bytes of `sha256` downloaded so far (the partial file's size).
    package func partialDownloadSize(_ sha256: String) -> Int64 {
        blobDirectory.partialSize(sha256)
    }

    /// Writes downloaded bytes at `offset` of the partial file of `sha256`.
    package func writeDownloadedBytes(_ sha256: String, at offset: Int64, _ data: Data) throws {
        try blobDirectory.writePartial(sha256, at: offset, data)
    }

    /// Throws away a partial download (its bytes could not be trusted or resumed).
    package func discardPartialDownload(_ sha256: String) {
        unlink(blobDirectory.partial(sha256))
    }

    /// Checks a complete partial download against its hash; when it matches, it becomes the attachment's
    /// bytes (fsynced, renamed, directory fsynced) and the row says so. When it does not, the partial file
    /// is removed and false returned.
    package func finishDownload(_ transfer: BlobTransfer) async throws -> Bool {
        let directory = blobDirectory
        let partial = directory.partial(transfer.sha256)
        let (sha256, bytes) = try directory.finishPartial(transfer.sha256)
        guard sha256 == transfer.sha256, bytes == transfer.bytes else {
            unlink(partial)
            return false
        }
        try directory.syncFile(partial)
        do {
            try await pool.write { db in
                try directory.place(partial, as: transfer.sha256)
                try db.execute(sql: """
                    INSERT INTO blobs (sha256, bytes, type, stored, transferred, added_at) VALUES (?, ?, ?, 1, ?, ?)
                    ON CONFLICT (sha256) DO UPDATE SET stored = 1, download = 'none', transferred = excluded.transferred,
                        failures = 0, retry_at = NULL, last_error = NULL
                    """, arguments: [transfer.sha256, transfer.bytes, transfer.type, transfer.bytes, Self.nowMillis()])
            }
        } catch let error as BlobFileError {
            throw DraftStoreError(error.kind == .full ? .storageFull : .storageFailed, "Could not save the downloaded attachment \(transfer.sha256): \(error.message).")
        } catch {
            throw DraftStoreError.wrap(error, doing: "saving the downloaded attachment \(transfer.sha256)", path: path)
        }
        return true
    }
}
