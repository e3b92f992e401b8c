import DraftStore
import FieldSheetTesting
import Foundation
import FormModel
import SyncCore
import Testing

/// The office's loop through the real server on loopback and the device's real libcurl sync: a record is
/// submitted, the reviewer rejects it with a comment, the collector's device shows the comment after a sync,
/// the fix goes back as an edit of the same record, and the server shows it `edited`.
struct ReviewLoopTests {
    /// A call to the server's API as `token`, through the curl command line (a reviewer's script).
    static func call(_ fixture: SyncFixture, _ token: String, _ method: String, _ path: String, body: String? = nil) async throws -> (status: Int, body: String) {
        var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method, "-H", "Authorization: Bearer \(token)"]
        if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
        let result = try await Subprocess.run("/usr/bin/curl", arguments + [fixture.server.url + "/v1/projects/\(fixture.project)" + path], timeout: 30)
        let lines = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
        guard let status = lines.last.flatMap({ Int($0) }) else { throw FixtureError("curl failed: \(result.output)") }
        return (status, lines.dropLast().joined(separator: "\n"))
    }

    @Test(arguments: ServerBackend.available)
    func aRejectedRecordIsFixedOnTheDeviceAndComesBackEdited(backend: ServerBackend) async throws {
        try await backend.withDatabase { database in
            let fixture = try await SyncFixture(forms: [SyncForms.job()], database: database)
            let ana = try await fixture.device(token: try fixture.user("ana"))
            let rita = try await fixture.user("rita", role: "reviewer")
            try await ana.sync()  // the project's forms
            let record = try await ana.fill("job", ["title": .text("Pump station"), "count": .integer(3)], submit: true)
            try await ana.sync()

            let comment = "Count the spare pumps too.\nAnd add a photo note."
            let body = String(decoding: try JSONEncoder().encode(["state": "rejected", "comment": comment]), as: UTF8.self)
            let rejected = try await Self.call(fixture, rita, "POST", "/records/\(record.lowercased)/review", body: body)
            #expect(rejected.status == 200, "\(rejected.body)")

            try await ana.sync()
            let pulled = try #require(try await ana.store.record(record))
            #expect(pulled.review == RecordReview(state: .rejected, comment: comment))
            func cli(_ arguments: String...) async throws -> ProcessResult {
                try await Subprocess.run(CLIHome.binary, ["--home", ana.home.path] + arguments, stdin: "")
            }
            let shownComment = TerminalText.visible(comment)
            #expect(!shownComment.contains("\n"), "the comment stays on its line")
            let listing = try await cli("records")
            #expect(listing.status == 0)
            let line = try #require(listing.stdout.split(separator: "\n").first { $0.hasPrefix(record.lowercased) })
            #expect(line.hasSuffix("\tsent back (rejected): \(shownComment)"), "\(line)")
            #expect(try await cli("show", record.lowercased).stdout.contains("Review:  sent back (rejected): \(shownComment)"))

            // The fix: the same record edited and completed on the device, pushed as an edit.
            try await ana.edit(record, ["count": .integer(5)], complete: true)
            try await ana.sync()
            let fetched = try await Self.call(fixture, rita, "GET", "/records/\(record.lowercased)")
            let snapshot = try RecordEnvelope(jsonBytes: Array(fetched.body.utf8))
            #expect(snapshot.review?.state == .edited)
            #expect(try snapshot.fields["count"]?.value == .integer(5))
            #expect(snapshot.recordID == record, "an edit of the same record, not a second submission")
            let changes = try await PullPage(jsonBytes: Array(try Self.call(fixture, rita, "GET", "/changes").body.utf8))
            #expect(changes.changes.count == 1)
            let history = try await Self.call(fixture, rita, "GET", "/records/\(record.lowercased)/history")
            #expect(history.status == 200)
            #expect(history.body.contains(#""kind":"review""#) && history.body.contains(#""user":"ana""#))

            // After the next pull the device shows the record as edited, the comment kept.
            try await ana.sync()
            #expect(try await ana.store.record(record)?.review?.state == .edited)
            let after = try await cli("records").stdout.split(separator: "\n").first { $0.hasPrefix(record.lowercased) }
            #expect(after?.hasSuffix("\tedited: \(shownComment)") == true, "\(after ?? "")")
        }
    }
}
