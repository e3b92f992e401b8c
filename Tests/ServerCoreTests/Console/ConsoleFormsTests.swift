import Foundation
import FieldSheetTesting
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing
import XLSForm

/// Forms run from the console on both backends: an upload checked and previewed before anything is published,
/// its findings at their JSON path or workbook cell; publishing the first and the next version; a form closed
/// to new records (pushes of new records refused, edits taken, devices told in the forms list) and reopened;
/// the preview of a published version; the map of a form's located records.
struct ConsoleFormsTests {
    /// Posts `file` as the upload form does (multipart), with the session's CSRF token unless `csrf` says otherwise.
    static func upload(
        _ client: some TestClientProtocol, _ browser: ConsoleBrowser, name: String, _ data: Data, csrf: String?? = .none, project: String = "alpha"
    ) async throws -> TestResponse {
        let boundary = "fieldsheet-test-\(UUID().uuidString)"
        var body = Data()
        let token: String? = switch csrf { case .none: browser.csrf; case .some(let value): value }
        if let token { body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"csrf\"\r\n\r\n\(token)\r\n".utf8) }
        body += Data("--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
        body += data
        body += Data("\r\n--\(boundary)--\r\n".utf8)
        return try await client.execute(
            uri: "/console/projects/\(project)/uploads", method: .post,
            headers: [.cookie: "fieldsheet_session=\(browser.cookie)", .contentType: "multipart/form-data; boundary=\(boundary)"],
            body: ByteBuffer(bytes: body))
    }

    /// The publish form's action on an upload's page.
    static func publishAction(_ html: String) -> String? {
        guard let range = html.range(of: "id=\"publish-form\"") else { return nil }
        let before = html[..<range.lowerBound]
        guard let action = before.range(of: "action=\"", options: .backwards) else { return nil }
        return String(before[action.upperBound...].prefix { $0 != "\"" })
    }

    static func json(_ form: FormDefinition) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return try encoder.encode(form)
    }

    /// The survey form: a site, where it is, and (from version 2) a note.
    static func survey(version2: Bool = false) -> FormDefinition {
        var fields = [
            FieldDefinition(id: "site", kind: .text, label: "Site", required: true),
            FieldDefinition(id: "where", kind: .location, label: "Where"),
        ]
        if version2 { fields.append(FieldDefinition(id: "remark", kind: .multilineText, label: "Remark")) }
        return FormDefinition(id: "survey", version: 1, title: "Site Survey", completionLabel: "Create", pages: [FormPage(id: "main", fields: fields)])
    }

    @Test(arguments: Backend.available)
    func anUploadIsCheckedAndPreviewedThenPublishedAsTheNextVersion(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let adam = try await server.member("adam", project: "alpha", role: .admin)
            try await server.app.test(.router) { client in
                let browser = try await ConsoleBrowser.signIn(client, token: adam)
                let project = try await server.project("alpha")
                let home = try await browser.get(client, "/console/projects/alpha")
                #expect(home.text.contains("enctype=\"multipart/form-data\""), "the admin has the upload form")

                // A JSON form with an error: its finding at its path and line, nothing to publish.
                var broken = Self.survey()
                broken.pages[0].fields[0].relevant = "nosuchfield = 'x'"
                let refused = try await Self.upload(client, browser, name: "survey.json", try Self.json(broken))
                #expect(refused.status == .ok, "the check's answer is the page of its findings")
                #expect(refused.text.contains("stop this form from being published"))
                #expect(refused.text.contains("pages[0].fields[0].relevant") && refused.text.contains("nosuchfield"), "\(refused.text)")
                #expect(Self.publishAction(refused.text) == nil)
                #expect(try await server.storage.forms(projectID: project.id).isEmpty, "nothing was published")

                // The fixed form: no findings, a preview of its fields, and the button that publishes version 1.
                let checked = try await Self.upload(client, browser, name: "survey.json", try Self.json(Self.survey()))
                #expect(checked.status == .ok, "\(checked.text)")
                #expect(checked.text.contains("The checks found nothing to fix."))
                #expect(checked.text.contains("id=\"preview-where\"") && checked.text.contains("location"))
                #expect(try await server.storage.forms(projectID: project.id).isEmpty, "checking publishes nothing")
                let action = try #require(Self.publishAction(checked.text))
                let published = try await browser.post(client, action, [])
                #expect(published.status == .seeOther)
                #expect(published.headers[.location] == "/console/projects/alpha?done=published&form=survey&version=1")
                #expect(try await server.storage.forms(projectID: project.id).map(\.version) == [1])
                #expect(try await browser.get(client, published.headers[.location] ?? "").text.contains("Published survey version 1."))

                // The same file again: identical, nothing to publish. A changed one becomes version 2.
                let same = try await Self.upload(client, browser, name: "survey.json", try Self.json(Self.survey()))
                #expect(same.text.contains("identical to version 1"))
                #expect(Self.publishAction(same.text) == nil)
                let next = try await Self.upload(client, browser, name: "survey.json", try Self.json(Self.survey(version2: true)))
                #expect(next.text.contains("Publish <code>survey</code> as version 2"))
                _ = try await browser.post(client, try #require(Self.publishAction(next.text)), [])
                #expect(try await server.storage.forms(projectID: project.id).map(\.version) == [1, 2])
                // Publishing the same upload again changes nothing.
                let again = try await browser.post(client, try #require(Self.publishAction(next.text)), [])
                #expect(again.headers[.location]?.contains("done=unchanged") == true)

                // The preview of each version.
                let preview = try await browser.get(client, "/console/projects/alpha/forms/survey/preview?version=1")
                #expect(preview.status == .ok)
                #expect(preview.text.contains("Site Survey") && !preview.text.contains("id=\"preview-remark\""))
                #expect(preview.text.contains("(<code>survey</code> version 1)"), "the preview names the form version it shows")
                #expect(try await browser.get(client, "/console/projects/alpha/forms/survey/preview").text.contains("id=\"preview-remark\""))
                #expect(try await browser.get(client, "/console/projects/alpha/forms/survey/preview?version=9").status == .badRequest)

                // The audit log holds each upload and each version published, by adam.
                let log = try await server.storage.auditLog(AuditQuery(projectID: project.id))
                #expect(log.filter { $0.event.action == .formPublished }.map(\.event.subject).sorted() == ["survey@1", "survey@2"])
                #expect(log.filter { $0.event.action == .formUploaded }.count == 4)
                #expect(log.allSatisfy { $0.event.actor == "adam" })

                // An upload without the CSRF token is refused before it is read.
                #expect(try await Self.upload(client, browser, name: "survey.json", try Self.json(Self.survey()), csrf: .some(nil)).status == .forbidden)
            }
        }
    }

    @Test(arguments: Backend.available)
    func anUploadLeftADayIsRemovedAndAFormPublishedByTheAPIIsAudited(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let adam = try await server.member("adam", project: "alpha", role: .admin)
            let project = try await server.project("alpha")
            try await server.app.test(.router) { client in
                let browser = try await ConsoleBrowser.signIn(client, token: adam)
                let old = try await Self.upload(client, browser, name: "survey.json", try Self.json(Self.survey()))
                let oldAction = try #require(Self.publishAction(old.text))
                try await AuditLogTests.execute("UPDATE form_uploads SET uploaded_at = uploaded_at - \(FormUpload.lifetime + 60)", on: server.location)
                // The next upload removes the one left longer than its lifetime; publishing that asks for the file again.
                let fresh = try await Self.upload(client, browser, name: "survey.json", try Self.json(Self.survey()))
                let gone = try await browser.post(client, oldAction, [])
                #expect(gone.status == .gone)
                #expect(gone.text.contains("Upload the file again"), "\(gone.text)")
                #expect(try await server.storage.forms(projectID: project.id).isEmpty)
                let published = try await browser.post(client, try #require(Self.publishAction(fresh.text)), [])
                #expect(published.status == .seeOther)

                // A version published through the API is in the audit log as one published in the console is.
                let response = try await client.execute(
                    uri: "/v1/projects/alpha/forms", method: .post,
                    headers: [.authorization: "Bearer \(adam)", .contentType: "application/json"],
                    body: ByteBuffer(bytes: try Self.json(Self.survey(version2: true))))
                #expect(response.status == .created)
                let published2 = try await server.storage.auditLog(AuditQuery(projectID: project.id, action: .formPublished))
                #expect(published2.map(\.event.subject) == ["survey@2", "survey@1"])
                #expect(published2.first?.event.detail["file"] == "request body")
                #expect(published2.first?.event.actor == "adam")
            }
        }
    }

    @Test func aWorkbooksFindingsNameItsCells() async throws {
        try await TestServer.with(.sqlite) { server in
            let adam = try await server.member("adam", project: "alpha", role: .admin)
            try await server.app.test(.router) { client in
                let browser = try await ConsoleBrowser.signIn(client, token: adam)
                func workbook(_ list: String) throws -> Data {
                    func cells(_ rows: [[String]]) -> [[CellValue?]] { rows.map { $0.map { $0.isEmpty ? nil : CellValue.text($0) } } }
                    return try WorkbookWriter().write([
                        ("survey", cells([["type", "name", "label"], ["text", "site", "Site"], ["select_one \(list)", "colour", "Colour"]])),
                        ("choices", cells([["list_name", "name", "label"], ["colours", "red", "Red"], ["colours", "blue", "Blue"]])),
                        ("settings", cells([["form_title", "form_id"], ["Colours", "colours"]])),
                    ])
                }
                let wrong = try await Self.upload(client, browser, name: "colours.xlsx", try workbook("colors"))
                #expect(wrong.status == .ok)
                #expect(wrong.text.contains("survey!A3"), "the finding names its cell: \(wrong.text)")
                #expect(Self.publishAction(wrong.text) == nil)
                let fixed = try await Self.upload(client, browser, name: "colours.xlsx", try workbook("colours"))
                #expect(fixed.status == .ok, "\(fixed.text)")
                #expect(fixed.text.contains("Red") && fixed.text.contains("Blue"), "the preview lists the choices")
                _ = try await browser.post(client, try #require(Self.publishAction(fixed.text)), [])
                #expect(try await server.storage.forms(projectID: try await server.project("alpha").id).map(\.formID) == ["colours"])
                // The example bilingual workbook: its preview gives each label in English and in French.
                let siteVisit = try Data(contentsOf: URL(fileURLWithPath: PackagePaths.file("Schema/forms/site-visit.xlsx")))
                let bilingual = try await Self.upload(client, browser, name: "site-visit.xlsx", siteVisit)
                #expect(bilingual.text.contains("Type of site") && bilingual.text.contains("Type de site"), "\(bilingual.text)")
                #expect(Self.publishAction(bilingual.text) != nil)
                // Not a workbook at all.
                let garbage = try await Self.upload(client, browser, name: "colours.xlsx", Data("PK not a zip".utf8))
                #expect(garbage.text.contains("stop this form from being published") && Self.publishAction(garbage.text) == nil)
            }
        }
    }

    @Test(arguments: Backend.available)
    func aClosedFormRefusesNewRecordsTakesEditsAndTellsDevices(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let adam = try await server.member("adam", project: "alpha", role: .admin)
            try await server.app.test(.router) { client in
                let existing = UUID()
                _ = try await ana.push(client, [ana.mutation(existing, ["title": ana.change(.text("Pump"))])])
                let browser = try await ConsoleBrowser.signIn(client, token: adam)
                let closed = try await browser.post(client, "/console/projects/alpha/forms/job/close", [])
                #expect(closed.status == .seeOther)
                let home = try await browser.get(client, closed.headers[.location] ?? "")
                #expect(home.text.contains("Closed job to new records."))
                #expect(home.text.contains("id=\"closed-job\"") && home.text.contains("closed by adam"))
                #expect(home.text.contains("id=\"reopen-job\""))

                let list = try await ana.get(client, "/v1/projects/alpha/forms")
                #expect(list.text.contains("\"closedForms\":[\"job\"]"), "\(list.text)")
                let (_, refused) = try await ana.push(client, [ana.mutation(UUID(), ["title": ana.change(.text("New"))])])
                let outcome = try #require(refused?.outcomes.first)
                #expect(outcome.status == .rejected)
                #expect(outcome.problem?.type == Problem.typeBase + "form-closed")
                #expect(outcome.problem?.detail.contains("closed to new records") == true)
                let (_, edited) = try await ana.push(client, [ana.mutation(existing, ["notes": ana.change(.text("edited"), base: 1)])])
                #expect(edited?.outcomes.first?.status == .applied, "an edit of a record already stored is taken")

                #expect(try await browser.post(client, "/console/projects/alpha/forms/job/reopen", []).status == .seeOther)
                #expect(try await ana.get(client, "/v1/projects/alpha/forms").text.contains("\"closedForms\":[]"))
                let (_, taken) = try await ana.push(client, [ana.mutation(UUID(), ["title": ana.change(.text("New"))])])
                #expect(taken?.outcomes.first?.status == .applied)
                #expect(try await browser.post(client, "/console/projects/alpha/forms/nope/close", []).status == .notFound)
                let log = try await server.storage.auditLog(AuditQuery(projectID: try await server.project("alpha").id))
                let acts: [AuditAction] = log.map(\.event.action).filter { (action: AuditAction) -> Bool in action == .formClosed || action == .formReopened }
                let expected: [AuditAction] = [.formReopened, .formClosed]
                #expect(acts == expected, "newest first")
                #expect(log.first { $0.event.action == .formClosed }?.event.subject == "job")
            }
        }
    }

    @Test(arguments: Backend.available)
    func theMapDrawsEachLocatedRecordAsALinkToItsPage(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.survey(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = try await server.member("rita", project: "alpha", role: .reviewer)
            try await server.app.test(.router) { client in
                let north = UUID(), south = UUID(), nowhere = UUID()
                _ = try await ana.push(client, [
                    ana.mutation(north, form: "survey", ["site": ana.change(.text("North")), "where": ana.change(.location(Location(latitude: 52.52, longitude: 13.40, accuracy: 5)))]),
                    ana.mutation(south, form: "survey", ["site": ana.change(.text("South")), "where": ana.change(.location(Location(latitude: 48.14, longitude: 11.58)))]),
                    ana.mutation(nowhere, form: "survey", ["site": ana.change(.text("Nowhere"))]),
                ])
                let page = try await client.console("/console/projects/alpha/forms/survey/map", token: rita)
                #expect(page.status == .ok)
                let svg = page.text
                #expect(svg.contains("<a href=\"/console/projects/alpha/records/\(north.lowercased)\""))
                #expect(svg.contains("<a href=\"/console/projects/alpha/records/\(south.lowercased)\""))
                #expect(!page.text.contains(nowhere.lowercased), "a record without a location is not drawn")
                #expect(page.text.contains("<title>Record \(north.lowercased.prefix(8)) by ana"))
                #expect(page.headers[.contentSecurityPolicy] == ConsoleHeadersMiddleware.contentSecurityPolicy, "no tile server: nothing loads from elsewhere")
                #expect(!page.text.contains("<image"))
                // North is drawn above (smaller y) and east of (larger x) South.
                func point(_ id: UUID) throws -> (Double, Double) {
                    let after = try #require(page.text.range(of: "records/\(id.lowercased)\"")).upperBound
                    let rest = page.text[after...]
                    let cx = try #require(rest.range(of: "cx=\"")).upperBound
                    let cy = try #require(rest.range(of: "cy=\"")).upperBound
                    return (try #require(Double(rest[cx...].prefix { $0 != "\"" })), try #require(Double(rest[cy...].prefix { $0 != "\"" })))
                }
                let (nx, ny) = try point(north), (sx, sy) = try point(south)
                #expect(ny < sy && nx > sx)
                for value in [nx, ny, sx, sy] { #expect(value >= 0 && value <= RecordMap.width) }
            }
            // With a tile server: its tiles under the points, and the page lets images load from it alone.
            var services = server.services
            services.mapTiles = try MapTiles(template: "https://tiles.example.org/{z}/{x}/{y}.png")
            let app = buildApplication(ServerConfiguration(host: "127.0.0.1", port: 0), services: services, logger: TestServer.quietLogger)
            try await app.test(.router) { client in
                let page = try await client.console("/console/projects/alpha/forms/survey/map", token: rita)
                #expect(page.text.contains("<image href=\"https://tiles.example.org/"))
                #expect(page.headers[.contentSecurityPolicy]?.contains("img-src 'self' https://tiles.example.org;") == true)
            }
        }
    }

    @Test func aTileTemplateIsCheckedAtStart() throws {
        #expect(throws: ServerConfigurationError.self) { try MapTiles(template: "tiles.example.org/{z}/{x}/{y}.png") }
        #expect(throws: ServerConfigurationError.self) { try MapTiles(template: "https://tiles.example.org/{z}/{x}.png") }
        #expect(try MapTiles(template: "http://localhost:8081/{z}/{x}/{y}.png").origin == "http://localhost:8081")
    }

    @Test func theProjectionKeepsNorthUpAndEastRight() {
        let berlin = RecordMap.project(Location(latitude: 52.52, longitude: 13.40))
        let munich = RecordMap.project(Location(latitude: 48.14, longitude: 11.58))
        #expect(berlin.y < munich.y && berlin.x > munich.x)
        let origin = RecordMap.project(Location(latitude: 0, longitude: 0))
        #expect(abs(origin.x - 0.5) < 1e-12 && abs(origin.y - 0.5) < 1e-12)
        // One record alone is drawn in the middle of the map.
        let one = RecordMap([], tiles: nil, link: { _ in "" }, title: { _, _ in "" })
        #expect(one.points.isEmpty && one.height >= RecordMap.minHeight)
    }
}
