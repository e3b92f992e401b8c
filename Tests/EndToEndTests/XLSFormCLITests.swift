import FieldSheetTesting
import FormModel
import Foundation
import Testing
import XLSForm

/// The commands that take form files, given XLSForm workbooks: the real `fieldsheet` and `fieldsheet-server`.
struct XLSFormCLITests {
    static let siteVisit = PackagePaths.file("Schema/forms/site-visit.xlsx")

    /// A workbook whose select_one names a list the choices sheet does not have (survey!A3).
    static func brokenWorkbook(in directory: TemporaryDirectory) throws -> String {
        let rows: [[String?]] = [["type", "name", "label"], ["text", "site", "Site"], ["select_one colours", "colour", "Colour"]]
        let data = try WorkbookWriter().write([
            ("survey", rows.map { $0.map { $0.map(CellValue.text) } }),
            ("settings", [[.text("form_title"), .text("form_id")], [.text("Broken"), .text("broken")]]),
        ])
        let path = directory.file("broken.xlsx")
        try data.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func lintReadsAWorkbookAndNamesCellsInItsFindings() async throws {
        let directory = TemporaryDirectory("xlsform-lint")
        let clean = try await Subprocess.run(CLIHome.binary, ["lint", Self.siteVisit])
        #expect(clean.status == 0, "\(clean.output)")
        #expect(!clean.stdout.contains("Labels in Français (fr) are not imported"), "\(clean.output)")
        let broken = try await Subprocess.run(CLIHome.binary, ["lint", try Self.brokenWorkbook(in: directory)])
        #expect(broken.status == 1)
        #expect(broken.stdout.contains("broken.xlsx: error[xlsform-choices] survey!A3: The list colours is not in the choices sheet"), "\(broken.output)")
        let notAWorkbook = directory.write("notes.xlsx", "type,name\ntext,a\n")
        let refused = try await Subprocess.run(CLIHome.binary, ["lint", notAWorkbook])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("notes.xlsx: error[xlsform-workbook] workbook: The file is not an .xlsx workbook"))
    }

    @Test func convertPrintsTheDefinitionOrWritesItAndRefusesWithoutWriting() async throws {
        let directory = TemporaryDirectory("xlsform-convert")
        let printed = try await Subprocess.run(CLIHome.binary, ["form", "convert", Self.siteVisit])
        #expect(printed.status == 0, "\(printed.output)")
        let loaded = try #require(FormLoader().load(Data(printed.stdout.utf8), file: "site-visit.json").loaded)
        #expect(loaded.form.id == "site-visit" && loaded.form.pages.map(\.id) == ["site", "checks", "defects_page"])
        let output = directory.file("site-visit.json")
        let written = try await Subprocess.run(CLIHome.binary, ["form", "convert", Self.siteVisit, "--output", output, "--quiet"])
        #expect(written.status == 0 && written.stdout.isEmpty)
        #expect(FileManager.default.contents(atPath: output) == Data(printed.stdout.utf8))
        let brokenOutput = directory.file("broken.json")
        let refused = try await Subprocess.run(CLIHome.binary, ["form", "convert", try Self.brokenWorkbook(in: directory), "--output", brokenOutput])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("error[xlsform-choices] survey!A3"))
        #expect(!FileManager.default.fileExists(atPath: brokenOutput))
        let help = try await Subprocess.run(CLIHome.binary, ["form", "convert", "--help"])
        #expect(help.stdout.contains("XLSForm workbook") && help.stdout.contains("--output"))
    }

    @Test func importedWorkbookIsFilledAndABrokenOneImportsNothing() async throws {
        let cli = CLIHome()
        let broken = try await cli.run("forms", "import", Self.siteVisit, try Self.brokenWorkbook(in: cli.directory))
        #expect(broken.status == 1)
        #expect(broken.stderr.contains("error[xlsform-choices] survey!A3") && broken.stderr.contains("Nothing was imported"))
        #expect(try await cli.run("forms", "list").stdout.isEmpty)
        let imported = try await cli.run("forms", "import", Self.siteVisit)
        #expect(imported.status == 0, "\(imported.output)")
        #expect(imported.stdout.contains("imported\tsite-visit\tv2026112301"))
        let fill = try await cli.run([
            "fill", "site-visit", "--set", "site_name=Depot 4", "--set", "site_type=yard", "--set", "rating=good",
            "--set", "ppe_checked=yes", "--set", "defect[1].where=Gate", "--set", "defect[1].severity=low",
            "--set", "defect[1].action=note", "--set", "defect[1].cost=20", "--complete",
        ])
        #expect(fill.status == 0, "\(fill.output)")
        let id = try #require(CLIHome.recordID(fill))
        let shown = try await cli.run("show", id)
        #expect(shown.stdout.contains("State:   submitted"))
        #expect(shown.stdout.contains("Summary (computed): 1 defects, total 20"))
        // The action list is filtered by the severity chosen: a high-severity action is refused for a low defect.
        let filtered = try await cli.run([
            "fill", "site-visit", "--set", "site_name=Depot 5", "--set", "site_type=yard", "--set", "rating=good",
            "--set", "ppe_checked=yes", "--set", "defect[1].where=Gate", "--set", "defect[1].severity=low",
            "--set", "defect[1].action=close_site", "--complete",
        ])
        #expect(filtered.status == 2, "\(filtered.output)")
    }

    @Test func theServerPublishesAWorkbookAndRefusesABrokenOneNamingTheCell() async throws {
        let directory = TemporaryDirectory("xlsform-publish")
        let server = PackagePaths.debugProduct("fieldsheet-server")
        let data = directory.file("data")
        #expect(try await Subprocess.run(server, ["project", "create", "demo", "--data", data]).status == 0)
        let published = try await Subprocess.run(server, ["form", "publish", Self.siteVisit, "--project", "demo", "--data", data])
        #expect(published.status == 0, "\(published.output)")
        #expect(published.stdout.contains("published site-visit version 1 to demo"))
        #expect(published.stderr.contains("warning[xlsform-metadata] survey!A2"))
        let refused = try await Subprocess.run(server, ["form", "publish", try Self.brokenWorkbook(in: directory), "--project", "demo", "--data", data])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("error[xlsform-choices] survey!A3"), "\(refused.output)")
    }
}
