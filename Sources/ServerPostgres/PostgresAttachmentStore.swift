import Crypto
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import ServerStorage

/// ``AttachmentStore`` in the PostgreSQL database every instance shares: an upload's state in
/// `attachment_uploads`, its bytes in `attachment_chunks` (about a megabyte per row).
///
/// Why the database and not a shared directory: the instances already share it, so nothing else must be
/// mounted on every host and kept consistent with it; a backup of the database holds the records and their
/// attachments together; and each chunk commits in one transaction with the check that it continues the
/// upload where the stored bytes end (`received`), so two instances receiving the same attachment at once can
/// never interleave bytes: the second one's next chunk finds the offset moved and its request is answered
/// 409. The cost is database size; chunks are stored uncompressed (`STORAGE EXTERNAL`), since media arrive
/// compressed.
///
/// Each member's upload of a hash is a row of its own (`uploader_id`, the user); the stored attachment is the
/// row with `uploader_id` 0, which a verified upload becomes (or, when it is there already, the upload's row
/// goes). What a status reports is committed: a killed instance loses at most the chunk it had not yet written.
struct PostgresAttachmentStore: AttachmentStore {
    let storage: PostgresStorage
    static let chunkSize = 1024 * 1024
    /// The `uploader_id` of the stored attachment's row.
    static let storedRow: Int64 = 0

    func stored(_ key: AttachmentKey) async throws -> Int64? {
        let client = storage.client
        return try await storage.perform {
            for try await size in try await client.query("""
                SELECT received FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(Self.storedRow) AND complete
                """).decode(Int64.self) {
                return size
            }
            return nil
        }
    }

    func partialBytes(projectID: Int64, uploader: Int64?) async throws -> Int64 {
        let client = storage.client
        return try await storage.perform {
            let rows = if let uploader {
                try await client.query("SELECT COALESCE(SUM(received), 0)::bigint FROM attachment_uploads WHERE project_id = \(projectID) AND NOT complete AND uploader_id = \(uploader)")
            } else {
                try await client.query("SELECT COALESCE(SUM(received), 0)::bigint FROM attachment_uploads WHERE project_id = \(projectID) AND NOT complete")
            }
            for try await sum in rows.decode(Int64.self) { return sum }
            return 0
        }
    }

    func status(_ key: AttachmentKey, uploader: Int64) async throws -> AttachmentStatus {
        let slot = AttachmentUploadKey(key, uploader: uploader)
        let status = try await storedStatus(slot)
        guard let total = status.total, status.received >= total else { return status }
        // Every byte is in but the upload never finished (its instance stopped between the last chunk and the
        // check): verify it now, or no client could ever complete it.
        guard let upload = try? await beginUpload(key, uploader: uploader, offset: status.received, total: total, length: 0) else { return status }
        do {
            try await upload.complete()
            return AttachmentStatus(received: total, total: total, complete: true)
        } catch AttachmentError.hashMismatch {
            return .none
        }
    }

    /// What the row of `slot`'s upload holds.
    func storedStatus(_ slot: AttachmentUploadKey) async throws -> AttachmentStatus {
        let client = storage.client
        return try await storage.perform {
            for try await (total, received) in try await client.query("""
                SELECT total, received FROM attachment_uploads
                WHERE project_id = \(slot.key.projectID) AND sha256 = \(slot.key.sha256) AND uploader_id = \(slot.uploader) AND NOT complete
                """).decode((Int64, Int64).self) {
                return AttachmentStatus(received: received, total: total, complete: false)
            }
            return .none
        }
    }

    func beginUpload(_ key: AttachmentKey, uploader: Int64, offset: Int64, total: Int64, length: Int64) async throws -> any AttachmentUpload {
        let slot = AttachmentUploadKey(key, uploader: uploader)
        guard storage.activeUploads.withLockedValue({ $0.insert(slot).inserted }) else {
            throw AttachmentError.busy(received: (try? await storedStatus(slot))?.received ?? 0)
        }
        do {
            let received: Int64 = try await storage.transaction { connection in
                var current: (total: Int64, received: Int64)?
                for try await row in try await connection.query("""
                    SELECT total, received FROM attachment_uploads
                    WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader) FOR UPDATE
                    """, logger: .quiet).decode((Int64, Int64).self) { current = row }
                if let existing = current, existing.total != total {
                    guard offset == 0 else { throw AttachmentError.lengthMismatch(total: existing.total) }
                    try await connection.query(
                        "DELETE FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader)", logger: .quiet)
                    current = nil
                }
                let received = current?.received ?? 0
                guard offset == received else { throw AttachmentError.offsetMismatch(received: received) }
                if current == nil {
                    try await connection.query("""
                        INSERT INTO attachment_uploads (project_id, sha256, uploader_id, total, received, complete, updated_at)
                        VALUES (\(key.projectID), \(key.sha256), \(uploader), \(total), 0, FALSE, \(Date().timeIntervalSince1970))
                        """, logger: .quiet)
                }
                return received
            }
            // The hash continues over what earlier requests stored: as this instance left it when it holds the
            // hash of exactly those bytes, else (another instance's bytes, a restart) by reading the chunks back.
            // Were the upload removed and sent again to the same length elsewhere meanwhile, a kept hash could be
            // of other bytes: the check at the last byte then refuses the upload, and nothing wrong is stored.
            var hasher = SHA256()
            if let kept = storage.runningHashes.take(slot, length: received, identity: [total]) {
                hasher = kept
            } else {
                var position: Int64 = 0
                while position < received, let chunk = try await chunk(key, uploader: uploader, containing: position) {
                    var bytes = chunk.data
                    hasher.update(data: bytes.readData(length: bytes.readableBytes) ?? Data())
                    position = chunk.start + Int64(chunk.data.readableBytes)
                }
            }
            return PostgresAttachmentUpload(store: self, slot: slot, total: total, received: received, hasher: hasher)
        } catch {
            release(slot)
            throw error
        }
    }

    func release(_ slot: AttachmentUploadKey) {
        _ = storage.activeUploads.withLockedValue { $0.remove(slot) }
    }

    /// The stored chunk holding byte `position` of `uploader`'s upload (the stored attachment's when
    /// ``storedRow``; chunks are contiguous from 0).
    func chunk(_ key: AttachmentKey, uploader: Int64 = Self.storedRow, containing position: Int64) async throws -> (start: Int64, data: ByteBuffer)? {
        let client = storage.client
        return try await storage.perform {
            for try await (start, data) in try await client.query("""
                SELECT start, data FROM attachment_chunks
                WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader) AND start <= \(position)
                ORDER BY start DESC LIMIT 1
                """).decode((Int64, ByteBuffer).self) {
                return (start, data)
            }
            return nil
        }
    }

    func leadingBytes(_ key: AttachmentKey, count: Int) async throws -> Data? {
        let client = storage.client
        return try await storage.perform {
            // Chunks are stored out of line uncompressed, so the substring reads only its own bytes.
            for try await (_, head) in try await client.query("""
                SELECT u.received, (SELECT substring(c.data FROM 1 FOR \(unescaped: String(max(0, count)))) FROM attachment_chunks c
                    WHERE c.project_id = u.project_id AND c.sha256 = u.sha256 AND c.uploader_id = u.uploader_id AND c.start = 0)
                FROM attachment_uploads u
                WHERE u.project_id = \(key.projectID) AND u.sha256 = \(key.sha256) AND u.uploader_id = \(Self.storedRow) AND u.complete
                """).decode((Int64, ByteBuffer?).self) {
                guard var head else { return Data() }
                return head.readData(length: head.readableBytes) ?? Data()
            }
            return nil
        }
    }

    /// How long a download's lease keeps a sweep away; renewed as the download goes on. Longer than any
    /// of the server's connection timeouts, so only a download that ended (or was cut) lets its lease run out.
    static let readLease: TimeInterval = 600

    /// Takes (or extends) a download's lease on a complete attachment; returns its size, nil when it is not
    /// complete (or was removed).
    func lease(_ key: AttachmentKey) async throws -> Int64? {
        let until = Date().timeIntervalSince1970 + Self.readLease
        let client = storage.client
        return try await storage.perform {
            for try await size in try await client.query("""
                UPDATE attachment_uploads SET read_until = greatest(read_until, \(until))
                WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(Self.storedRow) AND complete RETURNING received
                """).decode(Int64.self) {
                return size
            }
            return nil
        }
    }

    func read(_ key: AttachmentKey, range: ClosedRange<Int64>?) async throws -> AttachmentBytes? {
        // The lease keeps a sweep from removing the chunks while this download reads them.
        guard let size = try await lease(key) else { return nil }
        let leased = NIOLockedValueBox(Date())
        let wanted = range ?? 0...max(0, size - 1)
        let end = size == 0 ? 0 : wanted.upperBound + 1
        let position = NIOLockedValueBox(wanted.lowerBound)
        let store = self
        // Pulled chunk by chunk: nothing is read before the response asks for it.
        let pieces = AsyncThrowingStream<Data, any Error>(unfolding: {
            let at = position.withLockedValue { $0 }
            guard at < end else { return nil }
            if leased.withLockedValue({ Date().timeIntervalSince($0) > Self.readLease / 2 }) {
                guard try await store.lease(key) != nil else {
                    throw StorageError.unavailable("The attachment \(key.sha256) was removed while it was read.")
                }
                leased.withLockedValue { $0 = Date() }
            }
            guard let chunk = try await store.chunk(key, containing: at) else {
                throw StorageError.unavailable("The attachment \(key.sha256) lacks its byte \(at).")
            }
            var data = chunk.data
            data.moveReaderIndex(forwardBy: Int(at - chunk.start))
            let count = min(data.readableBytes, Int(end - at))
            guard count > 0, let piece = data.readData(length: count) else {
                throw StorageError.unavailable("The attachment \(key.sha256) lacks its byte \(at).")
            }
            position.withLockedValue { $0 = at + Int64(count) }
            return piece
        })
        return AttachmentBytes(total: size, range: wanted, pieces: pieces)
    }
}

/// One request's upload: buffers up to a chunk, then commits it with the offset check.
final class PostgresAttachmentUpload: AttachmentUpload, @unchecked Sendable {
    let store: PostgresAttachmentStore
    let slot: AttachmentUploadKey
    let total: Int64
    private var stored: Int64
    private var pending = Data()
    private var hasher: SHA256
    private var finished = false

    init(store: PostgresAttachmentStore, slot: AttachmentUploadKey, total: Int64, received: Int64, hasher: SHA256) {
        self.store = store
        self.slot = slot
        self.total = total
        self.stored = received
        self.hasher = hasher
    }

    deinit {
        if !finished { store.release(slot) }
    }

    var received: Int64 { stored + Int64(pending.count) }

    func append(_ bytes: Data) async throws {
        pending.append(bytes)
        hasher.update(data: bytes)
        if pending.count >= PostgresAttachmentStore.chunkSize { try await flush() }
    }

    /// Commits the buffered bytes as one chunk, if the stored upload still ends where this one thinks.
    private func flush() async throws {
        guard !pending.isEmpty else { return }
        let key = slot.key
        let uploader = slot.uploader
        let start = stored
        let data = ByteBuffer(data: pending)
        let count = Int64(pending.count)
        try await store.storage.transaction { connection in
            let rows = try await connection.query("""
                UPDATE attachment_uploads SET received = received + \(count), updated_at = \(Date().timeIntervalSince1970)
                WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader) AND received = \(start) AND NOT complete
                RETURNING received
                """, logger: .quiet).collect()
            guard !rows.isEmpty else {
                var received: Int64 = 0
                for try await value in try await connection.query("""
                    SELECT received FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader)
                    """, logger: .quiet).decode(Int64.self) { received = value }
                throw AttachmentError.offsetMismatch(received: received)
            }
            try await connection.query("""
                INSERT INTO attachment_chunks (project_id, sha256, uploader_id, start, data)
                VALUES (\(key.projectID), \(key.sha256), \(uploader), \(start), \(data))
                """, logger: .quiet)
        }
        stored += count
        pending = Data()
    }

    func suspend() async throws {
        defer { finish() }
        try await flush()
        store.storage.runningHashes.keep(slot, RunningHash(hasher: hasher, length: stored, identity: [total]))
    }

    func complete() async throws {
        defer { finish() }
        try await flush()
        let actual = hasher.finalize().map { String(format: "%02x", $0) }.joined()
        let key = slot.key
        let uploader = slot.uploader
        guard actual == key.sha256 else {
            _ = try await store.storage.transaction { connection in
                try await connection.query(
                    "DELETE FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader)", logger: .quiet)
            }
            throw AttachmentError.hashMismatch(actual: actual)
        }
        let storedRow = PostgresAttachmentStore.storedRow
        _ = try await store.storage.transaction { connection in
            // One completion of a hash at a time: the first makes its row the stored attachment (its chunks
            // follow, ON UPDATE CASCADE); a later one, the same bytes verified, only removes its own row.
            _ = try await connection.query(
                "SELECT pg_advisory_xact_lock(\(PostgresStorage.lockKey("\(key.projectID)/attachment/\(key.sha256)")))", logger: .quiet).collect()
            let held = try await connection.query("""
                SELECT 1 FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(storedRow) AND complete
                """, logger: .quiet).collect()
            if held.isEmpty {
                try await connection.query("""
                    UPDATE attachment_uploads SET uploader_id = \(storedRow), complete = TRUE, updated_at = \(Date().timeIntervalSince1970)
                    WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader)
                    """, logger: .quiet)
            } else {
                try await connection.query(
                    "DELETE FROM attachment_uploads WHERE project_id = \(key.projectID) AND sha256 = \(key.sha256) AND uploader_id = \(uploader)", logger: .quiet)
            }
        }
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        store.release(slot)
    }
}
