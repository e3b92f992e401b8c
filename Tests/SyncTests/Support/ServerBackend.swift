import FieldSheetTesting
import Foundation
import Testing

/// The storage a real `fieldsheet-server` process runs on in a test: its embedded SQLite, or a fresh
/// PostgreSQL database on `TestPostgres`'s server (left out when there is none: `PostgresBackendTests` is then
/// reported as skipped, with the reason).
enum ServerBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    static var available: [ServerBackend] { TestPostgres.url == nil ? [.sqlite] : allCases }

    var description: String { rawValue }

    /// Runs `body` with the `--database` URL of a new, empty database (nil for SQLite), dropped afterwards.
    func withDatabase<T>(_ body: (String?) async throws -> T) async throws -> T {
        guard self == .postgres else { return try await body(nil) }
        return try await TestPostgres.withDatabase(prefix: "fieldsheet_sync") { try await body($0) }
    }
}
