import Foundation
import Testing
@testable import FormModel
@testable import TerminalUI

struct PresentationFrameTests {
    let wide = HomeLayout(size: TerminalSize(columns: 120, rows: 40))
    let narrow = HomeLayout(size: TerminalSize(columns: 80, rows: 24))

    func frame(_ style: PresentationStyle, _ home: HomeLayout, anchor: Rect? = nil) -> PresentationFrame {
        let presentation = ResolvedPresentation(style: style, sizeClass: home.sizeClass)
        return PresentationFrame(presentation, home: home, contentRows: 4, anchor: anchor, pane: home.listPane)
    }

    @Test func aFormSheetIsACentredBoxInProportionTo540By620OverADimmedScreen() {
        let sheet = frame(.formSheet, wide)
        #expect(sheet.rect == Rect(x: 30, y: 3, width: 60, height: 34))
        #expect(sheet.dimmed == [Rect(x: 0, y: 0, width: 120, height: 40)])
    }

    @Test func aPageSheetIsAFixedWidthColumnAtFullHeightWithSidesDimmed() {
        let sheet = frame(.pageSheet, wide)
        #expect(sheet.rect == Rect(x: 17, y: 0, width: 85, height: 40))
        #expect(sheet.dimmed == [Rect(x: 0, y: 0, width: 17, height: 40), Rect(x: 102, y: 0, width: 18, height: 40)])
    }

    @Test func aPopoverPointsAtItsControlWithoutCoveringIt() throws {
        let popover = frame(.popover, wide, anchor: wide.filterControl)
        #expect(!popover.rect.intersects(wide.filterControl))
        let arrow = try #require(popover.arrow)
        #expect(arrow.pointsUp)
        #expect(arrow.column == wide.filterControl.midX)
        #expect(arrow.row == popover.rect.y)
        #expect(popover.rect.width == 40 && popover.rect.height == 8)
        #expect(popover.dimmed.isEmpty)
    }

    @Test func currentContextCoversOnlyItsPane() {
        #expect(frame(.currentContext, wide).rect == wide.listPane)
        #expect(wide.detailPane != nil)
    }

    @Test func inCompactWidthSheetsGoFullScreenAndPopoversBecomeSheets() {
        let full = Rect(x: 0, y: 0, width: 80, height: 24)
        #expect(frame(.formSheet, narrow).rect == full)
        #expect(frame(.pageSheet, narrow).rect == full)
        #expect(frame(.automatic, narrow).rect == full)
        for style in [PresentationStyle.popover, .currentContext] {
            let sheet = frame(style, narrow)
            #expect(sheet.rect == Rect(x: 0, y: 2, width: 80, height: 22))
            #expect(sheet.dimmed == [Rect(x: 0, y: 0, width: 80, height: 2)])
            #expect(sheet.arrow == nil)
        }
        #expect(narrow.detailPane == nil)
    }
}

struct PresentationPreviewTests {
    func form(_ name: String) throws -> FormDefinition {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Schema/forms/\(name).json").path
        return try #require(FormLoader().load(contentsOf: path).loaded?.form)
    }

    func lines(_ screen: Screen) -> [String] { screen.plainText().components(separatedBy: "\n") }

    @Test func theSheetCarriesCancelTheTitleAndTheCompletionButton() throws {
        let screen = PresentationPreview(form: try form("follow-up-job"), size: TerminalSize(columns: 120, rows: 40)).render()
        let titleRow = lines(screen)[4]
        let cancel = try #require(titleRow.range(of: "Cancel"))
        let title = try #require(titleRow.range(of: "New Follow-up Job"))
        let create = try #require(titleRow.range(of: "Create"))
        #expect(cancel.upperBound < title.lowerBound && title.upperBound < create.lowerBound)
        #expect(screen[0, 0].style.contains(.dim), "the home screen behind a form sheet is dimmed")
        #expect(!screen[31, 4].style.contains(.dim), "the sheet itself is not")
    }

    @Test func aMultiStepFormShowsItsStep() throws {
        let text = PresentationPreview(form: try form("site-inspection"), size: TerminalSize(columns: 120, rows: 40)).render().plainText()
        #expect(text.contains("Step 1 of 4 · Site"))
        #expect(text.contains("Next ›"))
    }

    @Test func aPopoverDrawsItsArrowUnderItsControl() throws {
        let preview = PresentationPreview(form: try form("filter-jobs"), size: TerminalSize(columns: 120, rows: 40))
        let screen = preview.render()
        let arrow = try #require(preview.frame.arrow)
        #expect(screen[arrow.column, arrow.row].character == "▲")
        #expect(lines(screen)[1].contains("[Filter]"), "the control stays visible")
        #expect(!screen[0, 0].style.contains(.dim), "a popover does not dim the screen")
    }

    @Test func aNarrowTerminalShowsTheFormSheetFullScreen() throws {
        let preview = PresentationPreview(form: try form("follow-up-job"), size: TerminalSize(columns: 80, rows: 24))
        #expect(preview.presentation.style == .fullScreen)
        #expect(lines(preview.render())[1].contains("Cancel"))
        #expect(!preview.render().plainText().contains("Jobs"), "nothing of the home screen shows")
    }
}

struct TransitionTests {
    static let form = FormDefinition(id: "f", title: "New Job", presentation: .formSheet, completionLabel: "Create",
                                     pages: [FormPage(id: "p", fields: [FieldDefinition(id: "a", kind: .text, label: "A")])])

    @Test func aSheetSlidesUpFromTheBottom() {
        let size = TerminalSize(columns: 120, rows: 40)
        let sheet = SheetState(form: Self.form, answers: [:])
        let start = AppScreen.render(home: HomeState(), sheet: sheet, size: size, appearance: 0.2).sheet!.frame.rect
        let middle = AppScreen.render(home: HomeState(), sheet: sheet, size: size, appearance: 0.6).sheet!.frame.rect
        let end = AppScreen.render(home: HomeState(), sheet: sheet, size: size, appearance: 1).sheet!.frame.rect
        #expect(start.y > middle.y && middle.y > end.y)
        #expect(end == AppScreen.frame(for: Self.form, size: size).rect)
    }

    @Test func aPopoverFadesIn() {
        var form = Self.form
        form.presentation = .popover
        form.anchor = "filter"
        let size = TerminalSize(columns: 120, rows: 40)
        let sheet = SheetState(form: form, answers: [:])
        let fading = AppScreen.render(home: HomeState(), sheet: sheet, size: size, appearance: 0.5)
        let rect = fading.sheet!.frame.rect
        #expect(fading.screen[rect.x + 2, rect.y + 1].style.contains(.dim))
        #expect(rect == AppScreen.frame(for: form, size: size).rect, "a fade does not move the popover")
        let shown = AppScreen.render(home: HomeState(), sheet: sheet, size: size, appearance: 1)
        #expect(!shown.screen[rect.x + 2, rect.y + 1].style.contains(.dim))
    }
}
