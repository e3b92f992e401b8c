import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

struct PublishExportTests {
    @Test(arguments: Backend.available)
    func anUnchangedFormKeepsItsVersionAndAChangedOneGetsTheNext(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let first = try await server.publish(TestForms.job(), project: "alpha")
            #expect(first.isNew && first.form.version == 1)
            let again = try await server.publish(TestForms.job(), project: "alpha")
            #expect(!again.isNew && again.form.version == 1)
            let changed = try await server.publish(TestForms.job(extraField: true), project: "alpha")
            #expect(changed.isNew && changed.form.version == 2)
            let project = try await server.project("alpha")
            #expect(try await server.storage.forms(projectID: project.id).map(\.version) == [1, 2])
            // One form's versions, in order, and only its own: another form of the project is not among them.
            try await server.publish(TestForms.wide(fields: 3), project: "alpha")
            let job = try await server.storage.forms(projectID: project.id, formID: TestForms.job().id)
            #expect(job.map(\.formID) == [TestForms.job().id, TestForms.job().id] && job.map(\.version) == [1, 2])
            #expect(try await server.storage.forms(projectID: project.id, formID: TestForms.wide(fields: 3).id).map(\.version) == [1])
            #expect(try await server.storage.forms(projectID: project.id, formID: "nothing-here").isEmpty)
        }
    }

    @Test(arguments: Backend.available)
    func aChangeThatWouldBreakStoredRecordsIsRefusedWithTheReason(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(extraField: true), project: "alpha")
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                _ = try await device.push(client, [device.mutation(UUID(), state: .draft, ["site": device.change(.text("north")), "count": device.change(.integer(2))])])
            }
            var retyped = TestForms.job(extraField: true)
            retyped.pages[0].fields[2].kind = .decimal
            do {
                try await server.publish(retyped, project: "alpha")
                Issue.record("a kind change of a field in use was published")
            } catch let error as FormPublishError {
                #expect(error.description.contains("\"count\" changes from integer to decimal"))
            }
            // Removing a field, also one records hold values for, is fine: they keep them under their version.
            var trimmed = TestForms.job(extraField: true)
            trimmed.pages[0].fields.removeAll { $0.id == "notes" || $0.id == "site" }
            #expect(try await server.publish(trimmed, project: "alpha").form.version == 2)
        }
    }

    @Test(arguments: Backend.available)
    func anInvalidFormIsRefusedWithItsFindings(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            let project = try await server.project("alpha")
            do {
                _ = try await FormPublisher(storage: server.storage).publish(Data("{\"id\": \"x\"}".utf8), file: "x.json", projectID: project.id)
                Issue.record("an invalid form was published")
            } catch let error as FormPublishError {
                #expect(error.code == .invalid)
                #expect(!error.reasons.isEmpty)
            }
        }
    }

    @Test(arguments: Backend.available)
    func exportStreamsCSVAndJSONLines(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(TestForms.job(), project: "alpha")
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                _ = try await device.push(client, (0..<7).map { index in
                    device.mutation(UUID(), ["title": device.change(.text(index == 0 ? "Pump, \"big\"" : "Job \(index)")), "priority": device.change(.choice("high"))])
                })
            }
            let project = try await server.project("alpha")
            var csv: [String] = []
            let exporter = RecordExporter(storage: server.storage, pageSize: 3)
            let count = try await exporter.export(projectID: project.id, formID: "job", format: .csv) { csv.append($0) }
            #expect(count == 7)
            #expect(csv.count == 8)
            #expect(csv[0] == "recordId,formVersion,state,author,revision,reviewState,reviewComment,device,createdAt,submittedAt,updatedAt,receivedAt,title,priority,count,notes\r\n")
            #expect(csv.contains { $0.contains(",\"Pump, \"\"big\"\"\",high,,") })
            var jsonl: [String] = []
            try await exporter.export(projectID: project.id, formID: "job", format: .jsonl) { jsonl.append($0) }
            #expect(jsonl.count == 7)
            #expect(jsonl.allSatisfy { $0.hasSuffix("\n") && $0.contains("\"priority\":{\"choice\":\"high\"}") })
            #expect(RecordExporter.csvField("=SUM(A1)") == "'=SUM(A1)")
        }
    }
}
