import FieldSheetTesting
import Foundation
import Testing

/// Attachments in the full-screen app, in tmux: a person types a file's path into a photo field and presses
/// Enter; the sheet shows its name, type and size, the status line counts it as waiting to upload, and the
/// record on disk refers to it.
struct TerminalAppAttachTests {
    @Test(arguments: [(120, 40), (80, 24)])
    func aPhotoIsAttachedByTypingItsPath(columns: Int, rows: Int) async throws {
        let tmux = TmuxSession()
        let home = TemporaryDirectory()
        let form = home.write("damage-report.json", SampleForms.damageReportJSON())
        let imported = try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), ["--home", home.path, "forms", "import", form])
        #expect(imported.status == 0, "\(imported.output)")
        let photo = home.file("IMG_0042.jpg")
        SampleForms.writeRandomFile(photo, size: 48_213, seed: 42)
        try await tmux.startApp(columns: columns, rows: rows, home: home)
        try await tmux.keys("n")
        try await tmux.waitFor("Damage Report")
        try await tmux.click(on: "Damage Report", offset: 2)
        try await tmux.waitFor("Site")
        try await tmux.type("Depot")
        try await tmux.waitFor("[Depot")
        try await tmux.keys("Tab")
        try await tmux.type(photo)
        try await tmux.waitFor("attach: ")
        try await tmux.keys("Enter")
        try await tmux.waitFor("IMG_0042.jpg (image/jpeg, 47 KB)")
        // A path that is not there: the sheet says so and keeps what it had.
        try await tmux.keys("Tab")
        try await tmux.type("/nonexistent/memo.m4a")
        try await tmux.keys("Enter")
        try await tmux.waitFor("There is no file /nonexistent/memo.m4a")
        try await tmux.keys("Escape")
        try await tmux.waitForDraftKept()
        try await tmux.waitFor("1 attachment to upload (47 KB)")
        let records = try await TmuxSession.records(in: home)
        let id = try #require(records.compactMap { $0.split(separator: "\t").first.map(String.init) }.first { UUID(uuidString: $0) != nil }, "\(records)")
        let shown = try await Subprocess.run(PackagePaths.debugProduct("fieldsheet"), ["--home", home.path, "show", id])
        #expect(shown.stdout.contains("Photo: IMG_0042.jpg (image/jpeg, 47 KB)"), "\(shown.output)")
        let files = try FileManager.default.contentsOfDirectory(atPath: home.file("attachments"))
        #expect(files.count == 1 && files[0].count == 64, "\(files)")
    }
}
