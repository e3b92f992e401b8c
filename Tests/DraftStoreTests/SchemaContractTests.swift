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
        // The contract, executed on an empty database, gives the same schema as the migrations.
        let contract = try String(contentsOfFile: PackagePaths.file("Schema/device-migrations.sql"), encoding: .utf8)
        let expected = try await DatabaseQueue().write { db in
            for statement in Self.statements(contract) { try db.execute(sql: statement) }
            return try String.fetchAll(db, sql: """
                SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid
                """)
        }
        #expect(!expected.isEmpty)
        #expect(dumped.map(Self.normalize) == expected.map(Self.normalize))
    }

    @Test func theContractNamesTheMigrationsInRegistrationOrder() throws {
        let contract = try String(contentsOfFile: PackagePaths.file("Schema/device-migrations.sql"), encoding: .utf8)
        let named = contract.split(separator: "\n")
            .filter { $0.hasPrefix("-- migration: ") }
            .map { String($0.dropFirst("-- migration: ".count)) }
        #expect(named == DeviceMigrations.identifiers)
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

    /// The statements of the SQL file, comments dropped.
    static func statements(_ sql: String) -> [String] {
        sql.split(separator: "\n")
            .filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("--") }
            .joined(separator: "\n")
            .split(separator: ";")
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
            .filter { !$0.isEmpty }
    }

    /// Whitespace runs collapsed, so indentation is not part of the contract.
    static func normalize(_ statement: String) -> String {
        statement.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
}
