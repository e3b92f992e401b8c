import Foundation
import NIOCore
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    /// Where the PostgreSQL server is and how the connection pool behaves.
    public struct Configuration: Sendable, Hashable {
        public var host: String
        public var port: Int
        public var user: String
        public var password: String?
        public var database: String
        /// Most connections this server instance opens (the pool's size).
        public var poolSize: Int
        /// Longest a statement may run, and longest a request waits for a pooled connection, before the
        /// request is answered 503 (`database-unavailable`) and nothing is acknowledged.
        public var statementTimeout: Duration
        /// How many records this instance's pushes write (insert or change) before it runs `VACUUM (SKIP_LOCKED)
        /// records` in the background, so index-only scans (an OData count) need not read the table right after
        /// a large import; nil or less than 1: never (autovacuum alone). See `RecordsVacuum`.
        public var vacuumAfterWrittenRecords: Int?

        public init(
            host: String = "127.0.0.1", port: Int = 5432, user: String, password: String? = nil, database: String,
            poolSize: Int = 16, statementTimeout: Duration = .seconds(30), vacuumAfterWrittenRecords: Int? = 10_000
        ) {
            self.host = host
            self.port = port
            self.user = user
            self.password = password
            self.database = database
            self.poolSize = poolSize
            self.statementTimeout = statementTimeout
            self.vacuumAfterWrittenRecords = vacuumAfterWrittenRecords
        }

        /// A connection of the instance's own, outside the pool (the change listener's, the vacuum's): no TLS, as
        /// the pool's, and `statementTimeout` to connect; `startup` adds session settings.
        func ownConnection(applicationName: String, startup: [(String, String)] = []) -> PostgresConnection.Configuration {
            var connection = PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: database, tls: .disable)
            connection.options.connectTimeout = TimeAmount(statementTimeout)
            connection.options.additionalStartupParameters = [("application_name", applicationName)] + startup
            return connection
        }

        /// Parses `postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE` (also `postgresql://`).
        /// - Throws: ``StorageError`` with a message saying what form is expected.
        public init(url string: String, poolSize: Int = 16, statementTimeout: Duration = .seconds(30)) throws {
            let expected = "Expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, for example postgres://fieldsheet@127.0.0.1:5432/fieldsheet."
            guard let components = URLComponents(string: string), ["postgres", "postgresql"].contains(components.scheme ?? ""),
                  let host = components.host, !host.isEmpty, let user = components.user, !user.isEmpty
            else {
                throw StorageError(.unavailable, "\"\(string)\" is not a PostgreSQL URL. \(expected)")
            }
            let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
            guard !database.isEmpty, !database.contains("/") else {
                throw StorageError(.unavailable, "The URL \"\(string)\" names no database. \(expected)")
            }
            self.init(
                host: host, port: components.port ?? 5432, user: user.removingPercentEncoding ?? user,
                password: components.password?.removingPercentEncoding, database: database.removingPercentEncoding ?? database,
                poolSize: poolSize, statementTimeout: statementTimeout)
        }

        /// The URL without the password, for logs and messages.
        public var redactedURL: String { "postgres://\(user)@\(host):\(port)/\(database)" }

        /// The same server with another database (tests create one database per test).
        package func with(database: String) -> Configuration {
            var copy = self
            copy.database = database
            return copy
        }
    }
}
