import FormModel
import Foundation
import GRDB
@testable import ServerCore
@testable import ServerPostgres
@testable import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// A database written by the first version (every field an object repeating its revision, clock and
/// device) is converted to the one record representation when a newer server migrates it: on SQLite by the
/// Swift step registered under `v2-record-fields`, on PostgreSQL by migration 2 of `Schema/server-postgres.sql`.
struct RecordFieldsMigrationTests {
    /// A field as the first version stored it.
    struct LegacyField: Encodable {
        var value: AnswerValue?
        var revision: Int64
        var hlc: Int64
        var clientID: String

        private enum CodingKeys: String, CodingKey {
            case value, revision, hlc, clientID = "clientId"
        }
    }

    static let device = "device-0123456789abcdef0123456789abcdef0123"
    static let legacy: [String: LegacyField] = [
        "name": LegacyField(value: .text("Ana's site; north"), revision: 3, hlc: 1_000_000, clientID: device),
        "count": LegacyField(value: .integer(7), revision: 2, hlc: 900_000, clientID: "other-device"),
        "notes": LegacyField(value: nil, revision: 1, hlc: 800_000, clientID: device),
    ]

    static func legacyJSON() throws -> String {
        String(decoding: try JSONEncoder().encode(legacy), as: UTF8.self)
    }

    static func expectConverted(_ record: StoredRecord?) throws {
        let fields = try #require(record?.fields)
        #expect(fields.count == 3)
        for (id, field) in legacy {
            let state = try #require(fields[id], "\(id)")
            #expect(state.value == field.value, "\(id)")
            #expect(state.revision == field.revision, "\(id)")
            #expect(state.hlc.rawValue == field.hlc, "\(id)")
            #expect(state.clientID == field.clientID, "\(id)")
        }
    }

    @Test func sqliteConvertsFirstVersionFields() async throws {
        try await TestServer.withStorage(.sqlite) { located in
            let storage = try #require(located.handle.storage as? SQLiteStorage)
            try SQLiteStorage.migrator.migrate(storage.pool, upTo: "lowercase-record-ids")
            let project = try await storage.createProject(name: "alpha")
            let id = UUID()
            let legacy = try Self.legacyJSON()
            try await storage.pool.write { db in
                // The first version's member, as it stored one (today's storage also writes tables added since).
                try db.execute(sql: "INSERT INTO users (id, name, created_at) VALUES (1, 'ana', 0)")
                try db.execute(sql: "INSERT INTO memberships (user_id, project_id, role) VALUES (1, ?, 'collector')", arguments: [project.id])
                try db.execute(sql: "INSERT INTO tokens (user_id, token_hash, created_at) VALUES (1, ?, 0)", arguments: [Data(repeating: 1, count: 32)])
                try db.execute(sql: """
                    INSERT INTO records (project_id, id, form_id, form_version, state, author_id, shared, revision, sequence, fields, updated_at)
                    VALUES (?, ?, 'job', 1, 'submitted', 1, 1, 3, 1, ?, 0)
                    """, arguments: [project.id, id.uuidString.lowercased(), legacy])
            }
            try await storage.migrate()
            try Self.expectConverted(try await storage.record(projectID: project.id, id: id))
        }
    }

    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func postgresConvertsFirstVersionFields() async throws {
        try await TestServer.withStorage(.postgres) { located in
            let storage = try #require(located.handle.storage as? PostgresStorage)
            try await located.withRunning(migrating: false) { _ in
                // What the first version left: migration 1 applied and recorded, nothing else.
                let first = try #require(PostgresStorage.migrations.first { $0.version == 1 })
                try await storage.execute(script: first.statements.joined(separator: ";\n") + """
                    ;
                    CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL);
                    INSERT INTO schema_migrations (version, applied_at) VALUES (1, 0)
                    """)
                let project = try await storage.createProject(name: "alpha")
                // The first version's member, as it stored one (today's storage also writes tables added since).
                try await storage.execute(script: """
                    INSERT INTO users (name, created_at) VALUES ('ana', 0);
                    INSERT INTO memberships (user_id, project_id, role) SELECT id, \(project.id), 'collector' FROM users WHERE name = 'ana';
                    INSERT INTO tokens (user_id, token_hash, created_at) SELECT id, '\\x\(String(repeating: "01", count: 32))', 0 FROM users WHERE name = 'ana'
                    """)
                let id = UUID()
                let legacy = try Self.legacyJSON().replacingOccurrences(of: "'", with: "''")
                // One statement: the script runner ends a statement at a line ending in `;`, which the legacy text may hold.
                try await storage.execute(script: """
                    INSERT INTO records (project_id, id, form_id, form_version, state, author_id, shared, revision, sequence, fields, updated_at)
                    SELECT \(project.id), '\(id.uuidString.lowercased())', 'job', 1, 'submitted', u.id, true, 3, 1, replace('\(legacy.replacingOccurrences(of: ";", with: "<semicolon>"))', '<semicolon>', chr(59)), 0
                    FROM users u WHERE u.name = 'ana'
                    """)
                try await storage.migrate()
                #expect(try await storage.appliedMigrations() == PostgresStorage.migrations.map(\.version))
                try Self.expectConverted(try await storage.record(projectID: project.id, id: id))
            }
        }
    }
}
