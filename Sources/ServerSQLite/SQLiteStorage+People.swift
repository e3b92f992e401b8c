import Foundation
import GRDB
import ServerStorage

extension SQLiteStorage {
    public func setServerAdmin(userName: String, _ isAdmin: Bool) async throws {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [userName, Date().timeIntervalSince1970])
            try db.execute(sql: "UPDATE users SET server_admin = ? WHERE name = ?", arguments: [isAdmin, userName])
        }
    }

    public func addToken(userName: String, projectID: Int64?, tokenHash: Data) async throws {
        try await write { db in
            let now = Date().timeIntervalSince1970
            try db.execute(sql: "INSERT INTO users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [userName, now])
            guard let userID = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [userName]) else {
                throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.")
            }
            try db.execute(sql: "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)", arguments: [userID, tokenHash, now])
            try db.execute(
                sql: "INSERT INTO devices (token_id, user_id, project_id, name, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [db.lastInsertedRowID, userID, projectID, DeviceInfo.commandLineTokenName, now])
        }
    }

    public func userID(named name: String) async throws -> Int64? {
        try await pool.read { db in try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [name]) }
    }

    public func setMembership(userName: String, projectID: Int64, role: Role) async throws -> Int64 {
        try await write { db in
            try db.execute(
                sql: "INSERT INTO users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING",
                arguments: [userName, Date().timeIntervalSince1970])
            guard let userID = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [userName]) else {
                throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.")
            }
            try db.execute(
                sql: "INSERT INTO memberships (user_id, project_id, role) VALUES (?, ?, ?) ON CONFLICT (user_id, project_id) DO UPDATE SET role = excluded.role",
                arguments: [userID, projectID, role.rawValue])
            return userID
        }
    }

    public func removeMember(projectID: Int64, userID: Int64, at: Date) async throws -> Int {
        try await write { db in
            try db.execute(sql: "DELETE FROM memberships WHERE user_id = ? AND project_id = ?", arguments: [userID, projectID])
            guard db.changesCount == 1 else { throw StorageError(.unknownUser, "That person is not a member of this project.") }
            try db.execute(sql: """
                UPDATE tokens SET revoked_at = ?
                WHERE revoked_at IS NULL AND id IN (SELECT token_id FROM devices WHERE user_id = ? AND project_id = ?)
                """, arguments: [at.timeIntervalSince1970, userID, projectID])
            return db.changesCount
        }
    }

    static let deviceColumns = """
        d.id, d.user_id, u.name, d.name, d.client_id, d.client_version, d.created_at, d.first_sync_at, d.last_sync_at, d.waiting, t.revoked_at
        FROM devices d JOIN tokens t ON t.id = d.token_id JOIN users u ON u.id = d.user_id
        """

    static func device(_ row: Row) -> DeviceInfo {
        let date = { (value: Double?) in value.map { Date(timeIntervalSince1970: $0) } }
        return DeviceInfo(
            id: row[0], userID: row[1], userName: row[2], name: row[3], clientID: row[4], clientVersion: row[5],
            createdAt: Date(timeIntervalSince1970: row[6]), firstSyncAt: date(row[7]), lastSyncAt: date(row[8]), waiting: row[9],
            revokedAt: date(row[10]))
    }

    public func devices(projectID: Int64, userID: Int64?) async throws -> [DeviceInfo] {
        try await pool.read { db in
            var sql = "SELECT \(Self.deviceColumns) WHERE d.project_id = ?"
            var arguments: StatementArguments = [projectID]
            if let userID {
                sql += " AND d.user_id = ?"
                _ = arguments.append(contentsOf: [userID])
            }
            return try Row.fetchAll(db, sql: sql + " ORDER BY d.id DESC", arguments: arguments).map(Self.device)
        }
    }

    public func revokeDevice(projectID: Int64, deviceID: Int64, at: Date) async throws -> DeviceInfo? {
        try await write { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT \(Self.deviceColumns) WHERE d.id = ? AND d.project_id = ?", arguments: [deviceID, projectID])
            else { return nil }
            try db.execute(sql: """
                UPDATE tokens SET revoked_at = ? WHERE revoked_at IS NULL AND id = (SELECT token_id FROM devices WHERE id = ?)
                """, arguments: [at.timeIntervalSince1970, deviceID])
            return Self.device(row)
        }
    }

    public func recordDeviceSync(tokenID: Int64, report: DeviceReport) async throws {
        try await write { db in
            try db.execute(sql: """
                UPDATE devices SET client_id = coalesce(?, client_id), client_version = coalesce(?, client_version),
                    waiting = coalesce(?, waiting), first_sync_at = coalesce(first_sync_at, ?), last_sync_at = ?
                WHERE token_id = ?
                """, arguments: [report.clientID, report.clientVersion, report.waiting, report.at.timeIntervalSince1970, report.at.timeIntervalSince1970, tokenID])
        }
    }

    public func tokenRevoked(tokenHash: Data) async throws -> Bool {
        try await pool.read { db in
            try Bool.fetchOne(db, sql: "SELECT 1 FROM tokens WHERE token_hash = ? AND revoked_at IS NOT NULL", arguments: [tokenHash]) ?? false
        }
    }

    public func createLoginCode(_ code: LoginCodeRecord) async throws {
        try await write { db in
            try db.execute(sql: """
                INSERT INTO login_codes (code_hash, project_id, user_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?)
                """, arguments: [code.codeHash, code.projectID, code.userID, code.createdBy, code.createdAt.timeIntervalSince1970, code.expiresAt.timeIntervalSince1970])
        }
    }

    public func redeemLoginCode(codeHash: Data, tokenHash: Data, deviceName: String, clientVersion: String?, publicKey: String?, now: Date) async throws -> LoginCodeRedemption {
        try await write { db in
            guard let code = try Row.fetchOne(db, sql: """
                SELECT c.id, c.project_id, c.user_id, c.expires_at, c.used_at, u.name, p.name FROM login_codes c
                JOIN users u ON u.id = c.user_id JOIN projects p ON p.id = c.project_id WHERE c.code_hash = ?
                """, arguments: [codeHash]) else { return .unknown }
            let used: Double? = code[4]
            if used != nil { return .used }
            let expires: Double = code[3]
            if expires <= now.timeIntervalSince1970 { return .expired }
            let (codeID, projectID, userID): (Int64, Int64, Int64) = (code[0], code[1], code[2])
            guard try Bool.fetchOne(db, sql: "SELECT 1 FROM memberships WHERE user_id = ? AND project_id = ?", arguments: [userID, projectID]) ?? false
            else { return .notAMember }
            let time = now.timeIntervalSince1970
            try db.execute(sql: "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)", arguments: [userID, tokenHash, time])
            try db.execute(sql: """
                INSERT INTO devices (token_id, user_id, project_id, name, client_version, created_at, public_key, key_registered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
                """, arguments: [db.lastInsertedRowID, userID, projectID, deviceName, clientVersion, time, publicKey, publicKey == nil ? nil : time])
            let deviceID = db.lastInsertedRowID
            try db.execute(sql: "UPDATE login_codes SET used_at = ?, device_id = ? WHERE id = ?", arguments: [time, deviceID, codeID])
            return .enrolled(deviceID: deviceID, userID: userID, userName: code[5], projectID: projectID, projectName: code[6])
        }
    }
}
