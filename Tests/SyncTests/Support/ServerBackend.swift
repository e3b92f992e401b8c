import FieldSheetTesting
import Foundation
import Testing

/// The storage a real `fieldsheet-server` process runs on in a test: its embedded SQLite, or a fresh
/// PostgreSQL database on `TestPostgres`'s server (the case is reported as skipped when there is none).
enum ServerBackend: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    static var available: [ServerBackend] { allCases }

    var description: String { rawValue }

    /// Runs `body` with the `--database` URL of a new, empty database (nil for SQLite), dropped afterwards.
    func withDatabase<T>(_ body: (String?) async throws -> T) async throws -> T {
        guard self == .postgres else { return try await body(nil) }
        if let reason = TestPostgres.skipReason { try Test.cancel(Comment(rawValue: reason)) }
        return try await TestPostgres.withDatabase(prefix: "fieldsheet_sync") { try await body($0) }
    }
}
