import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

struct PushPullTests {
    @Test(arguments: Backend.available)
    func aPushedRecordComesBackInThePullAndByItsId(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.router) { client in
                let (response, push) = try await device.push(client, [device.mutation(record, ["title": device.change(.text("Pump")), "count": device.change(.integer(3))])])
                #expect(response.status == .ok)
                #expect(push?.outcomes.map(\.status) == [.applied])
                #expect(push?.outcomes.first?.revision == 1)
                #expect(response.headers[ServerClockMiddleware.header] != nil)
                #expect(response.headers[HTTPField.Name("X-Request-Id")!] != nil)

                let page = try await device.pull(client)
                #expect(page.changes.map(\.recordID) == [record])
                #expect(try page.changes.first?.fields["title"]?.value == .text("Pump"))
                #expect(page.changes.first?.author == "ana")
                #expect(page.cursor == 1)
                #expect(!page.hasMore)

                let one = try await device.get(client, "/v1/projects/alpha/records/\(record)")
                #expect(one.status == .ok)
                let snapshot = try RecordEnvelope(jsonBytes: [UInt8](buffer: one.body))
                #expect(try snapshot.fields["count"]?.value == .integer(3))
            }
        }
    }

    @Test(arguments: Backend.available)
    func aRetriedBatchReturnsTheSameOutcomesAndAppliesNothingTwice(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            let batch = [
                device.mutation(record, state: .draft, ["title": device.change(.text("A"))]),
                device.mutation(record, state: .draft, ["count": device.change(.raw("three"), base: 1)]),
                device.mutation(UUID(), form: "nope", ["title": device.change(.text("x"))]),
            ]
            try await server.app.test(.router) { client in
                let (firstResponse, first) = try await device.push(client, batch)
                // The response is "lost"; the device sends the very same batch again.
                let (secondResponse, second) = try await device.push(client, batch)
                let firstOutcomes = try #require(first?.outcomes, "\(firstResponse.text)")
                let secondOutcomes = try #require(second?.outcomes, "\(secondResponse.text)")
                #expect(firstOutcomes == secondOutcomes)
                #expect(firstOutcomes.map(\.status) == [.applied, .applied, .rejected])
                let page = try await device.pull(client)
                #expect(page.changes.count == 1)
                #expect(page.changes.first?.revision == 2)
                #expect(page.cursor == 1, "the record was written once, in one commit")
            }
        }
    }

    @Test(arguments: Backend.available)
    func aReusedMutationIDWithADifferentPayloadIsRefusedAndNothingApplied(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await device.push(client, [device.mutation(record, state: .draft, id: "m1", ["title": device.change(.text("A"))])])
                let other = UUID()
                let (response, _) = try await device.push(client, [
                    device.mutation(other, state: .draft, id: "m2", ["title": device.change(.text("new"))]),
                    device.mutation(record, state: .draft, id: "m1", ["title": device.change(.text("B"))]),
                ])
                #expect(response.status == .conflict)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.problem?.type == "https://fieldsheet.dev/problems/mutation-id-reused")
                #expect(response.problem?.field == "mutations[1].mutationId")
                let page = try await device.pull(client)
                #expect(page.changes.map(\.recordID) == [record], "m2 of the refused batch was not applied")
            }
        }
    }

    @Test(arguments: Backend.available)
    func submittedRecordsAreValidatedAndDraftsOnlyTypeChecked(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let (_, push) = try await device.push(client, [
                    device.mutation(UUID(), state: .submitted, ["count": device.change(.integer(3))]),
                    device.mutation(UUID(), state: .submitted, ["title": device.change(.text("t")), "count": device.change(.integer(500))]),
                    device.mutation(UUID(), state: .draft, ["count": device.change(.raw("lots"))]),
                    device.mutation(UUID(), state: .draft, ["count": device.change(.text("3"))]),
                    device.mutation(UUID(), state: .draft, ["ghost": device.change(.text("boo"))]),
                ])
                let outcomes = try #require(push?.outcomes)
                #expect(outcomes.map(\.status) == [.rejected, .rejected, .applied, .rejected, .rejected])
                #expect(outcomes[0].problem?.field == "title")
                #expect(outcomes[0].problem?.type == "https://fieldsheet.dev/problems/validation")
                #expect(outcomes[1].problem?.field == "count")
                #expect(outcomes[3].problem?.field == "count")
                #expect(outcomes[4].problem?.field == "ghost")

                // A sealed answer is taken only for a field the form marks sensitive.
                let sealed = AnswerValue.sealed(SealedAnswer(key: "k1", enc: "ZW5j", ct: "Y3Q="))
                let (_, again) = try await device.push(client, [device.mutation(UUID(), state: .draft, ["notes": device.change(sealed)])])
                let refused = try #require(again?.outcomes.first)
                #expect(refused.status == .rejected)
                #expect(refused.problem?.field == "notes")
                #expect(refused.problem?.detail.contains("is not sensitive") == true, "\(String(describing: refused.problem))")
            }
        }
    }

    @Test(arguments: Backend.available)
    func pullPagesFollowTheCursorWithoutGapsOrRepeats(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let ids = (0..<25).map { _ in UUID() }
                _ = try await device.push(client, ids.map { device.mutation($0, state: .draft, ["title": device.change(.text("x"))]) })
                var seen: [UUID] = []
                var cursor: Int64 = 0
                var pages = 0
                while true {
                    let page = try await device.pull(client, after: cursor, limit: 10)
                    seen += page.changes.map(\.recordID)
                    cursor = page.cursor
                    pages += 1
                    if !page.hasMore { break }
                }
                #expect(pages == 3)
                #expect(seen == ids)
                let again = try await device.pull(client, after: cursor)
                #expect(again.changes.isEmpty && again.cursor == cursor)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aDeviceClockFarAheadIsClamped(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            let future = HybridTimestamp(millis: HybridLogicalClock.wallMillis() + 365 * 86_400_000, counter: 0)
            try await server.app.test(.router) { client in
                _ = try await device.push(client, [device.mutation(record, state: .draft, ["title": FieldChange(value: .text("x"), baseRevision: 0, hlc: future)])])
                let page = try await device.pull(client)
                let stored = try #require(try page.changes.first?.fields["title"]?.hlc)
                #expect(stored < future)
                #expect(stored.millis <= HybridLogicalClock.wallMillis() + ServerLimits().maxClockDriftMillis)
                #expect(page.serverClock <= HybridTimestamp(millis: HybridLogicalClock.wallMillis() + ServerLimits().maxClockDriftMillis + 1, counter: 0))
            }
        }
    }

    @Test(arguments: Backend.available)
    func healthAndMetricsAnswerWithoutAToken(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                let health = try await client.execute(uri: "/v1/health", method: .get)
                #expect(health.status == .ok)
                #expect(health.text.contains("\"status\":\"ok\""))
                let metrics = try await client.execute(uri: "/metrics", method: .get)
                #expect(metrics.status == .ok)
                #expect(metrics.text.contains("fieldsheet_http_requests_total"))
                #expect(metrics.text.contains("fieldsheet_http_request_duration_seconds_bucket"))
            }
        }
    }

    @Test(arguments: Backend.available)
    func unknownRoutesAnswerWithAProblem(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                let response = try await client.execute(uri: "/v2/nothing", method: .get)
                #expect(response.status == .notFound)
                #expect(response.headers[.contentType] == "application/problem+json")
                #expect(response.problem?.type == "https://fieldsheet.dev/problems/not-found")
            }
        }
    }
}
