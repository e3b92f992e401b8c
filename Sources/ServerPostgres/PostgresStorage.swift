import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import ServerStorage
import ServiceLifecycle
import _ConnectionPoolModule

/// ``ServerStorage`` on PostgreSQL (postgres-nio's pooled `PostgresClient`), for several stateless
/// server instances on one database.
///
/// ## The change feed stays gap-free with many writers
///
/// A reader pages the feed by `sequence` and moves its cursor past the highest number it saw, so a number
/// must never become visible while a lower one is still uncommitted (README, "Architecture: one server, or many on PostgreSQL"). A
/// PostgreSQL `SEQUENCE` does not give that: two transactions take 6 and 7, 7 commits first, a reader sees 7
/// and never sees 6. Instead every push takes its numbers from the project's counter row, inside its
/// transaction and as its last step before writing:
///
///     UPDATE projects SET last_sequence = last_sequence + n WHERE id = $1 RETURNING last_sequence
///
/// The UPDATE takes the row's lock, held until COMMIT or ROLLBACK. A second writer's UPDATE waits for that
/// lock, then (READ COMMITTED re-reads the row once the first commits) continues from the first writer's
/// value. PostgreSQL releases a transaction's locks only after its commit is visible to new snapshots, so
/// the second writer's numbers cannot become visible before the first writer's: numbers appear in commit
/// order, whichever instance wrote them. A rolled-back writer's UPDATE rolls back too, so its numbers are
/// reused, never skipped. The lock is held only for the writes and the commit (the planning of the batch
/// happens before it), under per-record and per-device advisory locks that keep two instances from
/// merging the same record, or running the same device's retried batch, at the same time.
///
/// ## Failures
///
/// Every call has a deadline (``Configuration/statementTimeout``, also sent as the session's
/// `statement_timeout`). A database that is down, unreachable or too slow makes the call throw
/// ``StorageError/Code/unavailable``, which the server answers 503; the pool reconnects by itself when the
/// database returns. A push that failed that way may or may not have committed: the device retries it with
/// the same mutation ids and gets the stored outcomes, so nothing is lost or applied twice.
public struct PostgresStorage: ServerStorage {
    public let configuration: Configuration
    let client: PostgresClient
    let logger: Logger
    public let changes = ChangeNotifier()
    /// Wakes this instance's webhook delivery service when one of its pushes wrote events.
    public let webhookSignal = WebhookSignal()
    /// The attachments this instance is receiving now (another instance's are refused chunk by chunk).
    let activeUploads = NIOLockedValueBox(Set<AttachmentUploadKey>())
    /// The running SHA-256 of uploads this instance left part way.
    let runningHashes = RunningHashes()
    /// Vacuums `records` in the background after this instance's pushes wrote many records.
    let vacuum: RecordsVacuum

    /// Creates the storage; nothing connects until ``run()`` is running and a call needs a connection.
    public init(_ configuration: Configuration, logger: Logger = Logger(label: "fieldsheet.postgres")) {
        self.configuration = configuration
        self.logger = logger
        self.vacuum = RecordsVacuum(configuration: configuration, logger: logger)
        var client = PostgresClient.Configuration(
            host: configuration.host, port: configuration.port, username: configuration.user,
            password: configuration.password, database: configuration.database, tls: .disable)
        client.options.maximumConnections = max(1, configuration.poolSize)
        client.options.connectTimeout = configuration.statementTimeout
        let milliseconds = configuration.statementTimeout.components.seconds * 1000 + configuration.statementTimeout.components.attoseconds / 1_000_000_000_000_000
        client.options.additionalStartupParameters = [("statement_timeout", String(milliseconds)), ("application_name", "fieldsheet-server")]
        self.client = PostgresClient(configuration: client, backgroundLogger: logger)
    }

    /// The connection pool, the change listener (see ``ChangeFeedStorage``) and the vacuum after large imports
    /// (``RecordsVacuum``); runs until cancelled or shut down gracefully.
    public var service: any Service {
        PostgresBackgroundWork(
            client: client, listener: PostgresChangeListener(configuration: configuration, notifier: changes, logger: logger),
            vacuum: vacuum)
    }

    // MARK: Calls with a deadline

    /// Runs `body` with the deadline, turning connection failures and timeouts into ``StorageError/unavailable(_:)``.
    ///
    /// The caller gets its answer when the deadline passes even if `body` does not react to cancellation
    /// at once (a connection request queued in a pool that cannot reach the server): `body` runs in a task
    /// of its own, is cancelled, and finishes in the background.
    func perform<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let timeout = configuration.statementTimeout
        let race = DeadlineRace<T>()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                race.start(continuation)
                let work = Task {
                    do { race.finish(.success(try await body())) } catch { race.finish(.failure(Self.storageError(error))) }
                }
                let timer = Task {
                    try await Task.sleep(for: timeout)
                    if race.finish(.failure(StorageError.unavailable("The database did not answer within \(timeout)."))) { work.cancel() }
                }
                race.onFinish { timer.cancel() }
            }
        } onCancel: {
            race.finish(.failure(CancellationError()))
        }
    }

    /// Runs `body` in one transaction on one pooled connection, with the deadline.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (PostgresConnection) async throws -> T) async throws -> T {
        let client = client
        let logger = logger
        return try await perform {
            try await client.withConnection { connection in
                try await connection.withTransaction(logger: logger) { connection in try await body(connection) }
            }
        }
    }

    /// The error a caller may see: ``StorageError`` as it is, connection trouble as `unavailable`, anything
    /// else (a bug, a constraint we did not expect) unchanged, to be logged and answered 500 without SQL.
    static func storageError(_ error: any Error) -> any Error {
        switch error {
        case let error as StorageError:
            return error
        case let error as PostgresTransactionError:
            if let inner = error.closureError ?? error.beginError ?? error.commitError { return storageError(inner) }
            return StorageError.unavailable()
        case let error as PSQLError:
            if error.code == .server {
                let state = error.serverInfo?[.sqlState] ?? ""
                // 53100: disk full.
                if state == "53100" { return AttachmentError.insufficientStorage }
                // 08: connection exception; 53: insufficient resources; 57: operator intervention (shutdown,
                // statement timeout); 40001/40P01: serialization failure, deadlock — all worth a retry.
                if ["08", "53", "57"].contains(String(state.prefix(2))) || ["40001", "40P01"].contains(state) {
                    return StorageError.unavailable("The database refused or cancelled the request (SQLSTATE \(state)).")
                }
                return error
            }
            switch error.code {
            case .tooManyParameters, .messageDecodingFailure, .invalidCommandTag, .unexpectedBackendMessage:
                return error
            default:
                return StorageError.unavailable()
            }
        case is ConnectionPoolError, is CancellationError, is ChannelError, is IOError:
            return StorageError.unavailable()
        default:
            return error
        }
    }

    /// Whether `error` is PostgreSQL's unique violation (SQLSTATE 23505).
    static func isUniqueViolation(_ error: any Error) -> Bool {
        (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    public func ping() async throws {
        let client = client
        try await perform { _ = try await client.query("SELECT 1").collect() }
    }

    /// Unknown: the disk is the database server's (a full one is SQLSTATE 53100, answered as a full disk).
    public var freeBytes: Int64? { nil }

    // MARK: Projects, users and tokens

    public func createProject(name: String) async throws -> ProjectInfo {
        try await transaction { connection in
            let now = Date().timeIntervalSince1970
            let rows = try await connection.query(
                "INSERT INTO projects (name, created_at) VALUES (\(name), \(now)) ON CONFLICT (name) DO NOTHING RETURNING id",
                logger: Logger.quiet)
            if let row = try await rows.collect().first { return ProjectInfo(id: try row.decode(Int64.self), name: name) }
            throw StorageError(.projectExists, "A project named \"\(name)\" already exists.")
        }
    }

    public func project(named name: String) async throws -> ProjectInfo? {
        let client = client
        return try await perform {
            try await client.query("SELECT id, name FROM projects WHERE name = \(name)").collect().first.map { row in
                let (id, name) = try row.decode((Int64, String).self)
                return ProjectInfo(id: id, name: name)
            }
        }
    }

    public func projects() async throws -> [ProjectInfo] {
        let client = client
        return try await perform {
            var result: [ProjectInfo] = []
            for try await (id, name) in try await client.query("SELECT id, name FROM projects ORDER BY name").decode((Int64, String).self) {
                result.append(ProjectInfo(id: id, name: name))
            }
            return result
        }
    }

    public func addMember(userName: String, projectID: Int64, role: Role, tokenHash: Data) async throws {
        try await transaction { connection in
            let now = Date().timeIntervalSince1970
            try await connection.query("INSERT INTO users (name, created_at) VALUES (\(userName), \(now)) ON CONFLICT (name) DO NOTHING", logger: .quiet)
            var userID: Int64?
            for try await id in try await connection.query("SELECT id FROM users WHERE name = \(userName)", logger: .quiet).decode(Int64.self) { userID = id }
            guard let userID else { throw StorageError(.unknownUser, "The user \"\(userName)\" could not be created.") }
            try await connection.query("""
                INSERT INTO memberships (user_id, project_id, role) VALUES (\(userID), \(projectID), \(role.rawValue))
                ON CONFLICT (user_id, project_id) DO UPDATE SET role = excluded.role
                """, logger: .quiet)
            var tokenID: Int64?
            for try await id in try await connection.query(
                "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (\(userID), \(ByteBuffer(bytes: tokenHash)), \(now)) RETURNING id",
                logger: .quiet).decode(Int64.self) { tokenID = id }
            try await connection.query("""
                INSERT INTO devices (token_id, user_id, project_id, name, created_at)
                VALUES (\(tokenID), \(userID), \(projectID), \(DeviceInfo.commandLineTokenName), \(now))
                """, logger: .quiet)
        }
    }

    public func revokeTokens(userName: String) async throws -> Int {
        try await transaction { connection in
            var userID: Int64?
            for try await id in try await connection.query("SELECT id FROM users WHERE name = \(userName)", logger: .quiet).decode(Int64.self) { userID = id }
            guard let userID else { throw StorageError(.unknownUser, "There is no user named \"\(userName)\".") }
            var count = 0
            let now = Date().timeIntervalSince1970
            for try await _ in try await connection.query(
                "UPDATE tokens SET revoked_at = \(now) WHERE user_id = \(userID) AND revoked_at IS NULL RETURNING id", logger: .quiet) {
                count += 1
            }
            return count
        }
    }

    public func principal(tokenHash: Data) async throws -> Principal? {
        let client = client
        return try await perform {
            var found: (stored: ByteBuffer, tokenID: Int64, id: Int64, name: String)?
            for try await row in try await client.query("""
                SELECT t.token_hash, t.id, u.id, u.name FROM tokens t JOIN users u ON u.id = t.user_id
                WHERE t.token_hash = \(ByteBuffer(bytes: tokenHash)) AND t.revoked_at IS NULL
                """).decode((ByteBuffer, Int64, Int64, String).self) {
                found = row
            }
            guard let found, ConstantTime.equals(Data(found.stored.readableBytesView), tokenHash) else { return nil }
            var principal = try await client.withConnection { connection in try await Self.principal(connection, userID: found.id, name: found.name, tokenID: found.tokenID) }
            principal.tokenID = found.tokenID
            return principal
        }
    }

    /// The user with their memberships, as the token `tokenId` may act: a token a device got for one project
    /// (a login code's) acts in that project only and never as a server admin, whatever else its person may do.
    static func principal(_ connection: PostgresConnection, userID: Int64, name: String, tokenID: Int64) async throws -> Principal {
        var scope: Int64?
        var device: (id: Int64, publicKey: String?)?
        for try await (project, id, publicKey) in try await connection.query(
            "SELECT project_id, id, public_key FROM devices WHERE token_id = \(tokenID)", logger: .quiet).decode((Int64?, Int64, String?).self) {
            scope = project
            device = (id, publicKey)
        }
        var memberships: [String: Principal.Membership] = [:]
        for try await (projectID, project, roleName) in try await connection.query("""
            SELECT m.project_id, p.name, m.role FROM memberships m JOIN projects p ON p.id = m.project_id WHERE m.user_id = \(userID)
            """, logger: .quiet).decode((Int64, String, String).self) {
            guard let role = Role(rawValue: roleName) else { continue }
            if let scope, projectID != scope { continue }
            memberships[project] = .init(projectID: projectID, projectName: project, role: role)
        }
        var serverAdmin = false
        for try await flag in try await connection.query("SELECT server_admin FROM users WHERE id = \(userID)", logger: .quiet).decode(Bool.self) {
            serverAdmin = flag && scope == nil
        }
        var principal = Principal(userID: userID, userName: name, memberships: memberships, isServerAdmin: serverAdmin)
        principal.deviceID = device?.id
        principal.devicePublicKey = device?.publicKey
        return principal
    }
}

/// The call and its deadline racing to answer one continuation: the first `finish` wins.
final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<T, any Error>?
        var result: Result<T, any Error>?
        var onFinish: (@Sendable () -> Void)?
    }

    private let state = NIOLockedValueBox(State())

    func start(_ continuation: CheckedContinuation<T, any Error>) {
        let early = state.withLockedValue { state -> Result<T, any Error>? in
            if state.result == nil { state.continuation = continuation }
            return state.result
        }
        if let early { continuation.resume(with: early) }
    }

    /// Answers the caller unless someone already did; returns whether this call did.
    @discardableResult
    func finish(_ result: Result<T, any Error>) -> Bool {
        let (continuation, onFinish, won) = state.withLockedValue { state -> (CheckedContinuation<T, any Error>?, (@Sendable () -> Void)?, Bool) in
            guard state.result == nil else { return (nil, nil, false) }
            state.result = result
            defer { state.continuation = nil; state.onFinish = nil }
            return (state.continuation, state.onFinish, true)
        }
        continuation?.resume(with: result)
        onFinish?()
        return won
    }

    /// Runs `action` when the race is decided (at once if it is).
    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let decided = state.withLockedValue { state -> Bool in
            if state.result == nil { state.onFinish = action }
            return state.result != nil
        }
        if decided { action() }
    }
}

extension Logger {
    /// For calls inside a transaction, which postgres-nio wants a logger for; the storage's own logger
    /// reports failures instead.
    static let quiet = Logger(label: "fieldsheet.postgres.quiet", factory: { _ in SwiftLogNoOpLogHandler() })
}
