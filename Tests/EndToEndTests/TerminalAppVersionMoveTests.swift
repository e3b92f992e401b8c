import FieldSheetTesting
import Foundation
import Testing

/// A draft of version 1 opened in the full-screen app on a device that holds version 2: the sheet shows, at its
/// top, the answers version 2 has no field for, and shows them once; the carried answer is in its field.
struct TerminalAppVersionMoveTests {
    static func form(version: Int) -> String {
        let gate = version == 1 ? #"{ "id": "gate_code", "kind": "text", "label": "Gate code" },"# : ""
        return """
            { "id": "inspection", "version": \(version), "title": "Inspection", "completionLabel": "Submit",
              "pages": [ { "id": "p", "fields": [ { "id": "site", "kind": "text", "label": "Site" }, \(gate)
                { "id": "phone", "kind": "text", "label": "Phone" } ] } ] }
            """
    }

    @Test func theSheetShowsTheAnswersTheNewVersionLacksOnce() async throws {
        let home = TemporaryDirectory()
        func cli(_ arguments: [String]) async throws -> ProcessResult {
            try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), ["--home", home.path] + arguments, stdin: "")
        }
        #expect(try await cli(["forms", "import", home.write("v1.json", Self.form(version: 1))]).status == 0)
        let fill = try await cli(["fill", "inspection", "--set", "site=Depot", "--set", "gate_code=4711", "--dismiss"])
        #expect(fill.status == 3, "\(fill.output)")
        #expect(try await cli(["forms", "import", home.write("v2.json", Self.form(version: 2))]).status == 0)

        let tmux = TmuxSession()
        _ = try await tmux.startApp(columns: 120, rows: 30, home: home)
        try await tmux.waitFor("Depot")
        try await tmux.keys("Enter")
        let heading = "Moved to version 2 of the form."
        let screen = try await tmux.waitFor("the moved draft's note") {
            TerminalAppReviewTests.text(of: $0, from: heading).contains("Gate code: 4711")
        }
        #expect(TerminalAppReviewTests.text(of: screen, from: heading).hasPrefix(
            heading + " These answers are not in it (the record's history keeps them): Gate code: 4711"), "\(screen)")
        #expect(screen.contains("[Depot"), "the carried answer in its field:\n\(screen)")
        try await tmux.keys("Escape")
        try await tmux.waitFor("the sheet closed") { !$0.contains(heading) && $0.contains("Depot") }
        try await tmux.keys("Enter")
        let again = try await tmux.waitFor("the sheet again") { $0.contains("[Depot") }
        #expect(!again.contains(heading) && !again.contains("4711"), "shown once:\n\(again)")
        try await tmux.keys("Escape")
    }
}
