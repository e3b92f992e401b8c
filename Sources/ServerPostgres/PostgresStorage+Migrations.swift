import Foundation
import Logging
import PostgresNIO
import ServerStorage

extension PostgresStorage {
    /// Key of the advisory lock that serializes migrations across every instance starting at once.
    static let migrationLockKey: Int64 = 0x4669_656C_6453_6801  // "FieldSh" + 1

    /// Every migration: the version recorded in `schema_migrations` and its statements (``PostgresSchema``,
    /// compiled in from `Schema/server-postgres.sql`, whose migration ids are these versions).
    static let migrations: [(version: Int, statements: [String])] = PostgresSchema.migrations.compactMap { migration in
        Int(migration.id).map { ($0, migration.statements) }
    }

    /// Applies the migrations of `Schema/server-postgres.sql` that the database lacks, once, even when several
    /// instances start at the same moment: all of it runs in one transaction that first takes a
    /// transaction-scoped advisory lock, so a second instance waits, then finds every version recorded in
    /// `schema_migrations` and applies nothing. A failed migration rolls back whole. A database that records
    /// a version this server does not know (migrated by a newer one) is refused and left as it was.
    public func migrate() async throws {
        let location = "The PostgreSQL database \(configuration.redactedURL)"
        try await transaction { connection in
            _ = try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLockKey))", logger: .quiet).collect()
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at DOUBLE PRECISION NOT NULL)
                """, logger: .quiet)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: .quiet).decode(Int.self) {
                applied.insert(version)
            }
            let known = Set(Self.migrations.map(\.version))
            let unknown = applied.subtracting(known)
            guard unknown.isEmpty else {
                // Thrown inside the transaction, which rolls back: the database is left as it was.
                throw StorageError.newerSchema(location, unknown: unknown.sorted().map(String.init), known: known.sorted().map(String.init))
            }
            for (version, statements) in Self.migrations where !applied.contains(version) {
                for statement in statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: .quiet)
                }
                let now = Date().timeIntervalSince1970
                try await connection.query("INSERT INTO schema_migrations (version, applied_at) VALUES (\(version), \(now))", logger: .quiet)
            }
        }
        if try await !hasLabelTrigramIndex() {
            logger.warning("""
                The PostgreSQL database has no trigram index of the entity labels (migrations 17 and 22 could not create the pg_trgm extension): \
                the console's entity search walks the label index, slowly on a large list. A role that may create extensions can run \
                CREATE EXTENSION pg_trgm; CREATE INDEX entities_label_trigrams ON entities USING gin (lower(label COLLATE "C") gin_trgm_ops); \
                CREATE INDEX entities_label_rest_trigrams ON entities USING gin (lower(substr(label, 2) COLLATE "C") gin_trgm_ops);
                """)
        }
    }

    /// Whether migrations 17 and 22 created the trigram index of the entity labels (they cannot without pg_trgm).
    package func hasLabelTrigramIndex() async throws -> Bool {
        let client = client
        return try await perform {
            var found = false
            for try await exists in try await client.query("""
                SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'entities_label_trigrams')
                """).decode(Bool.self) {
                found = exists
            }
            return found
        }
    }

    /// The statements of a SQL script as the schema files write them: lines that start with `--` dropped; a
    /// statement ends with a line whose last character is `;` (so a `;` inside a line, as in a function's
    /// body, stays in its statement).
    static func statements(_ sql: String) -> [String] {
        var statements: [String] = []
        var pending: [Substring] = []
        for line in sql.split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("--") {
            pending.append(line)
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasSuffix(";") else { continue }
            var statement = pending.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
            statement.removeLast()
            statement = statement.trimmingCharacters(in: .whitespacesAndNewlines)
            if !statement.isEmpty { statements.append(statement) }
            pending = []
        }
        let rest = pending.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { statements.append(rest) }
        return statements
    }

    /// The versions recorded in `schema_migrations`, ascending.
    package func appliedMigrations() async throws -> [Int] {
        let client = client
        return try await perform {
            var versions: [Int] = []
            for try await version in try await client.query("SELECT version FROM schema_migrations ORDER BY version").decode(Int.self) {
                versions.append(version)
            }
            return versions
        }
    }

    /// The public schema as the catalog reports it: one line per column (table, column, type, nullability,
    /// default), constraint and index, sorted; `schema_migrations` left out. The contract test compares
    /// a migrated database with one that ran `Schema/server-postgres.sql` itself.
    package func catalog() async throws -> [String] {
        let client = client
        return try await perform {
            var lines: [String] = []
            for try await (table, column, type, nullable, defaultValue) in try await client.query("""
                SELECT table_name::text, column_name::text, data_type::text, is_nullable::text, COALESCE(column_default, '')::text
                FROM information_schema.columns WHERE table_schema = 'public' AND table_name <> 'schema_migrations'
                """).decode((String, String, String, String, String).self) {
                lines.append("column \(table).\(column) \(type) nullable=\(nullable) default=\(defaultValue)")
            }
            for try await (table, definition) in try await client.query("""
                SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint
                WHERE connamespace = 'public'::regnamespace AND conrelid::regclass::text <> 'schema_migrations'
                """).decode((String, String).self) {
                lines.append("constraint \(table) \(definition)")
            }
            for try await definition in try await client.query("""
                SELECT indexdef FROM pg_indexes WHERE schemaname = 'public' AND tablename <> 'schema_migrations'
                """).decode(String.self) {
                lines.append("index \(definition)")
            }
            return lines.sorted()
        }
    }

    /// Runs SQL text as it is, statement by statement, in one transaction (the contract test applies the
    /// schema file with it). Never called with input from a request.
    package func execute(script: String) async throws {
        try await transaction { connection in
            for statement in Self.statements(script) {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: .quiet)
            }
        }
    }
}
