import Foundation
import FormModel
import Testing
@testable import XLSForm

/// FieldSheet's own `sensitive` column of the survey sheet (docs/sensitive-fields.md).
struct XLSFormSensitiveTests {
    typealias F = WorkbookFixtures

    static func load(_ survey: [[String?]]) throws -> XLSFormImporter.Result {
        let sheets: [(name: String, rows: [[CellValue?]])] = [("survey", F.text(survey)), ("settings", F.text([["form_title"], ["Intake"]]))]
        return XLSFormImporter().load(try WorkbookReader().read(try WorkbookWriter().write(sheets)), file: "form.xlsx")
    }

    @Test func yesMarksAFieldSensitiveAndAnythingElseIsRefusedNamingTheCell() throws {
        let result = try Self.load([
            ["type", "name", "label", "sensitive"],
            ["text", "name", "Name", nil],
            ["text", "diagnosis", "Diagnosis", "yes"],
            ["integer", "income", "Income", "no"],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("diagnosis", in: form)?.sensitive == true)
        #expect(F.field("income", in: form)?.sensitive == false)
        #expect(F.field("name", in: form)?.sensitive == false)
        #expect(result.findings.isEmpty, "\(result.findings)")
        let bad = try Self.load([["type", "name", "label", "sensitive"], ["text", "diagnosis", "Diagnosis", "secret"]])
        #expect(bad.loaded == nil)
        #expect(bad.findings.contains { $0.severity == .error && $0.cell == "survey!D2" && $0.rule == "xlsform-sensitive" }, "\(bad.findings)")
        // The loader's rules hold for the converted form: a note may not show a sensitive answer.
        let read = try Self.load([["type", "name", "label", "sensitive"], ["text", "diagnosis", "Diagnosis", "yes"], ["note", "shown", "You said ${diagnosis}", nil]])
        #expect(read.findings.contains { $0.rule == "sensitive-read" }, "\(read.findings)")
    }
}
