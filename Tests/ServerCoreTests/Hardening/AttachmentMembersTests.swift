import FieldSheetTestTraits
import Foundation
import FormModel
import HTTPTypes
import HummingbirdTesting
@testable import ServerCore
import ServerStorage
import SyncCore
import Testing

/// Attachments between members (README, "Attachments between members"): a hash proves nothing, HEAD tells a
/// member only about their own upload, another member's upload of the same hash leaves one in progress alone,
/// and what a download is served as comes from the bytes. Each hostile member's actions run while another
/// member's requests are timed.
@Suite(.measuresTiming)
struct AttachmentMembersTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["FIELDSHEET_TEST_SEED"] ?? "") ?? UInt64.random(in: 1...UInt64.max)

    init() { print("AttachmentMembersTests seed \(Self.seed) (FIELDSHEET_TEST_SEED to repeat)") }

    static let form = AttachmentAccessTests.form

    /// A hash nobody has.
    static let nobodys = String(repeating: "0", count: 64)

    /// What HEAD says of an upload, without the headers every answer carries.
    static func uploadState(_ response: TestResponse) -> [String?] {
        [response.status.description, response.headers[.uploadOffset], response.headers[.uploadLength], response.headers[.attachmentComplete]]
    }

    /// Bob, another collector of the project, with a record and an attachment of his own, for the timing.
    static func bystander(_ server: TestServer, _ client: some TestClientProtocol) async throws -> Bystander {
        let bob = Device(clientID: "bob-phone", token: try await server.member("bob", project: "alpha", role: .collector))
        let own = TestBlob(count: 20_000, seed: seed &+ 99)
        _ = try await bob.push(client, [bob.mutation(UUID(), form: "inspection", ["photo": bob.change(AttachmentAccessTests.reference(own))])])
        #expect(try await bob.putAttachment(client, own.sha256, own.bytes).status == .created)
        return Bystander(device: bob, form: "inspection", attachment: own.sha256)
    }

    /// Mallory learns the hash of Ana's photo. Referencing it in her own draft or submitted record gets her
    /// nothing, HEAD answers her as for a hash nobody has, and a reviewer reading her record gets nothing
    /// through it either; only sending the bytes herself would.
    @Test(arguments: Backend.available)
    func aHashProvesNothing(backend: Backend) async throws {
        let photo = TestBlob(count: 50_000, seed: Self.seed)
        let shown = TestBlob(count: 7_000, seed: Self.seed &+ 1)
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let mallory = Device(clientID: "mallory-phone", token: try await server.member("mallory", project: "alpha", role: .collector))
            let rita = Device(clientID: "rita-laptop", token: try await server.member("rita", project: "alpha", role: .reviewer))
            try await server.app.test(.live) { client in
                let port = try #require(client.port)
                let bystander = try await Self.bystander(server, client)
                // Ana's photo is in her draft: nobody else may read that record.
                _ = try await ana.push(client, [ana.mutation(UUID(), state: .draft, form: "inspection", ["photo": ana.change(AttachmentAccessTests.reference(photo))])])
                #expect(try await ana.putAttachment(client, photo.sha256, photo.bytes).status == .created)
                let baseline = try await bystander.baseline(port: port)

                let (_, latencies) = try await bystander.timing(port: port) {
                    let missing = try await mallory.getAttachment(client, Self.nobodys)
                    #expect(missing.status == .notFound)
                    for _ in 0..<25 {
                        #expect(Self.uploadState(try await mallory.headAttachment(client, photo.sha256)) == Self.uploadState(try await mallory.headAttachment(client, Self.nobodys)),
                            "HEAD answers as for a hash nobody has")
                    }
                    #expect(try await mallory.headAttachment(client, photo.sha256).attachmentComplete == "false")
                    let (draft, shared) = (UUID(), UUID())
                    let stolen = AttachmentAccessTests.reference(photo, name: "loot.jpg", type: "image/jpeg")
                    let (pushed, answer) = try await mallory.push(client, [
                        mallory.mutation(draft, state: .draft, form: "inspection", ["photo": mallory.change(stolen)]),
                        mallory.mutation(shared, form: "inspection", ["sketch": mallory.change(stolen)]),
                    ])
                    #expect(pushed.status == .ok)
                    #expect(answer?.outcomes.map(\.status) == [.applied, .applied], "a reference is a value like any other")
                    for _ in 0..<25 {
                        let stolenAnswer = try await mallory.getAttachment(client, photo.sha256)
                        #expect(stolenAnswer.status == .notFound)
                        #expect(stolenAnswer.text == missing.text, "exactly like a missing attachment")
                    }
                    #expect(try await mallory.getAttachment(client, photo.sha256, range: "bytes=0-9").status == .notFound)
                    #expect(try await rita.getAttachment(client, photo.sha256).status == .notFound, "a reviewer reads mallory's record but her reference grants nothing")
                    #expect(try await AttachmentAccessTests.pulledMissing(mallory, client).missing[shared] == [photo.sha256], "her record waits for bytes she never sent")
                    let own = try await ana.getAttachment(client, photo.sha256)
                    #expect(own.status == .ok)
                    #expect(Data(buffer: own.body) == photo.bytes)
                }
                Bystander.check(latencies, baseline: baseline, during: "AttachmentMembersTests.aHashProvesNothing[\(backend)]")

                // Shown: a reviewer who downloads through Ana's submitted record holds the attachment from then on;
                // a collector who references it still gets nothing.
                _ = try await ana.push(client, [ana.mutation(UUID(), form: "inspection", ["photo": ana.change(AttachmentAccessTests.reference(shown))])])
                #expect(try await ana.putAttachment(client, shown.sha256, shown.bytes).status == .created)
                #expect(try await rita.headAttachment(client, shown.sha256).attachmentComplete == "false")
                #expect(try await rita.getAttachment(client, shown.sha256).status == .ok)
                #expect(try await rita.headAttachment(client, shown.sha256).attachmentComplete == "true", "shown, so held")
                _ = try await mallory.push(client, [mallory.mutation(UUID(), form: "inspection", ["photo": mallory.change(AttachmentAccessTests.reference(shown))])])
                #expect(try await mallory.getAttachment(client, shown.sha256).status == .notFound)

                // Sending the bytes is what holding takes: then Mallory's own references grant them, to her and
                // to the reviewer reading her submitted record.
                #expect(try await mallory.putAttachment(client, photo.sha256, photo.bytes).status == .created)
                #expect(try await mallory.headAttachment(client, photo.sha256).attachmentComplete == "true")
                #expect(try await mallory.getAttachment(client, photo.sha256).status == .ok)
                #expect(try await rita.getAttachment(client, photo.sha256).status == .ok)
            }
        }
    }

    /// Ana is halfway through a 3 MB upload when Mallory, who knows its hash, restarts "it" at byte 0 with
    /// another total, sends other bytes and abandons them: Ana's upload keeps its bytes and total and completes.
    @Test(arguments: Backend.available)
    func anotherMembersUploadOfTheSameHashLeavesOneInProgressAlone(backend: Backend) async throws {
        let photo = TestBlob(count: 3 * 1024 * 1024 + 11, seed: Self.seed)
        let junk = TestBlob(count: photo.bytes.count, seed: Self.seed &+ 7)
        let half = 1536 * 1024 + 3
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            let mallory = Device(clientID: "mallory-phone", token: try await server.member("mallory", project: "alpha", role: .collector))
            let projectID = try await server.project("alpha").id
            try await server.app.test(.live) { client in
                let port = try #require(client.port)
                let bystander = try await Self.bystander(server, client)
                let record = UUID()
                _ = try await ana.push(client, [ana.mutation(record, form: "inspection", ["photo": ana.change(AttachmentAccessTests.reference(photo))])])
                #expect(try await ana.putAttachment(client, photo.sha256, photo.bytes, to: half).status == .noContent)
                let baseline = try await bystander.baseline(port: port)

                let (_, latencies) = try await bystander.timing(port: port) {
                    let restart = try await mallory.putAttachment(client, photo.sha256, Data(count: 20), to: 10)
                    #expect(restart.status == .noContent, "her own upload, started at byte 0 of 20")
                    let hers = try await mallory.headAttachment(client, photo.sha256)
                    #expect(hers.uploadOffset == 10)
                    #expect(hers.uploadLength == 20)
                    #expect(try await mallory.putAttachment(client, photo.sha256, Data(count: 20), from: 10).status == .unprocessableContent)
                    #expect(try await mallory.putAttachment(client, photo.sha256, junk.bytes, to: 1024 * 1024 + 5).status == .noContent)
                    let anas = try await ana.headAttachment(client, photo.sha256)
                    #expect(anas.uploadOffset == Int64(half), "Ana's bytes are all there")
                    #expect(anas.uploadLength == Int64(photo.bytes.count))
                    #expect(try await mallory.putAttachment(client, photo.sha256, junk.bytes, from: 1024 * 1024 + 5).status == .unprocessableContent)
                    #expect(try await ana.headAttachment(client, photo.sha256).uploadOffset == Int64(half))
                }
                Bystander.check(latencies, baseline: baseline, during: "AttachmentMembersTests.anotherMembersUpload[\(backend)]")

                #expect(try await ana.putAttachment(client, photo.sha256, photo.bytes, from: half).status == .created)
                let downloaded = try await ana.getAttachment(client, photo.sha256)
                #expect(downloaded.status == .ok)
                #expect(Data(buffer: downloaded.body) == photo.bytes)
                #expect(try await AttachmentAccessTests.pulledMissing(ana, client).missing[record] == [])
                #expect(try await server.storage.attachments.partialBytes(projectID: projectID, uploader: nil) == 0, "Mallory's mismatched uploads were discarded")
                #expect(try await mallory.getAttachment(client, photo.sha256).status == .notFound)
            }
        }
    }

    /// The same bytes are served the same way whatever the references say: the type and disposition from the
    /// bytes, the file name from the first reference the reader comes through.
    @Test(arguments: Backend.available)
    func theMediaTypeAndDispositionComeFromTheBytes(backend: Backend) async throws {
        let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0]) + TestBlob(count: 5_000, seed: Self.seed).bytes
        let svg = Data(#"<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>"#.utf8)
        let pdf = Data("%PDF-1.4\n".utf8) + TestBlob(count: 900, seed: Self.seed &+ 3).bytes
        try await TestServer.with(backend) { server in
            try await server.publish(Self.form, project: "alpha")
            let ana = Device(clientID: "ana-phone", token: try await server.member("ana", project: "alpha", role: .collector))
            try await server.app.test(.live) { client in
                func reference(_ bytes: Data, name: String, type: String) -> AnswerValue {
                    .attachment(AttachmentReference(sha256: TestBlob.digest(bytes), bytes: Int64(bytes.count), type: type, name: name))
                }
                let (first, second) = [UUID(), UUID()].sorted { $0.uuidString.lowercased() < $1.uuidString.lowercased() }.pair
                let (_, pushed) = try await ana.push(client, [
                    ana.mutation(second, form: "inspection", [
                        "photo": ana.change(reference(jpeg, name: "page.png", type: "image/png")),
                        "sketch": ana.change(reference(svg, name: "plan.png", type: "image/png")),
                    ]),
                    ana.mutation(first, form: "inspection", [
                        "photo": ana.change(reference(jpeg, name: "crack.jpg", type: "image/jpeg")),
                        "sketch": ana.change(reference(pdf, name: "plan.bin", type: "application/octet-stream")),
                    ]),
                ])
                #expect(pushed?.outcomes.map(\.status) == [.applied, .applied], "\(String(describing: pushed?.outcomes))")
                for bytes in [jpeg, svg, pdf] {
                    #expect(try await ana.putAttachment(client, TestBlob.digest(bytes), bytes).status == .created)
                }
                for _ in 0..<3 {
                    let photo = try await ana.getAttachment(client, TestBlob.digest(jpeg))
                    #expect(photo.headers[.contentType] == "image/jpeg")
                    #expect(photo.headers[.contentDisposition]?.hasPrefix("inline; filename=\"crack.jpg\"") == true, "the first record's name: \(photo.headers[.contentDisposition] ?? "")")
                }
                let page = try await ana.getAttachment(client, TestBlob.digest(svg))
                #expect(page.headers[.contentType] == "application/octet-stream", "no known format: a download, whatever the reference says")
                #expect(page.headers[.contentDisposition]?.hasPrefix("attachment;") == true)
                #expect(page.headers[.contentSecurityPolicy]?.contains("sandbox") == true)
                #expect(page.headers[.xContentTypeOptions] == "nosniff")
                let document = try await ana.getAttachment(client, TestBlob.digest(pdf))
                #expect(document.headers[.contentType] == "application/pdf")
                #expect(document.headers[.contentDisposition]?.hasPrefix("inline;") == true)
            }
        }
    }
}

extension Array {
    /// The first two elements.
    fileprivate var pair: (Element, Element) { (self[0], self[1]) }
}
