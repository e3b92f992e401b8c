import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// The server with repeat groups: publishing rules for repeats, validation of instances with the device's code.
struct RepeatServerTests {
    static func form(version: Int = 1, repeatFields: [FieldDefinition]? = nil, extraRepeat: Bool = false) -> FormDefinition {
        var fields = [
            FieldDefinition(id: "site", kind: .text, label: "Site", required: true),
            FieldDefinition(id: "defects", kind: .repeat, label: "Defects", fields: repeatFields ?? [
                FieldDefinition(id: "location", kind: .text, label: "Where", required: true),
                FieldDefinition(id: "cost", kind: .decimal, label: "Cost", constraint: ". <= 1000", constraintMessage: "At most 1000."),
            ], minCount: 1, instanceLabel: "Defect"),
            FieldDefinition(id: "total", kind: .decimal, label: "Total", calculation: "sum(defects.cost)"),
        ]
        if extraRepeat {
            fields.append(FieldDefinition(id: "photos", kind: .repeat, label: "Photos", fields: [FieldDefinition(id: "caption", kind: .text, label: "Caption")]))
        }
        return FormDefinition(id: "inspect", version: version, title: "Inspect Site", completionLabel: "Submit", pages: [FormPage(id: "p", fields: fields)])
    }

    @Test(arguments: Backend.available)
    func addingARepeatOrAFieldInsideOneIsAllowedMovingOrRemovingOneInUseIsNot(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form(), project: "alpha")
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let (response, body) = try await device.push(client, [device.mutation(UUID(), state: .draft, form: "inspect", [
                    "site": device.change(.text("Depot")), "defects/a1/@position": device.change(.integer(1)),
                    "defects/a1/location": device.change(.text("Roof")),
                ])])
                #expect(response.status == .ok)
                #expect(body?.outcomes.first?.status == .applied, "\(String(describing: body))")
            }
            let withField = Self.form(repeatFields: [
                FieldDefinition(id: "location", kind: .text, label: "Where", required: true),
                FieldDefinition(id: "cost", kind: .decimal, label: "Cost"),
                FieldDefinition(id: "severity", kind: .singleChoice, label: "Severity", choices: [Choice(value: "low", label: "Low")]),
            ], extraRepeat: true)
            let published = try await server.publish(withField, project: "alpha")
            #expect(published.isNew && published.form.version == 2)
            // `location` is in use inside the repeat: moving it to the top level is refused.
            let moved = FormDefinition(id: "inspect", title: "Inspect Site", completionLabel: "Submit", pages: [FormPage(id: "p", fields: [
                FieldDefinition(id: "site", kind: .text, label: "Site"), FieldDefinition(id: "location", kind: .text, label: "Where"),
                FieldDefinition(id: "defects", kind: .repeat, label: "Defects", fields: [FieldDefinition(id: "cost", kind: .decimal, label: "Cost")]),
            ])])
            do {
                try await server.publish(moved, project: "alpha")
                Issue.record("moving a field in use out of its repeat was published")
            } catch let error as FormPublishError {
                #expect(error.code == .breaking)
                #expect(error.description.contains("\"location\" moves from the repeat \"defects\" to the top level"), "\(error)")
            }
        }
    }

    @Test(arguments: Backend.available)
    func submittedRecordsAreValidatedOverEveryInstanceAndDraftKeysMustFitTheForm(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form(), project: "alpha")
            let device = Device(clientID: "d", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.router) { client in
                let record = UUID()
                let (_, refused) = try await device.push(client, [device.mutation(record, form: "inspect", [
                    "site": device.change(.text("Depot")), "defects/a1/@position": device.change(.integer(1)),
                    "defects/a1/location": device.change(.text("Roof")), "defects/a1/cost": device.change(.decimal(5000)),
                ])])
                let problem = try #require(refused?.outcomes.first?.problem)
                #expect(refused?.outcomes.first?.status == .rejected)
                #expect(problem.detail.contains("At most 1000."), "\(problem)")
                #expect(problem.field == "defects/a1/cost")
                let (_, accepted) = try await device.push(client, [device.mutation(record, form: "inspect", [
                    "site": device.change(.text("Depot")), "defects/a1/@position": device.change(.integer(1)),
                    "defects/a1/location": device.change(.text("Roof")), "defects/a1/cost": device.change(.decimal(500)),
                ])])
                #expect(accepted?.outcomes.first?.status == .applied, "\(String(describing: accepted))")
                for (key, value) in [("defects/a1/nope", AnswerValue.text("x")), ("location", .text("x")), ("defects/a1/@position", .text("first")),
                                     ("total", .decimal(1)), ("defects/a1/b/c/location", .text("x"))] {
                    let (_, draft) = try await device.push(client, [device.mutation(UUID(), state: .draft, form: "inspect", [key: device.change(value)])])
                    #expect(draft?.outcomes.first?.status == .rejected, "\(key)")
                    #expect(draft?.outcomes.first?.problem?.field == key)
                }
            }
        }
    }
}
