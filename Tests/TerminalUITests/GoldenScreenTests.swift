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

    static let home: HomeState = {
        var home = HomeState(records: [
            RecordListItem(id: "1", formTitle: "New Follow-up Job", headline: "Boiler room, Depot A", state: .draft),
            RecordListItem(id: "2", formTitle: "Site Inspection", headline: "North Yard", state: .queued),
            RecordListItem(id: "3", formTitle: "New Follow-up Job", headline: "Pump 4", state: .conflict),
        ], status: "Offline · 3 changes queued")
        home.selectedDetails = [("Site", "Boiler room, Depot A"), ("Priority", "High")]
        return home
    }()

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

    @Test func theKeysOnTheHomeScreenAndInASheet() throws {
        var screen = AppScreen.render(home: Self.home, sheet: nil, size: Self.narrow).screen
        HelpView.draw(.home, on: &screen)
        try check("help-home-80x24", screen)
        var small = AppScreen.render(home: Self.home, sheet: nil, size: TerminalSize(columns: 60, rows: 20)).screen
        HelpView.draw(.home, on: &small)
        try check("help-home-60x20", small)
        var sheet = render(try Self.form("follow-up-job"), Self.wide)
        HelpView.draw(.sheet, on: &sheet)
        try check("help-sheet-120x40", sheet)
    }

    @Test func theKeyHintsAtEveryWidth() throws {
        for size in [Self.wide, TerminalSize(columns: 100, rows: 30), Self.narrow, TerminalSize(columns: 60, rows: 20)] {
            let text = AppScreen.render(home: Self.home, sheet: nil, size: size).screen.plainText()
            let hints = try #require(text.split(separator: "\n").last)
            #expect(hints.hasSuffix("? Keys  q Quit"), "at \(size): \(hints)")
        }
    }

    @Test func aSearchNarrowsTheList() throws {
        var home = Self.home
        home.search = "pump"
        home.isEditingSearch = true
        home.searchMatches = ["3"]
        try check("search-120x40", AppScreen.render(home: home, sheet: nil, size: Self.wide).screen)
        home.shownStates = [.conflict, .draft]
        home.isEditingSearch = false
        try check("search-filtered-80x24", AppScreen.render(home: home, sheet: nil, size: Self.narrow).screen)
    }

    @Test func nextShowsTheStepsErrorsWithACount() throws {
        let form = try Self.form("site-inspection")
        var sheet = SheetState(form: form, answers: ["site": .text("North Yard")])
        sheet.focus(on: .next)
        _ = sheet.handle(.enter)
        #expect(sheet.page == 0, "the first Next stays to show the problems")
        #expect(sheet.stepErrorCount == 2)
        let screen = AppScreen.render(home: Self.home, sheet: sheet, size: Self.wide).screen
        try check("step-errors-120x40", screen)
        #expect(screen.plainText().contains("⚠ 2 to fix"))
        sheet.focus(on: .next)
        _ = sheet.handle(.enter)
        #expect(sheet.page == 1, "Next again moves on: a draft may hold anything")
    }

    @Test func closingTransitionsSlideDownAndFadeOut() throws {
        let sheet = SheetState(form: try Self.form("follow-up-job"), answers: ["site": .text("Depot A")])
        // Closing runs the opening backwards: at 0.4 of the way out the sheet has slid 40% down.
        try check("closing-sheet-120x40", AppScreen.render(home: Self.home, sheet: sheet, size: Self.wide, appearance: 0.6).screen)
        let popover = SheetState(form: try Self.form("filter-jobs"), answers: [:])
        let fading = AppScreen.render(home: Self.home, sheet: popover, size: Self.wide, appearance: 0.4).screen
        try check("closing-popover-120x40", fading)
        let frame = AppScreen.frame(for: popover.form, size: Self.wide).rect
        #expect(fading[frame.x + 1, frame.y + 1].style.contains(.dim), "a fading popover is drawn dim")
    }
}
