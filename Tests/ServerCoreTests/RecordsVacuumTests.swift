import FieldSheetTesting
import Foundation
import HummingbirdTesting
import Logging
import PostgresNIO
@testable import ServerCore
@testable import ServerPostgres
import ServerStorage
import Testing

/// PostgreSQL's `records` after many pushes: the vacuum an instance runs in the background once its pushes wrote
/// enough records (`RecordsVacuum`), and the feed's count, which reads `records` alone.
struct RecordsVacuumTests {
    /// The schedule counts written records and is due each time they reach the threshold, counting again from zero.
    @Test func theScheduleIsDueEachTimeTheWrittenRecordsReachTheThreshold() {
        var schedule = VacuumSchedule(threshold: 100)
        let due = [60, 39, 1, 99, 250, 0, -5].map { schedule.wrote($0) }
        #expect(due == [false, false, true, false, true, false, false])
        #expect(schedule.written == 0)
        let partly = schedule.wrote(30)
        #expect(!partly && schedule.written == 30)
        var tiny = VacuumSchedule(threshold: 0)
        let first = tiny.wrote(1)
        #expect(first)
    }

    /// Pushes below the threshold leave `records` to autovacuum; the push that reaches it makes the instance
    /// vacuum the table in the background (`vacuum_count` counts VACUUMs other than autovacuum's), after which
    /// every page of the table is marked all-visible, so an index-only scan reads no table row.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func pushesPastTheThresholdVacuumTheRecordsInTheBackground() async throws {
        try await TestServer.withStorage(.postgres) { located in
            guard case .postgres(var configuration) = located.location else { throw TestFailure("not a PostgreSQL storage") }
            configuration.vacuumAfterWrittenRecords = 50
            let database = configuration
            let storage = PostgresStorage(configuration, logger: TestServer.quietLogger)
            try await StorageHandle(storage: storage, service: storage.service).withRunning { storage in
                let server = TestServer(backend: .postgres, location: located.location, storage: storage)
                try await server.publish(TestForms.job(), project: "alpha")
                let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
                try await server.app.test(.router) { client in
                    func push(_ count: Int) async throws {
                        let mutations = (0..<count).map { n in ana.mutation(UUID(), ["title": ana.change(.text("Well \(n)"))]) }
                        let (response, pushed) = try await ana.push(client, mutations)
                        #expect(response.status == .ok, "\(response.text)")
                        #expect(pushed?.outcomes.count == count)
                    }
                    // Autovacuum's analyze of the table would make the vacuum give way (SKIP_LOCKED), and only one
                    // is due here: the table is left to this instance's vacuum alone.
                    _ = try await TestDatabase.text(database, "ALTER TABLE records SET (autovacuum_enabled = false)")
                    try await push(40)
                    let before = try await Self.visibility(database)
                    #expect(before.vacuums == 0, "\(before)")
                    try await push(20)
                    let vacuumed = try await eventually(timeout: 60) {
                        let now = try await Self.visibility(database)
                        return now.vacuums >= 1 && now.pages > 0 && now.allVisible == now.pages
                    }
                    let after = try await Self.visibility(database)
                    #expect(vacuumed, "\(after)")
                    // 60 records past a threshold of 50: one vacuum, not one a push.
                    #expect(after.vacuums == 1, "\(after)")
                }
            }
        }
    }

    /// The count of a feed walk reads `records` alone (no join with `users`, which PostgreSQL would probe once per
    /// counted record), whatever the filter and visibility; the page's statement joins `users` for the author's name.
    @Test(.enabled(if: Backend.postgresReachable, Comment(rawValue: Backend.skipNote)))
    func theFeedsCountReadsRecordsAlone() async throws {
        try await TestServer.withStorage(.postgres) { located in
            guard case .postgres(let configuration) = located.location else { throw TestFailure("not a PostgreSQL storage") }
            try await located.withRunning { _ in
                let review = RecordCondition(.reviewState, .eq, .text("received"))
                let author = RecordCondition(.author, .eq, .text("ana"))
                for conditions in [[review, author], [review], [author], []] {
                    for visibility in [RecordVisibility.authoredByOrShared(1), .authoredBy(1)] {
                        let query = RecordFeedQuery(formID: "site-check", conditions: conditions)
                        let label = "\(conditions.map(\.property)) \(visibility)"
                        let count = try await Self.plan(configuration, PostgresStorage.feedQuery(projectID: 1, query: query, visibility: visibility, count: true))
                        #expect(!count.contains(" users u"), "\(label): \(count)")
                        #expect(!count.contains("Join") && !count.contains("Nested Loop"), "\(label): \(count)")
                        let page = try await Self.plan(configuration, PostgresStorage.feedQuery(projectID: 1, query: query, visibility: visibility, count: false))
                        #expect(page.contains(" users u"), "\(label): \(page)")
                    }
                }
            }
        }
    }

    /// `records`' vacuums other than autovacuum's, its pages, and those marked all-visible.
    static func visibility(_ database: PostgresStorage.Configuration) async throws -> (vacuums: Int, pages: Int, allVisible: Int) {
        let text = try await TestDatabase.text(database, """
            SELECT s.vacuum_count::text, c.relpages::text, c.relallvisible::text
            FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid WHERE s.relname = 'records'
            """)
        let numbers = text.split(separator: " ").compactMap { Int($0) }
        guard numbers.count == 3 else { throw TestFailure("unexpected statistics of records: \(text)") }
        return (numbers[0], numbers[1], numbers[2])
    }

    /// PostgreSQL's plan of `statement`, its lines joined.
    static func plan(_ database: PostgresStorage.Configuration, _ statement: PostgresQuery) async throws -> String {
        try await TestDatabase.text(database, PostgresQuery(unsafeSQL: "EXPLAIN " + statement.sql, binds: statement.binds), separator: "\n")
    }
}
