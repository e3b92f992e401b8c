import FieldSheetTesting
import Foundation

/// The storage a real `fieldsheet-server` process runs on in a test: its embedded SQLite, or a fresh
/// PostgreSQL database on the server at `FIELDSHEET_TEST_POSTGRES_URL` (left out, with a note on stderr,
/// when that is not set).
enum ServerBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    static let environmentKey = "FIELDSHEET_TEST_POSTGRES_URL"

    static var available: [ServerBackend] {
        guard let url = ProcessInfo.processInfo.environment[environmentKey], !url.isEmpty else {
            FileHandle.standardError.write(Data("⚠️  SyncTests: the PostgreSQL server cases are SKIPPED (not run, not passed): \(environmentKey) is not set.\n".utf8))
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }

    var description: String { rawValue }

    /// Runs `body` with the `--database` URL of a new, empty database (nil for SQLite), dropped afterwards.
    func withDatabase<T>(_ body: (String?) async throws -> T) async throws -> T {
        guard self == .postgres, let server = ProcessInfo.processInfo.environment[Self.environmentKey],
              var components = URLComponents(string: server)
        else { return try await body(nil) }
        let name = "fieldsheet_sync_\(UUID().uuidString.prefix(8).lowercased())"
        try Self.psql(server, "CREATE DATABASE \(name)")
        defer { try? Self.psql(server, "DROP DATABASE IF EXISTS \(name) WITH (FORCE)") }
        components.path = "/" + name
        return try await body(components.string ?? server)
    }

    private static func psql(_ url: String, _ statement: String) throws {
        let result = try Subprocess.run("/usr/bin/psql", [url, "-v", "ON_ERROR_STOP=1", "-qc", statement], timeout: 60)
        guard result.status == 0 else { throw FixtureError("psql \(statement) failed: \(result.output)") }
    }
}
