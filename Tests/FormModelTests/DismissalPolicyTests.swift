import Testing
@testable import FormModel

/// One test per row of the dismissal table (README, "Presentation and dismissal").
struct DismissalPolicyTests {
    let validator = FormValidator(form: Fixtures.jobForm)
    let valid: [String: AnswerValue] = ["site": .text("Depot"), "priority": .choice("low")]

    func changes(opened: [String: AnswerValue], current: [String: AnswerValue]) -> PresentationChanges {
        PresentationChanges(formTitle: "New Follow-up Job", opened: opened, current: current)
    }

    @Test func completionOfAValidFormSubmits() {
        let outcome = DismissalPolicy.decide(.complete, changes: changes(opened: [:], current: valid), validation: validator.validate(valid))
        #expect(outcome == .submit)
    }

    @Test func completionOfAnInvalidFormStaysAndShowsEachError() {
        let answers: [String: AnswerValue] = ["site": .text("Depot")]
        let outcome = DismissalPolicy.decide(.complete, changes: changes(opened: [:], current: answers), validation: validator.validate(answers))
        guard case .stay(let report) = outcome else { Issue.record("expected stay, got \(outcome)"); return }
        #expect(report.firstInvalidField == "priority")
    }

    @Test func cancelWithNothingTypedCloses() {
        let outcome = DismissalPolicy.decide(.cancel, changes: changes(opened: valid, current: valid), validation: validator.validate(valid))
        #expect(outcome == .close)
    }

    @Test func cancelAfterTypingOnlySpacesCloses() {
        let outcome = DismissalPolicy.decide(.cancel, changes: changes(opened: [:], current: ["site": .text("  ")]), validation: ValidationReport())
        #expect(outcome == .close)
    }

    @Test func cancelWithContentTypedAsksFirst() throws {
        let outcome = DismissalPolicy.decide(.cancel, changes: changes(opened: [:], current: valid), validation: ValidationReport())
        guard case .confirm(let confirmation) = outcome else { Issue.record("expected confirm, got \(outcome)"); return }
        #expect(confirmation.choices.map(\.label) == ["Discard Changes", "Save Draft", "Keep Editing"])
        #expect(confirmation.choices.first?.isDestructive == true)
        #expect(confirmation.title == "Discard changes to New Follow-up Job?")
        #expect(confirmation.message.contains("2 fields"))
    }

    @Test func clearingAValueTypedBeforeIsContentToConfirm() {
        let outcome = DismissalPolicy.decide(.cancel, changes: changes(opened: valid, current: ["priority": .choice("low")]), validation: ValidationReport())
        guard case .confirm = outcome else { Issue.record("expected confirm, got \(outcome)"); return }
    }

    @Test func theConfirmationResolvesToDiscardKeepOrStay() {
        #expect(DismissalPolicy.resolve(.discardChanges) == .discard)
        #expect(DismissalPolicy.resolve(.saveDraft) == .keep(.cancel))
        #expect(DismissalPolicy.resolve(.keepEditing) == nil)
    }

    @Test(arguments: DismissalTrigger.allCases.filter { $0 != .complete && $0 != .cancel })
    func everyOtherWayOutKeepsEverything(trigger: DismissalTrigger) {
        let outcome = DismissalPolicy.decide(trigger, changes: changes(opened: [:], current: valid), validation: validator.validate(valid))
        #expect(outcome == .keep(trigger))
        #expect(trigger.keepsEverything)
    }

    @Test func completionAndCancelAreTheOnlyTriggersThatDoNotSimplyKeep() {
        #expect(DismissalTrigger.allCases.filter { !$0.keepsEverything } == [.complete, .cancel])
    }
}
