import Foundation
import Logging
import PostgresNIO
import ServerCore
import ServerPostgres

/// A PostgreSQL database of its own for one test: created with a random name on the server of
/// ``Backend/postgresServer``, dropped (with any connections still open) afterwards.
enum TestDatabase {
    static func with<T: Sendable>(
        _ server: PostgresStorage.Configuration, _ body: (PostgresStorage.Configuration) async throws -> T
    ) async throws -> T {
        let name = "fieldsheet_test_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").prefix(16).lowercased()
        try await admin(server, "CREATE DATABASE \(name)")
        do {
            let result = try await body(server.with(database: name))
            try await admin(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            return result
        } catch {
            try? await admin(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)")
            throw error
        }
    }

    /// Runs one statement on the server's maintenance database.
    static func admin(_ server: PostgresStorage.Configuration, _ sql: String) async throws {
        _ = try await text(server, sql)
    }

    /// Runs one query on `server`'s database and returns the text of every row, space-separated.
    static func text(_ server: PostgresStorage.Configuration, _ sql: String) async throws -> String {
        try await text(server, PostgresQuery(unsafeSQL: sql))
    }

    /// Runs `query` on `server`'s database and returns the text of every cell, joined by `separator`.
    static func text(_ server: PostgresStorage.Configuration, _ query: PostgresQuery, separator: String = " ") async throws -> String {
        var logger = Logger(label: "test.postgres")
        logger.logLevel = .critical
        let connection = try await PostgresConnection.connect(
            configuration: .init(host: server.host, port: server.port, username: server.user, password: server.password, database: server.database, tls: .disable),
            id: 1, logger: logger)
        do {
            var text: [String] = []
            for try await row in try await connection.query(query, logger: logger) {
                for cell in row { text.append((try? cell.decode(String.self)) ?? "") }
            }
            try await connection.close()
            return text.joined(separator: separator)
        } catch {
            try? await connection.close()
            throw error
        }
    }
}
