import Foundation
import FormModel
import Testing
@testable import TerminalUI

/// The sheet over a form with repeats and computed fields: computed values shown read-only and kept current,
/// a repeat shown as its instance count (instances are edited by script and line mode for now).
struct SheetRepeatTests {
    static func form() throws -> FormDefinition {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        return try #require(FormLoader().load(contentsOf: root.appendingPathComponent("Schema/forms/defect-inspection.json").path).loaded?.form)
    }

    @Test func computedValuesAndInstanceCountsAreShownAndNeverFocused() throws {
        let form = try Self.form()
        let answers: [String: AnswerValue] = [
            "site": .text("Depot"), "defects/a/@position": .integer(1), "defects/a/cost": .decimal(100),
            "defects/b/@position": .integer(2), "defects/b/cost": .decimal(200),
        ]
        var sheet = SheetState(form: form, answers: answers)
        sheet.reload(answers)
        let fields = Dictionary(form.everyField.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let defects = try #require(fields["defects"])
        let total = try #require(fields["total_cost"])
        #expect(sheet.text(of: total) == "300")
        #expect(sheet.text(of: defects).hasPrefix("2 defects"))
        #expect(sheet.text(of: try #require(fields["summary"])) == "2 defects, 0 urgent")
        #expect(!sheet.focusOrder.contains(.field("total_cost")))
        #expect(!sheet.focusOrder.contains(.field("defects")))
    }
}
