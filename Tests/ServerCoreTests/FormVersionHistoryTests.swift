import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// A record's changes made against two versions of its form: version 2 drops a field the draft answered on
/// version 1. The server takes a change against either version, the draft's clearing of the dropped answer
/// against version 2 included; the history names each change's version, and the console's record page shows
/// it, the dropped field under the label version 1 gave it.
struct FormVersionHistoryTests {
    @Test(arguments: Backend.available)
    func changesAgainstEitherVersionAreTakenAndTheHistoryNamesEachOnesVersion(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(extraField: true), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.router) { client in
                let (first, _) = try await ana.push(client, [ana.mutation(record, state: .draft, version: 1, [
                    "title": ana.change(.text("Pump 4")), "site": ana.change(.text("North yard")),
                ])])
                #expect(first.status == .ok)
                // Version 2 drops `site`, which the draft holds an answer for: published all the same.
                var trimmed = TestForms.job(extraField: true)
                trimmed.pages[0].fields.removeAll { $0.id == "site" }
                #expect(try await server.publish(trimmed, project: "alpha").form.version == 2)

                // An answer to the dropped field is still refused against version 2, with the reason.
                let (_, refused) = try await ana.push(client, [ana.mutation(record, state: .draft, version: 2, ["site": ana.change(.text("South"), base: 1)])])
                #expect(refused?.outcomes.first?.status == .rejected)
                #expect(refused?.outcomes.first?.problem?.detail.contains("has no field \"site\"") == true, "\(String(describing: refused))")
                // A change against version 1 is still taken.
                let (_, old) = try await ana.push(client, [ana.mutation(record, state: .draft, version: 1, ["count": ana.change(.integer(3), base: 1)])])
                #expect(old?.outcomes.first?.status == .applied, "\(String(describing: old))")
                // The moved draft clears the dropped answer against version 2 and is submitted there.
                let (_, moved) = try await ana.push(client, [ana.mutation(record, state: .submitted, version: 2, [
                    "site": ana.change(nil, base: 1), "count": ana.change(.integer(4), base: 2),
                ])])
                #expect(moved?.outcomes.first?.status == .applied, "\(String(describing: moved))")

                let projectID = try await server.project("alpha").id
                let stored = try #require(try await server.storage.record(projectID: projectID, id: record))
                #expect(stored.form.version == 2 && stored.state == .submitted)
                #expect(stored.fields.values["site"] == nil)
                let history = try await server.storage.history(projectID: projectID, recordID: record)
                #expect(history.map(\.detail.version) == [1, 1, 2])
                #expect(history[0].detail.fields["site"] == .init(from: nil, to: .text("North yard")))
                #expect(history[2].detail.fields["site"] == .init(from: .text("North yard"), to: nil))

                let api = try await ana.get(client, "/v1/projects/alpha/records/\(record.lowercased)/history")
                let body = try #require(try JSONSerialization.jsonObject(with: Data(api.text.utf8)) as? [String: Any])
                let versions = (body["history"] as? [[String: Any]])?.map { $0["version"] as? Int }
                #expect(versions == [1, 1, 2], "\(body)")

                let page = try await client.console("/console/projects/alpha/records/\(record.lowercased)", token: ana.token).text
                #expect(page.contains("on ana-phone · form version 1 · created as draft"), "\(page)")
                #expect(page.contains("on ana-phone · form version 2 · draft → submitted"), "\(page)")
                #expect(page.contains("Site: North yard → (empty)"), "the dropped field under its version 1 label")
            }
        }
    }
}
