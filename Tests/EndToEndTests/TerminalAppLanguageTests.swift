import FieldSheetTesting
import Foundation
import Testing

/// A form written in English and French (the demo's XLSForm, published to the real server on loopback) is filled
/// on a device switching language halfway: in the full-screen app (F2, driven through tmux), then in line mode
/// (`--language fr`, then `:language en`). Nothing typed is lost by a switch, the device keeps the language it
/// was switched to, the record syncs, and the server's export holds the answers as stored values, the same
/// whichever language they were typed in.
struct TerminalAppLanguageTests {
    @Test func aBilingualFormIsFilledSwitchingLanguageHalfwayAndExportedWithItsValues() async throws {
        let server = ServerProcess()
        try await server.createProject("demo")
        let ana = try await server.addUser("ana", project: "demo")
        let published = try await server.admin(["form", "publish", PackagePaths.file("Schema/forms/site-visit.xlsx"), "--project", "demo"])
        #expect(published.status == 0, "\(published.output)")
        try await server.start(port: 0)
        defer { server.kill() }
        let device = CLIHome()
        func cli(_ arguments: [String], stdin: String = "") async throws -> ProcessResult {
            try await Subprocess.run(CLIHome.binary, ["--home", device.home] + arguments, stdin: stdin)
        }
        #expect(try await cli(["login", server.url, "--project", "demo", "--token", ana]).status == 0)
        #expect(try await cli(["sync"]).status == 0)

        // The app, on the form's first step, in its default language (English).
        let tmux = TmuxSession()
        try await tmux.start("env FIELDSHEET_HOME=\(device.home) FIELDSHEET_REDUCE_MOTION=1 TERM=xterm-256color \(CLIHome.binary) fill site-visit; echo EXIT $?; sleep 60",
                       columns: 100, rows: 30)
        try await tmux.waitFor("Site name")
        try await tmux.type("Depot A")
        try await tmux.waitFor("Depot A")
        try await tmux.keys("Tab", "Tab")  // past the visit date (today by default) to the type of site
        try await tmux.keys("1")           // the first type: Office
        try await tmux.waitFor("the first choice taken") { $0.contains("(•) Office") }
        // F2: the same step in French; what was typed and chosen is still there.
        try await tmux.keys("F2")
        var screen = try await tmux.waitFor("the step in French") { $0.contains("Nom du site") && $0.contains("Type de site") }
        #expect(screen.contains("Depot A") && screen.contains("(•) Bureau"), "the answers after switching:\n\(screen)")
        #expect(!screen.contains("Site name") && !screen.contains("Office"), "English left on the French step:\n\(screen)")
        #expect(screen.contains("In Français (fr)"), "the notice naming the language:\n\(screen)")
        // Answering goes on in French: storeys.
        try await tmux.keys("Tab")
        try await tmux.type("3")
        screen = try await tmux.waitFor("the storeys typed") { $0.contains("Étages") && $0.contains("3") }
        // F2 again comes back to English, everything kept.
        try await tmux.keys("F2")
        screen = try await tmux.waitFor("the step in English again") { $0.contains("Site name") && $0.contains("Storeys") }
        #expect(screen.contains("Depot A") && screen.contains("(•) Office"), "\(screen)")
        try await tmux.keys("F2")
        try await tmux.waitFor("Nom du site")
        // Esc keeps the draft; the app ends with the sheet.
        try await tmux.keys("Escape")
        try await tmux.waitFor("EXIT")

        let records = try await cli(["records"])
        let id = try #require(records.stdout.split(separator: "\n").compactMap { line in
            line.split(separator: "\t").first.flatMap { UUID(uuidString: String($0)) }
        }.first, "a record in: \(records.output)").uuidString.lowercased()
        // The device kept the language it was switched to: `show` reads the record in French.
        let shown = try await cli(["show", id])
        #expect(shown.stdout.contains("Nom du site: Depot A") && shown.stdout.contains("Type de site: Bureau") && shown.stdout.contains("Étages: 3"), "\(shown.output)")
        #expect(try await cli(["show", id, "--language", "en"]).stdout.contains("Type of site: Office"))
        let wrong = try await cli(["show", id, "--language", "de"])
        #expect(wrong.status != 0 && wrong.output.contains("its languages are English (en), Français (fr)"), "\(wrong.output)")

        // Line mode finishes it: in French (the device's language, and --language fr), then English from :language en.
        let answers = ["", "", "", "", "none", ":language en", "yes", "21.5", "good", "n"].joined(separator: "\n") + "\n"
        let filled = try await cli(["resume", id, "--language", "fr"], stdin: answers)
        #expect(filled.status == 0, "\(filled.output)")
        let output = filled.stderr
        let switched = try #require(output.range(of: "Now in English (en); every answer is kept."), "\(output)")
        let before = String(output[..<switched.lowerBound]), after = String(output[switched.upperBound...])
        #expect(before.contains("Nom du site (required)") && before.contains("[Depot A]") && before.contains("Étages") && before.contains("[3]"), "\(before)")
        #expect(before.contains("Dangers") && before.contains("4) Aucun"), "\(before)")
        #expect(after.contains("Protective equipment checked") && after.contains("Overall condition") && after.contains("1) Good"), "\(after)")
        #expect(!after.contains("EPI vérifié"), "\(after)")
        #expect(output.contains("is submitted"), "\(output)")
        let bad = try await cli(["fill", "site-visit", "--language", "de", "--dismiss"])
        #expect(bad.status != 0 && bad.output.contains("--language de: the form site-visit is not written in it; its languages are English (en), Français (fr)"), "\(bad.output)")

        // Synced and exported: the values stored, whichever language they were chosen in.
        #expect(try await cli(["sync"]).status == 0)
        let export = try await server.admin(["export", "--project", "demo", "--form", "site-visit", "--format", "jsonl"])
        let line = try #require(export.stdout.split(separator: "\n").first { $0.contains(id) }, "\(export.output)")
        for expected in [#""site_name":{"text":"Depot A"}"#, #""site_type":{"choice":"office"}"#, #""storeys":{"integer":3}"#,
                         #""rating":{"choice":"good"}"#, #""hazards":{"choices":["none"]}"#, #""ppe_checked":{"boolean":true}"#] {
            #expect(line.contains(expected), "\(expected) in \(line)")
        }
        #expect(!line.contains("Bureau") && !line.contains("Office"), "labels in the export: \(line)")
    }
}
