import Foundation
import FormModel
import GRDB
import SyncCore

/// Where this device stands with the server.
public struct SyncStatus: Sendable, Hashable {
    public var deviceID: String
    /// Changes typed on this device and not yet acknowledged by the server (outbox rows).
    public var queuedChanges: Int
    /// Records those changes belong to.
    public var queuedRecords: Int
    /// Conflicts waiting for a person (manual policy).
    public var openConflicts: Int
    /// The change-feed position of the last applied pull page; 0 before the first pull.
    public var cursor: Int64
    /// When a sync last finished; nil when never.
    public var lastSync: Date?
}

extension DraftStore {
    /// The pull cursor stored with the last applied page (0 before the first pull).
    public func syncCursor() async throws -> Int64 {
        try await read(doing: "reading the sync cursor") { db in
            Int64(try String.fetchOne(db, sql: "SELECT cursor FROM sync_state WHERE id = 1") ?? "0") ?? 0
        }
    }

    /// Queued changes, open conflicts and the last sync.
    public func syncStatus() async throws -> SyncStatus {
        try await read(doing: "reading the sync status", Self.fetchSyncStatus)
    }

    static func fetchSyncStatus(_ db: Database) throws -> SyncStatus {
        let row = try Row.fetchOne(db, sql: "SELECT device_id, cursor, last_sync_at FROM sync_state WHERE id = 1")
        return SyncStatus(
            deviceID: row?["device_id"] ?? "unknown-device",
            queuedChanges: try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0,
            queuedRecords: try Int.fetchOne(db, sql: "SELECT count(DISTINCT record_id) FROM outbox") ?? 0,
            openConflicts: try Int.fetchOne(db, sql: "SELECT count(*) FROM conflicts WHERE resolved_at IS NULL") ?? 0,
            cursor: Int64(row?["cursor"] as String? ?? "0") ?? 0,
            lastSync: (row?["last_sync_at"] as Int64?).map(Self.date))
    }

    /// Records the end of a successful sync and moves the clock past the server's.
    public func markSynced(serverClock: HybridTimestamp) async throws {
        try await write(doing: "recording the sync") { db in
            try db.execute(sql: "UPDATE sync_state SET last_sync_at = ? WHERE id = 1", arguments: [Self.nowMillis()])
            try Self.observe(db, serverClock)
        }
    }

    /// The form versions among `keys` that this device does not hold.
    public func missingForms(_ keys: Set<FormKey>) async throws -> Set<FormKey> {
        try await read(doing: "checking stored forms") { db in
            var missing = Set<FormKey>()
            for key in keys {
                let stored = try Bool.fetchOne(db, sql: "SELECT 1 FROM forms WHERE id = ? AND version = ?", arguments: [key.id, key.version]) ?? false
                if !stored { missing.insert(key) }
            }
            return missing
        }
    }

    /// Applies one pull page, as the server sent it, and stores its cursor in the same transaction.
    ///
    /// The page is read record by record (no model of the page is built) and each record's fields are
    /// stored as the bytes the server sent: they become the record's synced fields. Unsent local edits
    /// stay on top of them, and the next push merges them; a record with an unsent submit or delete keeps
    /// its local state, and so does an unsent edit of a record deleted elsewhere (its push restores the
    /// record, and the server logs the restoration). Records
    /// already seen at this revision are skipped.
    /// - Returns: how many records changed on this device (new, or at a newer revision), and the page's end.
    @discardableResult
    public func applyPullPage(_ bytes: [UInt8]) async throws -> (applied: Int, end: PullPageEnd) {
        try await write(doing: "applying pulled changes") { db in
            let now = Self.nowMillis()
            var applied = 0
            let upsert = try db.cachedStatement(sql: """
                INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, server_revision, fields, local)
                VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6, ?7, '{}')
                ON CONFLICT (id) DO UPDATE SET
                    form_version = CASE WHEN EXISTS (SELECT 1 FROM outbox WHERE record_id = ?1) THEN records.form_version ELSE excluded.form_version END,
                    state = CASE
                        WHEN EXISTS (SELECT 1 FROM outbox WHERE record_id = ?1 AND kind IN ('submit', 'delete')) THEN records.state
                        WHEN excluded.state = 'deleted' AND EXISTS (SELECT 1 FROM outbox WHERE record_id = ?1 AND kind IN ('set', 'create')) THEN records.state
                        ELSE excluded.state END,
                    server_revision = excluded.server_revision,
                    fields = excluded.fields,
                    local = CASE
                        WHEN EXISTS (SELECT 1 FROM outbox WHERE record_id = ?1) OR EXISTS (SELECT 1 FROM sent_mutations WHERE record_id = ?1) THEN records.local
                        ELSE '{}' END,
                    updated_at = excluded.updated_at
                WHERE excluded.server_revision > records.server_revision
                """)
            let end = try PullPageReader.read(bytes) { record in
                try upsert.execute(arguments: [
                    record.recordId.lowercased, record.formId, record.formVersion, record.state.rawValue, now,
                    record.revision, record.fieldsText,
                ])
                if db.changesCount > 0 { applied += 1 }
            }
            try db.execute(sql: "UPDATE sync_state SET cursor = ? WHERE id = 1", arguments: [String(end.cursor)])
            try Self.observe(db, end.serverClock)
            return (applied, end)
        }
    }
}
