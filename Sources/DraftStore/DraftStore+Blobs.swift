import Foundation
import GRDB
import Synchronization

extension DraftStore {
    /// The path of the stored file of `sha256` on this device, or nil when its bytes are not here (yet). In an
    /// encrypted store (``isEncrypted``) the file is sealed with the device key: read the attachment with
    /// ``attachmentData(_:)``.
    public func attachmentFile(_ sha256: String) -> URL? {
        guard AttachmentHash.isValid(sha256), blobDirectory.contains(sha256) else { return nil }
        return URL(fileURLWithPath: blobDirectory.file(sha256))
    }

    /// The bytes of the attachment `sha256` (decrypted in an encrypted store), or nil when they are not here (yet).
    /// - Throws: `DraftStoreError` (`databaseDamaged`) when the stored file was altered or cut short.
    public func attachmentData(_ sha256: String) throws -> Data? {
        guard AttachmentHash.isValid(sha256), blobDirectory.contains(sha256) else { return nil }
        do {
            return try blobDirectory.contents(sha256)
        } catch let error as BlobFileError {
            throw DraftStoreError(.databaseDamaged, "The attachment \(sha256) cannot be read: \(error.message).")
        }
    }

    /// The stored state of the attachment `sha256`, or nil when this device has no row for it.
    public func blob(_ sha256: String) async throws -> StoredBlob? {
        try await read(doing: "reading attachment \(sha256)") { db in
            try Row.fetchOne(db, sql: "SELECT * FROM blobs WHERE sha256 = ?", arguments: [sha256]).map(Self.blob(from:))
        }
    }

    /// Attachments attached on this device that the server may still lack, and their bytes.
    public func waitingUploads() async throws -> WaitingUploads {
        try await read(doing: "counting attachments waiting to upload", Self.fetchWaitingUploads)
    }

    static func fetchWaitingUploads(_ db: Database) throws -> WaitingUploads {
        let row = try Row.fetchOne(db, sql: """
            SELECT count(*), coalesce(sum(max(bytes - transferred, 0)), 0) FROM blobs WHERE upload = 'waiting'
            """)
        return WaitingUploads(count: row?[0] ?? 0, bytes: row?[1] ?? 0)
    }

    static func blob(from row: Row) -> StoredBlob {
        StoredBlob(
            sha256: row["sha256"], bytes: row["bytes"], type: row["type"], isStored: row["stored"] as Int64 == 1,
            upload: StoredBlob.Upload(rawValue: row["upload"]) ?? .none, downloadWanted: row["download"] as String == "wanted",
            transferred: row["transferred"], failures: row["failures"],
            retryAt: (row["retry_at"] as Int64?).map(Self.date), lastError: row["last_error"])
    }

    // MARK: - Attaching

    /// What a stored attachment is: its hash and size as copied in.
    struct StoredBytes: Sendable {
        var sha256: String
        var bytes: Int64
    }

    /// Copies each file of `sources` into the blob directory (hashed and fsynced under a temporary name,
    /// without holding the database), then, in one transaction: places each under its hash (rename,
    /// directory fsync), records it as waiting to upload and attached by `presentation`, and runs `then`
    /// (the edits that refer to them). When anything fails, nothing is left: no file under a hash that was
    /// not there before, no row, no edit.
    func storeAttachments<T: Sendable>(
        from sources: [(path: String, type: String)], presentation: String?, doing: String, writer: BlobWriter = .system,
        then: @escaping @Sendable (Database, [StoredBytes]) throws -> T
    ) async throws -> T {
        let directory = blobDirectory
        var incoming: [BlobDirectory.Incoming] = []
        defer { for file in incoming { unlink(file.temporary) } }
        for source in sources {
            do {
                incoming.append(try directory.copyIn(source.path, write: writer))
            } catch let error as BlobFileError {
                throw Self.attachError(error, source: source.path, doing: doing, directory: directory.path)
            }
        }
        let files = incoming
        let types = sources.map(\.type)
        let placedHere = Mutex<[String]>([])
        do {
            let result = try await pool.write { db -> T in
                for (file, type) in zip(files, types) {
                    if try directory.place(file.temporary, as: file.sha256) {
                        placedHere.withLock { $0.append(file.sha256) }
                    }
                    try db.execute(sql: """
                        INSERT INTO blobs (sha256, bytes, type, stored, upload, attached_by, added_at)
                        VALUES (?, ?, ?, 1, 'waiting', ?, ?)
                        ON CONFLICT (sha256) DO UPDATE SET stored = 1, attached_by = excluded.attached_by,
                            download = 'none', upload = CASE WHEN blobs.upload = 'done' THEN 'done' ELSE 'waiting' END
                        """, arguments: [file.sha256, file.bytes, type, presentation, Self.nowMillis()])
                }
                return try then(db, files.map { StoredBytes(sha256: $0.sha256, bytes: $0.bytes) })
            }
            checkpointer.noteCommit()
            return result
        } catch {
            // The transaction rolled back: names this attach created refer to nothing.
            for sha256 in placedHere.withLock({ $0 }) { directory.remove(sha256) }
            if let error = error as? BlobFileError {
                throw Self.attachError(error, source: sources.map(\.path).joined(separator: ", "), doing: doing, directory: directory.path)
            }
            throw DraftStoreError.wrap(error, doing: doing, path: path)
        }
    }

    static func attachError(_ error: BlobFileError, source: String, doing: String, directory: String) -> DraftStoreError {
        switch error.kind {
        case .full:
            return DraftStoreError(.storageFull,
                "Could not finish \(doing): the disk holding \(directory) is full (\(error.message)). Nothing was attached and everything saved before is intact; free some space and try again.")
        case .missing:
            return DraftStoreError(.attachmentUnreadable, "There is no file \(source) (while \(doing)). Give the path of an existing file; nothing was attached.")
        case .notAFile:
            return DraftStoreError(.attachmentUnreadable, "Could not finish \(doing): \(error.message)")
        case .denied:
            return DraftStoreError(.attachmentUnreadable, "Could not finish \(doing): \(error.message). Check the permissions of \(source) and of \(directory).")
        case .other:
            return DraftStoreError(.storageFailed, "Could not finish \(doing): \(error.message). Nothing was attached; try again.")
        }
    }

    // MARK: - Garbage collection

    /// Removes the bytes of attachments nothing on this device refers to any more (no record's synced
    /// fields or unsent edits, no open presentation's snapshot, no logged conflict) and that no open
    /// presentation attached; also partial downloads of such attachments and temporary files an attach
    /// left behind when its process died more than an hour ago. Runs after each sync; safe at any time,
    /// from any process: it holds the database's write lock while it removes files, as attaching does
    /// while it places them.
    @discardableResult
    public func collectGarbage() async throws -> BlobCollection {
        let directory = blobDirectory
        return try await write(doing: "removing attachments nothing refers to") { db in
            try Self.collectGarbage(db, directory: directory, only: nil)
        }
    }

    /// Garbage collection inside the caller's transaction; `only` limits it to the blobs a presentation attached.
    static func collectGarbage(_ db: Database, directory: BlobDirectory, only presentation: String?) throws -> BlobCollection {
        let unreferenced = """
            sha256 NOT IN (SELECT sha256 FROM attachment_references WHERE sha256 IS NOT NULL)
            AND (attached_by IS NULL OR attached_by NOT IN (SELECT id FROM presentations))
            """
        let rows: [Row]
        if let presentation {
            rows = try Row.fetchAll(db, sql: "DELETE FROM blobs WHERE attached_by = ? AND \(unreferenced) RETURNING sha256, bytes, stored", arguments: [presentation])
        } else {
            rows = try Row.fetchAll(db, sql: "DELETE FROM blobs WHERE \(unreferenced) RETURNING sha256, bytes, stored")
        }
        var removed: [String] = []
        var freed: Int64 = 0
        for row in rows {
            let sha256: String = row["sha256"]
            removed.append(sha256)
            if row["stored"] as Int64 == 1 { freed += row["bytes"] as Int64 }
            directory.remove(sha256)
        }
        if presentation == nil {
            // Files with no row: an attach whose transaction failed after placing, or a crash in between. What
            // the records refer to is read here only when such a file is there: the view opens every record's
            // fields and every unsent edit. (The `DELETE` above reads it too, but only on a device that holds
            // blob rows: on one without attachments a sync no longer pays for each record the device holds.)
            let listing = directory.listing()
            let files = listing.blobs.union(listing.partials)
            let known = files.isEmpty ? [] : Set(try String.fetchAll(db, sql: "SELECT sha256 FROM blobs"))
            let rowless = files.filter { !known.contains($0) }
            let referenced = rowless.isEmpty
                ? [] : Set(try String.fetchAll(db, sql: "SELECT sha256 FROM attachment_references WHERE sha256 IS NOT NULL"))
            for sha256 in rowless where !referenced.contains(sha256) {
                directory.remove(sha256)
                removed.append(sha256)
            }
            for file in listing.incoming where file.age > 3600 {
                unlink((directory.path as NSString).appendingPathComponent(file.name))
            }
        }
        if !removed.isEmpty { try? directory.syncDirectory() }
        return BlobCollection(removed: removed.sorted(), freedBytes: freed)
    }
}
