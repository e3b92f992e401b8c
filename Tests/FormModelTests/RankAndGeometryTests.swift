import Foundation
import Testing
@testable import FormModel

/// `rank` (every choice put in order) and `trace`/`shape` (lines and areas of points as ODK writes them).
struct RankAndGeometryTests {
    static let colours = [Choice(value: "red", label: "Red"), Choice(value: "blue", label: "Blue"), Choice(value: "green", label: "Green")]
    static let form = FormDefinition(
        id: "survey", title: "Rank and geometry", presentation: .formSheet, completionLabel: "Save",
        pages: [
            FormPage(id: "main", fields: [
                FieldDefinition(id: "order", kind: .rank, label: "Colours in order", required: true, choices: colours),
                FieldDefinition(id: "path", kind: .trace, label: "Path"),
                FieldDefinition(id: "plot", kind: .shape, label: "Plot"),
                FieldDefinition(id: "plot_area", kind: .calculate, label: "Area", calculation: "area(plot)"),
                FieldDefinition(id: "walked", kind: .calculate, label: "Walked", calculation: "distance(path)"),
            ])
        ])
    let validator = FormValidator(form: form)

    func field(_ id: String) throws -> FieldDefinition { try #require(Self.form.field(id)) }

    @Test func aRankIsTypedInOrderByNumberValueOrLabelAndKeepsThatOrder() throws {
        let order = try field("order")
        #expect(AnswerValue.parse("2, red, Green", for: order) == .choices(["blue", "red", "green"]))
        // A choice placed twice is not an order: kept as typed and reported.
        #expect(AnswerValue.parse("2, 2, 1", for: order) == .raw("2, 2, 1"))
        #expect(validator.validate(field: "order", in: ["order": .raw("2, 2, 1")]).map(\.code) == [.notAChoice])
        #expect(AnswerValue.choices(["blue", "red", "green"]).display(for: order) == "Blue, Red, Green")
    }

    @Test func completionNeedsEveryChoiceOnceInARank() {
        #expect(validator.validate(field: "order", in: ["order": .choices(["green", "red", "blue"])]).isEmpty)
        let missing = validator.validate(field: "order", in: ["order": .choices(["green", "red"])])
        #expect(missing.map(\.code) == [.notAChoice])
        #expect(missing.first?.message == "Put every choice in order; still to place: Blue.")
        #expect(validator.validate(field: "order", in: ["order": .choices(["red", "red", "blue"])]).map(\.code) == [.notAChoice])
        #expect(validator.validate(field: "order", in: ["order": .choices(["red", "purple", "blue"])]).map(\.code) == [.notAChoice])
    }

    @Test func aRankLoadsFromJSONWithItsChoicesAndNeedsThem() throws {
        let loaded = Fixtures.load(Fixtures.formJSON(fields: """
            [{ "id": "order", "kind": "rank", "label": "Order", "choices": [{ "value": "a", "label": "A" }, { "value": "b", "label": "B" }],
               "default": ["b", "a"] }]
            """))
        let form = try #require(loaded.loaded, "\(loaded.findings)")
        #expect(form.form.field("order")?.defaultValue == .choices(["b", "a"]))
        let noChoices = Fixtures.load(Fixtures.formJSON(fields: #"[{ "id": "order", "kind": "rank", "label": "Order" }]"#))
        #expect(noChoices.loaded == nil)
    }

    @Test func aTraceIsReadAsODKWritesItAndWrittenBackTheSameWay() throws {
        let path = try field("path")
        #expect(AnswerValue.parse("52.5 13.4 34 5;52.51 13.41 35 4;", for: path) == .text("52.5 13.4 34 5;52.51 13.41 35 4"))
        #expect(AnswerValue.parse("52.5 13.4; 52.51 13.41", for: path) == .text("52.5 13.4 0 0;52.51 13.41 0 0"))
        #expect(validator.validate(field: "path", in: ["path": .text("52.5 13.4 0 0;52.51 13.41 0 0")]).isEmpty)
    }

    @Test func aPointThatDoesNotReadIsNamedInTheMessage() throws {
        let path = try field("path")
        let typed = try #require(AnswerValue.parse("52.5 13.4;52.5", for: path))
        #expect(typed == .raw("52.5 13.4;52.5"))
        let issues = validator.validate(field: "path", in: ["path": typed])
        #expect(issues.map(\.code) == [.invalidGeometry])
        #expect(issues.first?.message.hasPrefix("Point 2 (\"52.5\") is not a point: write latitude longitude") == true)
        #expect(validator.validate(field: "path", in: ["path": .text("52.5 13.4")]).first?.message.hasPrefix("A line needs at least 2 points") == true)
        #expect(validator.validate(field: "path", in: ["path": .text("95 13.4;52 13")]).first?.message.contains("is not on Earth") == true)
        // A stored answer that is not a line (synced from elsewhere) is reported, not trusted.
        #expect(validator.validate(field: "path", in: ["path": .text("north of the river")]).map(\.code) == [.invalidGeometry])
    }

    @Test func aShapeTypedOpenIsClosedAndAStoredOneMustBeClosed() throws {
        let plot = try field("plot")
        #expect(AnswerValue.parse("0 0;0 0.001;0.001 0.001", for: plot) == .text("0 0 0 0;0 0.001 0 0;0.001 0.001 0 0;0 0 0 0"))
        #expect(validator.validate(field: "plot", in: ["plot": .text("0 0;0 0.001;0.001 0.001")]).first?.message.hasPrefix("An area needs at least 3 different points") == true)
        #expect(AnswerValue.parse("0 0;0 0.001", for: plot) == .raw("0 0;0 0.001"))
    }

    @Test func areaAndDistanceReadTheAnswersInMetres() throws {
        // A square of 0.001° at the equator: about 111.3 m a side.
        let state = FormState(form: Self.form, answers: [
            "plot": .text("0 0 0 0;0 0.001 0 0;0.001 0.001 0 0;0.001 0 0 0;0 0 0 0"),
            "path": .text("0 0 0 0;0 0.001 0 0;0.001 0.001 0 0"),
        ])
        guard case .decimal(let area)? = state.value("plot_area") else {
            Issue.record("no area: \(String(describing: state.value("plot_area")))")
            return
        }
        let side = 2 * Double.pi * Geometry.earthRadius / 360 * 0.001
        #expect(abs(NSDecimalNumber(decimal: area).doubleValue - side * side) < side * side * 0.001)
        guard case .decimal(let walked)? = state.value("walked") else {
            Issue.record("no distance")
            return
        }
        #expect(abs(NSDecimalNumber(decimal: walked).doubleValue - 2 * side) < 0.01)
        // Nothing to measure: null.
        #expect(FormState(form: Self.form, answers: [:]).value("plot_area") == nil)
    }
}
