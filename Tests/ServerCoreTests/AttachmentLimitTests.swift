import FormModel
import Foundation
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// A reference to an attachment larger than the server takes could never be uploaded: the push refuses that
/// mutation with a problem the device shows at the record, instead of leaving the record waiting forever.
struct AttachmentLimitTests {
    @Test(arguments: Backend.available)
    func aPushReferencingAnAttachmentOverTheLimitIsRejectedWithAClearProblem(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.maxAttachmentBytes = 1_000_000
        try await TestServer.with(backend, limits: limits) { server in
            try await server.publish(AttachmentAccessTests.form, project: "alpha")
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let (large, small, fits) = (UUID(), UUID(), UUID())
                let huge = AnswerValue.attachment(AttachmentReference(sha256: String(repeating: "a", count: 64), bytes: 3_500_000, type: "video/mp4", name: "walkthrough.mp4"))
                let edge = AnswerValue.attachment(AttachmentReference(sha256: String(repeating: "b", count: 64), bytes: 1_000_000, type: "image/jpeg", name: "IMG_1.jpg"))
                let (response, outcome) = try await ana.push(client, [
                    ana.mutation(large, form: "inspection", ["title": ana.change(.text("Leak")), "sketch": ana.change(huge)]),
                    ana.mutation(small, form: "inspection", ["title": ana.change(.text("Crack"))]),
                    ana.mutation(fits, form: "inspection", ["photo": ana.change(edge)]),
                ])
                #expect(response.status == .ok, "one refused mutation does not refuse the batch")
                let outcomes = try #require(outcome?.outcomes)
                #expect(outcomes.map(\.status) == [.rejected, .applied, .applied])
                let problem = try #require(outcomes.first?.problem)
                #expect(problem.type == "https://fieldsheet.dev/problems/attachment-too-large")
                #expect(problem.status == 413)
                #expect(problem.field == "sketch")
                for words in ["walkthrough.mp4", "3.3 MB", "3500000", "1000000", "977 KB", "smaller file", "--max-attachment-bytes"] {
                    #expect(problem.detail.contains(words), "\(words) in: \(problem.detail)")
                }
                #expect(try await ana.get(client, "/v1/projects/alpha/records/\(large)").status == .notFound, "nothing of it was stored")
                let pulled = try await AttachmentAccessTests.pulledMissing(ana, client)
                #expect(pulled.missing[large] == nil)
                #expect(pulled.missing[fits] == [String(repeating: "b", count: 64)], "at the limit it is taken, and waited for")

                let projectID = try await server.project("alpha").id
                #expect(try await server.storage.attachments(projectID: projectID, recordID: large).isEmpty)
            }
        }
    }
}
