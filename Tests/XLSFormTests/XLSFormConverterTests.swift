import FormModel
import Foundation
import Testing
@testable import XLSForm

@Suite struct XLSFormConverterTests {
    typealias F = WorkbookFixtures

    @Test func topLevelGroupsArePagesAndUngroupedRowsGetAPageOfTheirOwn() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("text", "first", "First"),
            F.row("begin_group", "site", "Site", relevant: "${first} != 'skip'"),
            F.row("text", "site_name", "Site name", required: "yes"),
            F.row("begin group", "inner", "Inner", relevant: "${site_name} != ''"),
            F.row("integer", "storeys", "Storeys"),
            F.row("end group", nil),
            F.row("end_group", nil),
            F.row("note", "bye", "Thanks"),
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.pages.map(\.id) == ["page_1", "site", "page_3"])
        #expect(form.pages[1].title == "Site")
        #expect(form.pages.map { $0.fields.map(\.id) } == [["first"], ["site_name", "storeys"], ["bye"]])
        // The groups' relevance is carried by each field they hold.
        #expect(F.field("site_name", in: form)?.relevant == "first != 'skip'")
        #expect(F.field("storeys", in: form)?.relevant == "(first != 'skip') and (site_name != '')")
        #expect(F.field("site_name", in: form)?.required == true)
        #expect(result.findings.contains { $0.rule == "xlsform-group-flattened" && $0.cell == "survey!C5" })
    }

    @Test func repeatsHoldTheirFieldsAndAreReadFromOutsideByPath() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("integer", "how_many", "How many"),
            F.row("begin_repeat", "defects", "Defect", repeatCount: "${how_many}"),
            F.row("select_one severity", "severity", "Severity"),
            F.row("select_one action", "action", "Action", choiceFilter: "severity = ${severity}"),
            F.row("decimal", "cost", "Cost", constraint: ". >= 0"),
            F.row("end_repeat", nil),
            F.row("begin_repeat", "visits", "Visit", repeatCount: "2"),
            F.row("date", "day", "Day"),
            F.row("end_repeat", nil),
            F.row("calculate", "total", calculation: "sum(${cost})"),
        ], choices: [
            ["list_name", "name", "label", "severity"],
            ["severity", "low", "Low", nil], ["severity", "high", "High", nil],
            ["action", "note", "Note", "low"], ["action", "repair", "Repair", "high"],
        ])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        let defects = try #require(F.field("defects", in: form))
        #expect(defects.kind == .repeat)
        #expect(defects.fields?.map(\.id) == ["severity", "action", "cost"])
        #expect(defects.countFrom == "how_many")
        #expect(F.field("visits", in: form)?.minCount == 2 && F.field("visits", in: form)?.maxCount == 2)
        #expect(F.field("action", in: form)?.choiceFilter == "choice.severity == severity")
        #expect(F.field("action", in: form)?.choices?.map(\.properties) == [["severity": "low"], ["severity": "high"]])
        #expect(F.field("total", in: form)?.calculation == "sum(defects.cost)")
        #expect(F.field("total", in: form)?.label == "total")
    }

    @Test func defaultsAreTypedOrExpressions() throws {
        let result = try F.load(survey: [
            F.header,
            F.row("integer", "n", "N", default: "3"),
            F.row("select_multiple colours", "c", "C", default: "red blue"),
            F.row("date", "d", "D", default: "today()"),
            F.row("acknowledge", "ok", "OK", default: "OK"),
        ], choices: [["list_name", "name", "label"], ["colours", "red", "Red"], ["colours", "blue", "Blue"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(F.field("n", in: form)?.defaultValue == .integer(3))
        #expect(F.field("c", in: form)?.defaultValue == .choices(["red", "blue"]))
        #expect(F.field("d", in: form)?.defaultExpression == "today()")
        #expect(F.field("ok", in: form)?.defaultValue == .boolean(true))
    }

    @Test func settingsNameTheFormAndTheDefaultLanguageIsImported() throws {
        let result = try F.load(survey: [
            ["type", "name", "label::English (en)", "label::Français (fr)", "hint::English (en)"],
            ["text", "site", "Site", "Site", "As on the board"],
        ], settings: [["form_title", "form_id", "version", "default_language", "public_key"], ["Site Visit", "Site_Visit", "2026112301", "English (en)", "abc"]])
        let form = try #require(result.loaded?.form, "\(result.findings)")
        #expect(form.id == "site-visit" && form.version == 2_026_112_301 && form.title == "Site Visit")
        #expect(F.field("site", in: form)?.hint == "As on the board")
        let warnings = result.findings.filter { $0.severity == .warning }.map { "\($0.cell ?? "") \($0.rule)" }
        #expect(warnings.contains("survey!D1 xlsform-not-imported"))  // Français
        #expect(warnings.contains("settings!B2 xlsform-form-id"))
        #expect(warnings.contains("settings!E2 xlsform-not-imported"))  // public_key
    }

    /// Each malformed workbook is refused with a finding naming the cell, in the linter's format.
    static let refusals: [(String, [[String?]], [[String?]]?, String, String)] = [
        ("group without end", [F.header, F.row("begin_group", "g", "G"), F.row("text", "a", "A")], nil, "survey!A2", "never closed"),
        ("end without begin", [F.header, F.row("text", "a", "A"), F.row("end_repeat", nil)], nil, "survey!A3", "closes nothing"),
        ("crossed ends", [F.header, F.row("begin_repeat", "r", "R"), F.row("text", "a", "A"), F.row("end_group", nil)], nil, "survey!A4", "closes the repeat r"),
        ("missing list", [F.header, F.row("select_one colours", "c", "C")], [["list_name", "name", "label"], ["yes_no", "yes", "Yes"]], "survey!A2", "The list colours is not in the choices sheet"),
        ("duplicate name", [F.header, F.row("text", "a", "A"), F.row("integer", "a", "B")], nil, "survey!B3", "already used at survey!B2"),
        ("unknown type", [F.header, F.row("colour", "a", "A")], nil, "survey!A2", "not a question type"),
        ("background recording", [F.header, F.row("background-audio", "p", "Sound")], nil, "survey!A2", "no FieldSheet equivalent"),
        ("untranslatable", [F.header, F.row("integer", "a", "A", relevant: "int(${a}) > 1")], nil, "survey!D2", "no FieldSheet equivalent"),
        ("unknown reference", [F.header, F.row("integer", "a", "A", constraint: ". > ${b}")], nil, "survey!E2", "${b} names no question"),
        ("group reference", [F.header, F.row("begin_group", "g", "G"), F.row("text", "a", "A", relevant: "${g} = 1"), F.row("end_group", nil)], nil, "survey!D3", "is a group"),
        ("required expression", [F.header, F.row("integer", "a", "A", required: "${a} > 1")], nil, "survey!G2", "not a condition"),
        ("bad name", [F.header, F.row("text", "site-name", "Site")], nil, "survey!B2", "cannot be a FieldSheet field id"),
        ("missing label", [F.header, F.row("text", "a", nil)], nil, "survey!C2", "has no label"),
        ("bad default", [F.header, F.row("integer", "a", "A", default: "many")], nil, "survey!J2", "not a whole number"),
        ("or_other", [F.header, F.row("select_one yn or_other", "a", "A")], [["list_name", "name", "label"], ["yn", "y", "Y"]], "survey!A2", "or_other"),
        ("repeat count expression", [F.header, F.row("integer", "n", "N"), F.row("begin_repeat", "r", "R", repeatCount: "${n} + 1"), F.row("text", "a", "A"), F.row("end_repeat", nil)],
         nil, "survey!I3", "neither a whole number"),
    ]

    @Test(arguments: refusals)
    func malformedWorkbooksAreRefusedNamingTheCell(name: String, survey: [[String?]], choices: [[String?]]?, cell: String, message: String) throws {
        let result = try F.load(survey: survey, choices: choices)
        #expect(result.loaded == nil, "\(name) loaded")
        let errors = result.findings.filter { $0.severity == .error }
        #expect(errors.contains { $0.cell == cell && $0.message.contains(message) }, "\(name): \(errors.map(\.description))")
        let printed = try #require(errors.first?.description)
        #expect(printed.hasPrefix("form.xlsx: error[xlsform-") && printed.contains("\n    fix: "), "\(printed)")
    }

    @Test func aLoneSheetIsReadAsTheSurvey() throws {
        let data = try WorkbookWriter().write([("Sheet1", F.text([["type", "name", "label"], ["text", "a", "A"]]))])
        let result = XLSFormImporter().load(try WorkbookReader().read(data), file: "form.xlsx")
        #expect(result.findings.filter { $0.severity == .warning }.map(\.cell) == ["Sheet1"])
        #expect(result.definition?.contains("\"id\": \"a\"") == true)
    }

    @Test func aWorkbookWithoutASurveySheetIsRefused() throws {
        let data = try WorkbookWriter().write([("questions", F.text([["type", "name"], ["text", "a"]])), ("settings", [])])
        let result = XLSFormImporter().load(try WorkbookReader().read(data), file: "form.xlsx")
        #expect(result.findings.map(\.description).first?.hasPrefix("form.xlsx: error[xlsform-sheet] survey: The workbook has no survey sheet") == true)
    }

    @Test func findingsAboutTheConvertedFormNameTheirCells() throws {
        // A form without a title: the same schema finding as a JSON form, naming the settings sheet.
        let untitled = try F.load(survey: [F.header, F.row("text", "a", "A")], settings: [["form_id"], ["x"]])
        #expect(untitled.findings.contains { $0.rule == "schema" && $0.cell == "settings" && $0.message.contains("title") && $0.fix.contains("form_title") })
        // A popover of several steps: the linter's finding, naming the presentation setting's cell.
        let popover = [["form_title", "presentation", "anchor"], ["Quick", "popover", "more"]] as [[String?]]
        let data = try F.data(survey: [F.header, F.row("begin_group", "a", "A"), F.row("text", "x", "X"), F.row("end_group", nil),
                                       F.row("begin_group", "b", "B"), F.row("text", "y", "Y"), F.row("end_group", nil)], settings: popover)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("popover-\(UUID().uuidString).xlsx")
        try data.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let findings = FormFiles().lint(files: [file.path])
        let finding = try #require(findings.first { $0.rule == "popover-multi-step" })
        #expect(finding.cell == "settings!B2" && finding.location == nil)
        #expect(finding.description.contains("error[popover-multi-step] settings!B2: A popover holds a quick task"))
        // A relevance cycle found by the form checker names the relevant cell.
        let cycle = try F.load(survey: [F.header, F.row("text", "a", "A", relevant: "${b} = 'x'"), F.row("text", "b", "B", relevant: "${a} = 'y'")])
        #expect(cycle.loaded == nil)
        #expect(cycle.findings.contains { $0.severity == .error && ($0.cell == "survey!D2" || $0.cell == "survey!D3") }, "\(cycle.findings)")
    }

    @Test func theConvertedDefinitionIsTheJSONAFormLoads() throws {
        let result = try F.load(survey: [F.header, F.row("text", "a", "A \"quoted\"\nline", relevant: ". != 'x'")])
        let definition = try #require(result.definition)
        let reloaded = FormLoader().load(Data(definition.utf8), file: "form.json")
        #expect(reloaded.loaded?.form == result.loaded?.form)
    }
}
