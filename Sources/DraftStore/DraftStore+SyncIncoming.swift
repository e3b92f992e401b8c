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
        try await read(doing: "reading the sync status") { db in
            let row = try Row.fetchOne(db, sql: "SELECT device_id, cursor, last_sync_at FROM sync_state WHERE id = 1")
            return SyncStatus(
                deviceID: row?["device_id"] ?? "unknown-device",
                queuedChanges: try Int.fetchOne(db, sql: "SELECT count(*) FROM outbox") ?? 0,
                queuedRecords: try Int.fetchOne(db, sql: "SELECT count(DISTINCT record_id) FROM outbox") ?? 0,
                openConflicts: try Int.fetchOne(db, sql: "SELECT count(*) FROM conflicts WHERE resolved_at IS NULL") ?? 0,
                cursor: Int64(row?["cursor"] as String? ?? "0") ?? 0,
                lastSync: (row?["last_sync_at"] as Int64?).map(Self.date))
        }
    }

    /// Records the end of a successful sync and moves the clock past the server's.
    public func markSynced(serverClock: HybridTimestamp) async throws {
        try await write(doing: "recording the sync") { db in
            try db.execute(sql: "UPDATE sync_state SET last_sync_at = ? WHERE id = 1", arguments: [Self.nowMillis()])
            try Self.observe(db, serverClock)
        }
    }

    /// The form versions named in `snapshots` that this device does not hold.
    public func missingForms(_ snapshots: [RecordSnapshot]) async throws -> Set<FormVersionKey> {
        let wanted = Set(snapshots.map { FormVersionKey(id: $0.formId, version: $0.formVersion) })
        return try await read(doing: "checking stored forms") { db in
            var missing = Set<FormVersionKey>()
            for key in wanted {
                let stored = try Bool.fetchOne(db, sql: "SELECT 1 FROM forms WHERE id = ? AND version = ?", arguments: [key.id, key.version]) ?? false
                if !stored { missing.insert(key) }
            }
            return missing
        }
    }

    /// Applies one pull page and stores its cursor in the same transaction.
    ///
    /// A field with an unsent local edit keeps the local value on top: the pulled value becomes its base,
    /// and the next push merges the edit. Other fields take the server's value. A record with an unsent
    /// submit or delete keeps its local state. Records already seen at this revision are skipped.
    /// - Returns: how many records changed on this device (new, or at a newer revision).
    @discardableResult
    public func applyPullPage(_ page: PullPage) async throws -> Int {
        try await write(doing: "applying pulled changes") { db in
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let now = Self.nowMillis()
            var applied = 0
            for snapshot in page.changes {
                if try Self.apply(db, snapshot, encoder: encoder, now: now) { applied += 1 }
            }
            try db.execute(sql: "UPDATE sync_state SET cursor = ? WHERE id = 1", arguments: [String(page.cursor)])
            try Self.observe(db, page.serverClock)
            return applied
        }
    }

    /// Applies one record; false when the device already had it at this revision.
    static func apply(_ db: Database, _ snapshot: RecordSnapshot, encoder: JSONEncoder, now: Int64) throws -> Bool {
        let key = snapshot.recordId.uuidString.lowercased()
        let state = RecordState(rawValue: snapshot.state.rawValue) ?? .draft
        guard let local = try fetchRecord(db, id: snapshot.recordId) else {
            let fields = snapshot.fields.mapValues {
                FieldEntry(value: $0.value, baseValue: $0.value, baseRevision: snapshot.revision, clock: $0.hlc, device: $0.clientId)
            }
            try db.cachedStatement(sql: """
                INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, server_revision, fields)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """).execute(arguments: [
                    key, snapshot.formId, snapshot.formVersion, state.rawValue, now, now, snapshot.revision,
                    String(decoding: try encoder.encode(fields), as: UTF8.self),
                ])
            return true
        }
        guard snapshot.revision > local.serverRevision else { return false }
        var pending = Set<String>()
        var pendingState = false
        let rows = try Row.fetchCursor(db.cachedStatement(sql: "SELECT kind, field_id, value FROM outbox WHERE record_id = ?"), arguments: [key])
        while let row = try rows.next() {
            switch row[0] as String {
            case "set": if let field: String = row[1] { pending.insert(field) }
            case "create":
                if let json: String = row[2], let object = try? JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] {
                    pending.formUnion(object.keys)
                }
            default: pendingState = true
            }
        }
        var fields: [String: FieldEntry] = [:]
        for field in Set(snapshot.fields.keys).union(local.fields.keys) {
            let remote = snapshot.fields[field]
            if pending.contains(field) {
                var entry = local.fields[field] ?? FieldEntry(value: nil)
                entry.baseValue = remote?.value
                entry.baseRevision = snapshot.revision
                fields[field] = entry
            } else if let remote {
                fields[field] = FieldEntry(value: remote.value, baseValue: remote.value, baseRevision: snapshot.revision, clock: remote.hlc, device: remote.clientId)
            }
        }
        // An unsent submit or delete keeps the local state; so does an unsent edit of a record deleted
        // elsewhere: the edit's push restores it (and the server logs the restoration).
        let newState = pendingState || (state == .deleted && !pending.isEmpty) ? local.state : state
        try db.cachedStatement(sql: """
            UPDATE records SET form_version = ?, state = ?, server_revision = ?, fields = ?, updated_at = ? WHERE id = ?
            """).execute(arguments: [
                pending.isEmpty && !pendingState ? snapshot.formVersion : local.formVersion, newState.rawValue, snapshot.revision,
                String(decoding: try encoder.encode(fields), as: UTF8.self), now, key,
            ])
        return true
    }
}

/// A form id and version.
public struct FormVersionKey: Sendable, Hashable {
    public var id: String
    public var version: Int

    public init(id: String, version: Int) {
        self.id = id
        self.version = version
    }
}
