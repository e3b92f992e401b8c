import Foundation
import Logging
import ServerPostgres
import ServerSQLite
import ServerStorage
import ServiceLifecycle

/// Where the server keeps its data: an embedded SQLite file in a data directory (the default), or a
/// PostgreSQL database shared by several server instances.
public enum StorageLocation: Sendable, Hashable {
    case sqlite(directory: String)
    case postgres(PostgresStorage.Configuration)

    /// `database` is the `--database` URL (nil: SQLite under `dataDirectory`).
    public init(database: String?, dataDirectory: String, poolSize: Int = 16, statementTimeout: Duration = .seconds(30)) throws {
        guard let database, !database.isEmpty else {
            self = .sqlite(directory: dataDirectory)
            return
        }
        self = .postgres(try PostgresStorage.Configuration(url: database, poolSize: poolSize, statementTimeout: statementTimeout))
    }

    /// Says where, without secrets, for messages.
    public var displayName: String {
        switch self {
        case .sqlite(let directory): "the data directory \(directory)"
        case .postgres(let configuration): configuration.redactedURL
        }
    }

    /// Opens the storage (connecting nothing yet).
    public func open(logger: Logger) throws -> StorageHandle {
        switch self {
        case .sqlite(let directory):
            return StorageHandle(storage: try SQLiteStorage(directory: directory), service: nil)
        case .postgres(let configuration):
            let storage = PostgresStorage(configuration, logger: logger)
            return StorageHandle(storage: storage, service: storage.service)
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
