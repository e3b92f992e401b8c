import Foundation
import GRDB
import Hummingbird
@testable import ServerCore
@testable import ServerPostgres
@testable import ServerSQLite
import FormModel
import ServerStorage
import SyncCore
import Testing

/// The contracts in Schema/ hold: a migrated database equals server-sqlite.sql (server-postgres.sql), every
/// route is in openapi.yaml and every path there is a route.
struct SchemaContractTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The schema as SQLite reports it, whitespace runs collapsed (indentation is not part of the contract).
    static func normalized(_ statements: [String]) -> [String] {
        statements.map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
    }

    /// A database migrated from empty has exactly the schema that `Schema/server-sqlite.sql`, run as it is by
    /// SQLite on an empty database, creates.
    @Test func theMigratedSQLiteSchemaEqualsTheSQLFile() async throws {
        let file = try String(contentsOf: Self.root.appendingPathComponent("Schema/server-sqlite.sql"), encoding: .utf8)
        let expected = try await DatabaseQueue().write { db in
            try db.execute(sql: file)
            return try String.fetchAll(db, sql: "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL AND name NOT LIKE 'sqlite_%' ORDER BY rowid")
        }
        #expect(!expected.isEmpty)
        try await TestServer.with(.sqlite) { server in
            let migrated = try await (try #require(server.storage as? SQLiteStorage)).schemaSQL()
            #expect(Self.normalized(migrated) == Self.normalized(expected))
        }
    }

    /// Databases record the identifiers of the migrations they applied: the shipped ones never change, and
    /// every Swift step belongs to a migration of the file.
    @Test func theSQLiteMigrationsKeepTheirShippedIdentifiers() {
        let identifiers = SQLiteStorage.migrator.migrations
        #expect(Array(identifiers.prefix(3)) == ["v1", "lowercase-record-ids", "v2-record-fields"])
        #expect(Set(SQLiteStorage.swiftSteps.keys).isSubset(of: identifiers))
    }

    @Test func thePostgreSQLMigrationsKeepTheirShippedVersions() {
        #expect(Array(PostgresStorage.migrations.map(\.version).prefix(2)) == [1, 2])
        #expect(PostgresStorage.migrations.count == PostgresSchema.migrations.count, "every migration id of server-postgres.sql is a version number")
    }

    /// The catalog of a migrated database (tables, columns, types, defaults, constraints, indexes) equals
    /// that of a database that ran `Schema/server-postgres.sql` itself; migrating again changes nothing.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func theMigratedPostgreSQLSchemaEqualsTheSQLFile() async throws {
        let file = try String(contentsOf: Self.root.appendingPathComponent("Schema/server-postgres.sql"), encoding: .utf8)
        try await TestServer.with(.postgres) { migrated in
            let storage = try #require(migrated.storage as? PostgresStorage)
            try await storage.migrate()
            #expect(try await storage.appliedMigrations() == PostgresStorage.migrations.map(\.version))
            let catalog = try await storage.catalog()
            #expect(catalog.contains { $0.hasPrefix("column records.sequence bigint nullable=NO") })
            try await TestServer.withStorage(.postgres) { handle in
                try await handle.withRunning(migrating: false) { storage in
                    let plain = try #require(storage as? PostgresStorage)
                    try await plain.execute(script: file)
                    #expect(try await plain.catalog() == catalog)
                }
            }
        }
    }

    /// `(METHOD, /path/{param})` pairs from the `paths:` section of openapi.yaml.
    static func openAPIRoutes() throws -> Set<String> {
        let text = try String(contentsOf: root.appendingPathComponent("Schema/openapi.yaml"), encoding: .utf8)
        var routes = Set<String>()
        var inPaths = false
        var path: String?
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if !line.hasPrefix(" ") && !line.isEmpty { inPaths = line.hasPrefix("paths:") ; continue }
            guard inPaths else { continue }
            if line.hasPrefix("  /"), line.hasSuffix(":"), !line.hasPrefix("   ") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast().uppercased()
                if ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"].contains(method) { routes.insert("\(method) \(path)") }
            }
        }
        return routes
    }

    @Test func everyRouteIsInTheOpenAPIFileAndNoOtherPath() throws {
        let router = buildRouter(ServerServices(storage: try SQLiteStorage(directory: FileManager.default.temporaryDirectory.appendingPathComponent("contract-\(UUID())").path)))
        // The web console's HTML pages under /console are not the sync API (ConsoleAuthTests holds every one of them).
        let registered = Set(router.routes.map { route in
            let path = route.path.description.split(separator: "/").map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }.joined(separator: "/")
            return "\(route.method.rawValue) /\(path)"
        }.filter { !$0.contains(" /console") })
        let documented = try Self.openAPIRoutes()
        #expect(!documented.isEmpty)
        #expect(registered.subtracting(documented).isEmpty, "routes missing from openapi.yaml: \(registered.subtracting(documented).sorted())")
        #expect(documented.subtracting(registered).isEmpty, "paths in openapi.yaml without a route: \(documented.subtracting(registered).sorted())")
    }
}

extension SchemaContractTests {
    /// The push's description in openapi.yaml names the problem a reference over the size limit is rejected with.
    @Test func theRejectionOfAnOversizedAttachmentIsInTheContract() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("Schema/openapi.yaml"), encoding: .utf8)
        let push = try #require(text.range(of: "operationId: push")).upperBound
        let description = String(text[push...]).components(separatedBy: "requestBody:").first ?? ""
        let planner = PushPlanner(
            principal: Principal(userID: 1, userName: "ana", memberships: [:]), role: .collector, clientID: "d1", validators: [:], mutations: [], maxAttachmentBytes: 10)
        let reference = AttachmentReference(sha256: String(repeating: "a", count: 64), bytes: 11, type: "image/jpeg", name: "a.jpg")
        let problem = try #require(planner.oversizedAttachment(Mutation(
            mutationID: "m", recordID: UUID(), form: FormKey(id: "f", version: 1), state: .draft,
            changes: ["photo": FieldChange(value: .attachment(reference), baseRevision: 0, hlc: HybridTimestamp(millis: 1, counter: 0))])))
        #expect(description.contains("`\(problem.slug)`"))
        #expect(description.contains("--max-attachment-bytes"))
    }
}
