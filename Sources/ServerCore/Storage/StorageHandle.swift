import ServerStorage
import ServiceLifecycle

/// An open storage and the background work it needs while in use (PostgreSQL's connection pool; SQLite
/// needs none): what ``buildApplication(_:storage:logger:onServerRunning:)`` serves. Which backend to open is
/// the executable's choice (fieldsheet-server's `--data` or `--database`); ServerCore links none of them.
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
