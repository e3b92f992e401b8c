import Foundation
#if canImport(Glibc)
import Glibc
#endif
import GRDB
import ServerStorage

/// ``ServerStorage`` on an embedded SQLite database (GRDB, WAL, `synchronous=FULL`).
///
/// One `DatabasePool` per process: many readers, one writer. The single writer serializes push
/// transactions, which makes the change-feed sequence follow commit order.
public struct SQLiteStorage: ServerStorage {
    package let pool: DatabasePool
    /// The data directory.
    let directory: String
    public let changes: ChangeNotifier
    /// Attachment bytes: files in the data directory's `attachments/`.
    public var attachments: any AttachmentStore { files }
    let files: FileAttachmentStore
    /// Pushes waiting for the writer, committed together.
    package let pushes = GroupCommit()
    /// Wakes the webhook delivery service when a push wrote events.
    public let webhookSignal = WebhookSignal()
    /// The WAL's checkpoints, run off the writer's path (``WALCheckpointer``).
    package let checkpoints: WALCheckpointer

    /// Opens (creating when needed) `fieldsheet.sqlite` in `directory`. What it creates only its owner may
    /// read: the directory 0700, the database 0600 (SQLite gives its `-wal` and `-shm` files the
    /// database's mode). An existing directory or database keeps the mode the operator gave it.
    public init(directory: String) throws {
        try self.init(directory: directory, checkpoints: .standard)
    }

    /// ``init(directory:)`` with the WAL's checkpoints at `checkpoints` (tests use small bounds).
    package init(directory: String, checkpoints bounds: WALCheckpointer.Bounds) throws {
        let path = (directory as NSString).appendingPathComponent("fieldsheet.sqlite")
        self.directory = directory
        try Self.createPrivately(directory: directory, database: path)
        // Before the pool opens: opening one writes to the file (GRDB makes sure the WAL exists).
        try Self.refuseNewerSchema(path)
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            // Acknowledge only what survives a power cut.
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let checkpoints = WALCheckpointer(path: path, bounds: bounds, configuration: configuration)
        var poolConfiguration = configuration
        poolConfiguration.prepareDatabase { db in
            // The writer's commits ask for checkpoints; it does not run them (readers never commit).
            if !db.configuration.readonly { checkpoints.install(on: db) }
        }
        pool = try DatabasePool(path: path, configuration: poolConfiguration)
        // Opening the pool set its writer to `synchronous=NORMAL` (GRDB's WAL set-up runs after
        // `prepareDatabase`): FULL again, so a commit syncs the WAL before its push is answered. The writer
        // connection lives as long as the pool, so this holds for every write.
        try pool.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA synchronous = FULL") }
        self.checkpoints = checkpoints
        changes = Self.changeNotifier(pool)
        files = FileAttachmentStore(directory: (directory as NSString).appendingPathComponent("attachments"))
    }

    /// Creates `directory` (mode 0700) and an empty `database` file (mode 0600) when they do not exist.
    static func createPrivately(directory: String, database: String) throws {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        let hint = "Pass --data DIR (or set FIELDSHEET_DATA) to a directory the server's user may write, or create it for that user."
        if !manager.fileExists(atPath: directory, isDirectory: &isDirectory) {
            do {
                try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
            } catch {
                throw ServerConfigurationError("Cannot create the data directory \(directory): \((error as NSError).localizedDescription) \(hint)")
            }
            guard chmod(directory, 0o700) == 0 else {
                throw ServerConfigurationError("Cannot make the data directory \(directory) private: \(String(cString: strerror(errno))).")
            }
        } else if !isDirectory.boolValue {
            throw ServerConfigurationError("The data directory \(directory) is a file. \(hint)")
        }
        let descriptor = open(database, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        if descriptor >= 0 {
            close(descriptor)
        } else if errno != EEXIST {
            throw ServerConfigurationError("Cannot create the database \(database): \(String(cString: strerror(errno))). \(hint)")
        }
    }

    /// What a migration does besides its SQL, by migration identifier; each runs after that migration's
    /// statements (``SQLiteSchema``, compiled in from `Schema/server-sqlite.sql`).
    static let swiftSteps: [String: @Sendable (Database) throws -> Void] = [
        "v2-record-fields": RecordFieldsMigration.convertSQLite,
    ]

    /// Every migration of `Schema/server-sqlite.sql`, in order, each with its Swift step if it has one.
    static let migrator: DatabaseMigrator = {
        var migrator = DatabaseMigrator()
        for migration in SQLiteSchema.migrations {
            let step = swiftSteps[migration.id]
            migrator.registerMigration(migration.id) { db in
                for statement in migration.statements {
                    try db.execute(sql: statement)
                }
                try step?(db)
            }
        }
        return migrator
    }()

    /// Applies the migrations the database lacks; refuses (``StorageError/newerSchema(_:unknown:known:)``),
    /// changing nothing, a database that records a migration this server does not know.
    public func migrate() async throws {
        let migrator = Self.migrator
        try Self.refuseNewerSchema(applied: try await pool.read { db in try migrator.appliedIdentifiers(db) }, path: pool.path)
        try migrator.migrate(pool)
    }

    /// Reads the applied migrations of the database at `path` through a read-only connection, which
    /// leaves the file as it is, and refuses a database that records one this server does not know.
    ///
    /// A read-only connection to a database in WAL mode still creates its `-wal` and `-shm` files when they
    /// are missing (and leaves them); those this check created are removed again, so a refused database is
    /// left exactly as it was found.
    static func refuseNewerSchema(_ path: String) throws {
        let sideFiles = [path + "-wal", path + "-shm"]
        let existed = sideFiles.map { FileManager.default.fileExists(atPath: $0) }
        defer {
            // Only when neither existed: then no other connection had the database open in WAL mode.
            if !existed.contains(true) {
                for file in sideFiles { try? FileManager.default.removeItem(atPath: file) }
            }
        }
        var configuration = Configuration()
        configuration.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        defer { try? queue.close() }
        try refuseNewerSchema(applied: try queue.read { db in try migrator.appliedIdentifiers(db) }, path: path)
    }

    static func refuseNewerSchema(applied: Set<String>, path: String) throws {
        let unknown = applied.subtracting(migrator.migrations)
        guard unknown.isEmpty else {
            throw StorageError.newerSchema("The database \(path)", unknown: unknown.sorted(), known: migrator.migrations)
        }
    }

    public func ping() async throws {
        _ = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    public var freeBytes: Int64? { FileAttachmentStore.freeBytes(directory) }

    /// Every transaction that writes: a full disk (`SQLITE_FULL`) is ``StorageError/Code/insufficientStorage``
    /// (SQLite rolled the transaction back), never a bare database error.
    func write<T: Sendable>(_ updates: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await pool.write(updates)
        } catch let error as DatabaseError {
            throw Self.storageError(error)
        }
    }

    /// A push's transaction, written with the pushes that wait for the writer with it (``GroupCommit``), each
    /// in a savepoint of its own: what `updates` throws leaves nothing of that push and fails only it. Once the
    /// group is durable, and before its pushes are answered, each push's webhook deliveries are handed over.
    func groupWrite(_ updates: @escaping @Sendable (Database) throws -> PushPlan) async throws -> PushPlan {
        let signal = webhookSignal
        do {
            return try await pushes.run(pool, updates) { plan, durable in signal.committed(plan, durable: durable) }
        } catch let error as DatabaseError {
            throw Self.storageError(error)
        }
    }

    /// A full disk (`SQLITE_FULL`) as ``StorageError/Code/insufficientStorage``; any other error as it is.
    static func storageError(_ error: DatabaseError) -> any Error {
        guard error.resultCode == .SQLITE_FULL else { return error }
        return StorageError.insufficientStorage("The disk holding the database is full (\(error.message ?? "SQLITE_FULL")).")
    }

    /// The schema as SQLite reports it, for the test that holds it to `Schema/server-sqlite.sql`.
    package func schemaSQL() async throws -> [String] {
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
        try await write { db in
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

    public func addMember(userName: String, projectID: Int64, role: Role, tokenHash: Data) async throws {
        try await write { db in
            let now = Date().timeIntervalSince1970
            try db.execute(sql: "INSERT INTO users (name, created_at) VALUES (?, ?) ON CONFLICT (name) DO NOTHING", arguments: [userName, now])
            guard let userID = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [userName]) else {
                throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.")
            }
            try db.execute(
                sql: "INSERT INTO memberships (user_id, project_id, role) VALUES (?, ?, ?) ON CONFLICT (user_id, project_id) DO UPDATE SET role = excluded.role",
                arguments: [userID, projectID, role.rawValue])
            try db.execute(sql: "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (?, ?, ?)", arguments: [userID, tokenHash, now])
            try db.execute(
                sql: "INSERT INTO devices (token_id, user_id, project_id, name, created_at) VALUES (?, ?, ?, ?, ?)",
                arguments: [db.lastInsertedRowID, userID, projectID, DeviceInfo.commandLineTokenName, now])
        }
    }

    public func revokeTokens(userName: String) async throws -> Int {
        try await write { db in
            guard let userID = try Int64.fetchOne(db, sql: "SELECT id FROM users WHERE name = ?", arguments: [userName]) else {
                throw StorageError(.unknownUser, "There is no user named \"\(userName)\".")
            }
            try db.execute(
                sql: "UPDATE tokens SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL",
                arguments: [Date().timeIntervalSince1970, userID])
            return db.changesCount
        }
    }

    public func principal(tokenHash: Data) async throws -> Principal? {
        try await pool.read { db in
            // Every request asks this: the statements are prepared once per connection.
            guard let row = try Row.fetchOne(db.cachedStatement(sql: """
                SELECT t.token_hash, t.id AS token_id, u.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.token_hash = ? AND t.revoked_at IS NULL
                """), arguments: [tokenHash]) else { return nil }
            let stored: Data = row["token_hash"]
            guard ConstantTime.equals(stored, tokenHash) else { return nil }
            var principal = try Self.principal(db, userID: row["id"], name: row["name"], tokenID: row["token_id"])
            principal.tokenID = row["token_id"]
            return principal
        }
    }

    /// The user with their memberships, as the token `tokenId` may act: a token a device got for one project
    /// (a login code's) acts in that project only and never as a server admin, whatever else its person may do.
    static func principal(_ db: Database, userID: Int64, name: String, tokenID: Int64) throws -> Principal {
        let device = try Row.fetchOne(db.cachedStatement(sql: "SELECT project_id, id, public_key FROM devices WHERE token_id = ?"), arguments: [tokenID])
        let scope: Int64? = device?[0]
        var memberships: [String: Principal.Membership] = [:]
        for membership in try Row.fetchAll(db.cachedStatement(sql: """
            SELECT m.project_id, p.name, m.role FROM memberships m JOIN projects p ON p.id = m.project_id WHERE m.user_id = ?
            """), arguments: [userID]) {
            guard let role = Role(rawValue: membership["role"]) else { continue }
            let projectID: Int64 = membership["project_id"]
            if let scope, projectID != scope { continue }
            let name: String = membership["name"]
            memberships[name] = .init(projectID: projectID, projectName: name, role: role)
        }
        let serverAdmin = scope == nil
            ? try Bool.fetchOne(db.cachedStatement(sql: "SELECT server_admin FROM users WHERE id = ?"), arguments: [userID]) ?? false
            : false
        var principal = Principal(userID: userID, userName: name, memberships: memberships, isServerAdmin: serverAdmin)
        principal.deviceID = device?[1]
        principal.devicePublicKey = device?[2]
        return principal
    }
}
