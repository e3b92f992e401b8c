import FieldSheetTesting
import Foundation
import Testing

/// The office sends a record back; the collector's app, syncing at start against the real server on
/// loopback, marks it in the list as needing changes and shows the reviewer's whole comment, wrapped, in the
/// details (where the terminal has a details pane) and at the top of the sheet when the record is opened to
/// fix it, titled and labelled for that; no review state is shown by its code.
struct TerminalAppReviewTests {
    /// Longer than a line of the details pane at 120 columns and of the sheet at 80.
    static let comment = "Add the pump's serial number from the plate on its side, photograph the pressure gauge before and after the repair, and add the name of the site contact who let you in."

    @Test(arguments: [(120, 40, "hasIssues", "has issues"), (80, 24, "rejected", "rejected")])
    func aRecordSentBackShowsTheWholeCommentAndOpensToBeFixed(columns: Int, rows: Int, state: String, words: String) async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let ana = try await server.addUser("ana", project: "demo")
        let rita = try await server.addUser("rita", project: "demo", role: "reviewer")
        try await server.admin(["form", "publish", PackagePaths.file("Schema/forms/follow-up-job.json"), "--project", "demo"])
        try await server.start(port: 0)
        defer { server.kill() }
        let device = CLIHome()
        func cli(_ arguments: [String]) async throws -> ProcessResult {
            let result = try await Subprocess.run(CLIHome.binary, ["--home", device.home] + arguments, stdin: "")
            #expect(result.status == 0, "fieldsheet \(arguments.joined(separator: " ")): \(result.output)")
            return result
        }
        _ = try await cli(["login", server.url, "--project", "demo", "--token", ana])
        _ = try await cli(["sync"])
        let filled = try await cli(["fill", "follow-up-job", "--set", "site=Pump station", "--complete"])
        let record = try #require(CLIHome.recordID(filled), "the record id in: \(filled.output)")
        _ = try await cli(["sync"])

        let body = try String(decoding: JSONSerialization.data(withJSONObject: ["state": state, "comment": Self.comment]), as: UTF8.self)
        let review = try await Subprocess.run("/usr/bin/curl", [
            "-s", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", "-H", "Authorization: Bearer \(rita)",
            "-H", "Content-Type: application/json", "--data-binary", body,
            server.url + "/v1/projects/demo/records/\(record.lowercased())/review",
        ], timeout: 30)
        #expect(review.stdout == "200", "\(review.output)")

        let tmux = TmuxSession()
        try await tmux.start("env FIELDSHEET_HOME=\(device.home) FIELDSHEET_REDUCE_MOTION=1 TERM=xterm-256color \(CLIHome.binary); echo EXIT $?; sleep 60", columns: columns, rows: rows)
        // The app syncs at start; the pulled review marks the record.
        var screen = try await tmux.waitFor("the record marked as needing changes") { $0.contains("⚑") && $0.contains("Needs changes") }
        if columns >= 100 {
            // The details pane gives the review in words and the comment whole, over as many lines as it takes.
            let expected = "Review: sent back (\(words)): \(Self.comment)"
            screen = try await tmux.waitFor("the whole comment in the details") { Self.text(of: $0, from: " Details ").contains(expected) }
            #expect(Self.text(of: screen, from: " Details ").contains(expected), "the details pane:\n\(screen)")
        }
        #expect(!screen.contains("hasIssues") && !screen.contains("needs changes ("), "an internal code on screen:\n\(screen)")
        // The filter offers the mark, so a collector can list only what was sent back.
        try await tmux.keys("f")
        try await tmux.waitFor("Needs changes") { $0.contains("Drafts") && $0.contains("Needs changes") }
        try await tmux.keys("Escape")
        try await tmux.waitFor("the filter closed") { !$0.contains("Filter Records") }

        // Opened, the record is to be fixed and resubmitted, with the reviewer's word at the top of the sheet.
        try await tmux.keys("Enter")
        let heading = "The office sent this back (\(words)):"
        // Waited for until the note is drawn whole (a screen read while the sheet is still being drawn holds part of it).
        screen = try await tmux.waitFor("Fix and Resubmit with the office's whole note") {
            $0.contains("Fix and Resubmit") && Self.text(of: $0, from: heading).hasPrefix(heading + " " + Self.comment)
        }
        // The sheet's title line (the home screen's details behind it still name the form).
        let titleLine = screen.components(separatedBy: "\n").first { $0.contains("Fix and Resubmit") } ?? ""
        #expect(titleLine.contains(" Resubmit ") && titleLine.contains(" Cancel "), "the completion button names what the person does:\n\(screen)")
        #expect(!titleLine.contains("New Follow-up Job") && !titleLine.contains("Create"), "the sheet presents the record as new:\n\(screen)")
        #expect(!screen.contains("hasIssues"), "an internal code on screen:\n\(screen)")
        #expect(Self.text(of: screen, from: heading).hasPrefix(heading + " " + Self.comment), "the note at the top of the sheet:\n\(screen)")
        #expect(screen.contains("[Pump station"), "the record's answers below the note:\n\(screen)")
        try await tmux.keys("Escape")
        try await tmux.waitFor("the sheet closed") { !$0.contains("Fix and Resubmit") }
        try await tmux.keys("q")
        try await tmux.waitFor("EXIT 0")
    }

    /// The text of the block that starts where `marker` first appears: from that column, on that line and
    /// the lines below it, each up to the next box edge, until a blank line or a rule; joined by spaces.
    static func text(of screen: String, from marker: String) -> String {
        let lines = screen.components(separatedBy: "\n").map(Array.init)
        guard let top = lines.firstIndex(where: { String($0).contains(marker) }),
              let range = String(lines[top]).range(of: marker) else { return "" }
        let column = String(lines[top]).distance(from: String(lines[top]).startIndex, to: range.lowerBound)
        var parts: [String] = []
        for line in lines[top...] {
            guard line.count > column else { break }
            let cells = line[column...].prefix { $0 != "│" }
            let text = String(cells).trimmingCharacters(in: .whitespaces)
            if text.hasPrefix("─") { break }
            if !text.isEmpty { parts.append(text) }
        }
        return parts.joined(separator: " ")
    }
}
