import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerSQLite
import ServerStorage
import SyncCore
import Testing

/// The console's auth matrix on both backends: every page and form for each role, bearer tokens and sessions,
/// CSRF refusals, and 404s that do not tell another project's records from missing ones.
struct ConsoleAuthTests {
    /// Project alpha: collectors ana and bob, reviewer rita, admin adam; project beta: admin olga. Ana has a
    /// submitted record and a draft, bob a submitted record.
    struct World {
        var ana: Device, bob: Device, rita: Device, adam: Device, olga: Device
        var anaSubmitted = UUID(), anaDraft = UUID(), bobSubmitted = UUID()

        static func make(_ server: TestServer, _ client: some TestClientProtocol) async throws -> World {
            try await server.publish(TestForms.job(), project: "alpha")
            try await server.publish(TestForms.job(), project: "beta")
            let world = World(
                ana: Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector)),
                bob: Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector)),
                rita: Device(clientID: "rita-laptop", token: try await server.member("rita", project: "alpha", role: .reviewer)),
                adam: Device(clientID: "adam-laptop", token: try await server.member("adam", project: "alpha", role: .admin)),
                olga: Device(clientID: "olga-laptop", token: try await server.member("olga", project: "beta", role: .admin), project: "beta"))
            _ = try await world.ana.push(client, [
                world.ana.mutation(world.anaSubmitted, ["title": world.ana.change(.text("Pump"))]),
                world.ana.mutation(world.anaDraft, state: .draft, ["title": world.ana.change(.text("Half done"))]),
            ])
            _ = try await world.bob.push(client, [world.bob.mutation(world.bobSubmitted, ["title": world.bob.change(.text("Valve"))])])
            return world
        }
    }

    static func record(_ id: UUID, project: String = "alpha") -> String { "/console/projects/\(project)/records/\(id.lowercased)" }

    @Test(arguments: Backend.available)
    func everyPageAnswersEachRoleAsTheAPIDoes(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                let w = try await World.make(server, client)
                let alpha = try await server.project("alpha").id
                _ = try await EntityImporter(storage: server.storage).importCSV("label,district\nAmina,North\n", projectID: alpha, list: "households", userName: "rita", maxRows: 10)
                let entity = try #require(try await server.storage.entityTable(projectID: alpha, list: "households", query: EntityTableQuery()).first).id
                let anaId = try await server.userID(token: w.ana.token)
                let olgaId = try await server.userID(token: w.olga.token)
                // path → expected status for ana (collector), rita (reviewer), adam (admin), olga (other project's admin)
                let matrix: [(String, [HTTPResponse.Status])] = [
                    ("/console", [.ok, .ok, .ok, .ok]),
                    ("/console/projects/alpha", [.ok, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/forms/job", [.ok, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/forms/nope", [.notFound, .notFound, .notFound, .notFound]),
                    (Self.record(w.anaSubmitted), [.ok, .ok, .ok, .notFound]),
                    (Self.record(w.anaDraft), [.ok, .notFound, .notFound, .notFound]),
                    (Self.record(w.bobSubmitted), [.notFound, .ok, .ok, .notFound]),
                    (Self.record(UUID()), [.notFound, .notFound, .notFound, .notFound]),
                    ("/console/projects/alpha/forms/job/export?format=csv", [.forbidden, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/users", [.forbidden, .forbidden, .ok, .notFound]),
                    ("/console/projects/alpha/webhooks", [.forbidden, .forbidden, .ok, .notFound]),
                    ("/console/projects/alpha/entities", [.forbidden, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/entities/households", [.forbidden, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/entities/clinics", [.forbidden, .notFound, .notFound, .notFound]),
                    ("/console/projects/alpha/entities/households/\(entity.lowercased)", [.forbidden, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/entities/households/\(UUID().uuidString)", [.forbidden, .notFound, .notFound, .notFound]),
                    ("/console/projects/beta/entities/households/\(entity.lowercased)", [.notFound, .notFound, .notFound, .notFound]),
                    ("/console/projects/alpha/nothing-here", [.notFound, .notFound, .notFound, .notFound]),
                    ("/console/projects/alpha/users/\(anaId)", [.forbidden, .forbidden, .ok, .notFound]),
                    ("/console/projects/alpha/users/\(olgaId)", [.forbidden, .forbidden, .notFound, .notFound]),
                    ("/console/projects/alpha/audit", [.forbidden, .forbidden, .ok, .notFound]),
                    ("/console/projects/beta/audit", [.notFound, .notFound, .notFound, .ok]),
                    ("/console/audit", [.forbidden, .forbidden, .forbidden, .forbidden]),
                    ("/console/projects/alpha/forms/job/preview", [.ok, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/forms/nope/preview", [.notFound, .notFound, .notFound, .notFound]),
                    ("/console/projects/alpha/forms/job/map", [.ok, .ok, .ok, .notFound]),
                    ("/console/projects/alpha/forms/nope/map", [.notFound, .notFound, .notFound, .notFound]),
                ]
                for (path, expected) in matrix {
                    for (device, status) in zip([w.ana, w.rita, w.adam, w.olga], expected) {
                        let response = try await client.console(path, token: device.token)
                        #expect(response.status == status, "\(device.clientID) GET \(path): \(response.status)")
                        #expect(response.headers[.contentType]?.hasPrefix(path.contains("export") && status == .ok ? "text/csv" : "text/html") == true)
                    }
                }
                // A collector's table holds only her own records; a reviewer's every submitted one, no one's drafts.
                let anaTable = try await client.console("/console/projects/alpha/forms/job", token: w.ana.token).text
                #expect(anaTable.contains(w.anaSubmitted.lowercased) && anaTable.contains(w.anaDraft.lowercased) && !anaTable.contains(w.bobSubmitted.lowercased))
                let ritaTable = try await client.console("/console/projects/alpha/forms/job", token: w.rita.token).text
                #expect(ritaTable.contains(w.anaSubmitted.lowercased) && ritaTable.contains(w.bobSubmitted.lowercased) && !ritaTable.contains(w.anaDraft.lowercased))

                // Reviews and resolutions: reviewers and admins only; a collector is refused, an outsider finds nothing.
                let review = "state=approved&comment=fine"
                #expect(try await client.console(Self.record(w.bobSubmitted) + "/review", token: w.ana.token, method: .post, form: review).status == .notFound)
                #expect(try await client.console(Self.record(w.anaSubmitted) + "/review", token: w.ana.token, method: .post, form: review).status == .forbidden)
                #expect(try await client.console(Self.record(w.anaSubmitted) + "/review", token: w.olga.token, method: .post, form: review).status == .notFound)
                let approved = try await client.console(Self.record(w.anaSubmitted) + "/review", token: w.rita.token, method: .post, form: review)
                #expect(approved.status == .seeOther, "a bearer token needs no CSRF token: \(approved.text)")
                #expect(try await server.storage.record(projectID: try await server.project("alpha").id, id: w.anaSubmitted)?.review
                        == RecordReview(state: .approved, comment: "fine"))
                #expect(try await client.console("/console/projects/alpha/conflicts/1/resolve", token: w.rita.token, method: .post, form: "keep=server").status == .notFound)
                // Bulk review of the table: reviewers and admins of the project; a collector is refused, an outsider finds nothing.
                let bulk = "batch=bulk-matrix-0123456789&scope=selected&decision=approved&records%5B%5D=\(w.bobSubmitted.lowercased)"
                for (device, status) in zip([w.ana, w.rita, w.adam, w.olga], [HTTPResponse.Status.forbidden, .seeOther, .seeOther, .notFound]) {
                    let response = try await client.console("/console/projects/alpha/forms/job/review", token: device.token, method: .post, form: bulk)
                    #expect(response.status == status, "\(device.clientID) bulk review: \(response.status)")
                }
                #expect(try await client.console("/console/projects/alpha/forms/nope/review", token: w.rita.token, method: .post, form: bulk).status == .notFound)
                // Forms: uploads, publishing, closing and reopening are the project admin's (adam's upload here is no
                // multipart form, and there is no upload 99); an outsider finds nothing.
                let adminPosts: [(String, HTTPResponse.Status)] = [
                    ("/console/projects/alpha/uploads", .badRequest), ("/console/projects/alpha/uploads/99/publish", .gone),
                    ("/console/projects/alpha/forms/job/close", .seeOther), ("/console/projects/alpha/forms/job/reopen", .seeOther),
                ]
                for (path, adminStatus) in adminPosts {
                    for (device, status) in zip([w.ana, w.rita, w.adam, w.olga], [HTTPResponse.Status.forbidden, .forbidden, adminStatus, .notFound]) {
                        let response = try await client.console(path, token: device.token, method: .post, form: "")
                        #expect(response.status == status, "\(device.clientID) POST \(path): \(response.status)")
                    }
                }

                // An entity is assigned and deleted by the project's admins: a collector or reviewer is refused, an
                // outsider finds nothing; a member who is not one, or a delete not confirmed, changes nothing.
                let entityPath = "/console/projects/alpha/entities/households/\(entity.lowercased)"
                let edit = "base=1&value%5Bdistrict%5D=South&was%5Bdistrict%5D=North"
                for (path, form) in [(entityPath + "/assign", "assignee=rita"), (entityPath + "/delete", "confirm=yes"), (entityPath + "/edit", edit)] {
                    for (device, status) in zip([w.ana, w.rita, w.olga], [HTTPResponse.Status.forbidden, .forbidden, .notFound]) {
                        let response = try await client.console(path, token: device.token, method: .post, form: form)
                        #expect(response.status == status, "\(device.clientID) POST \(path): \(response.status)")
                    }
                }
                #expect(try await client.console(entityPath + "/assign", token: w.adam.token, method: .post, form: "assignee=olga").status == .badRequest)
                #expect(try await client.console(entityPath + "/delete", token: w.adam.token, method: .post, form: "").status == .badRequest)
                #expect(try await client.console(entityPath, token: w.rita.token).text.contains("id=\"assign\"") == false, "a reviewer has no assign form")
                #expect(try await client.console(entityPath, token: w.adam.token).text.contains("id=\"assign\""))
                #expect(try await client.console(entityPath + "/edit", token: w.adam.token, method: .post, form: "value%5Bdistrict%5D=South").status == .badRequest,
                        "an edit without the revision its page showed is refused")
                #expect(try await client.console(entityPath, token: w.rita.token).text.contains("id=\"edit\"") == false, "a reviewer has no edit form")
                let untouched = try #require(try await server.storage.entity(projectID: alpha, id: entity))
                #expect(untouched.assigneeName == nil && !untouched.deleted && untouched.revision == 1, "nothing changed")
                #expect(try await client.console(entityPath + "/edit", token: w.adam.token, method: .post, form: edit).status == .seeOther)
                #expect(try await server.storage.entity(projectID: alpha, id: entity)?.fields.values["district"] == .text("South"))
                #expect(try await client.console(entityPath + "/assign", token: w.adam.token, method: .post, form: "assignee=rita").status == .seeOther)
                #expect(try await server.storage.entity(projectID: alpha, id: entity)?.assigneeName == "rita")
                #expect(try await client.console(entityPath + "/assign", token: w.adam.token, method: .post, form: "assignee=").status == .seeOther)
                #expect(try await server.storage.entity(projectID: alpha, id: entity)?.assigneeName == nil)
                #expect(try await client.console(entityPath + "/delete", token: w.adam.token, method: .post, form: "confirm=yes").status == .seeOther)
                #expect(try await server.storage.entity(projectID: alpha, id: entity)?.deleted == true)
                let deletedPage = try await client.console(entityPath, token: w.adam.token)
                #expect(deletedPage.status == .ok && !deletedPage.text.contains("id=\"delete\""), "a deleted entity has no forms")
                #expect(try await client.console(entityPath + "/delete", token: w.adam.token, method: .post, form: "confirm=yes").status == .notFound)
                let entityActs = try await server.storage.auditLog(AuditQuery(projectID: alpha)).map(\.event).filter { $0.subject.hasPrefix("households/") }
                #expect(entityActs.map(\.action) == [.entityDeleted, .entityAssigned, .entityAssigned, .entityEdited])
                #expect(entityActs.map { $0.detail["assignee"] } == [nil, "nobody", "rita", nil])
                #expect(entityActs.last?.detail["district"] == "North → South")
                #expect(entityActs.allSatisfy { $0.actor == "adam" && $0.detail["label"] == "Amina" })

                // People and devices: project admins only; a collector or reviewer is refused, an outsider finds nothing,
                // and only a server admin creates projects.
                let anaDevice = try #require(try await server.storage.devices(projectID: alpha, userID: anaId).first).id
                let people: [(String, String)] = [
                    ("/console/projects/alpha/users", "name=zoe&role=collector"),
                    ("/console/projects/alpha/users/\(anaId)/role", "role=reviewer"),
                    ("/console/projects/alpha/users/\(anaId)/properties", "name=district&value=north"),
                    ("/console/projects/alpha/users/\(anaId)/code", ""),
                    ("/console/projects/alpha/users/\(anaId)/devices/\(anaDevice)/revoke", ""),
                    ("/console/projects/alpha/users/\(anaId)/remove", ""),
                ]
                for (path, form) in people {
                    for (device, status) in zip([w.ana, w.rita, w.olga], [HTTPResponse.Status.forbidden, .forbidden, .notFound]) {
                        let response = try await client.console(path, token: device.token, method: .post, form: form)
                        #expect(response.status == status, "\(device.clientID) POST \(path): \(response.status)")
                    }
                }
                #expect(try await server.storage.members(projectID: alpha).first { $0.userID == anaId }?.role == .collector, "nothing changed")
                #expect(try await client.console("/console/projects", token: w.adam.token, method: .post, form: "name=gamma").status == .forbidden)
                #expect(try await server.storage.project(named: "gamma") == nil)

                // Another project's record reads exactly like a missing one, page and all.
                let foreign = try await client.console(Self.record(w.anaSubmitted), token: w.olga.token)
                let missing = try await client.console(Self.record(UUID(), project: "beta").replacingOccurrences(of: "beta", with: "beta"), token: w.olga.token)
                let noProject = try await client.console(Self.record(w.anaSubmitted, project: "gamma"), token: w.olga.token)
                #expect(foreign.status == .notFound && missing.status == .notFound && noProject.status == .notFound)
                #expect(foreign.text == missing.text && foreign.text == noProject.text)
                // So does another collector's record for a collector.
                let othersRecord = try await client.console(Self.record(w.bobSubmitted), token: w.ana.token)
                let noRecord = try await client.console(Self.record(UUID()), token: w.ana.token)
                #expect(othersRecord.text == noRecord.text)

                // No token, no session: pages send the browser to sign in; forms are refused; a bad token is a 401.
                let anonymous = try await client.execute(uri: "/console/projects/alpha/forms/job?review=received", method: .get)
                #expect(anonymous.status == .seeOther)
                #expect(anonymous.headers[.location] == "/console/login?next=/console/projects/alpha/forms/job%3Freview%3Dreceived")
                #expect(try await client.execute(uri: Self.record(w.anaSubmitted) + "/review", method: .post).status == .unauthorized)
                #expect(try await client.console("/console", token: "fst_not-a-token").status == .unauthorized)
            }
        }
    }

    /// Every console route the router has is one the tests of this suite call (a new page must join the matrix).
    @Test func theMatrixHoldsEveryConsoleRoute() throws {
        let router = buildRouter(ServerServices(storage: try SQLiteStorage(directory: FileManager.default.temporaryDirectory.appendingPathComponent("console-\(UUID())").path)))
        let registered = Set(router.routes.map { "\($0.method.rawValue) /" + $0.path.description.split(separator: "/").joined(separator: "/") }.filter { $0.contains(" /console") })
        let covered: Set<String> = [
            "GET /console", "GET /console/login", "POST /console/login", "POST /console/logout", "GET /console/static/{file}",
            "GET /console/projects/{project}", "GET /console/projects/{project}/users", "GET /console/projects/{project}/forms/{formId}",
            "GET /console/projects/{project}/forms/{formId}/export", "GET /console/projects/{project}/records/{recordId}",
            "POST /console/projects/{project}/records/{recordId}/review", "POST /console/projects/{project}/conflicts/{conflictId}/resolve",
            "POST /console/projects/{project}/forms/{formId}/review",  // ConsoleBulkReviewTests
            "POST /console/projects/{project}/uploads", "POST /console/projects/{project}/uploads/{upload}/publish",  // ConsoleFormsTests
            "GET /console/projects/{project}/forms/{formId}/preview", "GET /console/projects/{project}/forms/{formId}/map",
            "POST /console/projects/{project}/forms/{formId}/close", "POST /console/projects/{project}/forms/{formId}/reopen",
            "GET /console/projects/{project}/attachments/{sha256}",  // ConsoleAttachmentTests
            "GET /console/projects/{project}/webhooks", "POST /console/projects/{project}/webhooks",  // ConsoleWebhooksTests
            "POST /console/projects/{project}/webhooks/{endpoint}/remove", "POST /console/projects/{project}/webhooks/deliveries/{delivery}/redeliver",
            "GET /console/projects/{project}/entities", "GET /console/projects/{project}/entities/{list}",
            "GET /console/projects/{project}/entities/{list}/{entityId}",
            "POST /console/projects/{project}/entities/{list}/{entityId}/assign", "POST /console/projects/{project}/entities/{list}/{entityId}/delete",
            "POST /console/projects/{project}/entities/{list}/{entityId}/edit",
            "POST /console/projects", "POST /console/projects/{project}/users", "GET /console/projects/{project}/users/{user}",
            "POST /console/projects/{project}/users/{user}/role", "POST /console/projects/{project}/users/{user}/properties",
            "POST /console/projects/{project}/users/{user}/code", "POST /console/projects/{project}/users/{user}/devices/{device}/revoke",
            "POST /console/projects/{project}/users/{user}/remove",
            "GET /console/audit", "GET /console/projects/{project}/audit",
            "GET /console/**",
        ]
        #expect(registered == covered, "not in the matrix: \(registered.subtracting(covered).sorted()); gone: \(covered.subtracting(registered).sorted())")
    }

    @Test(arguments: Backend.available)
    func aSessionCookieSignsInAndEveryFormNeedsItsCSRFToken(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                let w = try await World.make(server, client)
                // The sign-in form refuses a post without its own form token (login CSRF) and a wrong token.
                let page = try await client.execute(uri: "/console/login", method: .get)
                let formToken = try #require(ConsoleBrowser.hiddenValue(page.text, "csrf"))
                let forged = try await client.execute(
                    uri: "/console/login", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                    body: ByteBuffer(string: "csrf=\(formToken)&token=\(ConsoleBrowser.percent(w.rita.token))"))
                #expect(forged.status == .forbidden)
                #expect(ConsoleBrowser.cookie(forged, "fieldsheet_session") == nil)
                let cookie = try #require(ConsoleBrowser.cookie(page, "fieldsheet_signin"))
                let wrong = try await client.execute(
                    uri: "/console/login", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "fieldsheet_signin=\(cookie)"],
                    body: ByteBuffer(string: "csrf=\(formToken)&token=fst_wrong"))
                #expect(wrong.status == .unauthorized)
                #expect(wrong.text.contains("not valid or was revoked"))

                let rita = try await ConsoleBrowser.signIn(client, token: w.rita.token)
                let signIn = try await client.execute(uri: "/console/login", method: .get)
                let signInCookie = try #require(ConsoleBrowser.cookie(signIn, "fieldsheet_signin"))
                let setCookie = try await client.execute(
                    uri: "/console/login", method: .post,
                    headers: [.contentType: "application/x-www-form-urlencoded", .cookie: "fieldsheet_signin=\(signInCookie)"],
                    body: ByteBuffer(string: "csrf=\(try #require(ConsoleBrowser.hiddenValue(signIn.text, "csrf")))&token=\(ConsoleBrowser.percent(w.rita.token))&next=https%3A%2F%2Fevil.example"))
                #expect(setCookie.headers[.location] == "/console", "sign-in returns only to console pages")
                let sessionLine = try #require(setCookie.headers[values: .setCookie].first { $0.hasPrefix("fieldsheet_session=") })
                for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age="] {
                    #expect(sessionLine.contains(attribute), "\(sessionLine)")
                }
                #expect(!sessionLine.contains("Secure"), "plain HTTP from a peer that is not a trusted proxy")
                #expect(try await rita.get(client, "/console/projects/alpha").text.contains("rita"))

                let path = Self.record(w.anaSubmitted) + "/review"
                let missing = try await rita.post(client, path, [("state", "rejected"), ("comment", "no")], csrf: .some(nil))
                #expect(missing.status == .forbidden)
                #expect(missing.text.contains("security token"))
                // One character changed (a token that starts with "x" stays wrong).
                let wrongToken = try await rita.post(client, path, [("state", "rejected")], csrf: (rita.csrf.hasPrefix("x") ? "y" : "x") + rita.csrf.dropFirst())
                #expect(wrongToken.status == .forbidden)
                let alpha = try await server.project("alpha")
                #expect(try await server.storage.record(projectID: alpha.id, id: w.anaSubmitted)?.review?.state == .received, "nothing was reviewed")
                let done = try await rita.post(client, path, [("state", "rejected"), ("comment", "Recount")])
                #expect(done.status == .seeOther)
                #expect(try await server.storage.record(projectID: alpha.id, id: w.anaSubmitted)?.review == RecordReview(state: .rejected, comment: "Recount"))
                let shown = try await rita.get(client, try #require(done.headers[.location]))
                #expect(shown.text.contains("Review saved: Rejected.") && shown.text.contains("Recount"))

                // Signing out needs the token too, then ends the session on the server.
                #expect(try await rita.post(client, "/console/logout", [], csrf: .some(nil)).status == .forbidden)
                #expect(try await rita.post(client, "/console/logout", []).status == .seeOther)
                #expect(try await rita.get(client, "/console").status == .seeOther)

                // Revoking the token ends its sessions.
                let ana = try await ConsoleBrowser.signIn(client, token: w.ana.token)
                #expect(try await ana.get(client, "/console").status == .ok)
                _ = try await server.storage.revokeTokens(userName: "ana")
                #expect(try await ana.get(client, "/console").status == .seeOther)
            }
        }
    }

    /// The session cookie is Secure when a trusted proxy says the browser came over TLS, and only then.
    @Test func theCookieIsSecureBehindATrustedProxyThatTerminatesTLS() throws {
        let proxies = TrustedProxies([try IPAddressRange(cidr: "10.0.0.0/8")])
        let https: HTTPFields = [HTTPField.Name("X-Forwarded-Proto")!: "https"]
        #expect(ConsoleSessions.overTLS(peer: "10.1.2.3", headers: https, proxies: proxies))
        #expect(ConsoleSessions.overTLS(peer: "10.1.2.3", headers: [HTTPField.Name("Forwarded")!: "for=192.0.2.60;proto=https"], proxies: proxies))
        #expect(!ConsoleSessions.overTLS(peer: "10.1.2.3", headers: [HTTPField.Name("X-Forwarded-Proto")!: "http"], proxies: proxies))
        #expect(!ConsoleSessions.overTLS(peer: "192.0.2.7", headers: https, proxies: proxies), "an untrusted peer's header is ignored")
        #expect(!ConsoleSessions.overTLS(peer: "10.1.2.3", headers: [:], proxies: proxies))
        let cookie = ConsoleSessions.cookie(ConsoleSessions.cookieName, "abc", maxAge: 60, secure: true).description
        #expect(cookie.contains("Secure") && cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"), "\(cookie)")
    }

    @Test(arguments: Backend.available)
    func hostileValuesShowAsTextAndEveryPageCarriesTheSecurityHeaders(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                let w = try await World.make(server, client)
                let hostile = "<script>alert(\"x\")</script>'&"
                let record = UUID()
                _ = try await w.ana.push(client, [w.ana.mutation(record, ["title": w.ana.change(.text(hostile)), "notes": w.ana.change(.text("</dd><img src=x>"))])])
                _ = try await client.console(Self.record(record) + "/review", token: w.rita.token, method: .post,
                                             form: "state=hasIssues&comment=\(ConsoleBrowser.percent("<b>bold</b>"))")
                for path in [Self.record(record), "/console/projects/alpha/forms/job", "/console/projects/alpha", "/console/login", Self.record(UUID())] {
                    let page = try await client.console(path, token: w.rita.token)
                    #expect(!page.text.contains("<script") && !page.text.contains("<img") && !page.text.contains("<b>"), "\(path) holds raw markup")
                    #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true, "\(path)")
                    #expect(page.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true, "\(path)")
                    #expect(page.headers[HTTPField.Name("X-Content-Type-Options")!] == "nosniff", "\(path)")
                    #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "no-referrer", "\(path)")
                    #expect(page.text.contains("<meta name=\"viewport\""), "\(path)")
                }
                let page = try await client.console(Self.record(record), token: w.rita.token).text
                #expect(page.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&#39;&amp;"))
                #expect(page.contains("&lt;b&gt;bold&lt;/b&gt;"))
                // The style sheet and icon come from the server itself; nothing else loads.
                let css = try await client.execute(uri: "/console/static/console.css", method: .get)
                #expect(css.status == .ok && css.headers[.contentType] == "text/css; charset=utf-8")
                #expect(!page.contains("http://") && !page.contains("https://"), "no asset from another host")
            }
        }
    }
}
