import Foundation
import Logging
#if PostgreSQL
import ServerPostgres
#endif
import ServerCore
import ServerSQLite
import ServerStorage

/// Where the server keeps its data: an embedded SQLite file in a data directory (the default), or a
/// PostgreSQL database shared by several server instances (in a build with the `PostgreSQL` trait, the
/// default; `make demo` builds without it). The server's composition root: the only place that names both
/// backends (ServerCore serves whichever storage it is handed).
enum StorageLocation: Sendable, Hashable {
    case sqlite(directory: String)
    #if PostgreSQL
    case postgres(PostgresStorage.Configuration)
    #endif

    /// `database` is the `--database` URL (nil: SQLite under `dataDirectory`).
    init(database: String?, dataDirectory: String, poolSize: Int = 16, statementTimeout: Duration = .seconds(30)) throws {
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
    static let withoutPostgreSQL = StorageError(.unavailable, """
        This fieldsheet-server was built without PostgreSQL (`make demo` leaves it out); it keeps its data in SQLite \
        under --data. For --database, build it with the default traits: swift build --product fieldsheet-server.
        """)

    /// Says where, without secrets, for messages.
    var displayName: String {
        switch self {
        case .sqlite(let directory): "the data directory \(directory)"
        #if PostgreSQL
        case .postgres(let configuration): configuration.redactedURL
        #endif
        }
    }

    /// Opens the storage (connecting nothing yet).
    func open(logger: Logger) throws -> StorageHandle {
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
