import Foundation
import GRDB
import ServerStorage

extension SQLiteStorage {
    public func registerDeviceKey(tokenID: Int64, publicKey: String, now: Date) async throws -> DeviceKeyRegistration {
        try await write { db in
            guard let device = try Row.fetchOne(db, sql: """
                SELECT d.public_key, EXISTS (SELECT 1 FROM login_codes c WHERE c.device_id = d.id) FROM devices d WHERE d.token_id = ?
                """, arguments: [tokenID]) else { return .notOneDevice }
            if let held: String = device[0] { return held == publicKey ? .same : .different }
            guard device[1] as Bool else { return .notOneDevice }
            try db.execute(sql: "UPDATE devices SET public_key = ?, key_registered_at = ? WHERE token_id = ? AND public_key IS NULL",
                           arguments: [publicKey, now.timeIntervalSince1970, tokenID])
            return .stored
        }
    }

    public func chainedHistory(projectID: Int64, recordID: UUID?, afterRecord: String?, recordLimit: Int) async throws -> [ChainedHistoryRow] {
        try await pool.read { db in
            let records: [String]
            if let recordID {
                records = [recordID.lowercased]
            } else {
                records = try String.fetchAll(db, sql: """
                    SELECT DISTINCT record_id FROM record_history WHERE project_id = ? AND record_id > ? ORDER BY record_id LIMIT ?
                    """, arguments: [projectID, afterRecord ?? "", recordLimit])
            }
            var rows: [ChainedHistoryRow] = []
            let select = try db.cachedStatement(sql: """
                SELECT h.id, h.record_id, h.revision, h.kind, h.user_id, u.name, h.client_id, h.device_id, h.detail, h.created_at,
                    h.signature, h.signed_mutation, h.manifest_id, h.manifest_index, h.hash
                FROM record_history h JOIN users u ON u.id = h.user_id WHERE h.project_id = ? AND h.record_id = ? ORDER BY h.id
                """)
            for record in records {
                for row in try Row.fetchAll(select, arguments: [projectID, record]) {
                    rows.append(ChainedHistoryRow(
                        id: row[0], recordID: row[1], revision: row[2], kind: row[3], userID: row[4], userName: row[5], clientID: row[6],
                        deviceID: row[7], detail: row[8], createdAt: row[9], signature: row[10], signedMutation: row[11], manifestID: row[12],
                        manifestIndex: row[13], hash: row[14]))
                }
            }
            return rows
        }
    }

    public func signingDevices() async throws -> [Int64: SigningDevice] {
        try await pool.read { db in
            var devices: [Int64: SigningDevice] = [:]
            for row in try Row.fetchAll(db, sql: """
                SELECT d.id, d.name, u.name, d.public_key, t.revoked_at FROM devices d JOIN users u ON u.id = d.user_id JOIN tokens t ON t.id = d.token_id
                """) {
                let revoked: Double? = row[4]
                devices[row[0]] = SigningDevice(id: row[0], name: row[1], userName: row[2], publicKey: row[3], revokedAt: revoked.map(Date.init(timeIntervalSince1970:)))
            }
            return devices
        }
    }

    public func firstChainedHistoryID() async throws -> Int64 {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT first_chained_id FROM history_chain WHERE id = 1") ?? 1 }
    }

    public func pushManifests(ids: [Int64]) async throws -> [Int64: StoredPushManifest] {
        guard !ids.isEmpty else { return [:] }
        return try await pool.read { db in
            var manifests: [Int64: StoredPushManifest] = [:]
            let select = try db.cachedStatement(sql: "SELECT device_id, signature, digests, created_at FROM push_manifests WHERE id = ?")
            for id in Set(ids) {
                guard let row = try Row.fetchOne(select, arguments: [id]) else { continue }
                let digests: Data = row[2]
                manifests[id] = StoredPushManifest(id: id, deviceID: row[0], signature: row[1], digests: Array(digests), createdAt: row[3])
            }
            return manifests
        }
    }
}
