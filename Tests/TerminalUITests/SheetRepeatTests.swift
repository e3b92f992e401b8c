import Foundation
import FormModel
import Testing
@testable import TerminalUI

/// The sheet over a form with repeats and computed fields: each instance shown inside the sheet with its
/// fields, Remove and an Add button; computed values read-only and kept current as instance fields change;
/// Remove of an instance that holds answers asks first, with Keep as the default.
struct SheetRepeatTests {
    static func form() throws -> FormDefinition {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try #require(FormLoader().load(contentsOf: root.appendingPathComponent("Schema/forms/defect-inspection.json").path).loaded?.form)
    }

    static let answers: [String: AnswerValue] = [
        "site": .text("Depot"), "defects/a/@position": .integer(1), "defects/a/cost": .decimal(100),
        "defects/b/@position": .integer(2),
    ]

    /// A sheet on the Defects step.
    static func sheet() throws -> SheetState {
        var sheet = SheetState(form: try form(), answers: answers)
        sheet.focus(on: .field("defects/a/location"))
        #expect(sheet.page == 1)
        return sheet
    }

    @Test func instancesAreRowsWithTheirFieldsRemoveAndAdd() throws {
        let sheet = try Self.sheet()
        let rows = sheet.visibleRows
        let instances = rows.compactMap { row -> String? in if case .instance(let prefix, _, _) = row { return prefix } else { return nil } }
        #expect(instances == ["defects/a", "defects/b"])
        #expect(rows.contains(.instance(prefix: "defects/b", title: "Defect 2", depth: 1)))
        #expect(sheet.visibleKeys.filter { $0.hasPrefix("defects/a/") } == ["defects/a/location", "defects/a/severity", "defects/a/action", "defects/a/cost", "defects/a/photo"], "urgent_note shows only for a high severity")
        let order = sheet.focusOrder
        let removeA = try #require(order.firstIndex(of: .removeInstance("defects/a")))
        let locationA = try #require(order.firstIndex(of: .field("defects/a/location")))
        let add = try #require(order.firstIndex(of: .addInstance(group: "defects", parent: "")))
        #expect(removeA < locationA && locationA < add, "Remove, then the instance's fields, then Add (Tab order)")
        #expect(!order.contains(.field("total_cost")) && !order.contains(.field("defects")), "computed values and the repeat itself take no focus")
    }

    @Test func typingInAnInstanceSetsItsKeyAndComputedValuesFollow() throws {
        var sheet = try Self.sheet()
        let form = try Self.form()
        let total = try #require(form.everyField.first { $0.id == "total_cost" })
        #expect(sheet.text(of: total, at: "total_cost") == "100")
        sheet.focus(on: .field("defects/b/cost"))
        #expect(sheet.handle(.character("5")) == [.set(field: "defects/b/cost", value: .decimal(5))])
        #expect(sheet.text(of: total, at: "total_cost") == "105", "the total follows as you type")
    }

    @Test func choicesAreFilteredPerInstance() throws {
        var sheet = try Self.sheet()
        sheet.focus(on: .field("defects/a/severity"))
        _ = sheet.handle(.character("3"))
        #expect(sheet.answers["defects/a/severity"] == .choice("high"))
        let high = sheet.choices(at: "defects/a/action").map(\.value)
        let unset = sheet.choices(at: "defects/b/action").map(\.value)
        #expect(high.contains("close_site") && !unset.contains("close_site"), "each instance's actions follow its own severity (a: \(high), b: \(unset))")
    }

    @Test func addAndRemoveBecomeIntents() throws {
        var sheet = try Self.sheet()
        sheet.focus(on: .addInstance(group: "defects", parent: ""))
        #expect(sheet.handle(.enter) == [.addInstance(group: "defects", parent: "")])
        sheet.focus(on: .removeInstance("defects/b"))
        #expect(sheet.handle(.enter) == [.removeInstance("defects/b")], "an instance with nothing typed goes at once")
        #expect(sheet.removal == nil)
    }

    @Test func removingAnInstanceWithAnswersAsksAndKeepsByDefault() throws {
        var sheet = try Self.sheet()
        sheet.focus(on: .removeInstance("defects/a"))
        #expect(sheet.handle(.enter) == [], "nothing removed before the answer")
        let removal = try #require(sheet.removal)
        #expect(removal.title == "Remove Defect 1?")
        #expect(sheet.dialog?.choices == ["Remove Defect 1", "Keep"])
        #expect(sheet.confirmationSelection == InstanceRemoval.defaultIndex, "Keep is preselected")
        #expect(sheet.handle(.enter) == [], "Enter on the default keeps it")
        #expect(sheet.removal == nil)
        _ = sheet.handle(.enter)
        #expect(sheet.handle(.escape) == [] && sheet.removal == nil, "Esc keeps it too")
        _ = sheet.handle(.enter)
        _ = sheet.handle(.left)
        #expect(sheet.handle(.enter) == [.removeInstance("defects/a")], "choosing Remove removes it")
    }

    @Test func theAddButtonGoesAtTheMaximum() throws {
        var form = try Self.form()
        let page = try #require(form.pages.firstIndex { $0.fields.contains { $0.id == "defects" } })
        let index = try #require(form.pages[page].fields.firstIndex { $0.id == "defects" })
        form.pages[page].fields[index].maxCount = 2
        var sheet = SheetState(form: form, answers: Self.answers)
        sheet.focus(on: .field("defects/a/location"))
        #expect(!sheet.focusOrder.contains(.addInstance(group: "defects", parent: "")), "two of at most two: no Add")
    }
}

/// Scrolling through instances on a small terminal: an instance's Remove brings its fields into view under
/// its title, and moving the focus to a row already on screen leaves the sheet where it is.
struct SheetRepeatScrollTests {
    static let size = TerminalSize(columns: 80, rows: 24)

    /// Six instances, so most of the Defects step is below the fold at 80×24.
    static func sheet() throws -> SheetState {
        var answers: [String: AnswerValue] = ["site": .text("Depot")]
        for (index, id) in ["a", "b", "c", "d", "e", "f"].enumerated() {
            answers["defects/\(id)/@position"] = .integer(index + 1)
            answers["defects/\(id)/location"] = .text("Place \(id)")
        }
        var sheet = SheetState(form: try SheetRepeatTests.form(), answers: answers)
        sheet.focus(on: .field("defects/a/location"))
        return sheet
    }

    /// Draws `sheet` and keeps where it scrolled, as the app does; returns the screen's lines.
    static func draw(_ sheet: inout SheetState) throws -> [String] {
        let rendered = AppScreen.render(home: HomeState(), sheet: sheet, size: size)
        sheet.scroll = try #require(rendered.sheet).scroll
        return rendered.screen.plainText(markDim: false).components(separatedBy: "\n")
    }

    @Test func anInstancesRemoveShowsItsFieldsAndAVisibleFocusDoesNotScroll() throws {
        var sheet = try Self.sheet()
        _ = try Self.draw(&sheet)
        sheet.focus(on: .removeInstance("defects/e"))
        var lines = try Self.draw(&sheet)
        let title = try #require(lines.firstIndex { $0.contains("▸ Defect 5") }, "Defect 5's title is on screen:\n\(lines.joined(separator: "\n"))")
        #expect(lines[(title + 1)...].contains { $0.contains("Place e") }, "its first field shows under its title:\n\(lines.joined(separator: "\n"))")
        #expect(sheet.scroll > SheetScroll())

        // The instance's severity is on screen: focusing it moves nothing.
        let scrolled = sheet.scroll
        sheet.focus(on: .field("defects/e/severity"))
        lines = try Self.draw(&sheet)
        #expect(sheet.scroll == scrolled)
        #expect(lines.firstIndex { $0.contains("▸ Defect 5") } == title)

        // Back at the first instance, the sheet scrolls up only as far as that.
        sheet.focus(on: .field("defects/a/location"))
        lines = try Self.draw(&sheet)
        #expect(sheet.scroll < scrolled)
        #expect(lines.contains { $0.contains("Place a") })
    }

    /// A step of 5,000 instances (30,000 rows) is drawn measuring only about the rows on screen, also when the
    /// focus jumps to the last instance and back to the first.
    @Test func aFrameMeasuresOnlyTheRowsNearWhatItShows() throws {
        var answers: [String: AnswerValue] = ["site": .text("Depot")]
        for index in 1...5_000 {
            answers["defects/i\(index)/@position"] = .integer(index)
            answers["defects/i\(index)/location"] = .text("Place \(index)")
        }
        var sheet = SheetState(form: try SheetRepeatTests.form(), answers: answers)
        sheet.focus(on: .field("defects/i1/location"))
        #expect(sheet.visibleRows.count > 30_000)
        var rendered = AppScreen.render(home: HomeState(), sheet: sheet, size: Self.size)
        var view = try #require(rendered.sheet)
        sheet.scroll = view.scroll
        #expect(view.measuredRows <= Self.size.rows, "the first frame measures the rows it draws, not \(view.measuredRows)")

        sheet.focus(on: .field("defects/i5000/location"))
        rendered = AppScreen.render(home: HomeState(), sheet: sheet, size: Self.size)
        view = try #require(rendered.sheet)
        sheet.scroll = view.scroll
        #expect(view.measuredRows <= 3 * Self.size.rows, "a jump to the end measures a screenful either side, not \(view.measuredRows)")
        var lines = rendered.screen.plainText(markDim: false)
        #expect(lines.contains("Place 5000") && lines.contains("↑ more"), "the last instance is on screen:\n\(lines)")

        sheet.focus(on: .field("defects/i1/location"))
        rendered = AppScreen.render(home: HomeState(), sheet: sheet, size: Self.size)
        view = try #require(rendered.sheet)
        #expect(view.measuredRows <= Self.size.rows, "back at the top: \(view.measuredRows)")
        lines = rendered.screen.plainText(markDim: false)
        #expect(lines.contains("Place 1 ") && !lines.contains("Place 5000"), "the first instance is on screen:\n\(lines)")
    }
}
