import FieldSheetTesting
import Foundation
import ServerCore
import ServerPostgres
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The storage backends the server suites run against. `.postgres` runs on `TestPostgres`'s server; when there
/// is none its cases are reported as skipped (``Backend/requirePostgres()``), never left out.
enum Backend: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case sqlite
    case postgres

    /// Every backend: a PostgreSQL case that cannot run here is cancelled, so it shows as skipped.
    static let available: [Backend] = allCases

    /// The PostgreSQL server to create test databases on, when reachable.
    static let postgresServer: PostgresStorage.Configuration? = TestPostgres.url.flatMap {
        try? PostgresStorage.Configuration(url: $0, poolSize: 4, statementTimeout: .seconds(20))
    }

    static var postgresReachable: Bool { postgresServer != nil }

    /// Why the PostgreSQL cases are skipped (empty when they run).
    static var skipNote: String { TestPostgres.skipReason ?? "" }

    /// The PostgreSQL server, or the current case cancelled (reported as skipped) when there is none.
    static func requirePostgres() throws -> PostgresStorage.Configuration {
        guard let postgresServer else { try Test.cancel(Comment(rawValue: skipNote)) }
        return postgresServer
    }

    var testDescription: String { rawValue }
}
