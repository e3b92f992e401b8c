import Testing
@testable import FormModel
@testable import TerminalUI

/// A rank in the app: Space (or a choice's number) places the choice next in the order, or takes it out; a trace
/// is typed as its points.
struct SheetRankTests {
    static let form = FormDefinition(
        id: "order", title: "Order", completionLabel: "Save",
        pages: [
            FormPage(id: "one", fields: [
                FieldDefinition(id: "order", kind: .rank, label: "Order",
                                choices: [Choice(value: "a", label: "A"), Choice(value: "b", label: "B"), Choice(value: "c", label: "C")]),
                FieldDefinition(id: "path", kind: .trace, label: "Path"),
            ])
        ])

    @Test func choicesArePlacedInTheOrderChosenAndTakenOutAgain() {
        var state = SheetState(form: Self.form, answers: [:])
        state.focus(on: .field("order"))
        #expect(state.handle(.character("3")) == [.set(field: "order", value: .choices(["c"]))])
        #expect(state.handle(.character("1")) == [.set(field: "order", value: .choices(["c", "a"]))])
        _ = state.handle(.right)
        #expect(state.handle(.character(" ")) == [.set(field: "order", value: .choices(["c", "a", "b"]))])
        #expect(state.handle(.character("3")) == [.set(field: "order", value: .choices(["a", "b"]))])
    }

    @Test func aTraceIsTypedAsItsPoints() {
        var state = SheetState(form: Self.form, answers: [:])
        state.focus(on: .field("path"))
        let intents = "1 2;3 4".flatMap { state.handle(.character($0)) }
        #expect(intents.first == .set(field: "path", value: .raw("1")))
        #expect(intents.last == .set(field: "path", value: .text("1 2 0 0;3 4 0 0")))
    }
}
