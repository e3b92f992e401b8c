import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Bulk review from the submissions table: the ticked records or every record the filters list, approved or
/// sent back with one comment, each written as a single review is (history, change feed), on both backends;
/// a retried post reviews nothing twice.
struct ConsoleBulkReviewTests {
    /// The hidden `batch` field of the table's bulk form.
    static func batch(_ html: String) throws -> String {
        try #require(ConsoleBrowser.hiddenValue(html, "batch"), "no bulk review form on the page")
    }

    static func checkboxes(_ html: String) -> [String] {
        html.components(separatedBy: "name=\"records[]\" value=\"").dropFirst().map { String($0.prefix(36)) }
    }

    static func query(_ response: TestResponse) -> [String: String] {
        let location = response.headers[.location] ?? ""
        let query = location.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
        var items: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            if parts.count == 2 { items[String(parts[0])] = String(parts[1]).removingPercentEncoding }
        }
        return items
    }

    @Test(arguments: Backend.available)
    func ticksAndFiltersApproveOrSendBackEachAsASingleReview(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            try await server.app.test(.router) { client in
                let submitted = (0..<6).map { _ in UUID() }
                let draft = UUID()
                _ = try await ana.push(client, submitted.map { ana.mutation($0, ["title": ana.change(.text("Job"))]) })
                _ = try await ana.push(client, [ana.mutation(draft, state: .draft, ["title": ana.change(.text("Draft"))])])
                let before = try await ana.pull(client)

                let browser = try await ConsoleBrowser.signIn(client, token: rita)
                let table = try await browser.get(client, "/console/projects/alpha/forms/job")
                #expect(table.status == .ok)
                #expect(Set(Self.checkboxes(table.text)) == Set(submitted.map(\.lowercased)), "one checkbox per submitted record")
                #expect(table.text.contains("All 6 submitted records matching this filter"))
                #expect(table.text.contains("at most \(BulkReview.maxRecords)"))
                let batch = try Self.batch(table.text)

                // Three ticked records approved; the same post again (a retry) reviews none of them twice.
                let ticked = Array(submitted.prefix(3))
                let fields = [("batch", batch), ("scope", "selected"), ("decision", "approved"), ("comment", "")]
                    + ticked.map { ("records[]", $0.lowercased) }
                let approved = try await browser.post(client, "/console/projects/alpha/forms/job/review", fields)
                #expect(approved.status == .seeOther, "\(approved.text)")
                #expect(Self.query(approved)["reviewed"] == "3")
                let retried = try await browser.post(client, "/console/projects/alpha/forms/job/review", fields)
                #expect(Self.query(retried)["reviewed"] == "0")
                #expect(Self.query(retried)["repeated"] == "3")
                let after = try await browser.get(client, approved.headers[.location] ?? "")
                #expect(after.text.contains("Approved 3 records."))
                for id in ticked {
                    let history = try await server.storage.history(projectID: try await server.project("alpha").id, recordID: id)
                    #expect(history.filter { $0.kind == .review }.count == 1, "one review entry for \(id)")
                    #expect(history.last?.detail.review?.to == .approved)
                    #expect(history.last?.userName == "rita")
                }

                // Every record still "received" sent back with one comment: the filter, not the ticks.
                let filtered = try await browser.get(client, "/console/projects/alpha/forms/job?review=received")
                #expect(filtered.text.contains("All 3 submitted records matching this filter"))
                let sentBack = try await browser.post(client, "/console/projects/alpha/forms/job/review", [
                    ("batch", try Self.batch(filtered.text)), ("scope", "all"), ("decision", "hasIssues"),
                    ("comment", "Add the site's photo"), ("review", "received"),
                ])
                #expect(Self.query(sentBack)["reviewed"] == "3", "\(sentBack.headers)")
                #expect(Self.query(sentBack)["review"] == "received", "the table keeps its filters")

                // The audit log has one line per bulk review sent, the retry's included.
                let log = try await server.storage.auditLog(AuditQuery(projectID: try await server.project("alpha").id, action: .recordsReviewedInBulk))
                #expect(log.map { $0.event.detail["reviewed"] } == ["3", "0", "3"])
                #expect(log.first?.event.detail["state"] == "hasIssues" && log.first?.event.actor == "rita")

                // The device learns every review as it learns a single one: on its next pull.
                let page = try await ana.pull(client, after: before.cursor)
                let reviews = Dictionary(uniqueKeysWithValues: page.changes.map { ($0.recordID, $0.review) })
                for id in ticked { #expect(reviews[id]??.state == .approved) }
                for id in submitted.dropFirst(3) {
                    #expect(reviews[id]??.state == .hasIssues)
                    #expect(reviews[id]??.comment == "Add the site's photo")
                }
                #expect(reviews[draft] == nil, "the draft is not reviewed")
            }
        }
    }

    @Test(arguments: Backend.available)
    func refusesWhatABulkReviewMayNotDo(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            try await server.app.test(.router) { client in
                let id = UUID()
                _ = try await ana.push(client, [ana.mutation(id, ["title": ana.change(.text("Job"))])])
                let browser = try await ConsoleBrowser.signIn(client, token: rita)
                let batch = try Self.batch(try await browser.get(client, "/console/projects/alpha/forms/job").text)
                let path = "/console/projects/alpha/forms/job/review"
                let one = [("batch", batch), ("scope", "selected"), ("records[]", id.lowercased)]

                let noComment = try await browser.post(client, path, one + [("decision", "hasIssues")])
                #expect(noComment.status == .unprocessableContent)
                #expect(noComment.text.contains("Say in the comment what the collectors should fix"))
                let noDecision = try await browser.post(client, path, one)
                #expect(noDecision.status == .unprocessableContent)
                let noneTicked = try await browser.post(client, path, [("batch", batch), ("scope", "selected"), ("decision", "approved")])
                #expect(noneTicked.status == .unprocessableContent)
                #expect(noneTicked.text.contains("Tick the records"))
                let noCSRF = try await browser.post(client, path, one + [("decision", "approved")], csrf: .some(nil))
                #expect(noCSRF.status == .forbidden)
                let noBatch = try await browser.post(client, path, [("scope", "selected"), ("records[]", id.lowercased), ("decision", "approved")])
                #expect(noBatch.status == .badRequest)

                // A collector has no bulk form and may not post one.
                let collector = try await ConsoleBrowser.signIn(client, token: ana.token)
                let own = try await collector.get(client, "/console/projects/alpha/forms/job")
                #expect(!own.text.contains("bulk-review"))
                let refused = try await collector.post(client, path, one + [("decision", "approved")])
                #expect(refused.status == .forbidden)
                let history = try await server.storage.history(projectID: try await server.project("alpha").id, recordID: id)
                #expect(!history.contains { $0.kind == .review }, "nothing refused was written")

                // A record of another form ticked on this form's table is left as it is.
                try await server.publish(TestForms.wide(fields: 2), project: "alpha")
                let other = UUID()
                _ = try await ana.push(client, [ana.mutation(other, form: "wide", ["f1": ana.change(.text("x"))])])
                let elsewhere = try await browser.post(
                    client, path, [("batch", batch), ("scope", "selected"), ("records[]", other.lowercased), ("decision", "approved")])
                #expect(elsewhere.status == .seeOther || elsewhere.status == .found, "\(elsewhere.status)")
                let untouched = try await server.storage.history(projectID: try await server.project("alpha").id, recordID: other)
                #expect(!untouched.contains { $0.kind == .review }, "a record of another form was reviewed through the job form")
            }
        }
    }

    @Test func moreRecordsThanTheBoundAreRefusedBeforeAnyIsReviewed() async throws {
        try await TestServer.with(.sqlite) { server in
            let project = try await server.project("alpha")
            let token = try await server.member("rita", project: "alpha", role: .reviewer)
            let principal = try #require(try await server.storage.principal(tokenHash: AccessToken.hash(token)))
            let membership = try #require(principal.memberships[project.name])
            let ids = (0...BulkReview.maxRecords).map { _ in UUID() }
            await #expect(throws: Problem.self) {
                _ = try await BulkReview(services: server.services).review(
                    membership, principal, formID: "job", recordIDs: ids, state: .approved, comment: nil, batch: "abcdefghijklmnop", logger: TestServer.quietLogger)
            }
        }
    }
}
