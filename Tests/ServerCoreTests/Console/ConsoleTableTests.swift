import Foundation
import FormModel
import GRDB
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// The submissions table pages by keyset through every record, with filters and both sorts, on both backends;
/// the forms page counts by review state; exports stream what the viewer may see.
struct ConsoleTableTests {
    /// The record ids a table page links to, in order, and its next-page link.
    static func rows(_ html: String) -> (ids: [String], next: String?) {
        var ids: [String] = []
        var rest = html[...]
        while let range = rest.range(of: "/console/projects/alpha/records/") {
            let id = String(rest[range.upperBound...].prefix(36))
            if ids.last != id { ids.append(id) }
            rest = rest[range.upperBound...]
        }
        let next = html.range(of: "rel=\"next\"").flatMap { _ -> String? in
            guard let start = html.range(of: "<a href=\"", options: .backwards, range: html.startIndex..<html.range(of: "rel=\"next\"")!.lowerBound) else { return nil }
            return String(html[start.upperBound...].prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
        }
        return (ids, next)
    }

    /// Follows next-page links from `path` to the end.
    static func everyPage(_ client: some TestClientProtocol, _ path: String, token: String) async throws -> [String] {
        var all: [String] = []
        var next: String? = path
        var pages = 0
        while let path = next {
            let response = try await client.console(path, token: token)
            #expect(response.status == .ok, "\(path): \(response.text)")
            let page = rows(response.text)
            #expect(page.ids.count <= SubmissionsController.pageSize)
            all += page.ids
            next = page.next
            pages += 1
            if pages > 100 { throw TestFailure("more than 100 pages from \(path)") }
        }
        return all
    }

    /// A column's header is a field's label, which no one record fills in: a `${name}` in it reads "…".
    @Test func aHeaderReadsAReferenceAsAnEllipsis() {
        #expect(SubmissionsController.header("State of ${site}") == "State of …")
        #expect(SubmissionsController.header("${visit.site} and ${b}") == "… and …")
        #expect(SubmissionsController.header("Cost (${ not a reference") == "Cost (${ not a reference")
    }

    @Test(arguments: Backend.available)
    func theTablePagesThroughEveryRecordByKeysetWithFiltersAndSorts(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let bob = Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector))
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            try await server.app.test(.router) { client in
                // 130 records in batches, so many share an update time to the push: the id breaks the ties.
                var anas: [UUID] = []
                var bobs: [UUID] = []
                for batch in 0..<13 {
                    let ids = (0..<10).map { _ in UUID() }
                    let device = batch % 3 == 0 ? bob : ana
                    _ = try await device.push(client, ids.map { device.mutation($0, ["title": device.change(.text("Job \(batch)"))]) })
                    if device.clientID == bob.clientID { bobs += ids } else { anas += ids }
                }
                let rejected = Array(anas.prefix(7))
                for id in rejected {
                    #expect(try await client.console("/console/projects/alpha/records/\(id.lowercased)/review", token: rita, method: .post, form: "state=rejected").status == .seeOther)
                }
                let all = Set((anas + bobs).map(\.lowercased))
                for sort in ["-updated", "updated", "-created", "created"] {
                    let seen = try await Self.everyPage(client, "/console/projects/alpha/forms/job?sort=\(sort)", token: rita)
                    #expect(seen.count == 130 && Set(seen) == all, "sort \(sort): \(seen.count) rows, \(Set(seen).count) distinct")
                }
                let newestFirst = try await Self.everyPage(client, "/console/projects/alpha/forms/job", token: rita)
                #expect(Set(newestFirst.prefix(7)) == Set(rejected.map(\.lowercased)), "the reviews are the latest changes")
                #expect(Set(try await Self.everyPage(client, "/console/projects/alpha/forms/job?review=rejected", token: rita)) == Set(rejected.map(\.lowercased)))
                #expect(Set(try await Self.everyPage(client, "/console/projects/alpha/forms/job?author=bob", token: rita)) == Set(bobs.map(\.lowercased)))
                #expect(try await Self.everyPage(client, "/console/projects/alpha/forms/job?author=nobody", token: rita).isEmpty)
                #expect(try await Self.everyPage(client, "/console/projects/alpha/forms/job?to=2000-01-01", token: rita).isEmpty)
                // A collector pages through her own records only.
                #expect(Set(try await Self.everyPage(client, "/console/projects/alpha/forms/job", token: ana.token)) == Set(anas.map(\.lowercased)))

                // The forms page counts by review state.
                let forms = try await client.console("/console/projects/alpha", token: rita).text
                #expect(forms.contains("Rejected</span> 7") && forms.contains("Received</span> 123") && forms.contains("<strong>Total</strong> 130"), "\(forms)")

                // Bad filters say what is expected.
                for (query, words) in [("review=maybe", "review must be one of"), ("sort=author", "sort must be one of"),
                                       ("from=31.12.2026", "from must be a date"), ("after=garbage", "page link is damaged")] {
                    let response = try await client.console("/console/projects/alpha/forms/job?\(query)", token: rita)
                    #expect(response.status == .badRequest && response.text.contains(words), "\(query): \(response.status)")
                }
            }
        }
    }

    /// Every table query SQLite runs seeks its index to the cursor and reads in the index's order, without
    /// sorting the form's records (the plan SQLite makes for the very statement the storage builds).
    @Test func theTableQuerySeeksItsIndexToTheCursor() async throws {
        try await TestServer.with(.sqlite) { server in
            guard case .sqlite(let directory) = server.location else { return }
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: directory + "/fieldsheet.sqlite", configuration: configuration)
            let cursor = RecordTableQuery.Cursor(time: 1e9, id: UUID())
            for sort in RecordTableQuery.SortKey.allCases {
                for descending in [true, false] {
                    for (review, index) in [(nil, sort == .updated ? "records_by_form_updated" : "records_by_form_created"),
                                            (ReviewState.rejected, sort == .updated ? "records_by_form_review" : "records_by_form_created")] {
                        let query = RecordTableQuery(formID: "job", reviewState: review, sort: sort, descending: descending, after: cursor, limit: 51)
                        let (sql, arguments) = SQLiteStorage.recordTableSQL(projectID: 1, query: query, visibility: .authoredByOrShared(1))
                        let plan = try await queue.read { db in
                            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "\n")
                        }
                        let label = "\(sort) \(descending ? "desc" : "asc") \(review?.rawValue ?? "any"): \(plan)"
                        #expect(plan.contains("USING INDEX \(index)"), "\(label)")
                        #expect(plan.contains(sort == .updated ? "updated_at>" : "<expr>>") || plan.contains(sort == .updated ? "updated_at<" : "<expr><"),
                                "the index is not sought to the cursor: \(label)")
                        #expect(!plan.contains("TEMP B-TREE"), "\(label)")
                    }
                }
            }
        }
    }

    @Test(arguments: Backend.available)
    func exportsStreamTheRecordsTheViewerMaySee(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            try await server.app.test(.router) { client in
                let submitted = UUID()
                let draft = UUID()
                _ = try await ana.push(client, [
                    ana.mutation(submitted, ["title": ana.change(.text("=1+1, \"quoted\""))]),
                    ana.mutation(draft, state: .draft, ["title": ana.change(.text("private"))]),
                ])
                let csv = try await client.console("/console/projects/alpha/forms/job/export?format=csv", token: rita)
                #expect(csv.status == .ok)
                #expect(csv.headers[.contentDisposition] == "attachment; filename=\"job.csv\"")
                let lines = csv.text.split(separator: "\r\n")
                #expect(lines.count == 2 && lines[0].hasPrefix("recordId,formVersion,state,author"))
                #expect(lines[1].hasPrefix(submitted.lowercased + ",") && lines[1].contains("\"'=1+1, \"\"quoted\"\"\""), "\(lines)")
                #expect(!csv.text.contains("private"), "another's draft is not exported")
                let jsonl = try await client.console("/console/projects/alpha/forms/job/export?format=jsonl", token: rita)
                #expect(jsonl.headers[.contentType] == "application/x-ndjson; charset=utf-8")
                #expect(jsonl.text.split(separator: "\n").count == 1 && jsonl.text.contains(#""reviewState":"received""#))
                #expect(try await client.console("/console/projects/alpha/forms/job/export?format=xlsx", token: rita).status == .badRequest)
                #expect(try await client.console("/console/projects/alpha/forms/job/export?table=defects", token: rita).status == .badRequest)
            }
        }
    }

    /// The export of a filtered table gives the records the table lists, every page of them (not every record
    /// of the form), and the table's export links carry its filters; record ids are lower case, as everywhere.
    @Test(arguments: Backend.available)
    func theExportHonoursTheTablesFilters(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let bob = Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector))
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            try await server.app.test(.router) { client in
                let (first, second, third) = (UUID(), UUID(), UUID())
                _ = try await ana.push(client, [ana.mutation(first, ["title": ana.change(.text("one"))]), ana.mutation(second, ["title": ana.change(.text("two"))])])
                _ = try await bob.push(client, [bob.mutation(third, ["title": bob.change(.text("three"))])])
                for id in [second, third] {
                    let reviewed = try await client.console("/console/projects/alpha/records/\(id.lowercased)/review", token: rita, method: .post, form: "state=rejected")
                    #expect(reviewed.status == .seeOther)
                }
                func exported(_ query: String) async throws -> Set<String> {
                    let response = try await client.console("/console/projects/alpha/forms/job/export?\(query)", token: rita)
                    #expect(response.status == .ok, "\(query): \(response.text)")
                    return Set(response.text.split(separator: "\r\n").dropFirst().map { String($0.prefix(36)) })
                }
                #expect(try await exported("format=csv") == Set([first, second, third].map(\.lowercased)))
                let rejected = try await exported("format=csv&review=rejected")
                #expect(rejected == Set([second, third].map(\.lowercased)))
                #expect(rejected == Set(try await Self.everyPage(client, "/console/projects/alpha/forms/job?review=rejected", token: rita)), "the export lists what the table lists")
                #expect(try await exported("format=csv&review=rejected&author=ana") == [second.lowercased])
                #expect(try await exported("format=csv&to=2000-01-01").isEmpty)
                #expect(try await exported("format=csv&from=2000-01-01") == Set([first, second, third].map(\.lowercased)))
                let jsonl = try await client.console("/console/projects/alpha/forms/job/export?format=jsonl&review=received", token: rita).text
                #expect(jsonl.split(separator: "\n").count == 1 && jsonl.contains("\"recordId\":\"\(first.lowercased)\""), "\(jsonl)")
                #expect(try await client.console("/console/projects/alpha/forms/job/export?format=csv&review=maybe", token: rita).status == .badRequest)

                let page = try await client.console("/console/projects/alpha/forms/job?review=rejected&author=ana", token: rita).text
                #expect(page.contains("/console/projects/alpha/forms/job/export?format=csv&amp;review=rejected&amp;author=ana"), "the CSV link carries the filters")
                #expect(page.contains("/console/projects/alpha/forms/job/export?format=jsonl&amp;review=rejected&amp;author=ana"), "the JSON Lines link carries the filters")
                let unfiltered = try await client.console("/console/projects/alpha/forms/job", token: rita).text
                #expect(unfiltered.contains("Export every record of this form") && unfiltered.contains("/export?format=csv\""))
            }
        }
    }
}
