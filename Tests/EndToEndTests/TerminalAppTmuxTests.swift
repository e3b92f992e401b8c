import FieldSheetTesting
import Foundation
import Testing

/// The full-screen app in a real terminal (tmux), driven by keys and read back from the screen.
struct TerminalAppTmuxTests {
    /// A tmux server of its own (its own socket), so tests never touch a person's sessions.
    final class Tmux {
        let socket = "fieldsheet-test-\(UUID().uuidString.prefix(8))"
        let session = "app"

        /// Runs a tmux command through `system(3)`, output to a file: the tmux server that the first call
        /// starts outlives it, and must not hold a pipe this process waits on.
        @discardableResult
        func tmux(_ arguments: [String]) throws -> (status: Int32, output: String) {
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString).out").path
            defer { try? FileManager.default.removeItem(atPath: output) }
            let quoted = (["tmux", "-L", socket, "-f", "/dev/null"] + arguments).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            let status = system(quoted.joined(separator: " ") + " </dev/null >\(output) 2>&1")
            return (status, (try? String(contentsOfFile: output, encoding: .utf8)) ?? "")
        }

        func start(_ command: String, columns: Int, rows: Int) throws {
            let result = try tmux(["new-session", "-d", "-s", session, "-x", "\(columns)", "-y", "\(rows)", command])
            #expect(result.status == 0, "tmux did not start: \(result.output)")
            // A lone Esc must reach the app quickly (tmux holds it back 500 ms by default).
            try tmux(["set-option", "-g", "escape-time", "10"])
        }

        func keys(_ keys: String...) throws {
            _ = try tmux(["send-keys", "-t", session] + keys)
        }

        func type(_ text: String) throws {
            _ = try tmux(["send-keys", "-t", session, "-l", text])
        }

        func screen(escapes: Bool = false) throws -> String {
            try tmux(["capture-pane", "-p", "-t", session] + (escapes ? ["-e"] : [])).output
        }

        /// Polls the screen until `condition` holds, with a deadline; returns the last screen.
        @discardableResult
        func waitFor(_ what: String, timeout: Double = 20, _ condition: (String) -> Bool) throws -> String {
            var last = ""
            let found = try Polling.until(timeout: timeout) {
                last = try screen()
                return condition(last)
            }
            #expect(found, "timed out waiting for \(what); the screen was:\n\(last)")
            return last
        }

        @discardableResult
        func waitFor(_ text: String, timeout: Double = 20) throws -> String {
            try waitFor("\"\(text)\"", timeout: timeout) { $0.contains(text) }
        }

        deinit {
            _ = try? tmux(["kill-server"])
        }
    }

    @Test func fillEscResumeCancelDiscardAndResize() throws {
        let home = TemporaryDirectory()
        let fieldsheet = PackagePaths.debugProduct("fieldsheet")
        let imported = try Subprocess.run(fieldsheet, ["--home", home.path, "forms", "import"] + ["add-note", "filter-jobs", "follow-up-job", "site-inspection"].map { PackagePaths.file("Schema/forms/\($0).json") })
        #expect(imported.status == 0, "\(imported.output)")
        let tmux = Tmux()
        try tmux.start("env FIELDSHEET_HOME=\(home.path) TERM=xterm-256color \(fieldsheet); echo EXIT $?; sleep 60", columns: 120, rows: 40)
        try tmux.waitFor("No records yet. Press n to start one.")

        // New → choose the follow-up job → its form sheet over the dimmed home screen.
        try tmux.keys("n")
        try tmux.waitFor("New Record")
        try tmux.keys("3", "Enter", "Enter")
        var screen = try tmux.waitFor("Create")
        #expect(screen.contains("New Follow-up Job"))
        #expect(screen.contains("Cancel"))
        #expect(try tmux.screen(escapes: true).contains("\u{1B}[2m"), "the home screen behind the form sheet is dimmed")

        // Type, then Esc: a non-cancel dismissal keeps the draft.
        try tmux.type("Depot A")
        try tmux.waitFor("[Depot A")
        try tmux.keys("Escape")
        screen = try tmux.waitFor("Draft saved.")
        #expect(screen.contains("Depot A · Draft"))

        // Resume it, type more, press Cancel: the action sheet; Discard reverts only this presentation.
        try tmux.keys("Enter")
        try tmux.waitFor("[Depot A")
        try tmux.type(" North")
        try tmux.waitFor("[Depot A North")
        try tmux.keys("BTab", "Enter")
        screen = try tmux.waitFor("Discard Changes")
        #expect(screen.contains("Save Draft") && screen.contains("Keep Editing"))
        try tmux.keys("Enter")
        screen = try tmux.waitFor("Changes discarded.")
        #expect(screen.contains("Depot A · Draft"))
        #expect(!screen.contains("North"))

        // Open it again and narrow the terminal: the form sheet becomes full screen, input intact.
        try tmux.keys("Enter")
        try tmux.waitFor("[Depot A")
        try tmux.type(" B")
        try tmux.waitFor("[Depot A B")
        _ = try tmux.tmux(["resize-window", "-t", tmux.session, "-x", "80", "-y", "24"])
        screen = try tmux.waitFor("the sheet full screen at 80×24") { screen in
            let lines = screen.components(separatedBy: "\n")
            return lines.count > 2 && lines[0].hasPrefix("┌") && lines[1].contains("Cancel") && screen.contains("[Depot A B")
        }
        #expect(!screen.contains("Records"), "nothing of the home screen shows behind a full-screen sheet")

        // Ctrl-C saves and exits with status 130.
        try tmux.keys("C-c")
        try tmux.waitFor("EXIT 130")
        let show = try Subprocess.run(fieldsheet, ["--home", home.path, "records"])
        #expect(show.stdout.split(separator: "\n").count == 1)
        let id = String(show.stdout.prefix(36))
        #expect(try Subprocess.run(fieldsheet, ["--home", home.path, "show", id]).stdout.contains("Site: Depot A B"))
    }
}
