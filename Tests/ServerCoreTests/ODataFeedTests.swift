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

/// The OData feed and the GeoJSON export through the server's routes, on each backend: paging by next link,
/// repeat rows keyed to their record and parent, filters, counts, HTTP Basic, and who sees what.
struct ODataFeedTests {
    static let form = FormDefinition(id: "site-check", version: 1, title: "Site check", completionLabel: "Save", pages: [
        FormPage(id: "main", fields: [
            FieldDefinition(id: "site", kind: .text, label: "Site"),
            FieldDefinition(id: "count", kind: .integer, label: "Count"),
            FieldDefinition(id: "where", kind: .location, label: "Where"),
            FieldDefinition(id: "defects", kind: .repeat, label: "Defects", fields: [
                FieldDefinition(id: "severity", kind: .text, label: "Severity"),
                FieldDefinition(id: "actions", kind: .repeat, label: "Actions", fields: [FieldDefinition(id: "what", kind: .text, label: "What")]),
            ]),
        ]),
    ])

    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
    }

    static func prefer(_ headers: HTTPFields, _ size: Int) -> HTTPFields {
        var headers = headers
        headers[HTTPField.Name("Prefer")!] = "odata.maxpagesize=\(size)"
        return headers
    }

    /// The path and query of an absolute link.
    static func local(_ link: String) throws -> String {
        let url = try #require(URL(string: link))
        return url.path + (url.query.map { "?" + $0 } ?? "")
    }

    @Test(arguments: Backend.available)
    func feedPagesRecordsAndRepeatRowsAndFilters(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let bob = Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector))
            let rita = Device(clientID: "rita", token: try await server.member("rita", project: "alpha", role: .reviewer))
            let ids = (0..<5).map { _ in UUID() }.sorted { $0.lowercased < $1.lowercased }
            let basic: HTTPFields = [.authorization: "Basic " + Data("rita:\(rita.token)".utf8).base64EncodedString()]
            let root = "/v1/projects/alpha/forms/site-check/odata/"
            try await server.app.test(.router) { client in
                for (index, id) in ids.enumerated() {
                    let device = index < 3 ? ana : bob
                    var changes: [String: FieldChange] = [
                        "site": device.change(.text("Site \(index)")), "count": device.change(.integer(index)),
                        "defects/d\(index)a/@position": device.change(.integer(1)), "defects/d\(index)a/severity": device.change(.text("high")),
                        "defects/d\(index)b/@position": device.change(.integer(2)), "defects/d\(index)b/severity": device.change(.text("low")),
                        "defects/d\(index)a/actions/x\(index)/@position": device.change(.integer(1)),
                        "defects/d\(index)a/actions/x\(index)/what": device.change(.text("Fix \(index)")),
                    ]
                    if index != 1 { changes["where"] = device.change(.location(Location(latitude: 52.5 + Double(index), longitude: 13.25, accuracy: 5))) }
                    _ = try await device.push(client, [device.mutation(id, form: "site-check", changes)])
                }
                _ = try await ana.push(client, [ana.mutation(UUID(), state: .draft, form: "site-check", ["site": ana.change(.text("Ana's draft"))])])
                let review = try await client.execute(
                    uri: "/v1/projects/alpha/records/\(ids[2])/review", method: .post, headers: rita.headers,
                    body: ByteBuffer(string: #"{"state":"approved"}"#))
                #expect(review.status == .ok)

                // HTTP Basic with the token as the password; the service document and $metadata.
                let service = try await client.execute(uri: root, method: .get, headers: basic)
                #expect(service.status == .ok && service.headers[HTTPField.Name("OData-Version")!] == "4.0")
                #expect((try Self.json(service)["value"] as? [[String: Any]])?.compactMap { $0["name"] as? String }
                    == ["Submissions", "Submissions_defects", "Submissions_actions"])
                let metadata = try await client.execute(uri: root + "$metadata", method: .get, headers: basic)
                #expect(metadata.status == .ok && String(buffer: metadata.body).contains(#"<EntitySet Name="Submissions""#))
                let refused = try await client.execute(uri: root + "Submissions", method: .get, headers: [.authorization: "Basic " + Data("rita:wrong".utf8).base64EncodedString()])
                #expect(refused.status == .unauthorized && refused.headers[values: .wwwAuthenticate].contains { $0.hasPrefix("Basic") })
                let syncWithBasic = try await client.execute(uri: "/v1/projects/alpha/forms", method: .get, headers: basic)
                #expect(syncWithBasic.status == .unauthorized, "the sync API takes bearer tokens only")

                // Two records a page: three pages by next link, the count on each, the draft left out (not shared).
                var link: String? = root + "Submissions?$count=true"
                var seen: [String] = []
                var pages = 0
                while let next = link {
                    let page = try await client.execute(uri: next, method: .get, headers: Self.prefer(rita.headers, 2))
                    #expect(page.status == .ok)
                    let object = try Self.json(page)
                    #expect(object["@odata.count"] as? Int == 5)
                    seen += (object["value"] as? [[String: Any]] ?? []).compactMap { $0["__id"] as? String }
                    link = try (object["@odata.nextLink"] as? String).map(Self.local)
                    pages += 1
                }
                #expect(pages == 3 && seen == ids.map(\.lowercased))

                let first = try Self.json(try await client.execute(uri: root + "Submissions?$top=1&$select=__id,site,where,__author", method: .get, headers: rita.headers))
                let entity = try #require((first["value"] as? [[String: Any]])?.first)
                #expect(entity.keys.sorted() == ["__author", "__id", "site", "where"])
                #expect(entity["site"] as? String == "Site 0" && (entity["where"] as? [String: Any])?["latitude"] as? Double == 52.5)
                #expect(first["@odata.nextLink"] == nil, "$top=1 is met by the first page")
                #expect((first["@odata.context"] as? String)?.hasSuffix("$metadata#Submissions(__id,__author,site,where)") == true)

                // Filters on review state and author.
                let approved = try Self.json(try await client.execute(uri: root + "Submissions?%24filter=__reviewState%20eq%20'approved'", method: .get, headers: rita.headers))
                #expect((approved["value"] as? [[String: Any]])?.compactMap { $0["__id"] as? String } == [ids[2].lowercased])
                let bobs = try await client.execute(uri: root + "Submissions/$count?$filter=__author%20eq%20'bob'%20and%20__submittedAt%20ge%202020-01-01", method: .get, headers: rita.headers)
                #expect(String(buffer: bobs.body) == "2")
                let bad = try await client.execute(uri: root + "Submissions?$filter=site%20eq%20'x'", method: .get, headers: rita.headers)
                #expect(bad.status == .badRequest && bad.headers[.contentType] == "application/problem+json")
                #expect(try Self.json(bad)["field"] as? String == "$filter")

                // Repeat rows: keyed to their record and their parent instance, in record then instance order, paged.
                var rows: [[String: Any]] = []
                link = root + "Submissions_defects?$count=true"
                while let next = link {
                    let object = try Self.json(try await client.execute(uri: next, method: .get, headers: Self.prefer(rita.headers, 3)))
                    #expect(object["@odata.count"] as? Int == 10)
                    rows += object["value"] as? [[String: Any]] ?? []
                    link = try (object["@odata.nextLink"] as? String).map(Self.local)
                }
                #expect(rows.compactMap { $0["__id"] as? String } == (0..<5).flatMap { ["d\($0)a", "d\($0)b"] })
                #expect(rows.compactMap { $0["__recordId"] as? String } == ids.flatMap { [$0.lowercased, $0.lowercased] })
                #expect(rows.compactMap { $0["__position"] as? Int } == Array(repeating: [1, 2], count: 5).flatMap { $0 })
                #expect(rows.first?["severity"] as? String == "high" && rows.first?["__parentId"] is NSNull)
                let actions = try Self.json(try await client.execute(uri: root + "Submissions_actions?$filter=__author%20eq%20'bob'", method: .get, headers: rita.headers))
                let nested = actions["value"] as? [[String: Any]] ?? []
                #expect(nested.compactMap { $0["__parentId"] as? String } == ["d3a", "d4a"] && nested.first?["what"] as? String == "Fix 3")

                // A collector reads only their own records (the draft too).
                let own = try Self.json(try await client.execute(uri: root + "Submissions?$count=true", method: .get, headers: bob.headers))
                #expect(own["@odata.count"] as? Int == 2)
                #expect(try Self.json(try await client.execute(uri: root + "Submissions?$count=true", method: .get, headers: ana.headers))["@odata.count"] as? Int == 4)
                let unknown = try await client.execute(uri: root + "Nothing", method: .get, headers: rita.headers)
                #expect(unknown.status == .notFound)

                // GeoJSON: one Point feature per located record, longitude first, answers as properties.
                let geo = try await client.execute(uri: "/v1/projects/alpha/forms/site-check/records.geojson", method: .get, headers: basic)
                #expect(geo.status == .ok && geo.headers[.contentType] == "application/geo+json")
                let collection = try Self.json(geo)
                let features = collection["features"] as? [[String: Any]] ?? []
                #expect(collection["type"] as? String == "FeatureCollection")
                #expect(features.compactMap { $0["id"] as? String } == [ids[0], ids[2], ids[3], ids[4]].map(\.lowercased))
                let geometry = try #require(features.first?["geometry"] as? [String: Any])
                #expect(geometry["type"] as? String == "Point" && geometry["coordinates"] as? [Double] == [13.25, 52.5])
                #expect((features.first?["properties"] as? [String: Any])?["site"] as? String == "Site 0")
                let wrongField = try await client.execute(uri: "/v1/projects/alpha/forms/site-check/records.geojson?field=site", method: .get, headers: basic)
                #expect(wrongField.status == .badRequest)

                // The console: a GeoJSON link beside CSV and JSON Lines, and the download with the table's filters.
                let browser = try await ConsoleBrowser.signIn(client, token: rita.token)
                let table = try await browser.get(client, "/console/projects/alpha/forms/site-check")
                #expect(table.text.contains("/console/projects/alpha/forms/site-check/export?format=geojson"))
                let download = try await browser.get(client, "/console/projects/alpha/forms/site-check/export?format=geojson&author=bob")
                #expect(download.status == .ok && download.headers[.contentDisposition] == "attachment; filename=\"site-check.geojson\"")
                let bobsFeatures = try Self.json(download)["features"] as? [[String: Any]] ?? []
                #expect(bobsFeatures.compactMap { $0["id"] as? String } == [ids[3], ids[4]].map(\.lowercased))
            }
        }
    }

    /// A `$count=true` walk counts once: its first page's count rides in the next link's `$skiptoken`, so a
    /// record that arrives mid-walk changes no later page's count (a new walk counts it); the repeat set's walk
    /// likewise; a count edited into the token to be no number is a 400 problem.
    @Test(arguments: Backend.available)
    func countedWalkReportsItsFirstPagesCount(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = Device(clientID: "rita", token: try await server.member("rita", project: "alpha", role: .reviewer))
            let root = "/v1/projects/alpha/forms/site-check/odata/"
            try await server.app.test(.router) { client in
                var submitted = 0
                func submit() async throws {
                    submitted += 1
                    _ = try await ana.push(client, [ana.mutation(UUID(), form: "site-check", [
                        "site": ana.change(.text("Site \(submitted)")),
                        "defects/d\(submitted)/@position": ana.change(.integer(1)),
                        "defects/d\(submitted)/severity": ana.change(.text("high")),
                    ])])
                }
                for _ in 0..<3 { try await submit() }
                for set in ["Submissions", "Submissions_defects"] {
                    var link: String? = root + set + "?$count=true&$filter=__author%20eq%20'ana'"
                    var counts: [Int] = []
                    var tokens: [String] = []
                    while let next = link {
                        let page = try await client.execute(uri: next, method: .get, headers: Self.prefer(rita.headers, 1))
                        #expect(page.status == .ok)
                        let object = try Self.json(page)
                        counts.append(try #require(object["@odata.count"] as? Int))
                        link = try (object["@odata.nextLink"] as? String).map(Self.local)
                        if let link { tokens.append(try #require(URLComponents(string: link)?.queryItems?.first { $0.name == "$skiptoken" }?.value)) }
                        // Arrives after the walk's first page: later pages still report the first page's count.
                        if counts.count == 1 { try await submit() }
                    }
                    // Three records (one defect each) before the first walk, a fourth arrived during it.
                    #expect(counts.first == (set == "Submissions" ? 3 : 4), "\(set): \(counts)")
                    #expect(counts.count >= 3 && counts.allSatisfy { $0 == counts[0] }, "\(set): \(counts)")
                    #expect(tokens.allSatisfy { $0.hasSuffix(".\(counts[0])") }, "\(tokens)")
                    // A new walk counts what is there now.
                    let fresh = try Self.json(try await client.execute(uri: root + set + "?$count=true", method: .get, headers: rita.headers))
                    #expect(fresh["@odata.count"] as? Int == counts[0] + 1)

                    // The token is checked: a count that is no whole number is refused with a problem, not served.
                    let token = try #require(tokens.first)
                    let cursor = String(token.prefix { $0 != "." })
                    for bad in [cursor + ".-1", cursor + ".1e9", cursor + "." + String(repeating: "9", count: 30)] {
                        let refused = try await client.execute(
                            uri: root + set + "?$count=true&$skiptoken=" + (bad.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? bad),
                            method: .get, headers: rita.headers)
                        #expect(refused.status == .badRequest && refused.headers[.contentType] == "application/problem+json", "\(bad)")
                        #expect(try Self.json(refused)["field"] as? String == "$skiptoken")
                    }
                    // `$count` added mid-walk (a token without a count): counted then.
                    let added = try Self.json(try await client.execute(uri: root + set + "?$count=true&$skiptoken=" + cursor, method: .get, headers: rita.headers))
                    #expect(added["@odata.count"] as? Int == counts[0] + 1)
                }
            }
        }
    }

    /// A stored record is read from its row by position (``SQLiteStorage/RecordColumn``): the positions name the
    /// statement's columns in order.
    @Test func aRecordIsReadFromItsColumnsByPosition() async throws {
        try await TestServer.with(.sqlite) { server in
            guard case .sqlite(let directory) = server.location else { return }
            let queue = try DatabaseQueue(path: directory + "/fieldsheet.sqlite")
            let names = try await queue.read { db in
                try db.makeStatement(sql: "SELECT \(SQLiteStorage.recordColumns) FROM records r JOIN users u ON u.id = r.author_id").columnNames
            }
            #expect(names.count == SQLiteStorage.RecordColumn.allCases.count)
            for column in SQLiteStorage.RecordColumn.allCases {
                // `formID` names `form_id`: the same letters, without case or underscores.
                #expect(names[column.rawValue].replacingOccurrences(of: "_", with: "") == "\(column)".lowercased(), "\(column)")
            }
        }
    }

    /// The count of a feed reads one index alone, whatever the filter on review state and author
    /// (`records_by_form_review_author` holds every column its statement reads), and the page's statement reads
    /// an index in its own order, sorting nothing: filtered by review state and author, that index's range for
    /// the two (its entries in id order after them), so the page reads only the rows it returns; else the form's
    /// id index. The plans SQLite makes for the very statements the storage builds.
    @Test func theFeedsCountReadsOnlyItsIndex() async throws {
        try await TestServer.with(.sqlite) { server in
            guard case .sqlite(let directory) = server.location else { return }
            var configuration = Configuration()
            configuration.readonly = true
            let queue = try DatabaseQueue(path: directory + "/fieldsheet.sqlite", configuration: configuration)
            let review = RecordCondition(.reviewState, .eq, .text("received"))
            let author = RecordCondition(.author, .eq, .text("ana"))
            for conditions in [[review, author], [review], [author], []] {
                for visibility in [RecordVisibility.authoredByOrShared(1), .authoredBy(1)] {
                    let query = RecordFeedQuery(formID: "site-check", conditions: conditions)
                    func plan(count: Bool) async throws -> String {
                        let (sql, arguments) = SQLiteStorage.feedSQL(projectID: 1, query: query, visibility: visibility, count: count)
                        return try await queue.read { db in
                            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "\n")
                        }
                    }
                    let label = "\(conditions.map(\.property)) \(visibility)"
                    let count = try await plan(count: true)
                    #expect(count.contains("USING COVERING INDEX records_by_form_review_author"), "\(label): \(count)")
                    #expect(!count.contains("SCAN r"), "\(label): \(count)")
                    let page = try await plan(count: false)
                    if conditions == [review, author] {
                        #expect(page.contains("USING INDEX records_by_form_review_author (project_id=? AND form_id=? AND review_state=? AND author_id=?)"), "\(label): \(page)")
                    } else {
                        #expect(page.contains("USING INDEX records_by_form "), "\(label): \(page)")
                    }
                    #expect(!page.contains("TEMP B-TREE"), "\(label): \(page)")
                    // A page after a cursor: the same index, sought to the cursor.
                    var continued = query
                    continued.after = UUID()
                    let (sql, arguments) = SQLiteStorage.feedSQL(projectID: 1, query: continued, visibility: visibility, count: false)
                    let next = try await queue.read { db in
                        try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "\n")
                    }
                    #expect(next.contains(conditions == [review, author] ? "author_id=? AND id>?)" : "USING INDEX records_by_form (project_id=? AND form_id=? AND id>?)"), "\(label): \(next)")
                    #expect(!next.contains("TEMP B-TREE"), "\(label): \(next)")
                }
            }
        }
    }
}
