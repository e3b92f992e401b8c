import Foundation
import FormModel
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// The record page shows answers under the form's labels (with the answers the labels name): repeat instances
/// nested in order, computed values, locations as coordinates, choices by their labels.
struct ConsoleRecordPageTests {
    static func form() -> FormDefinition {
        FormDefinition(id: "inspect", version: 1, title: "Inspect Site", completionLabel: "Submit", pages: [FormPage(id: "p", fields: [
            FieldDefinition(id: "site", kind: .text, label: "Site", required: true),
            FieldDefinition(id: "spot", kind: .location, label: "Where exactly"),
            FieldDefinition(id: "defects", kind: .repeat, label: "Defects", fields: [
                FieldDefinition(id: "location", kind: .text, label: "Where"),
                FieldDefinition(id: "severity", kind: .singleChoice, label: "Severity", choices: [Choice(value: "low", label: "Low"), Choice(value: "high", label: "High")]),
                FieldDefinition(id: "cost", kind: .decimal, label: "Cost at ${location}"),
            ], instanceLabel: "Defect"),
            FieldDefinition(id: "total", kind: .decimal, label: "Total for ${site}", calculation: "sum(defects.cost)"),
        ])])
    }

    @Test(arguments: Backend.available)
    func answersShowUnderTheirLabelsWithRepeatInstancesInOrder(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form(), project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.router) { client in
                let (response, _) = try await ana.push(client, [ana.mutation(record, form: "inspect", [
                    "site": ana.change(.text("Depot")),
                    "spot": ana.change(.location(Location(latitude: 52.52, longitude: 13.4, accuracy: 5))),
                    "defects/b/@position": ana.change(.integer(2)), "defects/b/location": ana.change(.text("Stairwell")),
                    "defects/b/severity": ana.change(.choice("high")), "defects/b/cost": ana.change(.decimal(480.5)),
                    "defects/a/@position": ana.change(.integer(1)), "defects/a/location": ana.change(.text("North gutter")),
                    "defects/a/cost": ana.change(.decimal(120)),
                ])])
                #expect(response.status == .ok)
                let page = try await client.console("/console/projects/alpha/records/\(record.lowercased)", token: ana.token).text
                for text in ["<dt>Site</dt><dd>Depot</dd>", "<dt>Where exactly</dt><dd>52.52, 13.4 ±5 m</dd>", "<h4>Defect 1</h4>", "<h4>Defect 2</h4>",
                             "<dt>Severity</dt><dd>High</dd>", "<dt>Total for Depot</dt><dd>600.5</dd>",
                             // Labels that name answers show them, inside a repeat the same instance's.
                             "<dt>Cost at Stairwell</dt><dd>480.5</dd>", "<dt>Cost at North gutter</dt><dd>120</dd>",
                             // The record's form and version, from its form key.
                             ">inspect</a> version 1</dd>"] {
                    #expect(page.contains(text), "missing \(text)")
                }
                let first = try #require(page.range(of: "North gutter"))
                let second = try #require(page.range(of: "Stairwell"))
                #expect(first.lowerBound < second.lowerBound, "instances in their order")
                #expect(!page.contains("id=\"review-form\""), "a collector has no review form")

                // The history names what changed as a person reads it, never by its storage key.
                let (edited, _) = try await ana.push(client, [ana.mutation(record, form: "inspect", [
                    "defects/a/location": ana.change(.text("Roof edge"), base: 1),
                    "defects/c/@position": ana.change(.integer(3)), "defects/c/location": ana.change(.text("Gate")),
                    "defects/b/@removed": ana.change(.boolean(true), base: 1),
                ])])
                #expect(edited.status == .ok)
                let history = try await client.console("/console/projects/alpha/records/\(record.lowercased)", token: ana.token).text
                for text in ["Defect 1 › Where: North gutter → Roof edge", "Defect 2: added", "Defect 2 › Where: (empty) → Gate", "Site: (empty) → Depot", "Defect 1: added"] {
                    #expect(history.contains(text), "the history lacks \(text)")
                }
                #expect(history.contains(": removed"), "the removal is said")
                for key in ["@position", "@removed", "defects/"] {
                    #expect(!history.contains(key), "a storage key in the history: \(key)")
                }
            }
        }
    }
}
