import Foundation
import Logging
#if PostgreSQL
import ServerPostgres
#endif
import ServerSQLite
import ServerStorage
import ServiceLifecycle

/// Where the server keeps its data: an embedded SQLite file in a data directory (the default), or a
/// PostgreSQL database shared by several server instances (in a build with the `PostgreSQL` trait, the
/// default; `make demo` builds without it).
public enum StorageLocation: Sendable, Hashable {
    case sqlite(directory: String)
    #if PostgreSQL
    case postgres(PostgresStorage.Configuration)
    #endif

    /// `database` is the `--database` URL (nil: SQLite under `dataDirectory`).
    public init(database: String?, dataDirectory: String, poolSize: Int = 16, statementTimeout: Duration = .seconds(30)) throws {
        guard let database, !database.isEmpty else {
            self = .sqlite(directory: dataDirectory)
            return
        }
        #if PostgreSQL
        self = .postgres(try PostgresStorage.Configuration(url: database, poolSize: poolSize, statementTimeout: statementTimeout))
        #else
        throw Self.withoutPostgreSQL
        #endif
    }

    /// What a `--database` URL meets in a build without the PostgreSQL backend.
    public static let withoutPostgreSQL = StorageError(.unavailable, """
        This fieldsheet-server was built without PostgreSQL (`make demo` leaves it out); it keeps its data in SQLite \
        under --data. For --database, build it with the default traits: swift build --product fieldsheet-server.
        """)

    /// Says where, without secrets, for messages.
    public var displayName: String {
        switch self {
        case .sqlite(let directory): "the data directory \(directory)"
        #if PostgreSQL
        case .postgres(let configuration): configuration.redactedURL
        #endif
        }
    }

    /// Opens the storage (connecting nothing yet).
    public func open(logger: Logger) throws -> StorageHandle {
        switch self {
        case .sqlite(let directory):
            return StorageHandle(storage: try SQLiteStorage(directory: directory), service: nil)
        #if PostgreSQL
        case .postgres(let configuration):
            let storage = PostgresStorage(configuration, logger: logger)
            return StorageHandle(storage: storage, service: storage.service)
        #endif
        }
    }
}

/// An open storage and the background work it needs while in use (PostgreSQL's connection pool; SQLite
/// needs none).
public struct StorageHandle: Sendable {
    public let storage: any ServerStorage
    /// Runs beside the HTTP server in its service group, started before it and stopped after it.
    public let service: (any Service)?

    public init(storage: any ServerStorage, service: (any Service)?) {
        self.storage = storage
        self.service = service
    }

    /// Runs `body` with the background work running and (unless `migrating` is false) the schema
    /// migrated, then stops the background work (for the admin commands and tests, which use the storage
    /// without an HTTP server).
    public func withRunning<T: Sendable>(migrating: Bool = true, _ body: (any ServerStorage) async throws -> T) async throws -> T {
        guard let service else {
            if migrating { try await storage.migrate() }
            return try await body(storage)
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            defer { group.cancelAll() }
            if migrating { try await storage.migrate() }
            return try await body(storage)
        }
    }
}
