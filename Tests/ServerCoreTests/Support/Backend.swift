import FieldSheetTesting
import Foundation
import ServerCore
import ServerPostgres
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The storage backends the server suites run against. `.postgres` runs on `TestPostgres`'s server; when there
/// is none its cases are left out, and `PostgresBackendTests` is reported as skipped with the reason.
enum Backend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// The backends the cases run on here.
    static let available: [Backend] = postgresServer == nil ? [.sqlite] : allCases

    /// The PostgreSQL server to create test databases on, when reachable.
    static let postgresServer: PostgresStorage.Configuration? = TestPostgres.url.flatMap {
        try? PostgresStorage.Configuration(url: $0, poolSize: 4, statementTimeout: .seconds(20))
    }

    static var postgresReachable: Bool { postgresServer != nil }

    /// Why the PostgreSQL cases are skipped (empty when they run).
    static var skipNote: String { TestPostgres.skipReason ?? "" }

    /// The PostgreSQL server; an error when there is none.
    static func requirePostgres() throws -> PostgresStorage.Configuration {
        guard let postgresServer else { throw TestFailure(skipNote) }
        return postgresServer
    }

    var testDescription: String { rawValue }
}
