import Foundation
import GRDB

/// ``ServerStorage`` on an embedded SQLite database (GRDB, WAL, `synchronous=FULL`).
///
/// One `DatabasePool` per process: many readers, one writer. The single writer serializes push
/// transactions, which makes the change-feed sequence follow commit order.
public struct SQLiteStorage: ServerStorage {
    let pool: DatabasePool
    public let changes: ChangeNotifier

    /// Opens (creating when needed) `fieldsheet.sqlite` in `directory`.
    public init(directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Acknowledge only what survives a power cut.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        pool = try DatabasePool(path: (directory as NSString).appendingPathComponent("fieldsheet.sqlite"), configuration: configuration)
        changes = Self.changeNotifier(pool)
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: ServerSchema.v1)
        }
        migrator.registerMigration("lowercase-record-ids") { db in try db.execute(sql: lowercaseRecordIds) }
        return migrator
    }

    public func migrate() async throws {
        try Self.migrator.migrate(pool)
    }

    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    /// The schema as SQLite reports it, for the test that holds it to `Schema/server-sqlite.sql`.
    public func schemaSQL() async throws -> [String] {
        try await pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'
                ORDER BY rowid
                """)
        }
    }

    // MARK: Projects, users and tokens

    public func createProject(name: String) async throws -> ProjectInfo {
        try await pool.write { db in
            if try Int64.fetchOne(db, sql: "SELECT id FROM projects WHERE name = ?", arguments: [name]) != nil {
                throw StorageError(.projectExists, "A project named \"\(name)\" already exists.")
            }
            try db.execute(sql: "INSERT INTO projects (name, created_at) VALUES (?, ?)", arguments: [name, Date().timeIntervalSince1970])
            return ProjectInfo(id: db.lastInsertedRowID, name: name)
        }
    }

    public func project(named name: String) async throws -> ProjectInfo? {
        try await pool.read { db in
            try Row.fetchOne(db, sql: "SELECT id, name FROM projects WHERE name = ?", arguments: [name])
                .map { ProjectInfo(id: $0["id"], name: $0["name"]) }
        }
    }

    public func projects() async throws -> [ProjectInfo] {
        try await pool.read { db in
            try Row.fetchAll(db, sql: "SELECT id, name FROM projects ORDER BY name").map { ProjectInfo(id: $0["id"], name: $0["name"]) }
        }
    }

    public func addMember(userName: String, projectId: Int64, role: Role, tokenHash: Data) async throws {
        try await pool.write { db in
            let now = Date().timeIntervalSince1970
            try db.execute(sql: "INSERT INTO users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [userName, now])
            guard let userId = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [userName]) else {
                throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.")
            }
            try db.execute(
                sql: "INSERT INTO memberships (user_id, project_id, role) VALUES (?, ?, ?) ON CONFLICT (user_id, project_id) DO UPDATE SET role = excluded.role",
                arguments: [userId, projectId, role.rawValue])
            try db.execute(sql: "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)", arguments: [userId, tokenHash, now])
        }
    }

    public func revokeTokens(userName: String) async throws -> Int {
        try await pool.write { db in
            guard let userId = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [userName]) else {
                throw StorageError(.unknownUser, "There is no user named \"\(userName)\".")
            }
            try db.execute(
                sql: "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
                arguments: [Date().timeIntervalSince1970, userId])
            return db.changesCount
        }
    }

    public func principal(tokenHash: Data) async throws -> Principal? {
        try await pool.read { db in
            guard let row = try Row.fetchOne(db, sql: """
                SELECT t.token_hash, u.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.token_hash = ? AND t.revoked_at IS NULL
                """, arguments: [tokenHash]) else { return nil }
            let stored: Data = row["token_hash"]
            guard AccessToken.constantTimeEquals(stored, tokenHash) else { return nil }
            let userId: Int64 = row["id"]
            var memberships: [String: Principal.Membership] = [:]
            for membership in try Row.fetchAll(db, sql: """
                SELECT m.project_id, p.name, m.role FROM memberships m JOIN projects p ON p.id = m.project_id WHERE m.user_id = ?
                """, arguments: [userId]) {
                guard let role = Role(rawValue: membership["role"]) else { continue }
                let name: String = membership["name"]
                memberships[name] = .init(projectId: membership["project_id"], projectName: name, role: role)
            }
            return Principal(userId: userId, userName: row["name"], memberships: memberships)
        }
    }
}
