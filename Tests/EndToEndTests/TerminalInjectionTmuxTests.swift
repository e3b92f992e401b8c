import FieldSheetTesting
import Foundation
import Testing

/// The full-screen app in a real terminal (tmux) showing values that hold escape sequences: the window
/// title, the clipboard and the screen stay the app's, and the sequences show as visible symbols.
struct TerminalInjectionTmuxTests {
    @Test func escapeSequencesInValuesNeitherRetitleNorWriteTheClipboardNorClear() async throws {
        let home = TemporaryDirectory()
        let fieldsheet = PackagePaths.debugProduct("fieldsheet")
        let form = home.write("follow-up-job.json", SampleForms.followUpJobJSON())
        #expect(try await Subprocess.run(fieldsheet, ["--home", home.path, "forms", "import", form]).status == 0)
        let hostile = "B2\u{1B}]0;pwned\u{07}\u{1B}]52;c;cHduZWQ=\u{07}\u{1B}[2J"
        let fill = try await Subprocess.run(fieldsheet, ["--home", home.path, "fill", "follow-up-job", "--set", "site=\(hostile)", "--dismiss"])
        #expect(fill.status == 3, "\(fill.output)")

        let tmux = TmuxSession()
        try await tmux.start("env FIELDSHEET_HOME=\(home.path) TERM=xterm-256color \(fieldsheet); echo EXIT $?; sleep 60", columns: 120, rows: 40)
        try await tmux.tmux(["set-option", "-g", "set-clipboard", "on"])  // let OSC 52 through, were any written
        let title = try await tmux.tmux(["display-message", "-p", "-t", tmux.session, "#{pane_title}"]).output
        // The home screen lists the draft with its site as the headline; the detail pane shows the value.
        let screen = try await tmux.waitFor("B2␛]0;pwned␇")
        #expect(screen.contains("New Follow-up Job"))
        try await tmux.keys("Enter")
        try await tmux.waitFor("Site")
        let after = try await tmux.tmux(["display-message", "-p", "-t", tmux.session, "#{pane_title}"]).output
        #expect(!after.contains("pwned"), "the window title became \(after)")
        #expect(after == title)
        let buffers = try await tmux.tmux(["list-buffers"]).output
        #expect(!buffers.contains("pwned"), "the clipboard was written: \(buffers)")
        #expect(try await tmux.screen().contains("␛]0;pwned␇"))
        try await tmux.keys("Escape")
    }
}
