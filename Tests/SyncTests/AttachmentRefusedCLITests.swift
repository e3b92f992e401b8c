import FieldSheetTesting
import Foundation
import Testing

/// A photo larger than the server accepts (`--max-attachment-bytes`), through the real CLI and server: the
/// push of its record is refused for that field, the device says why, keeps the server's value, and stops
/// trying to upload the photo; the photo stays on the device while the conflict log refers to it.
struct AttachmentRefusedCLITests {
    @Test func aPhotoOverTheServersLimitIsRefusedWithTheReasonAndNotRetried() async throws {
        let server = ServerProcess()
        defer { server.kill() }
        try await server.createProject("demo")
        let collector = try await server.addUser("alice", project: "demo")
        try await server.publish(json: SampleForms.damageReportJSON(), project: "demo")
        try await server.start(port: 0, options: ["--max-attachment-bytes", "100000"])
        let phone = CLIHome()
        try await AttachmentDownloadCLITests.login(phone, server, token: collector)
        let photo = phone.directory.file("IMG_0099.jpg")
        print("seed 99")
        SampleForms.writeRandomFile(photo, size: 300_000, seed: 99)
        let fill = try await phone.run(["fill", "damage-report", "--set", "site=Depot", "--attach", "photo=\(photo)", "--complete"])
        #expect(fill.status == 0, "\(fill.output)")
        let record = try #require(CLIHome.recordID(fill))
        #expect(try await phone.run("status").stdout.contains("attachments to upload: 1"))

        let sync = try await phone.run("sync")
        #expect(sync.status == 0, "\(sync.output)")
        #expect(sync.stderr.contains("the server refused a change to record \(record) ("), "\(sync.output)")
        #expect(sync.stderr.components(separatedBy: "the server refused").count == 2, "said once for the change, not once per field: \(sync.output)")
        #expect(sync.stderr.contains("photo"), "\(sync.output)")
        #expect(sync.stderr.contains("100"), "the reason names the limit: \(sync.output)")
        #expect(try await phone.run("status").stdout.contains("attachments to upload: 0"), "the refused photo is not retried")
        let conflicts = try await phone.run(["conflicts", "--all"])
        #expect(conflicts.stdout.contains("refused by the server"), "\(conflicts.output)")
        #expect(conflicts.stdout.contains("why:"), "\(conflicts.output)")
        #expect(AttachmentDownloadCLITests.blobs(phone).count == 1, "the photo stays while the conflict log refers to it")

        // A second sync sends nothing more and says nothing more.
        let again = try await phone.run("sync")
        #expect(again.status == 0, "\(again.output)")
        #expect(!again.stderr.contains("refused"), "\(again.output)")
    }
}
