import FormModel

/// The app's own quick tasks, presented as popovers from the home screen's controls. They are not
/// records: New starts a form, Filter narrows the list (its choices apply as they are made, so closing
/// it by a click outside keeps them, as a nonmodal popover must).
enum BuiltInSheets {
    static let newID = "fieldsheet.new"
    static let filterID = "fieldsheet.filter"
    static let conflictsID = "fieldsheet.conflicts"

    /// "New Record": choose the form to start.
    static func new(forms: [(id: String, title: String)]) -> FormDefinition {
        FormDefinition(
            id: newID, title: "New Record", presentation: .popover, completionLabel: "Start", anchor: "new",
            pages: [FormPage(id: "new", fields: [
                FieldDefinition(
                    id: "form", kind: .singleChoice, label: "Form", hint: "1–\(max(1, forms.count)), or ↑↓ then Enter", required: true,
                    choices: forms.isEmpty ? [Choice(value: "-", label: "No forms yet: fieldsheet forms import FILE")] : forms.map { Choice(value: $0.id, label: LocalizedText($0.title)) })
            ])])
    }

    /// "Filter Records": which states the list shows.
    static let filter = FormDefinition(
        id: filterID, title: "Filter Records", presentation: .popover, completionLabel: "Apply", anchor: "filter",
        pages: [FormPage(id: "filter", fields: [
            FieldDefinition(
                id: "show", kind: .multipleChoice, label: "Show", hint: "numbers or Space to toggle",
                choices: [
                    Choice(value: "draft", label: "Drafts"), Choice(value: "queued", label: "Waiting to sync"),
                    Choice(value: "submitted", label: "Submitted"), Choice(value: "conflict", label: "In conflict"),
                    Choice(value: "needsChanges", label: "Needs changes"),
                ])
        ])])
}
