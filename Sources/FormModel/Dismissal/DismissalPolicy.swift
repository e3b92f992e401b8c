/// The confirmation shown when Cancel would throw away content typed in this presentation.
///
/// "If the action could result in the loss of user-generated content, present an action sheet that
/// explains the situation and gives people ways to resolve it."
public struct DiscardConfirmation: Sendable, Hashable {
    /// The question ("Discard changes to Site Visit?").
    public var title: String
    /// What discarding would lose.
    public var message: String
    /// In display order; `discardChanges` is destructive.
    public var choices: [ConfirmationChoice]

    /// The choice selected when the confirmation appears, and what Esc means: the safe one, never the
    /// destructive one ("the safe choice is always the default").
    public static let defaultChoice = ConfirmationChoice.keepEditing

    /// The confirmation for a sheet whose presentation typed something.
    ///
    /// - Parameters:
    ///   - formTitle: the form's title, named in the question.
    ///   - changedFields: how many fields this presentation changed.
    ///   - isNewRecord: the sheet opened a brand-new record, which discarding removes.
    public init(formTitle: String, changedFields: Int, isNewRecord: Bool = false) {
        title = "Discard changes to \(formTitle)?"
        let noun = changedFields == 1 ? "1 field" : "\(changedFields) fields"
        message = isNewRecord
            ? "You filled in \(noun). Discarding removes this new record."
            : "You changed \(noun) since opening this sheet. Discarding returns the record to how it was when you opened it."
        choices = [.discardChanges, .saveDraft, .keepEditing]
    }

    /// Where `defaultChoice` sits among `choices`.
    public var defaultIndex: Int { choices.firstIndex(of: Self.defaultChoice) ?? choices.count - 1 }
}

/// An answer to the discard confirmation.
public enum ConfirmationChoice: String, Sendable, Hashable, CaseIterable {
    /// Revert what this presentation typed (a new record is removed); the destructive choice.
    case discardChanges
    /// Close the sheet and keep everything typed, ready to resume.
    case saveDraft
    /// Go back to the sheet; the safe default.
    case keepEditing

    /// The button's label.
    public var label: String {
        switch self {
        case .discardChanges: return "Discard Changes"
        case .saveDraft: return "Save Draft"
        case .keepEditing: return "Keep Editing"
        }
    }

    /// Whether the button is destructive (shown in red).
    public var isDestructive: Bool { self == .discardChanges }
}

/// What happens when a presentation ends a given way.
public enum DismissalOutcome: Sendable, Hashable {
    /// The form is valid: the record becomes submitted and is queued for sync.
    case submit
    /// Completion failed validation: stay, show each error at its field, focus the first.
    case stay(ValidationReport)
    /// Cancel with nothing typed here: close, nothing to discard.
    case close
    /// Cancel with content typed here: ask first.
    case confirm(DiscardConfirmation)
    /// Revert the edits of this presentation (a new record disappears).
    case discard
    /// Keep everything; the record stays a draft (or keeps its edits), ready to resume.
    case keep(DismissalTrigger)
}

/// The dismissal table (README, "Presentation and dismissal") as a pure function.
public enum DismissalPolicy {
    /// Decides how a presentation ends.
    /// - Parameters:
    ///   - trigger: how the person (or the system) ended it.
    ///   - changes: what this presentation changed.
    ///   - validation: the whole form's validation, used only on completion.
    public static func decide(_ trigger: DismissalTrigger, changes: PresentationChanges, validation: @autoclosure () -> ValidationReport) -> DismissalOutcome {
        switch trigger {
        case .complete:
            let report = validation()
            return report.isValid ? .submit : .stay(report)
        case .cancel:
            guard changes.hasUserContent else { return .close }
            return .confirm(DiscardConfirmation(formTitle: changes.formTitle, changedFields: changes.changedFields.count, isNewRecord: changes.isNewRecord))
        default:
            return .keep(trigger)
        }
    }

    /// Resolves the confirmation: discard, keep the draft, or go back to editing (nil).
    public static func resolve(_ choice: ConfirmationChoice) -> DismissalOutcome? {
        switch choice {
        case .discardChanges: return .discard
        case .saveDraft: return .keep(.cancel)
        case .keepEditing: return nil
        }
    }
}

/// What one presentation changed, compared with the answers it opened with.
public struct PresentationChanges: Sendable, Hashable {
    /// The form's title, named in the confirmation.
    public var formTitle: String
    /// Fields whose answer differs from when the sheet opened, in no particular order.
    public var changedFields: Set<String>
    /// Whether any of those changes is content a person would miss (not blank text, not just cleared defaults).
    public var hasUserContent: Bool
    /// Whether the presentation opened a brand-new record (discarding removes it).
    public var isNewRecord: Bool

    /// Compares the answers the sheet opened with (`opened`) with those it holds now (`current`).
    public init(formTitle: String, opened: [String: AnswerValue], current: [String: AnswerValue], isNewRecord: Bool = false) {
        self.formTitle = formTitle
        self.isNewRecord = isNewRecord
        var changed = Set<String>()
        var content = false
        for key in Set(opened.keys).union(current.keys) where opened[key] != current[key] {
            changed.insert(key)
            let now = current[key]
            let before = opened[key]
            let nowBlank = now?.isBlank ?? true
            let beforeBlank = before?.isBlank ?? true
            // Typing only spaces into an empty field is not content; clearing a typed value is.
            if !(nowBlank && beforeBlank) { content = true }
        }
        self.changedFields = changed
        self.hasUserContent = content
    }
}
