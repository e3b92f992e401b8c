import Testing
@testable import FormModel
@testable import TerminalUI

struct SheetStateTests {
    static let form = FormDefinition(
        id: "job", title: "New Follow-up Job", completionLabel: "Create",
        pages: [
            FormPage(id: "one", title: "Job", fields: [
                FieldDefinition(id: "site", kind: .text, label: "Site", required: true),
                FieldDefinition(id: "count", kind: .integer, label: "Count", min: 1, max: 5),
                FieldDefinition(id: "urgent", kind: .boolean, label: "Urgent"),
            ]),
            FormPage(id: "two", title: "Details", fields: [
                FieldDefinition(id: "priority", kind: .singleChoice, label: "Priority", required: true,
                                choices: [Choice(value: "low", label: "Low"), Choice(value: "high", label: "High")]),
                FieldDefinition(id: "reason", kind: .text, label: "Reason", relevant: "priority == 'high'"),
                FieldDefinition(id: "tags", kind: .multipleChoice, label: "Tags",
                                choices: [Choice(value: "a", label: "A"), Choice(value: "b", label: "B")]),
            ]),
        ])

    func type(_ text: String, into state: inout SheetState) -> [SheetIntent] {
        text.flatMap { state.handle(.character($0)) }
    }

    @Test func everyKeystrokeInATextFieldAsksForASave() {
        var state = SheetState(form: Self.form, answers: [:])
        #expect(state.focus == .field("site"))
        let intents = type("Dep", into: &state)
        #expect(intents == [
            .set(field: "site", value: .text("D")), .set(field: "site", value: .text("De")), .set(field: "site", value: .text("Dep")),
        ])
        #expect(state.handle(.backspace) == [.set(field: "site", value: .text("De"))])
    }

    @Test func typingIntoAnotherDevicesSealedAnswerStartsEmptyAndSaysSo() throws {
        let sealed = AnswerValue.sealed(SealedAnswer(key: "3f2a9c0d41b7e655", enc: "ZW5j", ct: "Y3Q="))
        var state = SheetState(form: Self.form, answers: ["site": sealed])
        let site = try #require(Self.form.field("site"))
        #expect(state.text(of: site, at: "site") == AnswerValue.sealedDisplay)
        // The text shown is not the answer: the first key starts a new one instead of appending to it.
        #expect(state.handle(.character("Y")) == [.set(field: "site", value: .text("Y"))])
        #expect(state.notice == SheetState.sealedEditNotice)
        #expect(state.handle(.character("d")) == [.set(field: "site", value: .text("Yd"))])
        #expect(state.text(of: site, at: "site") == "Yd")

        // Backspace on a sealed answer clears it (there is no text of it to shorten).
        var cleared = SheetState(form: Self.form, answers: ["site": sealed])
        #expect(cleared.handle(.backspace) == [.set(field: "site", value: nil)])
    }

    @Test func invalidInputIsKeptAsTypedAndSaved() throws {
        var state = SheetState(form: Self.form, answers: [:])
        _ = state.handle(.tab)
        #expect(type("7x", into: &state).last == .set(field: "count", value: .raw("7x")))
        #expect(state.text(of: try #require(Self.form.field("count")), at: "count") == "7x")
    }

    @Test func tabMovesThroughFieldsThenButtonsAndWraps() {
        var state = SheetState(form: Self.form, answers: [:])
        var seen: [SheetFocus] = [state.focus]
        for _ in 0..<5 {
            _ = state.handle(.tab)
            seen.append(state.focus)
        }
        #expect(seen == [.field("site"), .field("count"), .field("urgent"), .next, .complete, .cancel])
        _ = state.handle(.tab)
        #expect(state.focus == .field("site"))
        _ = state.handle(.backTab)
        #expect(state.focus == .cancel)
    }

    @Test func spaceTogglesAndChoicesCycle() {
        var state = SheetState(form: Self.form, answers: [:])
        state.focus(on: .field("urgent"))
        #expect(state.handle(.character(" ")) == [.set(field: "urgent", value: .boolean(true))])
        #expect(state.handle(.character(" ")) == [.set(field: "urgent", value: .boolean(false))])
        state.focus(on: .field("priority"))
        #expect(state.page == 1)
        #expect(state.handle(.character("2")) == [.set(field: "priority", value: .choice("high"))])
        #expect(state.visibleKeys == ["priority", "reason", "tags"], "a relevant field appears at once")
        state.focus(on: .field("tags"))
        #expect(state.handle(.character("2")) == [.set(field: "tags", value: .choices(["b"]))])
        #expect(state.handle(.character("1")) == [.set(field: "tags", value: .choices(["a", "b"]))])
    }

    @Test func enterAdvancesFieldsThenSteps() {
        var state = SheetState(form: Self.form, answers: [:])
        _ = state.handle(.enter)
        _ = state.handle(.enter)
        #expect(state.focus == .field("urgent"))
        _ = state.handle(.enter)
        // Leaving the step checks it first: the required site is empty, so the first Enter shows that.
        #expect(state.page == 0)
        #expect(state.errors["site"] == "Required: enter a value.")
        #expect(state.notice == "1 field on this step to fix; Next again moves on")
        state.focus(on: .next)
        _ = state.handle(.enter)
        #expect(state.page == 1, "Next again moves on: a draft may hold anything")
        #expect(state.focus == .field("priority"))
        state.focus(on: .back)
        _ = state.handle(.enter)
        #expect(state.page == 0)
    }

    @Test func buttonsAndWaysOutBecomeIntents() {
        var state = SheetState(form: Self.form, answers: [:])
        #expect(state.handle(.escape) == [.dismiss(.escape)])
        #expect(state.handle(.control("c")) == [.dismiss(.interrupt)])
        state.focus(on: .complete)
        #expect(state.handle(.enter) == [.complete])
        state.focus(on: .cancel)
        #expect(state.handle(.enter) == [.cancel])
    }

    @Test func aFailedCompletionShowsErrorsAndFocusesTheFirst() {
        var state = SheetState(form: Self.form, answers: ["count": .raw("9")])
        state.focus(on: .complete)
        state.show(FormValidator(form: Self.form).validate(state.answers))
        #expect(state.focus == .field("site"))
        #expect(state.page == 0)
        #expect(state.errors["site"] == "Required: enter a value.")
        #expect(state.errors["priority"] == "Required: choose an option.")
        _ = type("A", into: &state)
        #expect(state.errors["site"] == nil, "an error clears as soon as the field is fixed")
    }

    @Test func theConfirmationTakesTheKeysUntilAnswered() {
        var state = SheetState(form: Self.form, answers: ["site": .text("A")])
        state.ask(DiscardConfirmation(formTitle: "New Follow-up Job", changedFields: 1))
        #expect(state.handle(.character("x")).isEmpty, "typing does not reach the field behind")
        #expect(state.handle(.enter) == [.confirm(.keepEditing)], "the safe choice is preselected")
        _ = state.handle(.up)
        #expect(state.handle(.enter) == [.confirm(.saveDraft)])
        _ = state.handle(.up)
        #expect(state.handle(.enter) == [.confirm(.discardChanges)], "the destructive choice only by moving to it")
        #expect(state.handle(.escape) == [.confirm(.keepEditing)], "Esc on the action sheet keeps editing, never discards")
        state.dismissConfirmation()
        #expect(state.handle(.escape) == [.dismiss(.escape)])
    }

    @Test func clickingAFieldFocusesIt() throws {
        let state = SheetState(form: Self.form, answers: [:])
        var view = SheetView(state: state, frame: AppScreen.frame(for: Self.form, size: TerminalSize(columns: 120, rows: 40)))
        var screen = Screen(size: TerminalSize(columns: 120, rows: 40))
        view.draw(on: &screen)
        let region = try #require(view.regions.first { $0.target == .field("count") })
        #expect(view.target(column: region.rect.x + 1, row: region.rect.y + 1) == .field("count"))
        let cancel = try #require(view.regions.first { $0.target == .cancel })
        #expect(view.target(column: cancel.rect.x, row: cancel.rect.y) == .cancel)
    }
}
