import Foundation
import Logging
import NIOCore
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    public func setServerAdmin(userName: String, _ isAdmin: Bool) async throws {
        try await transaction { connection in
            let now = Date().timeIntervalSince1970
            try await connection.query("INSERT INTO users (name, created_at) VALUES (\(userName), \(now)) ON CONFLICT (name) DO NOTHING", logger: .quiet)
            try await connection.query("UPDATE users SET server_admin = \(isAdmin) WHERE name = \(userName)", logger: .quiet)
        }
    }

    public func addToken(userName: String, projectID: Int64?, tokenHash: Data) async throws {
        try await transaction { connection in
            let now = Date().timeIntervalSince1970
            try await connection.query("INSERT INTO users (name, created_at) VALUES (\(userName), \(now)) ON CONFLICT (name) DO NOTHING", logger: .quiet)
            guard let userID = try await connection.query("SELECT id FROM users WHERE name = \(userName)", logger: .quiet).collect().first?.decode(Int64.self)
            else { throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.") }
            let tokenID = try await connection.query(
                "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (\(userID), \(ByteBuffer(bytes: tokenHash)), \(now)) RETURNING id",
                logger: .quiet).collect().first?.decode(Int64.self)
            try await connection.query("""
                INSERT INTO devices (token_id, user_id, project_id, name, created_at)
                VALUES (\(tokenID), \(userID), \(projectID), \(DeviceInfo.commandLineTokenName), \(now))
                """, logger: .quiet)
        }
    }

    public func userID(named name: String) async throws -> Int64? {
        let client = client
        return try await perform {
            try await client.query("SELECT id FROM users WHERE name = \(name)").collect().first?.decode(Int64.self)
        }
    }

    public func setMembership(userName: String, projectID: Int64, role: Role) async throws -> Int64 {
        try await transaction { connection in
            let now = Date().timeIntervalSince1970
            try await connection.query("INSERT INTO users (name, created_at) VALUES (\(userName), \(now)) ON CONFLICT (name) DO NOTHING", logger: .quiet)
            guard let userID = try await connection.query("SELECT id FROM users WHERE name = \(userName)", logger: .quiet).collect().first?.decode(Int64.self)
            else { throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.") }
            try await connection.query("""
                INSERT INTO memberships (user_id, project_id, role) VALUES (\(userID), \(projectID), \(role.rawValue))
                ON CONFLICT (user_id, project_id) DO UPDATE SET role = excluded.role
                """, logger: .quiet)
            return userID
        }
    }

    public func removeMember(projectID: Int64, userID: Int64, at: Date) async throws -> Int {
        try await transaction { connection in
            let removed = try await connection.query(
                "DELETE FROM memberships WHERE user_id = \(userID) AND project_id = \(projectID) RETURNING user_id", logger: .quiet).collect()
            guard !removed.isEmpty else { throw StorageError(.unknownUser, "That person is not a member of this project.") }
            let revoked = try await connection.query("""
                UPDATE tokens SET revoked_at = \(at.timeIntervalSince1970)
                WHERE revoked_at IS NULL AND id IN (SELECT token_id FROM devices WHERE user_id = \(userID) AND project_id = \(projectID))
                RETURNING id
                """, logger: .quiet).collect()
            return revoked.count
        }
    }

    static let deviceColumns = """
        d.id, d.user_id, u.name, d.name, d.client_id, d.client_version, d.created_at, d.first_sync_at, d.last_sync_at, d.waiting, t.revoked_at
        FROM devices d JOIN tokens t ON t.id = d.token_id JOIN users u ON u.id = d.user_id
        """

    static func device(_ row: PostgresRow) throws -> DeviceInfo {
        let (id, userID, userName, name, clientID, clientVersion, created, first, last, waiting, revoked) = try row.decode(
            (Int64, Int64, String, String, String?, String?, Double, Double?, Double?, Int32?, Double?).self)
        let date = { (value: Double?) in value.map { Date(timeIntervalSince1970: $0) } }
        return DeviceInfo(
            id: id, userID: userID, userName: userName, name: name, clientID: clientID, clientVersion: clientVersion,
            createdAt: Date(timeIntervalSince1970: created), firstSyncAt: date(first), lastSyncAt: date(last), waiting: waiting.map(Int.init),
            revokedAt: date(revoked))
    }

    public func devices(projectID: Int64, userID: Int64?) async throws -> [DeviceInfo] {
        let client = client
        return try await perform {
            let rows: [PostgresRow]
            if let userID {
                rows = try await client.query("""
                    SELECT \(unescaped: Self.deviceColumns) WHERE d.project_id = \(projectID) AND d.user_id = \(userID) ORDER BY d.id DESC
                    """).collect()
            } else {
                rows = try await client.query("SELECT \(unescaped: Self.deviceColumns) WHERE d.project_id = \(projectID) ORDER BY d.id DESC").collect()
            }
            return try rows.map(Self.device)
        }
    }

    public func revokeDevice(projectID: Int64, deviceID: Int64, at: Date) async throws -> DeviceInfo? {
        try await transaction { connection in
            guard let row = try await connection.query(
                "SELECT \(unescaped: Self.deviceColumns) WHERE d.id = \(deviceID) AND d.project_id = \(projectID) FOR UPDATE OF t",
                logger: .quiet).collect().first
            else { return nil }
            try await connection.query("""
                UPDATE tokens SET revoked_at = \(at.timeIntervalSince1970)
                WHERE revoked_at IS NULL AND id = (SELECT token_id FROM devices WHERE id = \(deviceID))
                """, logger: .quiet)
            return try Self.device(row)
        }
    }

    public func recordDeviceSync(tokenID: Int64, report: DeviceReport) async throws {
        let client = client
        let at = report.at.timeIntervalSince1970
        let waiting = report.waiting.map { Int32(clamping: $0) }
        _ = try await perform {
            try await client.query("""
                UPDATE devices SET client_id = coalesce(\(report.clientID), client_id), client_version = coalesce(\(report.clientVersion), client_version),
                    waiting = coalesce(\(waiting), waiting), first_sync_at = coalesce(first_sync_at, \(at)), last_sync_at = \(at)
                WHERE token_id = \(tokenID)
                """)
        }
    }

    public func tokenRevoked(tokenHash: Data) async throws -> Bool {
        let client = client
        return try await perform {
            try await !client.query("""
                SELECT 1 FROM tokens WHERE token_hash = \(ByteBuffer(bytes: tokenHash)) AND revoked_at IS NOT NULL
                """).collect().isEmpty
        }
    }

    public func createLoginCode(_ code: LoginCodeRecord) async throws {
        let client = client
        _ = try await perform {
            try await client.query("""
                INSERT INTO login_codes (code_hash, project_id, user_id, created_by, created_at, expires_at)
                VALUES (\(ByteBuffer(bytes: code.codeHash)), \(code.projectID), \(code.userID), \(code.createdBy),
                        \(code.createdAt.timeIntervalSince1970), \(code.expiresAt.timeIntervalSince1970))
                """)
        }
    }

    public func redeemLoginCode(codeHash: Data, tokenHash: Data, deviceName: String, clientVersion: String?, publicKey: String?, now: Date) async throws -> LoginCodeRedemption {
        try await transaction { connection in
            guard let row = try await connection.query("""
                SELECT c.id, c.project_id, c.user_id, c.expires_at, c.used_at, u.name, p.name FROM login_codes c
                JOIN users u ON u.id = c.user_id JOIN projects p ON p.id = c.project_id
                WHERE c.code_hash = \(ByteBuffer(bytes: codeHash)) FOR UPDATE OF c
                """, logger: .quiet).collect().first
            else { return .unknown }
            let (codeID, projectID, userID, expires, used, userName, projectName) = try row.decode((Int64, Int64, Int64, Double, Double?, String, String).self)
            if used != nil { return .used }
            let time = now.timeIntervalSince1970
            if expires <= time { return .expired }
            guard try await !connection.query(
                "SELECT 1 FROM memberships WHERE user_id = \(userID) AND project_id = \(projectID)", logger: .quiet).collect().isEmpty
            else { return .notAMember }
            let tokenID = try await connection.query("""
                INSERT INTO tokens (user_id, token_hash, created_at) VALUES (\(userID), \(ByteBuffer(bytes: tokenHash)), \(time)) RETURNING id
                """, logger: .quiet).collect().first?.decode(Int64.self)
            let deviceID = try await connection.query("""
                INSERT INTO devices (token_id, user_id, project_id, name, client_version, created_at, public_key, key_registered_at)
                VALUES (\(tokenID), \(userID), \(projectID), \(deviceName), \(clientVersion), \(time), \(publicKey), \(publicKey == nil ? nil : time)) RETURNING id
                """, logger: .quiet).collect().first?.decode(Int64.self) ?? 0
            try await connection.query("UPDATE login_codes SET used_at = \(time), device_id = \(deviceID) WHERE id = \(codeID)", logger: .quiet)
            return .enrolled(deviceID: deviceID, userID: userID, userName: userName, projectID: projectID, projectName: projectName)
        }
    }
}
