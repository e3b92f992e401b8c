import FieldSheetTesting
import Foundation
import Testing

/// `fieldsheet-server audit` as a script reads it: the acts of the server's own commands (a project made, a form
/// published), filtered by project and action, one JSON object a line; a bad day and an unknown project are
/// refused with what is expected.
struct AuditCLITests {
    static let followUpJob = PackagePaths.file("Schema/forms/follow-up-job.json")

    static func lines(_ result: ProcessResult) throws -> [[String: Any]] {
        try result.stdout.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any], "\($0)")
        }
    }

    @Test func theServersOwnActsReadBackAsJSONLinesFilteredByProjectAndAction() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        try await server.createProject("other")
        try await server.admin(["form", "publish", Self.followUpJob, "--project", "demo"])
        try await server.admin(["form", "publish", Self.followUpJob, "--project", "demo"])  // unchanged: no entry

        let all = try Self.lines(try await server.admin(["audit"]))
        #expect(all.compactMap { $0["action"] as? String } == ["form.published", "project.created", "project.created"])
        let published = try #require(all.first)
        #expect(published["actor"] as? String == "command line")
        #expect(published["project"] as? String == "demo")
        #expect(published["subject"] as? String == "follow-up-job@1")
        #expect((published["detail"] as? [String: String])?["file"] == "follow-up-job.json")
        #expect(published["address"] is NSNull)

        let demo = try Self.lines(try await server.admin(["audit", "--project", "demo", "--action", "project.created"]))
        #expect(demo.map { $0["subject"] as? String } == ["demo"])
        #expect(try Self.lines(try await server.admin(["audit", "--from", "2000-01-01", "--to", "2000-01-31"])).isEmpty)

        let badDay = try await Subprocess.run(server.binary, ["audit", "--from", "yesterday"] + server.storageArguments, timeout: 60)
        #expect(badDay.status == 64, "\(badDay.output)")
        #expect(badDay.stderr.contains("give a day as yyyy-MM-dd"), "\(badDay.output)")
        let unknown = try await Subprocess.run(server.binary, ["audit", "--project", "nowhere"] + server.storageArguments, timeout: 60)
        #expect(unknown.status == 1, "\(unknown.output)")
        #expect(unknown.stderr.contains("There is no project \"nowhere\""), "\(unknown.output)")
    }
}
