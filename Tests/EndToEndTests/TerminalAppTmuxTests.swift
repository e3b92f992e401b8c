import FieldSheetTesting
import Foundation
import Testing

/// The full-screen app in a real terminal (tmux), driven by keys and read back from the screen.
struct TerminalAppTmuxTests {
    @Test func fillEscResumeCancelDiscardAndResize() async throws {
        let home = TemporaryDirectory()
        let fieldsheet = PackagePaths.debugProduct("fieldsheet")
        let imported = try await Subprocess.run(fieldsheet, ["--home", home.path, "forms", "import"] + ["add-note", "filter-jobs", "follow-up-job", "site-inspection"].map { PackagePaths.file("Schema/forms/\($0).json") })
        #expect(imported.status == 0, "\(imported.output)")
        let tmux = TmuxSession()
        try await tmux.start("env FIELDSHEET_HOME=\(home.path) TERM=xterm-256color \(fieldsheet); echo EXIT $?; sleep 60", columns: 120, rows: 40)
        try await tmux.waitFor("No records yet. Press n to start one.")

        // New → choose the follow-up job → its form sheet over the dimmed home screen.
        try await tmux.keys("n")
        try await tmux.waitFor("New Record")
        try await tmux.keys("3")
        var screen = try await tmux.waitFor("Create")
        #expect(screen.contains("New Follow-up Job"))
        #expect(screen.contains("Cancel"))
        #expect(try await tmux.screen(escapes: true).contains("\u{1B}[2m"), "the home screen behind the form sheet is dimmed")

        // Type, then Esc: a non-cancel dismissal keeps the draft.
        try await tmux.type("Depot A")
        try await tmux.waitFor("[Depot A")
        try await tmux.keys("Escape")
        try await tmux.waitForDraftKept("Depot A · Draft")

        // Resume it, type more, press Cancel: the action sheet; Discard reverts only this presentation.
        try await tmux.keys("Enter")
        try await tmux.waitFor("[Depot A")
        try await tmux.type(" North")
        try await tmux.waitFor("[Depot A North")
        try await tmux.keys("BTab", "Enter")
        screen = try await tmux.waitFor("Discard Changes")
        #expect(screen.contains("Save Draft") && screen.contains("Keep Editing"))
        try await tmux.keys("Up", "Up", "Enter")  // Keep Editing is preselected; Discard Changes is two up
        // (The "Changes discarded." notice lasts six seconds; AppModelTests asserts it.)
        try await tmux.waitFor("the changes discarded") { $0.contains("Depot A · Draft") && !$0.contains("North") && !$0.contains("Cancel") }

        // Open it again and narrow the terminal: the form sheet becomes full screen, input intact.
        try await tmux.keys("Enter")
        try await tmux.waitFor("[Depot A")
        try await tmux.type(" B")
        try await tmux.waitFor("[Depot A B")
        _ = try await tmux.tmux(["resize-window", "-t", tmux.session, "-x", "80", "-y", "24"])
        screen = try await tmux.waitFor("the sheet full screen at 80×24") { screen in
            let lines = screen.components(separatedBy: "\n")
            return lines.count > 2 && lines[0].hasPrefix("┌") && lines[1].contains("Cancel") && screen.contains("[Depot A B")
        }
        #expect(!screen.contains("Records"), "nothing of the home screen shows behind a full-screen sheet")

        // Ctrl-C saves and exits with status 130.
        try await tmux.keys("C-c")
        try await tmux.waitFor("EXIT 130")
        let show = try await Subprocess.run(fieldsheet, ["--home", home.path, "records"])
        #expect(show.stdout.split(separator: "\n").count == 1)
        let id = String(show.stdout.prefix(36))
        #expect(try await Subprocess.run(fieldsheet, ["--home", home.path, "show", id]).stdout.contains("Site: Depot A B"))
    }
}
