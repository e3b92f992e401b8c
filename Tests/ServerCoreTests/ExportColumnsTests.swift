import Foundation
import FormModel
import Hummingbird
import HummingbirdTesting
@testable import ServerCore
import SyncCore
import Testing

/// What offices expect of an export: the record's times, review, author and device, and locations in
/// three columns.
struct ExportColumnsTests {
    static let survey = FormDefinition(id: "survey", version: 1, title: "New Survey", completionLabel: "Create", pages: [
        FormPage(id: "main", fields: [
            FieldDefinition(id: "site", kind: .text, label: "Site", required: true),
            FieldDefinition(id: "where", kind: .location, label: "Where"),
        ]),
    ])

    @Test(arguments: Backend.available)
    func csvAndJSONLinesCarryTimesReviewAuthorDeviceAndSplitLocations(backend: Backend) async throws {
        try await TestServer.with(backend) { server in
            try await server.publish(Self.survey, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let rita = Device(clientID: "rita", token: try await server.member("rita", project: "alpha", role: .reviewer))
            let located = UUID(), raw = UUID(), draft = UUID()
            let before = Date().addingTimeInterval(-1)
            try await server.app.test(.router) { client in
                _ = try await ana.push(client, [
                    ana.mutation(located, form: "survey", ["site": ana.change(.text("North")), "where": ana.change(.location(Location(latitude: 47.5, longitude: -122.25, accuracy: 4.5)))]),
                    ana.mutation(raw, state: .draft, form: "survey", ["site": ana.change(.text("South")), "where": ana.change(.raw("near the bridge"))]),
                    ana.mutation(draft, state: .draft, form: "survey", ["site": ana.change(.text("East"))]),
                ])
                let review = try await client.execute(
                    uri: "/v1/projects/alpha/records/\(located)/review", method: .post, headers: rita.headers,
                    body: ByteBuffer(string: #"{"state":"approved","comment":"Looks right"}"#))
                #expect(review.status == .ok)
            }
            let project = try await server.project("alpha")
            var csv: [String] = []
            try await RecordExporter(storage: server.storage).export(projectID: project.id, formID: "survey", format: .csv) { csv.append($0) }
            let header = csv[0].dropLast().split(separator: ",").map(String.init)
            #expect(header == RecordExporter.recordColumns + ["site", "where.latitude", "where.longitude", "where.accuracy"])
            func row(_ id: UUID) throws -> [String: String] {
                let line = try #require(csv.first { $0.hasPrefix(id.lowercased) })
                return Dictionary(uniqueKeysWithValues: zip(header, line.dropLast().split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
            }
            let first = try row(located)
            #expect(first["where.latitude"] == "47.5" && first["where.longitude"] == "-122.25" && first["where.accuracy"] == "4.5")
            #expect(first["reviewState"] == "approved" && first["reviewComment"] == "Looks right")
            #expect(first["author"] == "ana" && first["device"] == "ana-phone")
            let formatter = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
            for column in ["createdAt", "submittedAt", "updatedAt", "receivedAt"] {
                let time = try formatter.parse(try #require(first[column]))
                #expect(time >= before && time <= Date().addingTimeInterval(1), "\(column)")
            }
            let second = try row(raw)
            #expect(second["where.latitude"] == "near the bridge" && second["where.longitude"] == "" && second["where.accuracy"] == "")
            #expect(second["reviewState"] == "" && second["submittedAt"] == "", "drafts are not reviewed nor submitted")
            #expect(try row(draft)["where.latitude"] == "")

            var jsonl: [String] = []
            try await RecordExporter(storage: server.storage).export(projectID: project.id, formID: "survey", format: .jsonl) { jsonl.append($0) }
            let line = try #require(jsonl.first { $0.contains("\"recordId\":\"\(located.lowercased)\"") })
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            #expect(object["reviewState"] as? String == "approved")
            #expect(object["device"] as? String == "ana-phone")
            #expect(object["submittedAt"] is String && object["createdAt"] is String && object["updatedAt"] is String)
        }
    }
}
