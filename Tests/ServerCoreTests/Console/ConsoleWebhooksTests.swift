import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// The console's webhooks page: admins add an endpoint (its secret shown on that answer only), read the
/// delivery log and redeliver; every form needs the session's CSRF token.
struct ConsoleWebhooksTests {
    @Test(arguments: Backend.available)
    func anAdminAddsAnEndpointSeesItsDeliveriesAndRedeliversOne(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let adam = try await server.member("adam", project: "alpha", role: .admin)
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let browser = try await ConsoleBrowser.signIn(client, token: adam)
                let path = "/console/projects/alpha/webhooks"
                let fields = [("url", "https://example.org/hook"), ("record_submitted", "on"), ("record_reviewed", "on")]
                #expect(try await browser.post(client, path, fields, csrf: .some(nil)).status == .forbidden, "no CSRF token, no endpoint")
                let bad = try await browser.post(client, path, [("url", "ftp://example.org/x"), ("record_submitted", "on")])
                #expect(bad.status == .unprocessableContent && bad.text.contains("not an http or https URL"), "\(bad.text)")

                let added = try await browser.post(client, path, fields)
                #expect(added.status == .ok, "\(added.text)")
                let secret = try #require(added.text.range(of: "<p><code>").map { String(added.text[$0.upperBound...].prefix { $0 != "<" }) })
                #expect(secret.count == 64)
                let alpha = try await server.project("alpha")
                let endpoint = try #require(try await server.storage.webhookEndpoints(projectID: alpha.id).first)
                #expect(endpoint.url == "https://example.org/hook" && endpoint.events == [.recordSubmitted, .recordReviewed])

                _ = try await ana.push(client, [ana.mutation(UUID(), ["title": ana.change(.text("Pump"))])])
                let page = try await browser.get(client, path)
                #expect(page.status == .ok && page.text.contains("record.submitted") && page.text.contains("https://example.org/hook"))
                #expect(!page.text.contains(secret), "the secret is shown once, on the answer to the form that made it")
                let delivery = try #require(try await server.storage.webhookDeliveries(projectID: alpha.id, endpointID: nil, before: nil, limit: 10).first)
                #expect(delivery.kind == .recordSubmitted && delivery.status == .pending)
                let redeliver = "\(path)/deliveries/\(delivery.id)/redeliver"
                #expect(try await browser.post(client, redeliver, [], csrf: .some(nil)).status == .forbidden)
                #expect(try await browser.post(client, redeliver, []).status == .seeOther)
                #expect(try await browser.post(client, "\(path)/deliveries/999999/redeliver", []).status == .notFound)
                #expect(try await browser.post(client, "\(path)/\(endpoint.id)/remove", []).status == .seeOther)
                #expect(try await server.storage.webhookEndpoints(projectID: alpha.id).isEmpty)

                // Each act is in the audit log, by adam; the secret is not.
                let acts = try await server.storage.auditLog(AuditQuery(projectID: alpha.id)).map(\.event).filter { $0.action.rawValue.hasPrefix("webhook.") }
                #expect(acts.map(\.action) == [.webhookRemoved, .webhookRedelivered, .webhookAdded])
                #expect(acts.map(\.subject) == [String(endpoint.id), "delivery \(delivery.id)", String(endpoint.id)])
                #expect(acts.last?.detail == ["url": "https://example.org/hook", "events": "record.reviewed,record.submitted"])
                #expect(acts.allSatisfy { $0.actor == "adam" && !$0.detail.values.contains(secret) })
            }
        }
    }

    @Test(arguments: Backend.available)
    func aProjectWithoutEndpointsWritesNoOutbox(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [ana.mutation(UUID(), ["title": ana.change(.text("Pump"))])])
                let alpha = try await server.project("alpha")
                #expect(try await server.storage.webhookDeliveries(projectID: alpha.id, endpointID: nil, before: nil, limit: 10).isEmpty)
            }
        }
    }
}
