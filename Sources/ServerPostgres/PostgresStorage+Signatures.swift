import Foundation
import Logging
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    public func registerDeviceKey(tokenID: Int64, publicKey: String, now: Date) async throws -> DeviceKeyRegistration {
        try await transaction { connection in
            var found: (key: String?, enrolled: Bool)?
            for try await (key, enrolled) in try await connection.query("""
                SELECT d.public_key, EXISTS (SELECT 1 FROM login_codes c WHERE c.device_id = d.id) FROM devices d WHERE d.token_id = \(tokenID) FOR UPDATE OF d
                """, logger: .quiet).decode((String?, Bool).self) {
                found = (key, enrolled)
            }
            guard let found else { return .notOneDevice }
            if let key = found.key { return key == publicKey ? .same : .different }
            guard found.enrolled else { return .notOneDevice }
            try await connection.query("""
                UPDATE devices SET public_key = \(publicKey), key_registered_at = \(now.timeIntervalSince1970) WHERE token_id = \(tokenID) AND public_key IS NULL
                """, logger: .quiet)
            return .stored
        }
    }

    public func chainedHistory(projectID: Int64, recordID: UUID?, afterRecord: String?, recordLimit: Int) async throws -> [ChainedHistoryRow] {
        let client = client
        return try await perform {
            try await client.withConnection { connection in
                var records: [UUID] = []
                if let recordID {
                    records = [recordID]
                } else {
                    // UUIDs order as their lowercase text does (both by their bytes from the first).
                    let after = afterRecord.flatMap(UUID.init(text:)) ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
                    let inclusive = afterRecord == nil
                    for try await id in try await connection.query("""
                        SELECT DISTINCT record_id FROM record_history
                        WHERE project_id = \(projectID) AND (record_id > \(after) OR (\(inclusive) AND record_id = \(after)))
                        ORDER BY record_id LIMIT \(Int64(recordLimit))
                        """, logger: .quiet).decode(UUID.self) {
                        records.append(id)
                    }
                }
                guard !records.isEmpty else { return [] }
                var rows: [ChainedHistoryRow] = []
                for try await row in try await connection.query("""
                    SELECT h.id, h.record_id, h.revision, h.kind, h.user_id, u.name, h.client_id, h.device_id, h.detail, h.created_at,
                        h.signature, h.signed_mutation, h.manifest_id, h.manifest_index, h.hash
                    FROM record_history h JOIN users u ON u.id = h.user_id
                    WHERE h.project_id = \(projectID) AND h.record_id = ANY(\(records)::uuid[]) ORDER BY h.record_id, h.id
                    """, logger: .quiet).decode((Int64, UUID, Int64, String, Int64, String, String?, Int64?, String, Double, String?, String?, Int64?, Int64?, String?).self) {
                    rows.append(ChainedHistoryRow(
                        id: row.0, recordID: row.1.lowercased, revision: row.2, kind: row.3, userID: row.4, userName: row.5,
                        clientID: row.6, deviceID: row.7, detail: row.8, createdAt: row.9, signature: row.10, signedMutation: row.11,
                        manifestID: row.12, manifestIndex: row.13, hash: row.14))
                }
                return rows
            }
        }
    }

    public func signingDevices() async throws -> [Int64: SigningDevice] {
        let client = client
        return try await perform {
            var devices: [Int64: SigningDevice] = [:]
            for try await (id, name, user, key, revoked) in try await client.query("""
                SELECT d.id, d.name, u.name, d.public_key, t.revoked_at FROM devices d JOIN users u ON u.id = d.user_id JOIN tokens t ON t.id = d.token_id
                """).decode((Int64, String, String, String?, Double?).self) {
                devices[id] = SigningDevice(id: id, name: name, userName: user, publicKey: key, revokedAt: revoked.map(Date.init(timeIntervalSince1970:)))
            }
            return devices
        }
    }

    public func firstChainedHistoryID() async throws -> Int64 {
        let client = client
        return try await perform {
            var first: Int64 = 1
            for try await id in try await client.query("SELECT first_chained_id FROM history_chain WHERE id = 1").decode(Int64.self) { first = id }
            return first
        }
    }

    public func pushManifests(ids: [Int64]) async throws -> [Int64: StoredPushManifest] {
        guard !ids.isEmpty else { return [:] }
        let client = client
        let ids = Array(Set(ids))
        return try await perform {
            var manifests: [Int64: StoredPushManifest] = [:]
            for try await (id, device, signature, digests, created) in try await client.query("""
                SELECT id, device_id, signature, digests, created_at FROM push_manifests WHERE id = ANY(\(ids)::int8[])
                """).decode((Int64, Int64?, String, ByteBuffer, Double).self) {
                manifests[id] = StoredPushManifest(id: id, deviceID: device, signature: signature, digests: Array(digests.readableBytesView), createdAt: created)
            }
            return manifests
        }
    }
}
