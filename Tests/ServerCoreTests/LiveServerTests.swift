import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// The same application over a real socket.
struct LiveServerTests {
    @Test(arguments: Backend.available)
    func pushAndPullOverARealSocket(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                #expect(client.port != nil)
                let record = UUID()
                let batch = [device.mutation(record, ["title": device.change(.text("Valve"))])]
                let (response, first) = try await device.push(client, batch)
                #expect(response.status == .ok)
                let (_, retry) = try await device.push(client, batch)
                #expect(first?.outcomes == retry?.outcomes)
                let page = try await device.pull(client)
                #expect(page.changes.map(\.recordID) == [record])
                let missing = try await device.get(client, "/v1/projects/alpha/records/not-a-uuid")
                #expect(missing.status == .notFound)
            }
        }
    }
}
