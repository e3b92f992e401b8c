import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// People, devices and login codes through the console and `POST /v1/login`, on both backends.
struct ConsolePeopleTests {
    /// The code and the QR code's path on a login-code page.
    static func code(_ html: String) -> String? {
        guard let range = html.range(of: "id=\"login-code\">") else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "<" })
    }

    static func login(_ client: some TestClientProtocol, _ code: String, address: String? = nil) async throws -> TestResponse {
        var headers: HTTPFields = [.contentType: "application/json", .userAgent: "fieldsheet/1"]
        if let address { headers[HTTPField.Name("X-Forwarded-For")!] = address }
        return try await client.execute(
            uri: "/v1/login", method: .post, headers: headers, body: ByteBuffer(string: #"{"code":"\#(code)","deviceName":"tablet 4"}"#))
    }

    struct Enrolled: Decodable { var token: String; var project: String; var user: String; var deviceID: Int64 }

    @Test(arguments: Backend.available)
    func aServerAdminCreatesAProjectAndItsAdminInvitesEnrolsAndSignsOutDevices(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                let rootToken = AccessToken.generate()
                try await server.storage.setServerAdmin(userName: "root", true)
                try await server.storage.addToken(userName: "root", projectID: nil, tokenHash: AccessToken.hash(rootToken))
                let collector = try await server.member("cole", project: "other", role: .collector)
                let root = try await ConsoleBrowser.signIn(client, token: rootToken)
                #expect(try await root.get(client, "/console").text.contains("id=\"new-project\""))
                #expect(!(try await client.console("/console", token: collector).text.contains("id=\"new-project\"")))

                // Only a server admin creates projects; a bad name is refused with what a name is.
                #expect(try await client.console("/console/projects", token: collector, method: .post, form: "name=mine").status == .forbidden)
                #expect(try await root.post(client, "/console/projects", [("name", "no spaces")]).status == .unprocessableContent)
                let created = try await root.post(client, "/console/projects", [("name", "north")])
                #expect(created.status == .seeOther && created.headers[.location] == "/console/projects/north/users")
                #expect(try await root.post(client, "/console/projects", [("name", "north")]).status == .conflict)
                let north = try await server.project("north")

                // The admin invites a collector: the answer shows the code as text and as a QR code, once.
                let invited = try await root.post(client, "/console/projects/north/users", [("name", "ana"), ("role", "collector")])
                #expect(invited.status == .ok, "\(invited.text)")
                let code = try #require(Self.code(invited.text))
                #expect(LoginCode.normalized(code) != nil)
                #expect(invited.text.contains("<svg") && invited.text.contains("id=\"login-qr\"") && invited.text.contains("<path fill=\"#000\" d=\"M4,4h7v1h-7z"))
                #expect(invited.text.contains("fieldsheet login --server http://"))
                #expect(invited.headers[.cacheControl] == "no-store")
                let members = try await server.storage.members(projectID: north.id)
                let ana = try #require(members.first { $0.name == "ana" })
                #expect(ana.role == .collector && members.contains { $0.name == "root" && $0.role == .admin })
                #expect(try await root.post(client, "/console/projects/north/users", [("name", "ana"), ("role", "admin")]).status == .conflict)

                // The code enrols one device (typed in lower case), then never again.
                let enrolled = try await Self.login(client, code.lowercased())
                #expect(enrolled.status == .ok, "\(enrolled.text)")
                let device = try JSONDecoder().decode(Enrolled.self, from: Data(enrolled.text.utf8))
                #expect(device.project == "north" && device.user == "ana")
                let reused = try await Self.login(client, code)
                #expect(reused.status == .unauthorized && reused.text.contains("login-code-invalid") && reused.text.contains("used already"))

                // A pull that reports the device's outbox shows on the person's page.
                let pull = try await client.execute(
                    uri: "/v1/projects/north/changes", method: .get,
                    headers: [.authorization: "Bearer \(device.token)", .userAgent: "fieldsheet/1", HTTPField.Name("FieldSheet-Waiting")!: "3",
                              HTTPField.Name("FieldSheet-Device")!: "ana-tablet-db"])
                #expect(pull.status == .ok)
                let listed = try #require(try await server.storage.devices(projectID: north.id, userID: ana.userID).first)
                #expect(listed.id == device.deviceID && listed.name == "tablet 4" && listed.waiting == 3 && listed.clientID == "ana-tablet-db")
                #expect(listed.clientVersion == "fieldsheet/1" && listed.firstSyncAt != nil && listed.lastSyncAt != nil && listed.revokedAt == nil)
                let personPath = "/console/projects/north/users/\(ana.userID)"
                let person = try await root.get(client, personPath)
                #expect(person.text.contains("tablet 4") && person.text.contains("3 records") && person.text.contains("ana-tablet-db"))

                // Role and properties.
                #expect(try await root.post(client, personPath + "/role", [("role", "reviewer")]).status == .seeOther)
                #expect(try await server.storage.members(projectID: north.id).first { $0.name == "ana" }?.role == .reviewer)
                #expect(try await root.post(client, personPath + "/properties", [("name", "district"), ("value", "Lakeside")]).status == .seeOther)
                #expect(try await server.storage.userProperties(projectID: north.id, userID: ana.userID) == ["district": "Lakeside"])
                #expect(try await root.get(client, personPath).text.contains("Lakeside"))
                #expect(try await root.post(client, personPath + "/properties", [("name", "district"), ("value", "")]).status == .seeOther)
                #expect(try await server.storage.userProperties(projectID: north.id, userID: ana.userID).isEmpty)

                // Signing the device out takes effect at its next request, with its own problem.
                let revoke = try await root.post(client, personPath + "/devices/\(device.deviceID)/revoke", [])
                #expect(revoke.status == .seeOther)
                let refused = try await client.execute(uri: "/v1/projects/north/changes", method: .get, headers: [.authorization: "Bearer \(device.token)"])
                #expect(refused.status == .unauthorized)
                let problem = try JSONDecoder().decode(ProblemDetails.self, from: Data(refused.text.utf8))
                #expect(problem.type == "https://fieldsheet.dev/problems/device-signed-out")
                #expect(problem.detail == "This device was signed out by your project's admin.")
                #expect(try await root.get(client, personPath).text.contains("signed out "))

                // Another device by a new code; removing the person signs it out and ends the membership.
                let second = try #require(Self.code(try await root.post(client, personPath + "/code", []).text))
                let other = try JSONDecoder().decode(Enrolled.self, from: Data(try await Self.login(client, second).text.utf8))
                #expect(try await client.execute(uri: "/v1/projects/north/forms", method: .get, headers: [.authorization: "Bearer \(other.token)"]).status == .ok)
                #expect(try await root.post(client, personPath + "/remove", []).status == .seeOther)
                #expect(try await server.storage.members(projectID: north.id).contains { $0.name == "ana" } == false)
                #expect(try await client.execute(uri: "/v1/projects/north/forms", method: .get, headers: [.authorization: "Bearer \(other.token)"]).status == .unauthorized)
                #expect(try await root.get(client, personPath).status == .notFound)
                // The admin cannot remove or demote themself.
                let me = try #require(try await server.storage.members(projectID: north.id).first { $0.name == "root" })
                #expect(try await root.post(client, "/console/projects/north/users/\(me.userID)/remove", []).status == .conflict)
                #expect(try await root.post(client, "/console/projects/north/users/\(me.userID)/role", [("role", "collector")]).status == .conflict)

                // The audit log: a line for each act, by whom; filtered by action and actor; exported as JSON Lines.
                let audit = try await root.get(client, "/console/projects/north/audit")
                #expect(audit.status == .ok)
                for action in ["project.created", "member.invited", "login-code.created", "login-code.used", "member.role-changed",
                               "member.property-set", "member.property-removed", "device.revoked", "member.removed"] {
                    #expect(audit.text.contains("<code>\(action)</code>"), "no \(action) line")
                }
                let revocations = try await root.get(client, "/console/projects/north/audit?action=device.revoked").text
                #expect(revocations.contains("<code>device.revoked</code>") && !revocations.contains("<code>member.invited</code>"))
                let byAna = try await root.get(client, "/console/projects/north/audit?actor=ana").text
                #expect(byAna.contains("<code>login-code.used</code>") && !byAna.contains("<code>member.invited</code>"))
                #expect(try await root.get(client, "/console/projects/north/audit?from=yesterday").status == .badRequest)
                let lines = try await root.get(client, "/console/projects/north/audit?format=jsonl").text.split(separator: "\n")
                #expect(lines.count == 11, "\(lines.count) lines")
                for line in lines {
                    let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                    #expect(object["project"] as? String == "north" && object["action"] is String && object["detail"] is [String: Any])
                }
                // The server's log holds what belongs to no project: sign-ins and refused codes.
                let serverLog = try await root.get(client, "/console/audit").text
                #expect(serverLog.contains("<code>sign-in</code>") && serverLog.contains("<code>login-code.refused</code>"))
                #expect(try await client.console("/console/audit", token: collector).status == .forbidden)
            }
        }
    }

    @Test(arguments: Backend.available)
    func codesExpireAreRefusedWhenMalformedAndFailuresAreThrottled(backend: Backend) async throws {
        var limits = ServerLimits()
        limits.authFailureLimit = 3
        try await TestServer.with(backend, limits: limits) { server in
            try await server.app.test(.router) { client in
                _ = try await server.member("ana", project: "north", role: .collector)
                let north = try await server.project("north")
                let userID = try #require(try await server.storage.userID(named: "ana"))
                let code = LoginCode.generate()
                let past = Date().addingTimeInterval(-3600)
                try await server.storage.createLoginCode(LoginCodeRecord(
                    codeHash: LoginCode.hash(normalized: try #require(LoginCode.normalized(code))), projectID: north.id, userID: userID,
                    createdBy: nil, createdAt: past.addingTimeInterval(-60), expiresAt: past))
                let expired = try await Self.login(client, code, address: "192.0.2.1")
                #expect(expired.status == .unauthorized && expired.text.contains("expired"))
                let malformed = try await Self.login(client, "0000", address: "192.0.2.2")
                #expect(malformed.status == .unauthorized && malformed.text.contains("not a login code"))
                #expect(try await Self.login(client, "ABCDE-FGHJK").status == .unauthorized)
                // Past the limit from one address: 429 with Retry-After, even before the code is looked at.
                var last: TestResponse?
                for _ in 0..<4 { last = try await Self.login(client, "ABCDE-FGHJK") }
                #expect(last?.status == .tooManyRequests && last?.headers[.retryAfter] != nil)
                let bad = try await client.execute(uri: "/v1/login", method: .post, headers: [.contentType: "application/json"], body: ByteBuffer(string: "{}"))
                #expect(bad.status == .badRequest || bad.status == .tooManyRequests)
            }
        }
    }

    /// A token a login code gave a device acts in the code's project only: an admin of another project cannot
    /// reach, through a code they make for a person, that person's other projects or server-admin rights.
    @Test(arguments: Backend.available)
    func aCodesTokenActsInItsProjectOnly(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.app.test(.router) { client in
                _ = try await server.member("alice", project: "north", role: .admin)
                _ = try await server.member("alice", project: "south", role: .collector)
                try await server.storage.setServerAdmin(userName: "alice", true)
                let south = try await server.project("south")
                let userID = try #require(try await server.storage.userID(named: "alice"))
                let code = LoginCode.generate()
                try await server.storage.createLoginCode(LoginCodeRecord(
                    codeHash: LoginCode.hash(normalized: try #require(LoginCode.normalized(code))), projectID: south.id, userID: userID,
                    createdBy: nil, createdAt: Date(), expiresAt: Date().addingTimeInterval(600)))
                let answer = try await Self.login(client, code)
                #expect(answer.status == .ok, "\(answer.text)")
                let object = try JSONSerialization.jsonObject(with: Data(answer.text.utf8)) as? [String: Any]
                let token = try #require(object?["token"] as? String, "\(answer.text)")
                let principal = try #require(try await server.storage.principal(tokenHash: AccessToken.hash(token)))
                #expect(Set(principal.memberships.keys) == ["south"])
                #expect(!principal.isServerAdmin)
                let north = try await client.execute(uri: "/v1/projects/north/forms", method: .get, headers: [.authorization: "Bearer \(token)"])
                #expect(north.status == .notFound)
                let projects = try await client.execute(uri: "/console/audit", method: .get, headers: [.authorization: "Bearer \(token)"])
                #expect(projects.status == .forbidden)
            }
        }
    }
}
