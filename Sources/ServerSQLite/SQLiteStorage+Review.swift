import Foundation
import FormModel
import GRDB
import ServerStorage
import SyncCore

extension SQLiteStorage {
    /// Inserts the plan's history entries (plain inserts, in the push's transaction).
    /// Writes `history`, each entry with its detail encoded as in `details` (``PushPlan/encoding()``), its device,
    /// signature and link in its record's hash chain (``HistoryChain``: the hash of the record's latest entry,
    /// read under the single writer — not for an entry that made its record, ``HistoryEntry/startsRecord`` —,
    /// then of each entry written before it in this batch). A push signed once
    /// writes its manifest once (`push_manifests`), before the first entry that references it.
    static func writeHistory(_ db: Database, projectID: Int64, _ history: [HistoryEntry], details: [String]) throws {
        guard !history.isEmpty else { return }
        let insert = try db.cachedStatement(sql: """
            INSERT INTO record_history (project_id, record_id, revision, kind, user_id, client_id, detail, created_at, device_id, signature, signed_mutation,
                manifest_id, manifest_index, hash)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        let latest = try db.cachedStatement(sql: "SELECT hash FROM record_history WHERE project_id = ? AND record_id = ? ORDER BY id DESC LIMIT 1")
        var previous: [UUID: String] = [:]
        var manifests: [String: Int64] = [:]
        for (entry, detail) in zip(history, details) {
            let record = entry.recordID.lowercased
            var manifestID: Int64?
            if let manifest = entry.signed?.manifest {
                if let id = manifests[manifest.signature] {
                    manifestID = id
                } else {
                    try db.cachedStatement(sql: """
                        INSERT INTO push_manifests (project_id, device_id, signature, digests, created_at) VALUES (?, ?, ?, ?, ?)
                        """).execute(arguments: [projectID, entry.deviceID, manifest.signature, Data(manifest.digests), entry.at.timeIntervalSince1970])
                    manifestID = db.lastInsertedRowID
                    manifests[manifest.signature] = db.lastInsertedRowID
                }
            }
            // A record's first entry follows genesis: only the latest hash of a record stored before is read.
            let before = try previous[entry.recordID]
                ?? (entry.startsRecord ? HistoryChain.genesis : String.fetchOne(latest, arguments: [projectID, record]) ?? HistoryChain.genesis)
            let hash = HistoryChain.hash(previous: before, entry, detail: detail, manifestID: manifestID)
            previous[entry.recordID] = hash
            try insert.execute(arguments: [
                projectID, record, entry.revision, entry.kind.rawValue, entry.userID, entry.clientID,
                detail, entry.at.timeIntervalSince1970, entry.deviceID, entry.signed?.signature, entry.signed?.mutation,
                manifestID, manifestID == nil ? nil : entry.signed?.manifest?.index, hash,
            ])
        }
    }

    /// Closes the conflicts the plan resolved; throws ``StorageError/Code/alreadyResolved`` (rolling the whole
    /// plan back) when one is no longer open.
    static func resolve(_ db: Database, projectID: Int64, _ ids: [Int64], history: [HistoryEntry], now: Double) throws {
        for id in ids {
            let entry = history.first { $0.detail.resolution?.conflictID == id }
            try db.execute(sql: """
                UPDATE conflicts SET open = 0, resolved_at = ?, resolved_by = ?, resolution = ? WHERE project_id = ? AND id = ? AND open
                """, arguments: [now, entry?.userID, entry?.detail.resolution?.kept.rawValue, projectID, id])
            guard db.changesCount == 1 else {
                throw StorageError(.alreadyResolved, "Conflict \(id) is no longer open: someone resolved it first. Reload it to see how.")
            }
        }
    }

    public func history(projectID: Int64, recordID: UUID) async throws -> [HistoryEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                SELECT h.revision, h.kind, h.user_id, u.name, h.client_id, h.detail, h.created_at
                FROM record_history h JOIN users u ON u.id = h.user_id
                WHERE h.project_id = ? AND h.record_id = ? ORDER BY h.id
                """, arguments: [projectID, recordID.lowercased]).map { row in
                HistoryEntry(
                    recordID: recordID, revision: row[0], kind: HistoryEntry.Kind(rawValue: row[1]) ?? .change,
                    userID: row[2], userName: row[3], clientID: row[4], at: Date(timeIntervalSince1970: row[6]),
                    detail: try HistoryDetail(jsonText: row[5]))
            }
        }
    }

    public func conflictLog(projectID: Int64, viewer: Int64, openOnly: Bool, after: Int64, limit: Int) async throws -> [ConflictLogEntry] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: """
                \(ConflictLogEntry.selectSQL)
                WHERE c.project_id = ? AND c.id > ? AND (NOT ? OR c.open) AND (r.author_id = ? OR r.shared) ORDER BY c.id LIMIT ?
                """, arguments: [projectID, after, openOnly, viewer, limit]).map { try Self.conflictLogEntry(db, projectID: projectID, $0) }
        }
    }

    public func conflict(projectID: Int64, viewer: Int64, id: Int64) async throws -> ConflictLogEntry? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "\(ConflictLogEntry.selectSQL) WHERE c.project_id = ? AND c.id = ? AND (r.author_id = ? OR r.shared)", arguments: [projectID, id, viewer])
                .map { try Self.conflictLogEntry(db, projectID: projectID, $0) }
        }
    }

    static func conflictLogEntry(_ db: Database, projectID: Int64, _ row: Row) throws -> ConflictLogEntry {
        let recordKey: String = row[1]
        let text: String = row[5]
        var reader = JSONReader(Array(text.utf8))
        var entry = try ConflictEntry.read(from: &reader)
        let open: Bool = row[6]
        entry.open = open
        // The server's side was written at its stamp's revision: the history says by whom.
        let serverAuthor = try entry.server.flatMap { server in
            try String.fetchOne(db, sql: """
                SELECT u.name FROM record_history h JOIN users u ON u.id = h.user_id
                WHERE h.project_id = ? AND h.record_id = ? AND h.revision = ? AND h.kind <> 'review' ORDER BY h.id DESC LIMIT 1
                """, arguments: [projectID, recordKey, server.revision])
        }
        let resolution: ConflictResolution? = (row[9] as String?).flatMap(ConflictEntry.Winner.init(rawValue:)).map { kept in
            ConflictResolution(kept: kept, by: row[11] ?? "", at: Date(timeIntervalSince1970: row[10] ?? 0))
        }
        return ConflictLogEntry(
            id: row[0], recordID: UUID(text: recordKey) ?? UUID(), formID: row[2], mutationID: row[3], clientID: row[4],
            entry: entry, clientAuthor: row[8], serverAuthor: serverAuthor, open: open,
            createdAt: Date(timeIntervalSince1970: row[7]), resolution: resolution)
    }
}
