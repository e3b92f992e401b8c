import FieldSheetTesting
import Foundation
import FormModel
import HTTPTypes
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// A server instance whose PostgreSQL goes away answers 503 with a problem, and carries on by itself when
/// it returns, with no mutation lost or applied twice.
struct DatabaseOutageTests {
    @Test(.enabled(if: ClusterControl.available, Comment(rawValue: ClusterControl.skipNote)))
    func anInstanceThatLosesItsDatabaseAnswers503AndRecoversWithNothingLostOrDoubled() async throws {
        let devices = 3, batches = 24, batchSize = 5
        try await ClusterControl.with { cluster in
          try await TestDatabase.with(cluster.configuration) { database in
            let located = try LocatedStorage(.postgres(database))
            try await located.withRunning(migrating: false) { storage in
                // The 5-second deadline this test sets (a stopped cluster refuses connections at once; the deadline
                // bounds a connection that hangs) can pass while a fresh cluster migrates on a machine busy with the
                // rest of the run; migrating is safe to repeat. It was 2 seconds, and a full run once passed it in
                // the set-up that follows (publishing the form, adding the members), which is not repeated.
                try await Self.until("the schema is migrated") { (try? await storage.migrate()) != nil }
                let server = TestServer(backend: .postgres, location: located.location, storage: storage)
                try await server.publish(TestForms.job(), project: "alpha")
                var writers: [Device] = []
                for index in 0..<devices {
                    writers.append(Device(clientID: "d\(index)", token: try await server.member("w\(index)", project: "alpha", role: .collector)))
                }
                let reviewer = Device(clientID: "review", token: try await server.member("rita", project: "alpha", role: .reviewer))
                let pushers = writers
                let progress = Progress()
                try await server.app.test(.router) { client in
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for writer in pushers {
                            group.addTask { try await Self.push(writer, client, batches: batches, size: batchSize, progress: progress) }
                        }
                        group.addTask {
                            try await Self.until("some batches are acknowledged") { await progress.acknowledged >= 6 }
                            try await cluster.stop()
                            let down = try await client.execute(uri: "/v1/health", method: .get)
                            #expect(down.status == .serviceUnavailable)
                            #expect(down.problem?.type == "https://fieldsheet.dev/problems/database-unavailable")
                            #expect(down.headers[.retryAfter] != nil)
                            #expect(!down.text.lowercased().contains("select"), "no SQL reaches the caller")
                            try await Self.until("a push is refused with 503") { await progress.refused > 0 }
                            try await cluster.start()
                            try await Self.until("health answers 200 again") {
                                try await client.execute(uri: "/v1/health", method: .get).status == .ok
                            }
                            await progress.recover()
                        }
                        try await group.waitForAll()
                    }
                    #expect(await progress.refused > 0, "the outage was seen by the devices")
                    let written = await progress.records
                    var seen: [RecordEnvelope] = []
                    var cursor: Int64 = 0
                    while true {
                        let page = try await reviewer.pull(client, after: cursor, limit: 500)
                        seen += page.changes
                        cursor = page.cursor
                        if !page.hasMore { break }
                    }
                    #expect(written.count >= devices * batches * batchSize)
                    #expect(Set(seen.map(\.recordID)) == written, "nothing acknowledged was lost")
                    #expect(seen.count == written.count, "no record appears twice")
                    #expect(seen.allSatisfy { $0.revision == 1 }, "no mutation was applied twice")
                    #expect(cursor == Int64(written.count), "every sequence number was used exactly once")
                    let health = try await client.execute(uri: "/v1/health", method: .get)
                    #expect(health.text.contains("\"database\":\"ok\""))
                }
            }
          }
        }
    }

    /// Pushes batches of new records, at least `batches` and until the database is back, retrying each
    /// (same mutation ids) while the answer is 503.
    static func push(_ device: Device, _ client: some TestClientProtocol, batches: Int, size: Int, progress: Progress) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var pushed = 0
        while true {
            let recovered = await progress.recovered
            guard pushed < batches || !recovered else { break }
            pushed += 1
            let ids = (0..<size).map { _ in UUID() }
            let batch = ids.map { device.mutation($0, ["title": device.change(.text("x"))]) }
            while true {
                guard ContinuousClock.now < deadline else { throw TestFailure("\(device.clientID) could not push before the deadline") }
                let (response, push) = try await device.push(client, batch)
                if response.status == .ok {
                    guard let outcomes = push?.outcomes, outcomes.allSatisfy({ $0.status == .applied && $0.revision == 1 }) else {
                        throw TestFailure("unexpected outcomes: \(response.text)")
                    }
                    await progress.acknowledge(ids)
                    break
                }
                guard response.status == .serviceUnavailable, response.problem?.type == "https://fieldsheet.dev/problems/database-unavailable",
                      response.headers[.retryAfter] != nil
                else { throw TestFailure("push answered \(response.status): \(response.text)") }
                await progress.refuse()
                try await Task.sleep(for: .milliseconds(50))  // a device's back-off before retrying, not a wait for an event
            }
        }
    }

    /// Polls `condition` until it holds (``eventually``), failing after 30 seconds.
    static func until(_ what: String, _ condition: () async throws -> Bool) async throws {
        guard try await eventually(timeout: 30, condition) else { throw TestFailure("timed out waiting until \(what)") }
    }

    actor Progress {
        var records = Set<UUID>()
        var acknowledged = 0
        var refused = 0
        var recovered = false
        func recover() { recovered = true }
        func acknowledge(_ ids: [UUID]) { records.formUnion(ids); acknowledged += 1 }
        func refuse() { refused += 1 }
    }
}
