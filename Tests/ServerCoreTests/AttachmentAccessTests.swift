import FormModel
import Foundation
import HTTPTypes
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Which records reference which attachment, what a pull says is missing, and who may download.
struct AttachmentAccessTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("AttachmentAccessTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    static let form = FormDefinition(id: "inspection", version: 1, title: "Inspection", completionLabel: "Send", pages: [
        FormPage(id: "main", fields: [
            FieldDefinition(id: "title", kind: .text, label: "Title"),
            FieldDefinition(id: "photo", kind: .photo, label: "Photo"),
            FieldDefinition(id: "sketch", kind: .file, label: "Sketch"),
        ])
    ])

    static func reference(_ blob: TestBlob, name: String = "IMG_0042.jpg", type: String = "image/jpeg") -> AnswerValue {
        .attachment(AttachmentReference(sha256: blob.sha256, bytes: Int64(blob.bytes.count), type: type, name: name))
    }

    /// The records of a raw pull page by id, with their `missingAttachments` (empty when left out).
    static func pulledMissing(_ device: Device, _ client: some TestClientProtocol, after: Int64 = 0) async throws -> (missing: [UUID: [String]], sequences: [UUID: Int64]) {
        let response = try await device.get(client, "/v1/projects/\(device.project)/changes?after=\(after)")
        #expect(response.status == .ok)
        let page = try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any])
        var missing: [UUID: [String]] = [:]
        var sequences: [UUID: Int64] = [:]
        for change in page["changes"] as? [[String: Any]] ?? [] {
            let id = try #require(UUID(uuidString: change["recordId"] as? String ?? ""))
            missing[id] = change["missingAttachments"] as? [String] ?? []
            sequences[id] = (change["sequence"] as? NSNumber)?.int64Value
        }
        return (missing, sequences)
    }

    @Test(arguments: Backend.available)
    func aRecordWaitsForItsAttachmentAndMovesForwardWhenItArrives(backend: Backend) async throws {
        let photo = TestBlob(count: 70_000, seed: Self.seed)
        let sketch = TestBlob(count: 5_000, seed: Self.seed &+ 1)
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                let record = UUID()
                let (pushed, _) = try await ana.push(client, [ana.mutation(record, form: "inspection", [
                    "title": ana.change(.text("Crack")), "photo": ana.change(Self.reference(photo)),
                    "sketch": ana.change(Self.reference(sketch, name: "plan.pdf", type: "application/pdf")),
                ])])
                #expect(pushed.status == .ok)
                let first = try await Self.pulledMissing(ana, client)
                #expect(first.missing[record] == [photo.sha256, sketch.sha256].sorted())
                let before = try #require(first.sequences[record])

                #expect(try await ana.putAttachment(client, photo.sha256, photo.bytes).status == .created)
                let second = try await Self.pulledMissing(ana, client, after: before)
                #expect(second.missing[record] == [sketch.sha256], "the record comes again with one attachment still missing")
                let middle = try #require(second.sequences[record])
                #expect(middle > before)

                #expect(try await ana.putAttachment(client, sketch.sha256, sketch.bytes).status == .created)
                let third = try await Self.pulledMissing(ana, client, after: middle)
                #expect(third.missing[record] == [], "nothing missing: the envelope leaves the key out")
                let attachments = try await server.storage.attachments(projectID: try await server.project("alpha").id, recordID: record)
                #expect(attachments.map(\.fieldID) == ["photo", "sketch"])
                #expect(attachments.allSatisfy { $0.stored })

                // Removing the photo from the record drops its reference: the record no longer opens it for ana.
                _ = try await ana.push(client, [ana.mutation(record, form: "inspection", ["photo": ana.change(nil, base: 1, millis: 2_000)])])
                #expect(try await ana.getAttachment(client, photo.sha256).status == .notFound)
                #expect(try await ana.getAttachment(client, sketch.sha256).status == .ok)
            }
        }
    }

    @Test(arguments: Backend.available, Role.allCases)
    func downloadingNeedsAReadableReferencingRecord(backend: Backend, role: Role) async throws {
        let shared = TestBlob(count: 40_000, seed: Self.seed)
        let draftOnly = TestBlob(count: 30_000, seed: Self.seed &+ 2)
        let unreferenced = TestBlob(count: 1_000, seed: Self.seed &+ 3)
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            try await server.publish(Self.form, project: "beta")
            let author = Device(clientID: "author", token: try await server.member("author", project: "alpha", role: .collector))
            let actor = Device(clientID: "actor", token: try await server.member("actor", project: "alpha", role: role))
            let stranger = Device(clientID: "stranger", token: try await server.member("stranger", project: "beta", role: .admin), project: "beta")
            try await server.app.test(.live) { client in
                _ = try await author.push(client, [
                    author.mutation(UUID(), form: "inspection", ["photo": author.change(Self.reference(shared))]),
                    author.mutation(UUID(), state: .draft, form: "inspection", ["photo": author.change(Self.reference(draftOnly))]),
                ])
                for blob in [shared, draftOnly, unreferenced] {
                    #expect(try await author.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                }
                let missing = try await actor.getAttachment(client, String(repeating: "0", count: 64))
                #expect(missing.status == .notFound)

                let sharedAnswer = try await actor.getAttachment(client, shared.sha256)
                if role.seesSharedRecords {
                    #expect(sharedAnswer.status == .ok)
                    #expect(Data(buffer: sharedAnswer.body) == shared.bytes)
                    #expect(sharedAnswer.headers[.contentType] == "application/octet-stream", "random bytes, whatever the reference says")
                    #expect(sharedAnswer.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
                    #expect(sharedAnswer.headers[.eTag] == "\"\(shared.sha256)\"")
                } else {
                    #expect(sharedAnswer.status == .notFound)
                    #expect(sharedAnswer.text == missing.text, "looks exactly like a missing attachment")
                }
                let draftAnswer = try await actor.getAttachment(client, draftOnly.sha256)
                #expect(draftAnswer.status == .notFound, "another member's draft is private")
                #expect(draftAnswer.text == missing.text)
                #expect(try await author.getAttachment(client, draftOnly.sha256).status == .ok, "the author reads their draft's attachment")
                #expect(try await author.getAttachment(client, unreferenced.sha256).status == .notFound, "no record references it")
                #expect(try await stranger.getAttachment(client, shared.sha256).status == .notFound, "another project's")
                #expect(try await actor.headAttachment(client, shared.sha256).status == .ok, "every role uploads")
            }
        }
    }

    @Test(arguments: Backend.available)
    func rangesAreServedAsAskedAndTheSameBytesForTwoRecordsAreStoredOnce(backend: Backend) async throws {
        let blob = TestBlob(count: 1024 * 1024 + 777, seed: Self.seed)
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let ben = Device(clientID: "d2", token: try await server.member("ben", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                _ = try await ana.push(client, [ana.mutation(UUID(), form: "inspection", ["photo": ana.change(Self.reference(blob))])])
                _ = try await ben.push(client, [ben.mutation(UUID(), form: "inspection", ["photo": ben.change(Self.reference(blob, name: "same.jpg"))])])
                #expect(try await ana.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                #expect(try await ben.headAttachment(client, blob.sha256).attachmentComplete == "false", "ben never sent it")
                #expect(try await ben.putAttachment(client, blob.sha256, blob.bytes).status == .created)
                #expect(try await ben.headAttachment(client, blob.sha256).attachmentComplete == "true")
                let count = blob.bytes.count
                for (range, expected) in [
                    ("bytes=10-19", 10..<20), ("bytes=1048570-1048585", 1_048_570..<1_048_586), ("bytes=-5", (count - 5)..<count),
                    ("bytes=\(count - 3)-", (count - 3)..<count), ("bytes=0-999999999", 0..<count),
                ] {
                    let part = try await ben.getAttachment(client, blob.sha256, range: range)
                    #expect(part.status == .partialContent, "\(range)")
                    #expect(Data(buffer: part.body) == blob.bytes[expected], "\(range)")
                    #expect(part.headers[.contentRange] == "bytes \(expected.lowerBound)-\(expected.upperBound - 1)/\(count)")
                }
                let beyond = try await ana.getAttachment(client, blob.sha256, range: "bytes=\(count)-")
                #expect(beyond.status == .rangeNotSatisfiable)
                #expect(beyond.headers[.contentRange] == "bytes */\(count)")
                let whole = try await ana.getAttachment(client, blob.sha256)
                #expect(whole.status == .ok)
                #expect(Data(buffer: whole.body) == blob.bytes)
                #expect(whole.headers[.acceptRanges] == "bytes")
                let key = AttachmentKey(projectID: try await server.project("alpha").id, sha256: blob.sha256)
                #expect(try await server.storage.attachmentUses(key).count == 2)
            }
        }
    }

    @Test(arguments: Backend.available)
    func anExportWritesEveryStoredAttachmentNamedAfterRecordAndField(backend: Backend) async throws {
        let photo = TestBlob(count: 3_000, seed: Self.seed)
        let notYet = TestBlob(count: 100, seed: Self.seed &+ 4)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("export-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "d1", token: try await server.member("ana", project: "alpha", role: .collector))
            let record = UUID()
            try await server.app.test(.live) { client in
                _ = try await ana.push(client, [ana.mutation(record, form: "inspection", [
                    "photo": ana.change(Self.reference(photo, name: ".crack: north, 1.jpg")),
                    "sketch": ana.change(Self.reference(notYet, name: "plan.pdf", type: "application/pdf")),
                ])])
                #expect(try await ana.putAttachment(client, photo.sha256, photo.bytes).status == .created)
            }
            let projectID = try await server.project("alpha").id
            let exporter = RecordExporter(storage: server.storage, attachmentsDirectory: directory)
            var csv = ""
            try await exporter.export(projectID: projectID, formID: "inspection", format: .csv) { csv += $0 }
            let name = "\(record.uuidString.lowercased())-photo-_crack_ north, 1.jpg"
            #expect(try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name)) == photo.bytes)
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory) == [name], "only stored attachments are written")
            #expect(csv.contains("\"\(name)\""), "the CSV cell names the file: \(csv)")
            #expect(csv.contains("waiting for upload: plan.pdf"))
            var jsonl = ""
            try await exporter.export(projectID: projectID, formID: "inspection", format: .jsonl) { jsonl += $0 }
            let line = try #require(try JSONSerialization.jsonObject(with: Data(jsonl.utf8)) as? [String: Any])
            #expect(line["files"] as? [String: String] == ["photo": name])
        }
    }
}
