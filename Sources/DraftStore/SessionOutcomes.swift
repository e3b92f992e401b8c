import FormModel

/// How `FormSession.complete()` ended.
public enum CompletionResult: Sendable, Hashable {
    /// The form was valid: the record is submitted, queued for sync, and the presentation has ended.
    case submitted
    /// The form is not valid: the presentation stays open; show each issue at its field and focus
    /// `report.firstInvalidField`. Nothing was thrown away.
    case invalid(ValidationReport)
}

/// How `FormSession.cancel()` ended.
public enum CancelResult: Sendable, Hashable {
    /// Nothing typed in this presentation: the sheet closes, nothing to discard (a brand-new record
    /// that was never typed into disappears). The presentation has ended.
    case closed
    /// Content was typed in this presentation: show the confirmation (Discard Changes / Save Draft /
    /// Keep Editing). The presentation stays open until `discardChanges()`, `dismiss(reason: .cancel)`
    /// (Save Draft) or `resolve(_:)` ends it.
    case needsConfirmation(DiscardConfirmation)
}

/// What `FormSession.discardChanges()` threw away.
public enum DiscardResult: Sendable, Hashable {
    /// The record was created by this presentation and is gone.
    case removedNewRecord
    /// The record is back to how it was when the sheet opened; these fields were reverted.
    case reverted(fields: Set<String>)
}
