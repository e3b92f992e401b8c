import FieldSheetTesting
import Foundation
import Testing

/// Repeat instances in the full-screen app, in tmux, as a person adds and removes them: Add puts a new
/// instance in the sheet with the focus in it; totals follow as you type; Remove of an instance holding
/// answers asks first and keeps it by default; the record on disk holds what the screen showed.
struct TerminalAppRepeatTests {
    /// A home with the defect inspection imported, the app on it, the form open on its Defects step.
    func openDefectsStep(_ tmux: TmuxSession, columns: Int, rows: Int) async throws -> TemporaryDirectory {
        let home = TemporaryDirectory()
        let imported = try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), ["--home", home.path, "forms", "import", PackagePaths.file("Schema/forms/defect-inspection.json")])
        #expect(imported.status == 0, "\(imported.output)")
        try await tmux.startApp(columns: columns, rows: rows, home: home)
        try await tmux.keys("n")
        try await tmux.waitFor("Site Inspection: Defects")
        try await tmux.click(on: "Site Inspection: Defects", offset: 2)
        try await tmux.waitFor("Step 1 of 2")
        try await tmux.type("Depot")
        try await tmux.waitFor("[Depot")
        try await tmux.click(on: "Next ›", offset: 1)
        try await tmux.waitFor("Step 2 of 2")
        try await tmux.waitFor("0 defects")
        return home
    }

    @Test(arguments: [(120, 40), (80, 24)])
    func addFillAndRemoveInstances(columns: Int, rows: Int) async throws {
        let tmux = TmuxSession()
        let home = try await openDefectsStep(tmux, columns: columns, rows: rows)
        // The focus starts on Add (the step's only control before its buttons).
        try await tmux.keys("Enter")
        try await tmux.waitFor("▸ Defect 1")
        try await tmux.type("Roof")
        try await tmux.waitFor("[Roof")
        try await tmux.keys("Tab", "3", "Tab", "Tab")
        try await tmux.waitFor("(•) High")
        try await tmux.type("250")
        try await tmux.waitFor("[250")
        // A high severity shows the urgent note; past it and the photo, Add: a second instance, which takes the focus.
        try await tmux.keys("Tab", "Tab", "Tab", "Enter")
        try await tmux.waitFor("▸ Defect 2")
        try await tmux.type("Gate")
        try await tmux.waitFor("[Gate")
        // Remove on the second (nothing but a location typed): asks, Keep is the default.
        try await tmux.keys("BTab", "Enter")
        try await tmux.waitFor("Remove Defect 2?")
        try await tmux.keys("Enter")
        try await tmux.waitFor("kept: the question gone, the instance still there") { !$0.contains("Remove Defect 2?") && $0.contains("▸ Defect 2") }
        try await tmux.keys("Enter")
        try await tmux.waitFor("Remove Defect 2?")
        try await tmux.keys("Left", "Enter")
        try await tmux.waitFor("removed") { !$0.contains("▸ Defect 2") && !$0.contains("[Gate") && $0.contains("Removed.") }
        try await tmux.keys("Escape")
        try await tmux.waitForDraftKept()
        // On disk: one live defect (Roof, high, 250); the removed one is a tombstone.
        let records = try await TmuxSession.records(in: home)
        let id = try #require(records.compactMap { $0.split(separator: "\t").first.map(String.init) }.first { UUID(uuidString: $0) != nil }, "\(records)")
        let shown = try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), ["--home", home.path, "show", id, "--json"])
        #expect(shown.status == 0, "\(shown.output)")
        #expect(shown.stdout.contains("Roof") && shown.stdout.contains("250"), "\(shown.stdout)")
        #expect(shown.stdout.contains("@removed"), "the removed instance is a tombstone:\n\(shown.stdout)")
    }

    @Test func manyInstancesScrollAndSurviveAResize() async throws {
        let tmux = TmuxSession()
        _ = try await openDefectsStep(tmux, columns: 100, rows: 30)
        for index in 1...4 {
            // From an instance's location, Tab passes severity, action, cost and photo to reach Add.
            try await tmux.tmux(["send-keys", "-t", tmux.session] + (index == 1 ? ["Enter"] : ["Tab", "Tab", "Tab", "Tab", "Tab", "Enter"]))
            try await tmux.waitFor("▸ Defect \(index)")
            try await tmux.type("Spot \(index)")
            try await tmux.waitFor("[Spot \(index)")
        }
        let screen = try await tmux.waitFor("the focused instance scrolled into view") { $0.contains("[Spot 4") && $0.contains("↑ more") }
        #expect(!screen.contains("[Spot 1"), "the first instance scrolled off:\n\(screen)")
        try await tmux.tmux(["resize-window", "-t", tmux.session, "-x", "70", "-y", "24"])
        try await tmux.waitFor("after the resize the focused field is still shown") { $0.contains("[Spot 4") && !$0.contains("[Spot 1") }
    }

    /// A draft with three defects, opened at 120×40, Next to its Defects step: the focus is on the first
    /// answer (Defect 1's location), so typing goes there and Enter removes nothing; no Remove button is
    /// drawn over the key-hint line.
    @Test func enteringTheDefectsStepFocusesTheFirstAnswer() async throws {
        let home = TemporaryDirectory()
        let fieldsheet = PackagePaths.debugProduct("fieldsheet")
        let imported = try await Subprocess.run(fieldsheet, ["--home", home.path, "forms", "import", PackagePaths.file("Schema/forms/defect-inspection.json")])
        #expect(imported.status == 0, "\(imported.output)")
        let filled = try await Subprocess.run(fieldsheet, ["--home", home.path, "fill", "defect-inspection", "--set", "site=Depot",
                                                     "--set", "defects[1].location=Gate", "--set", "defects[2].location=Roof",
                                                     "--set", "defects[3].location=Yard", "--dismiss"])
        #expect(filled.status == 3, "kept as a draft: \(filled.output)")
        let tmux = TmuxSession()
        try await tmux.startApp(columns: 120, rows: 40, home: home)
        try await tmux.waitFor("Depot · Draft")
        try await tmux.keys("Enter")
        try await tmux.waitFor("Step 1 of 2")
        try await tmux.click(on: "Next ›", offset: 1)
        var screen = try await tmux.waitFor("▸ Defect 1")
        let hints = try #require(screen.components(separatedBy: "\n").first { $0.contains("F1 keys") }, "the key-hint line:\n\(screen)")
        #expect(!hints.contains("Remove"), "a Remove button drawn over the key hints:\n\(screen)")
        try await tmux.type("s")
        screen = try await tmux.waitFor("typing goes to Defect 1's location") { $0.contains("[Gates") }
        // Enter on an answer moves on; it never removes the instance.
        try await tmux.keys("Enter")
        try await tmux.waitFor("nothing asked or removed") { !$0.contains("Remove Defect") && !$0.contains("Removed.") && $0.contains("▸ Defect 1") && $0.contains("[Gates") }
        try await tmux.keys("Escape")
        try await tmux.waitForDraftKept()
        let records = try await TmuxSession.records(in: home)
        let id = try #require(records.compactMap { $0.split(separator: "\t").first.map(String.init) }.first { UUID(uuidString: $0) != nil }, "\(records)")
        let shown = try await Subprocess.run(fieldsheet, ["--home", home.path, "show", id])
        #expect(shown.stdout.contains("Gates") && shown.stdout.contains("Roof") && shown.stdout.contains("Yard"), "\(shown.stdout)")
    }
}
