import FieldSheetTesting
import Testing

/// Whether this run reaches the PostgreSQL server the backend cases need. Every server, sync and end-to-end
/// suite leaves its PostgreSQL cases out when it does not; this test is then reported as skipped, with the
/// reason and how to run them, so a run without PostgreSQL never reads as a full pass.
struct PostgresBackendTests {
    @Test(.enabled(if: TestPostgres.url != nil, Comment(rawValue: TestPostgres.skipReason ?? "")))
    func thePostgreSQLServerForTheBackendCasesAnswers() async throws {
        let url = try #require(TestPostgres.url)
        try await TestPostgres.psql(url, "SELECT 1")
    }
}
