import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// A rank is exported as its values in the order given, a trace and a shape as the text ODK writes.
struct ExportRankAndGeometryTests {
    static let survey = FormDefinition(id: "plots", version: 1, title: "New Plot", completionLabel: "Create", pages: [
        FormPage(id: "main", fields: [
            FieldDefinition(id: "order", kind: .rank, label: "Order", choices: [Choice(value: "red", label: "Red"), Choice(value: "blue", label: "Blue")]),
            FieldDefinition(id: "path", kind: .trace, label: "Path"),
            FieldDefinition(id: "plot", kind: .shape, label: "Plot"),
            FieldDefinition(id: "size", kind: .calculate, label: "Size", calculation: "round(area(plot), 0)"),
        ]),
    ])

    @Test(arguments: Backend.available)
    func csvAndJSONLinesKeepTheOrderAndThePoints(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.survey, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            let plot = "0 0 0 0;0 0.001 0 0;0.001 0.001 0 0;0 0 0 0"
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [
                    ana.mutation(record, form: "plots", ["order": ana.change(.choices(["blue", "red"])), "path": ana.change(.text("52.5 13.4 0 5;52.51 13.41 0 5")),
                                                         "plot": ana.change(.text(plot))]),
                ])
            }
            let project = try await server.project("alpha")
            var csv: [String] = []
            try await RecordExporter(storage: server.storage).export(projectID: project.id, formID: "plots", format: .csv) { csv.append($0) }
            let line = try #require(csv.first { $0.hasPrefix(record.lowercased) })
            #expect(line.contains(#""blue, red""#), "\(line)")
            #expect(line.contains(",52.5 13.4 0 5;52.51 13.41 0 5,"), "\(line)")
            #expect(line.hasSuffix(",\(plot),6196\r\n"), "a triangle of half of 111.3 m squared: \(line)")
            var jsonl: [String] = []
            try await RecordExporter(storage: server.storage).export(projectID: project.id, formID: "plots", format: .jsonl) { jsonl.append($0) }
            let first = try #require(jsonl.first)
            let object = try #require(try JSONSerialization.jsonObject(with: Data(first.utf8)) as? [String: Any])
            let values = try #require(object["values"] as? [String: Any], "\(object)")
            #expect((values["order"] as? [String: Any])?["choices"] as? [String] == ["blue", "red"])
            #expect((values["plot"] as? [String: Any])?["text"] as? String == plot)
        }
    }
}
