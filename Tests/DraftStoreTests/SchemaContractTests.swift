import Foundation
import FieldSheetTesting
import GRDB
import Testing
@testable import DraftStore

/// Holds the migrated device database to `Schema/device-migrations.sql`.
struct SchemaContractTests {
    @Test func aFreshlyMigratedDatabaseMatchesTheSQLContract() async throws {
        let directory = TemporaryDirectory("schema")
        let store = try DraftStore(home: directory.url)
        let dumped = try await store.pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master
                WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'
                ORDER BY rowid
                """)
        }
        // The contract, run as it is by SQLite on an empty database, gives the same schema as the migrations.
        let contract = try String(contentsOfFile: PackagePaths.file("Schema/device-migrations.sql"), encoding: .utf8)
        let expected = try await DatabaseQueue().write { db in
            try db.execute(sql: contract)
            return try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid
                """)
        }
        #expect(!expected.isEmpty)
        #expect(dumped.map(Self.normalize) == expected.map(Self.normalize))
    }

    /// Databases record the identifiers of the migrations they applied: the shipped ones never change, and
    /// every Swift step belongs to a migration of the file.
    @Test func theMigrationsKeepTheirShippedIdentifiers() {
        #expect(Array(DeviceMigrations.identifiers.prefix(3)) == ["v1-device-schema", "v2-sync-in-flight", "v3-record-fields"])
        #expect(Set(DeviceMigrations.swiftSteps.keys).isSubset(of: DeviceMigrations.identifiers))
    }

    @Test func theDatabaseIsInWALModeWithFullSynchronousCommits() async throws {
        let directory = TemporaryDirectory("schema")
        let store = try DraftStore(home: directory.url)
        let (journal, synchronous) = try await store.pool.write { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"))
        }
        #expect(journal == "wal")
        #expect(synchronous == 2)  // FULL
    }

    /// Whitespace runs collapsed, so indentation is not part of the contract.
    static func normalize(_ statement: String) -> String {
        statement.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}

/// A database written before unsent edits had a row each keeps every one of them when it opens.
struct RecordEditsMigrationTests {
    @Test func unsentEditsOfTheOneObjectBecomeRowsAndReadTheSame() async throws {
        let directory = TemporaryDirectory("edits-migration")
        let path = directory.url.appendingPathComponent("old.sqlite").path
        let id = UUID()
        let key = id.uuidString.lowercased()
        do {
            let queue = try DatabaseQueue(path: path)
            try DeviceMigrations.migrator.migrate(queue, upTo: "v5-record-reviews")
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO forms (id, version, title, definition, imported_at) VALUES ('follow-up-job', 1, 'Job', '{}', 0)")
                try db.execute(sql: """
                    INSERT INTO records (id, form_id, form_version, state, created_at, updated_at, server_revision, fields, local)
                    VALUES (?, 'follow-up-job', 1, 'submitted', 1, 2, 3, ?, ?)
                    """, arguments: [
                        key,
                        #"{"values":{"site":{"text":"Synced"},"due":{"date":"2026-11-01"}},"writers":["d"],"stamp":{"revision":3,"clock":1,"writer":0}}"#,
                        #"{"site":{"text":"Edited offline"},"due":null,"defects/7c1e/@position":{"integer":1}}"#,
                    ])
            }
        }
        let store = try DraftStore(path: path)
        let record = try #require(try await store.record(id))
        #expect(record.answers["site"] == .text("Edited offline"))
        #expect(record.answers["due"] == nil, "a cleared field stays cleared")
        #expect(record.pending["due"] == .some(nil))
        #expect(record.pending["defects/7c1e/@position"] == .some(.integer(1)))
        #expect(record.pending.count == 3)
        let columns = try await store.pool.read { db in try db.columns(in: "records").map(\.name) }
        #expect(!columns.contains("local"))
    }
}
