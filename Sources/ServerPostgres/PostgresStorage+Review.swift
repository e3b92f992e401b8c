import Foundation
import FormModel
import Logging
import PostgresNIO
import ServerStorage
import SyncCore

extension PostgresStorage {
    /// Inserts the plan's history entries with one statement over arrays, in the push's transaction, each
    /// with its detail encoded as in `details` (``PushPlan/encoding()``), its device, signature and link in its
    /// record's hash chain (``HistoryChain``). The latest hashes of the records stored before (not of those an
    /// entry of this batch made, ``HistoryEntry/startsRecord``) are read in one statement first; the
    /// writer holds its records' advisory locks and its project's row (taken by the counter update, or, when
    /// it writes no record row, as a resolution keeping the server's value does, taken alone) by then, so no
    /// other writer of those records' history commits in between.
    static func writeHistory(_ connection: PostgresConnection, projectID: Int64, _ history: [HistoryEntry], details: [String]) async throws {
        guard !history.isEmpty else { return }
        var previous: [UUID: String] = [:]
        // Only records stored before have a latest hash to read: an entry that made its record follows genesis.
        var started: Set<UUID> = []
        var stored: Set<UUID> = []
        for entry in history where !started.contains(entry.recordID) {
            if entry.startsRecord { started.insert(entry.recordID) } else { stored.insert(entry.recordID) }
        }
        if !stored.isEmpty {
            let records = Array(stored)
            for try await (record, hash) in try await connection.query("""
                SELECT DISTINCT ON (record_id) record_id, hash FROM record_history
                WHERE project_id = \(projectID) AND record_id = ANY(\(records)::uuid[]) ORDER BY record_id, id DESC
                """, logger: .quiet).decode((UUID, String?).self) {
                previous[record] = hash ?? HistoryChain.genesis
            }
        }
        // A push signed once writes its manifest once; its entries reference it by id and index.
        var manifests: [String: Int64] = [:]
        var manifestIDs: [Int64] = []
        var manifestIndexes: [Int64] = []
        manifestIDs.reserveCapacity(history.count)
        manifestIndexes.reserveCapacity(history.count)
        var hashes: [String] = []
        hashes.reserveCapacity(history.count)
        for (entry, detail) in zip(history, details) {
            var manifestID: Int64?
            if let manifest = entry.signed?.manifest {
                if let id = manifests[manifest.signature] {
                    manifestID = id
                } else {
                    for try await id in try await connection.query("""
                        INSERT INTO push_manifests (project_id, device_id, signature, digests, created_at)
                        VALUES (\(projectID), \(entry.deviceID), \(manifest.signature), \(Data(manifest.digests)), \(entry.at.timeIntervalSince1970)) RETURNING id
                        """, logger: .quiet).decode(Int64.self) {
                        manifestID = id
                    }
                    manifests[manifest.signature] = manifestID
                }
            }
            manifestIDs.append(manifestID ?? 0)
            manifestIndexes.append(manifestID == nil ? -1 : Int64(entry.signed?.manifest?.index ?? -1))
            let hash = HistoryChain.hash(previous: previous[entry.recordID] ?? HistoryChain.genesis, entry, detail: detail, manifestID: manifestID)
            previous[entry.recordID] = hash
            hashes.append(hash)
        }
        try await connection.query("""
            INSERT INTO record_history (project_id, record_id, revision, kind, user_id, client_id, detail, created_at, device_id, signature, signed_mutation,
                manifest_id, manifest_index, hash)
            SELECT \(projectID), h.record_id, h.revision, h.kind, h.user_id, NULLIF(h.client_id, ''), h.detail, h.created_at,
                NULLIF(h.device_id, 0), NULLIF(h.signature, ''), NULLIF(h.signed_mutation, ''), NULLIF(h.manifest_id, 0), NULLIF(h.manifest_index, -1),
                h.hash FROM unnest(
                \(history.map(\.recordID))::uuid[], \(history.map(\.revision))::int8[], \(history.map(\.kind.rawValue))::text[],
                \(history.map(\.userID))::int8[], \(history.map { $0.clientID ?? "" })::text[], \(details)::text[],
                \(history.map(\.at.timeIntervalSince1970))::float8[], \(history.map { $0.deviceID ?? 0 })::int8[],
                \(history.map { $0.signed?.signature ?? "" })::text[], \(history.map { $0.signed?.mutation ?? "" })::text[],
                \(manifestIDs)::int8[], \(manifestIndexes)::int8[], \(hashes)::text[]
            ) WITH ORDINALITY AS h (record_id, revision, kind, user_id, client_id, detail, created_at, device_id, signature, signed_mutation,
                manifest_id, manifest_index, hash, n)
            ORDER BY h.n
            """, logger: .quiet)
    }

    /// Closes the conflicts the plan resolved; throws ``StorageError/Code/alreadyResolved`` (rolling the whole
    /// plan back) when one is no longer open.
    static func resolve(_ connection: PostgresConnection, projectID: Int64, _ ids: [Int64], history: [HistoryEntry], now: Double) async throws {
        for id in ids {
            let entry = history.first { $0.detail.resolution?.conflictID == id }
            let rows = try await connection.query("""
                UPDATE conflicts SET open = false, resolved_at = \(now), resolved_by = \(entry?.userID), resolution = \(entry?.detail.resolution?.kept.rawValue)
                WHERE project_id = \(projectID) AND id = \(id) AND open RETURNING id
                """, logger: .quiet).collect()
            guard rows.count == 1 else {
                throw StorageError(.alreadyResolved, "Conflict \(id) is no longer open: someone resolved it first. Reload it to see how.")
            }
        }
    }

    public func history(projectID: Int64, recordID: UUID) async throws -> [HistoryEntry] {
        let client = client
        return try await perform {
            var result: [HistoryEntry] = []
            for try await (revision, kind, userID, userName, clientID, detail, at) in try await client.query("""
                SELECT h.revision, h.kind, h.user_id, u.name, h.client_id, h.detail, h.created_at
                FROM record_history h JOIN users u ON u.id = h.user_id
                WHERE h.project_id = \(projectID) AND h.record_id = \(recordID) ORDER BY h.id
                """).decode((Int64, String, Int64, String, String?, String, Double).self) {
                result.append(HistoryEntry(
                    recordID: recordID, revision: revision, kind: HistoryEntry.Kind(rawValue: kind) ?? .change, userID: userID,
                    userName: userName, clientID: clientID, at: Date(timeIntervalSince1970: at), detail: try HistoryDetail(jsonText: detail)))
            }
            return result
        }
    }

    public func conflictLog(projectID: Int64, viewer: Int64, openOnly: Bool, after: Int64, limit: Int) async throws -> [ConflictLogEntry] {
        let client = client
        return try await perform {
            try await client.withConnection { connection in
                try await Self.conflictLogEntries(connection, projectID: projectID, try await connection.query("""
                    \(unescaped: ConflictLogEntry.selectSQL)
                    WHERE c.project_id = \(projectID) AND c.id > \(after) AND (NOT \(openOnly) OR c.open) AND (r.author_id = \(viewer) OR r.shared) ORDER BY c.id LIMIT \(Int64(limit))
                    """, logger: .quiet))
            }
        }
    }

    public func conflict(projectID: Int64, viewer: Int64, id: Int64) async throws -> ConflictLogEntry? {
        let client = client
        return try await perform {
            try await client.withConnection { connection in
                try await Self.conflictLogEntries(connection, projectID: projectID, try await connection.query("""
                    \(unescaped: ConflictLogEntry.selectSQL) WHERE c.project_id = \(projectID) AND c.id = \(id) AND (r.author_id = \(viewer) OR r.shared)
                    """, logger: .quiet)).first
            }
        }
    }

    typealias ConflictRow = (Int64, UUID, String, String, String, String, Bool, Double, String?, String?, Double?, String?)

    static func conflictLogEntries(_ connection: PostgresConnection, projectID: Int64, _ rows: PostgresRowSequence) async throws -> [ConflictLogEntry] {
        var decoded: [ConflictRow] = []
        for try await row in rows.decode(ConflictRow.self) { decoded.append(row) }
        var result: [ConflictLogEntry] = []
        for (id, recordID, formID, mutationID, clientID, text, open, createdAt, clientAuthor, resolution, resolvedAt, resolver) in decoded {
            var reader = JSONReader(Array(text.utf8))
            var entry = try ConflictEntry.read(from: &reader)
            entry.open = open
            // The server's side was written at its stamp's revision: the history says by whom.
            var serverAuthor: String?
            if let revision = entry.server?.revision {
                for try await name in try await connection.query("""
                    SELECT u.name FROM record_history h JOIN users u ON u.id = h.user_id
                    WHERE h.project_id = \(projectID) AND h.record_id = \(recordID) AND h.revision = \(revision) AND h.kind <> 'review'
                    ORDER BY h.id DESC LIMIT 1
                    """, logger: .quiet).decode(String.self) { serverAuthor = name }
            }
            result.append(ConflictLogEntry(
                id: id, recordID: recordID, formID: formID, mutationID: mutationID, clientID: clientID, entry: entry,
                clientAuthor: clientAuthor, serverAuthor: serverAuthor, open: open, createdAt: Date(timeIntervalSince1970: createdAt),
                resolution: resolution.flatMap(ConflictEntry.Winner.init(rawValue:)).map {
                    ConflictResolution(kept: $0, by: resolver ?? "", at: Date(timeIntervalSince1970: resolvedAt ?? 0))
                }))
        }
        return result
    }
}
