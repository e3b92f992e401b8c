import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// The review workflow, the record history and the conflict log, through the routes, on both backends.
struct ReviewTests {
    struct HistoryBody: Decodable {
        struct Entry: Decodable {
            struct Diff: Decodable { var from: AnswerValue?; var to: AnswerValue? }
            struct StateDiff: Decodable { var from: RecordState?; var to: RecordState }
            struct ReviewDiff: Decodable { var from: ReviewState?; var to: ReviewState; var comment: String? }
            struct Resolution: Decodable {
                var conflictID: Int64
                var fieldID: String?
                var kept: String
                private enum CodingKeys: String, CodingKey {
                    case conflictID = "conflictId", fieldID = "fieldId", kept
                }
            }
            var revision: Int64
            var kind: String
            var user: String
            var device: String?
            var at: String
            var state: StateDiff?
            var fields: [String: Diff]
            var review: ReviewDiff?
            var resolution: Resolution?
        }
        var recordID: String
        var history: [Entry]
        private enum CodingKeys: String, CodingKey {
            case recordID = "recordId", history
        }
    }

    struct ConflictBody: Decodable {
        struct Side: Decodable { var value: AnswerValue?; var revision: Int64; var device: String; var author: String? }
        struct Resolution: Decodable { var kept: String; var by: String }
        var id: Int64
        var recordID: String
        var formID: String
        var fieldID: String?
        var open: Bool
        var server: Side?
        var client: Side?
        var resolution: Resolution?
        private enum CodingKeys: String, CodingKey {
            case id, recordID = "recordId", formID = "formId", fieldID = "fieldId", open, server, client, resolution
        }
    }

    struct ConflictListBody: Decodable {
        var conflicts: [ConflictBody]
        var next: Int64?
    }

    static func post(_ client: some TestClientProtocol, _ device: Device, _ path: String, _ body: String) async throws -> TestResponse {
        try await client.execute(uri: path, method: .post, headers: device.headers, body: ByteBuffer(string: body))
    }

    static func review(_ client: some TestClientProtocol, _ device: Device, _ record: UUID, _ body: String, project: String = "alpha") async throws -> TestResponse {
        try await post(client, device, "/v1/projects/\(project)/records/\(record)/review", body)
    }

    @Test(arguments: Backend.available)
    func aRejectedRecordFixedByItsCollectorComesBackEditedWithItsHistory(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = Device(clientID: "rita-laptop", token: try await server.member("rita", project: "alpha", role: .reviewer))
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [ana.mutation(record, state: .draft, ["title": ana.change(.text("Pump"))])])
                #expect(try await ana.pull(client).changes.first?.review == nil, "drafts have no review")
                _ = try await ana.push(client, [ana.mutation(record, ["count": ana.change(.integer(3), base: 1)])])
                #expect(try await ana.pull(client).changes.first?.review == RecordReview(state: .received))

                let rejected = try await Self.review(client, rita, record, #"{"state":"rejected","comment":"  The count is wrong.\n"}"#)
                #expect(rejected.status == .ok, "\(rejected.text)")
                let snapshot = try RecordEnvelope(jsonBytes: [UInt8](buffer: rejected.body))
                #expect(snapshot.review == RecordReview(state: .rejected, comment: "The count is wrong."))
                #expect(snapshot.revision == 3)
                // The review travels with the record on pull, as a change after the collector's cursor.
                let page = try await ana.pull(client, after: 2)
                #expect(page.changes.map(\.recordID) == [record])
                #expect(page.changes.first?.review == RecordReview(state: .rejected, comment: "The count is wrong."))
                #expect(try page.changes.first?.fields["count"]?.value == .integer(3), "the fields are unchanged")

                let (_, fixed) = try await ana.push(client, [ana.mutation(record, ["count": ana.change(.integer(4), base: 3)])])
                #expect(fixed?.outcomes.first?.status == .applied)
                let edited = try await ana.pull(client, after: page.cursor).changes.first
                #expect(edited?.review == RecordReview(state: .edited, comment: "The count is wrong."))

                let historyResponse = try await ana.get(client, "/v1/projects/alpha/records/\(record)/history")
                #expect(historyResponse.status == .ok)
                let history = try JSONDecoder().decode(HistoryBody.self, from: Data(buffer: historyResponse.body))
                #expect(history.recordID == record.lowercased)
                #expect(history.history.map(\.kind) == ["change", "change", "review", "change"])
                #expect(history.history.map(\.revision) == [1, 2, 3, 4])
                #expect(history.history.map(\.user) == ["ana", "ana", "rita", "ana"])
                #expect(history.history.map(\.device) == ["ana-phone", "ana-phone", nil, "ana-phone"])
                let first = try #require(history.history.first)
                #expect(first.state?.from == nil && first.state?.to == .draft)
                #expect(first.fields["title"]?.to == .text("Pump") && first.fields["title"]?.from == nil)
                #expect(history.history[1].state?.to == .submitted)
                #expect(history.history[1].review?.to == .received)
                #expect(history.history[2].review?.from == .received && history.history[2].review?.to == .rejected)
                #expect(history.history[2].review?.comment == "The count is wrong.")
                #expect(history.history[3].fields["count"]?.from == .integer(3) && history.history[3].fields["count"]?.to == .integer(4))
                #expect(history.history[3].review?.from == .rejected && history.history[3].review?.to == .edited)

                let approved = try await Self.review(client, rita, record, #"{"state":"approved"}"#)
                #expect(try RecordEnvelope(jsonBytes: [UInt8](buffer: approved.body)).review == RecordReview(state: .approved))
                let stored = try #require(try await server.storage.record(projectID: try await server.project("alpha").id, id: record))
                #expect(stored.times.created != nil && stored.times.submitted != nil && stored.times.updated != nil)
                #expect(stored.device == "ana-phone")
            }
        }
    }

    @Test(arguments: Backend.available)
    func reviewsRefuseWhatTheyCannotSetWithAClearProblem(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .admin))
            let draft = UUID(), submitted = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [
                    ana.mutation(draft, state: .draft, ["title": ana.change(.text("Pump"))]),
                    ana.mutation(submitted, ["title": ana.change(.text("Valve"))]),
                ])
                for state in ["received", "edited", "done", ""] {
                    let response = try await Self.review(client, ana, submitted, #"{"state":"\#(state)"}"#)
                    #expect(response.status == .unprocessableContent, "\(state)")
                    #expect(response.problem?.field == "state")
                    #expect(response.problem?.detail.contains("hasIssues") == true)
                }
                let onDraft = try await Self.review(client, ana, draft, #"{"state":"approved"}"#)
                #expect(onDraft.status == .conflict)
                #expect(onDraft.problem?.type == "https://fieldsheet.dev/problems/not-submitted")
                let malformed = try await Self.review(client, ana, submitted, #"{"comment":"x"}"#)
                #expect(malformed.status == .badRequest)
                #expect(malformed.problem?.field == "state")
                let long = try await Self.review(client, ana, submitted, #"{"state":"hasIssues","comment":"\#(String(repeating: "a", count: 4_001))"}"#)
                #expect(long.status == .unprocessableContent)
                #expect(long.problem?.field == "comment")
                let nul = try await Self.review(client, ana, submitted, #"{"state":"hasIssues","comment":"a\u0000b"}"#)
                #expect(nul.status == .unprocessableContent)
                let notJSON = try await client.execute(
                    uri: "/v1/projects/alpha/records/\(submitted)/review", method: .post,
                    headers: [.authorization: "Bearer \(ana.token)", .contentType: "text/plain"], body: ByteBuffer(string: "{}"))
                #expect(notJSON.status == .unsupportedMediaType)
                // Nothing of the refused reviews was written.
                let stored = try await ana.get(client, "/v1/projects/alpha/records/\(submitted)")
                #expect(try RecordEnvelope(jsonBytes: [UInt8](buffer: stored.body)).review == RecordReview(state: .received))
            }
        }
    }

    @Test(arguments: Backend.available)
    func theConflictLogShowsBothValuesAndAuthorsAndAnOpenConflictIsResolvedOnce(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(policy: .manual), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let bo = Device(clientID: "bo-phone", token: try await server.member("bo", project: "alpha", role: .reviewer))
            let rita = Device(clientID: "rita", token: try await server.member("rita", project: "alpha", role: .admin))
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [ana.mutation(record, ["title": ana.change(.text("Pump"))])])
                _ = try await ana.push(client, [ana.mutation(record, ["notes": ana.change(.text("from ana"), base: 1)])])
                let (_, push) = try await bo.push(client, [bo.mutation(record, ["notes": bo.change(.text("from bo"), base: 1)])])
                #expect(push?.outcomes.first?.conflicts.first?.open == true)

                let forbidden = try await ana.get(client, "/v1/projects/alpha/conflicts")
                #expect(forbidden.status == .forbidden, "collectors do not see the project's conflict log")
                let listed = try await rita.get(client, "/v1/projects/alpha/conflicts")
                #expect(listed.status == .ok, "\(listed.text)")
                let list = try JSONDecoder().decode(ConflictListBody.self, from: Data(buffer: listed.body))
                let conflict = try #require(list.conflicts.first)
                #expect(list.conflicts.count == 1)
                #expect(list.next == nil)
                #expect(conflict.recordID == record.lowercased && conflict.formID == "job" && conflict.fieldID == "notes" && conflict.open)
                #expect(conflict.server?.value == .text("from ana") && conflict.server?.author == "ana" && conflict.server?.device == "ana-phone")
                #expect(conflict.client?.value == .text("from bo") && conflict.client?.author == "bo" && conflict.client?.device == "bo-phone")
                #expect(try await rita.get(client, "/v1/projects/alpha/conflicts?state=bogus").status == .badRequest)

                let path = "/v1/projects/alpha/conflicts/\(conflict.id)/resolve"
                #expect(try await Self.post(client, ana, path, #"{"keep":"client"}"#).status == .forbidden)
                #expect(try await Self.post(client, rita, path, #"{"keep":"both"}"#).status == .unprocessableContent)
                let resolved = try await Self.post(client, rita, path, #"{"keep":"client"}"#)
                #expect(resolved.status == .ok, "\(resolved.text)")
                let body = try JSONDecoder().decode(ConflictBody.self, from: Data(buffer: resolved.body))
                #expect(!body.open && body.resolution?.kept == "client" && body.resolution?.by == "rita")
                let again = try await Self.post(client, rita, path, #"{"keep":"server"}"#)
                #expect(again.status == .conflict)
                #expect(again.problem?.type == "https://fieldsheet.dev/problems/already-resolved")

                // The device's value is now the record's, and the pull carries it.
                let page = try await ana.pull(client)
                #expect(try page.changes.first?.fields["notes"]?.value == .text("from bo"))
                let open = try JSONDecoder().decode(ConflictListBody.self, from: Data(buffer: try await rita.get(client, "/v1/projects/alpha/conflicts").body))
                #expect(open.conflicts.isEmpty)
                let all = try JSONDecoder().decode(ConflictListBody.self, from: Data(buffer: try await rita.get(client, "/v1/projects/alpha/conflicts?state=all").body))
                #expect(all.conflicts.map(\.id) == [conflict.id])
                let history = try JSONDecoder().decode(HistoryBody.self, from: Data(buffer: try await rita.get(client, "/v1/projects/alpha/records/\(record)/history").body))
                let last = try #require(history.history.last)
                #expect(last.kind == "resolution" && last.user == "rita" && last.resolution?.conflictID == conflict.id)
                #expect(last.fields["notes"]?.from == .text("from ana") && last.fields["notes"]?.to == .text("from bo"))
            }
        }
    }

    @Test(arguments: Backend.available)
    func conflictPagesFollowTheirNextCursor(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(policy: .manual), project: "alpha")
            let ana = Device(clientID: "a", token: try await server.member("ana", project: "alpha", role: .admin))
            let bo = Device(clientID: "b", token: try await server.member("bo", project: "alpha", role: .admin))
            try await server.app.test(.router) { client in
                for index in 0..<5 {
                    let record = UUID()
                    _ = try await ana.push(client, [ana.mutation(record, ["title": ana.change(.text("T\(index)"))])])
                    _ = try await ana.push(client, [ana.mutation(record, ["notes": ana.change(.text("a"), base: 1)])])
                    _ = try await bo.push(client, [bo.mutation(record, ["notes": bo.change(.text("b"), base: 1)])])
                }
                var seen: [Int64] = []
                var after: Int64 = 0
                while true {
                    let page = try JSONDecoder().decode(ConflictListBody.self, from: Data(buffer: try await ana.get(client, "/v1/projects/alpha/conflicts?limit=2&after=\(after)").body))
                    seen += page.conflicts.map(\.id)
                    guard let next = page.next else { break }
                    after = next
                }
                #expect(seen.count == 5)
                #expect(seen == seen.sorted())
            }
        }
    }
}
