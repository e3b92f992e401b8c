import Foundation
import FormModel
@testable import XLSForm

/// Workbooks for the tests, written with WorkbookWriter: rows of text cells (nil or "" for an empty cell).
enum WorkbookFixtures {
    static func text(_ rows: [[String?]]) -> [[CellValue?]] {
        rows.map { row in row.map { cell in cell.flatMap { $0.isEmpty ? nil : CellValue.text($0) } } }
    }

    static func data(survey: [[String?]], choices: [[String?]]? = nil, settings: [[String?]]? = [["form_title", "form_id"], ["Test Form", "test-form"]],
                     sharedStrings: Bool = true) throws -> Data {
        var sheets: [(name: String, rows: [[CellValue?]])] = [("survey", text(survey))]
        if let choices { sheets.append(("choices", text(choices))) }
        if let settings { sheets.append(("settings", text(settings))) }
        return try WorkbookWriter(sharedStrings: sharedStrings).write(sheets)
    }

    /// Converts and loads a workbook as the commands do, naming it `form.xlsx`.
    static func load(survey: [[String?]], choices: [[String?]]? = nil, settings: [[String?]]? = [["form_title", "form_id"], ["Test Form", "test-form"]]) throws -> XLSFormImporter.Result {
        let workbook = try WorkbookReader().read(try data(survey: survey, choices: choices, settings: settings))
        return XLSFormImporter().load(workbook, file: "form.xlsx")
    }

    static let header: [String?] = ["type", "name", "label", "relevant", "constraint", "calculation", "required", "choice_filter", "repeat_count", "default", "appearance"]

    /// A survey row over `header`.
    static func row(_ type: String, _ name: String?, _ label: String? = nil, relevant: String? = nil, constraint: String? = nil,
                    calculation: String? = nil, required: String? = nil, choiceFilter: String? = nil, repeatCount: String? = nil,
                    default value: String? = nil, appearance: String? = nil) -> [String?] {
        [type, name, label, relevant, constraint, calculation, required, choiceFilter, repeatCount, value, appearance]
    }

    /// The field with `id` anywhere in the form.
    static func field(_ id: String, in form: FormDefinition) -> FieldDefinition? {
        func find(_ fields: [FieldDefinition]) -> FieldDefinition? {
            for field in fields {
                if field.id == id { return field }
                if let found = find(field.fields ?? []) { return found }
            }
            return nil
        }
        return find(form.pages.flatMap(\.fields))
    }
}
