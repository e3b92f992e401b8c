import Foundation
import FormModel
import HTTPTypes
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// The record page's attachments: a link answered through the console's access check, and "waiting for N
/// attachments" until the device's uploads arrive.
struct ConsoleAttachmentTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("ConsoleAttachmentTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    @Test(arguments: Backend.available)
    func theRecordPageLinksItsAttachmentsAndCountsThoseStillWaiting(backend: Backend) async throws {
        let photo = TestBlob(count: 20_000, seed: Self.seed)
        let sketch = TestBlob(count: 2_000, seed: Self.seed &+ 1)
        try await TestServer.with(backend) { server in
            try await server.publish(AttachmentAccessTests.form, project: "alpha")
            try await server.publish(AttachmentAccessTests.form, project: "beta")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let bob = Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector))
            let rita = Device(clientID: "rita-laptop", token: try await server.member("rita", project: "alpha", role: .reviewer))
            let olga = Device(clientID: "olga-laptop", token: try await server.member("olga", project: "beta", role: .admin), project: "beta")
            let record = UUID()
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [ana.mutation(record, form: "inspection", [
                    "title": ana.change(.text("Crack")),
                    "photo": ana.change(AttachmentAccessTests.reference(photo, name: "crack <b>.jpg")),
                    "sketch": ana.change(AttachmentAccessTests.reference(sketch, name: "plan.pdf", type: "application/pdf")),
                ])])
                let page = "/console/projects/alpha/records/\(record.lowercased)"
                let before = try await client.console(page, token: rita.token).text
                #expect(before.contains("Waiting for 2 attachments"))
                #expect(before.contains("waiting for upload"))
                #expect(!before.contains("<b>"), "names show as text")

                #expect(try await ana.putAttachment(client, photo.sha256, photo.bytes).status == .created)
                let after = try await client.console(page, token: rita.token).text
                #expect(after.contains("Waiting for 1 attachment "))
                let link = "/console/projects/alpha/attachments/\(photo.sha256)"
                #expect(after.contains("href=\"\(link)\""))

                #expect(try await ana.putAttachment(client, sketch.sha256, sketch.bytes).status == .created)
                #expect(!(try await client.console(page, token: rita.token).text.contains("Waiting for")))

                // The link answers each viewer as the record page does.
                for (device, status) in [(ana, HTTPResponse.Status.ok), (rita, .ok), (bob, .notFound), (olga, .notFound)] {
                    let response = try await client.console(link, token: device.token)
                    #expect(response.status == status, "\(device.clientID)")
                    if status == .ok {
                        #expect(Data(buffer: response.body) == photo.bytes)
                        #expect(response.headers[.contentType] == "application/octet-stream", "random bytes: the type comes from them, not from the reference")
                        #expect(response.headers[.contentDisposition]?.hasPrefix("attachment; filename=\"crack <b>.jpg\"") == true)
                        #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'none'") == true)
                    }
                }
                let anonymous = try await client.execute(uri: link, method: .get)
                #expect(anonymous.status == .seeOther, "sent to sign in")
            }
        }
    }
}
