import Foundation
import GRDB
@testable import ServerCore
@testable import ServerPostgres
import ServerSQLite
import ServerStorage
import Testing

/// A database migrated by a newer server is refused, left exactly as it was, with what to do.
struct NewerSchemaTests {
    @Test func sqliteRefusesAndLeavesTheFileUntouched() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fieldsheet-newer-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let path = directory + "/fieldsheet.sqlite"
        do {
            let storage = try SQLiteStorage(directory: directory)
            try await storage.migrate()
            _ = try await storage.createProject(name: "alpha")
        }
        do {
            // What a newer server would leave behind: a migration this one does not know.
            let queue = try DatabaseQueue(path: path)
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v2')")
                try db.execute(sql: "CREATE TABLE from_the_future (id INTEGER)")
            }
            try queue.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let sideFiles = [path + "-wal", path + "-shm"].filter { FileManager.default.fileExists(atPath: $0) }
        let error = #expect(throws: StorageError.self) { try SQLiteStorage(directory: directory) }
        #expect([path + "-wal", path + "-shm"].filter { FileManager.default.fileExists(atPath: $0) } == sideFiles, "a -wal or -shm was left beside the refused database")
        #expect(error?.code == .newerSchema)
        #expect(error?.detail.contains("v2") == true)
        #expect(error?.detail.contains("Upgrade fieldsheet-server") == true)
        #expect(error?.detail.contains("Nothing was changed") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        var readOnly = Configuration()
        readOnly.readonly = true
        let queue = try DatabaseQueue(path: path, configuration: readOnly)
        #expect(try await queue.read { db in try String.fetchAll(db, sql: "SELECT name FROM projects") } == ["alpha"])
        try queue.close()
    }

    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func postgresRefusesAndLeavesTheDatabaseUntouched() async throws {
        try await TestServer.withStorage(.postgres) { located in
            guard case .postgres = located.location, let storage = located.handle.storage as? PostgresStorage else {
                throw TestFailure("expected a PostgreSQL storage")
            }
            // The pool service runs once per storage: everything happens inside one run.
            try await located.withRunning(migrating: false) { _ in
                try await storage.migrate()
                try await storage.execute(script: "INSERT INTO schema_migrations (version, applied_at) VALUES (99, 0);\nCREATE TABLE from_the_future (id INTEGER)")
                let catalog = try await storage.catalog()
                let error = await #expect(throws: StorageError.self) { try await storage.migrate() }
                #expect(error?.code == .newerSchema)
                #expect(error?.detail.contains("99") == true)
                #expect(error?.detail.contains("Upgrade fieldsheet-server") == true)
                #expect(try await storage.appliedMigrations() == PostgresStorage.migrations.map(\.version) + [99])
                #expect(try await storage.catalog() == catalog)
            }
        }
    }
}
