import Foundation
import Testing
@testable import FormModel
@testable import TerminalUI

/// Golden screens, checked in as text under Tests/TerminalUITests/Golden (dimmed blank cells show as ·).
/// After an intended change of the drawing, regenerate them with FIELDSHEET_UPDATE_GOLDEN=1 and review the diff.
struct GoldenScreenTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    static let wide = TerminalSize(columns: 120, rows: 40)
    static let narrow = TerminalSize(columns: 80, rows: 24)

    static func form(_ name: String, presentation: PresentationStyle? = nil, pane: String? = nil) throws -> FormDefinition {
        let path = root.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Schema/forms/\(name).json").path
        var form = try #require(FormLoader().load(contentsOf: path).loaded?.form)
        if let presentation { form.presentation = presentation }
        if let pane { form.pane = pane }
        return form
    }

    static let home = HomeState(records: [
        RecordListItem(id: "1", formTitle: "New Follow-up Job", headline: "Boiler room, Depot A", state: .draft,
                      details: [("Site", "Boiler room, Depot A"), ("Priority", "High")]),
        RecordListItem(id: "2", formTitle: "Site Inspection", headline: "North Yard", state: .queued),
        RecordListItem(id: "3", formTitle: "New Follow-up Job", headline: "Pump 4", state: .conflict),
    ], status: "Offline · 3 changes queued")

    func check(_ name: String, _ screen: Screen) throws {
        let file = Self.root.appendingPathComponent("Golden/\(name).txt")
        let text = screen.plainText() + "\n"
        if ProcessInfo.processInfo.environment["FIELDSHEET_UPDATE_GOLDEN"] == "1" {
            try text.write(to: file, atomically: true, encoding: .utf8)
            return
        }
        let expected = try #require(try? String(contentsOf: file, encoding: .utf8), "missing golden \(file.lastPathComponent); run with FIELDSHEET_UPDATE_GOLDEN=1")
        #expect(text == expected, "screen \(name) differs from its golden file")
    }

    func render(_ form: FormDefinition, _ size: TerminalSize, answers: [String: AnswerValue]? = nil, prepare: (inout SheetState) -> Void = { _ in }) -> Screen {
        var sheet = SheetState(form: form, answers: answers ?? FormValidator(form: form).defaults)
        prepare(&sheet)
        return AppScreen.render(home: Self.home, sheet: sheet, size: size).screen
    }

    @Test(arguments: [
        ("formSheet", "follow-up-job", PresentationStyle.formSheet, nil as String?),
        ("pageSheet", "follow-up-job", .pageSheet, nil),
        ("fullScreen", "site-inspection", .fullScreen, nil),
        ("popover", "filter-jobs", .popover, nil),
        ("currentContext", "filter-jobs", .currentContext, "list"),
        ("automatic", "add-note", .automatic, nil),
    ])
    func everyPresentationStyleAtBothSizes(name: String, form: String, style: PresentationStyle, pane: String?) throws {
        let definition = try Self.form(form, presentation: style, pane: pane)
        try check("\(name)-120x40", render(definition, Self.wide))
        try check("\(name)-80x24", render(definition, Self.narrow))
    }

    @Test func theHomeScreenAlone() throws {
        try check("home-120x40", AppScreen.render(home: Self.home, sheet: nil, size: Self.wide).screen)
        try check("home-80x24", AppScreen.render(home: Self.home, sheet: nil, size: Self.narrow).screen)
    }

    @Test func theDiscardActionSheet() throws {
        let form = try Self.form("follow-up-job")
        let screen = render(form, Self.wide, answers: ["site": .text("Depot A"), "priority": .choice("normal")]) { sheet in
            sheet.ask(DiscardConfirmation(formTitle: form.title, changedFields: 1))
        }
        try check("action-sheet-120x40", screen)
    }

    @Test func aConfirmationOverAPopoverIsAnAlert() throws {
        let form = try Self.form("add-note")
        let screen = render(form, Self.wide, answers: ["text": .text("Gate code changed")]) { sheet in
            sheet.ask(DiscardConfirmation(formTitle: form.title, changedFields: 1))
        }
        try check("alert-over-popover-120x40", screen)
    }

    @Test func inlineErrorsAfterAFailedCompletion() throws {
        let form = try Self.form("follow-up-job")
        let answers: [String: AnswerValue] = ["priority": .choice("high"), "technicians": .raw("seven")]
        let screen = render(form, Self.wide, answers: answers) { sheet in
            sheet.show(FormValidator(form: form).validate(answers))
        }
        try check("inline-errors-120x40", screen)
        let text = screen.plainText()
        #expect(text.contains("⚠ Required: enter a value."))
        #expect(text.contains("⚠ Enter a whole number between 1 and 5."))
    }
}
