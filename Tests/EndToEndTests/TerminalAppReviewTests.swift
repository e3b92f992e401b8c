import FieldSheetTesting
import Foundation
import Testing

/// The office sends a record back; the collector's app, syncing at start against the real server on
/// loopback, marks it in the list as needing changes and shows the reviewer's comment in the details.
struct TerminalAppReviewTests {
    @Test func aRecordSentBackIsMarkedInTheListWithTheComment() throws {
        let server = ServerProcess()
        try server.createProject("demo")
        let ana = try server.addUser("ana", project: "demo")
        let rita = try server.addUser("rita", project: "demo", role: "reviewer")
        try server.admin(["form", "publish", PackagePaths.file("Schema/forms/follow-up-job.json"), "--project", "demo"])
        try server.start(port: 0)
        defer { server.stop() }
        let device = CLIHome()
        func cli(_ arguments: [String]) throws -> ProcessResult {
            let result = try Subprocess.run(CLIHome.binary, ["--home", device.home] + arguments, stdin: "")
            #expect(result.status == 0, "fieldsheet \(arguments.joined(separator: " ")): \(result.output)")
            return result
        }
        _ = try cli(["login", server.url, "--project", "demo", "--token", ana])
        _ = try cli(["sync"])
        let filled = try cli(["fill", "follow-up-job", "--set", "site=Pump station", "--complete"])
        let record = try #require(CLIHome.recordID(filled), "the record id in: \(filled.output)")
        _ = try cli(["sync"])

        let review = try Subprocess.run("/usr/bin/curl", [
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Authorization: Bearer \(rita)",
            "-H", "Content-Type: application/json", "--data-binary", #"{"state": "rejected", "comment": "Add the pump's serial number."}"#,
            server.url + "/v1/projects/demo/records/\(record.lowercased())/review",
        ], timeout: 30)
        #expect(review.stdout == "200", "\(review.output)")

        let tmux = TmuxSession()
        try tmux.start("env FIELDSHEET_HOME=\(device.home) FIELDSHEET_REDUCE_MOTION=1 TERM=xterm-256color \(CLIHome.binary); echo EXIT $?; sleep 60", columns: 120, rows: 30)
        // The app syncs at start; the pulled review marks the record and the details give the comment.
        try tmux.waitFor("the record marked as needing changes") {
            $0.contains("⚑") && $0.contains("Needs changes") && $0.contains("Review: needs changes (rejected): Add the pump's serial number.")
        }
        // The filter offers the mark, so a collector can list only what was sent back.
        try tmux.keys("f")
        try tmux.waitFor("Needs changes") { $0.contains("Drafts") && $0.contains("Needs changes") }
        try tmux.keys("Escape")
        try tmux.keys("q")
        try tmux.waitFor("EXIT 0")
    }
}
