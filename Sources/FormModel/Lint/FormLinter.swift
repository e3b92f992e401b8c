/// Checks a set of forms against the modal-presentation guidelines that can be checked statically.
///
/// Each rule quotes the platform guideline it enforces (README, "The linter").
public struct FormLinter: Sendable {
    /// Popovers are for quick tasks: more fields than this is a warning.
    public var popoverFieldLimit = 6
    /// Completion labels that do not name the task.
    public var vagueCompletionLabels: Set<String> = ["done", "ok", "okay", "save", "continue", "next"]

    /// A linter with the default limits: at most 6 questions in a popover, and "Done", "OK", "Save" and the like
    /// flagged as vague completion labels.
    public init() {}

    /// Loads every file and lints the set; findings of files that do not load are included.
    public func lint(files: [String]) -> [Finding] {
        let loader = FormLoader()
        var findings: [Finding] = []
        var forms: [LoadedForm] = []
        for file in files {
            let result = loader.load(contentsOf: file)
            findings += result.findings
            if let loaded = result.loaded { forms.append(loaded) }
        }
        return findings + lint(forms)
    }

    /// Lints forms that loaded: each on its own, then the set as an app's forms.
    public func lint(_ forms: [LoadedForm]) -> [Finding] {
        forms.flatMap(lintOne) + lintSet(forms)
    }

    func lintOne(_ loaded: LoadedForm) -> [Finding] {
        let form = loaded.form
        var findings: [Finding] = []
        func add(_ severity: Finding.Severity, _ rule: String, _ key: String?, _ message: String, fix: String) {
            let path = key.map { JSONPath.root.appending($0) } ?? .root
            findings.append(Finding(severity, rule: rule, file: loaded.file, path: path, location: loaded.location(of: path), message: message, fix: fix))
        }
        // "In general, display a title that identifies the modal task."
        if form.title.allSatisfy(\.isWhitespace) {
            add(.error, "title-missing", "title", "The sheet has no title naming its task.", fix: "Set \"title\" to the task, like \"New Follow-up Job\".")
        }
        // "Always include a button that dismisses the modal view."
        if form.cancelLabel.allSatisfy(\.isWhitespace) {
            add(.error, "cancel-missing", "cancelLabel", "The sheet has no dismiss button.", fix: "Set \"cancelLabel\" to \"Cancel\" (the default) or remove it.")
        } else if form.cancelLabel.caseInsensitiveCompare(form.completionLabel) == .orderedSame {
            add(.error, "cancel-missing", "cancelLabel", "Cancel and completion buttons are both labelled \"\(form.cancelLabel)\".", fix: "Label the dismiss button \"Cancel\" and the completion button for the task.")
        }
        // "Avoid using "Done" for the button language unless there is little chance the user would be unsure."
        if vagueCompletionLabels.contains(form.completionLabel.lowercased().trimmingCharacters(in: .whitespaces)) {
            add(.warning, "vague-completion-label", "completionLabel", "\"\(form.completionLabel)\" does not say what completing the task does.", fix: "Name the action, like \"Create\", \"Add\" or \"Submit\".")
        }
        if form.presentation == .popover {
            // "Avoid making a popover too big." / popovers are for quick tasks.
            if form.pages.count > 1 {
                add(.error, "popover-multi-step", "presentation", "A popover holds a quick task, but this form has \(form.pages.count) steps.", fix: "Present multi-step forms as \"fullScreen\" or \"formSheet\".")
            }
            let answerable = form.allFields.filter { $0.kind.takesAnswer }.count
            if answerable > popoverFieldLimit {
                add(.warning, "popover-too-long", "presentation", "A popover should stay short, but this form asks \(answerable) questions (at most \(popoverFieldLimit) recommended).", fix: "Use \"formSheet\" for longer forms, or trim the form.")
            }
            // "A popover's arrow should point as directly as possible to the element that revealed it."
            if form.anchor == nil {
                add(.error, "popover-anchor-missing", "anchor", "A popover points at the control that opened it, but no \"anchor\" is named.", fix: "Set \"anchor\" to the control's id, like \"filter\" or \"new\".")
            }
        }
        // "The current context modal view only appears in apps that use the split view."
        if form.presentation == .currentContext, form.pane == nil {
            add(.error, "current-context-without-split-view", "presentation", "currentContext covers one pane of a split view, but no \"pane\" is named.", fix: "Set \"pane\" to \"list\" or \"detail\", or use \"formSheet\".")
        }
        if form.presentation != .currentContext, form.pane != nil {
            add(.warning, "pane-unused", "pane", "\"pane\" only applies to currentContext presentations.", fix: "Remove \"pane\" or present the form as \"currentContext\".")
        }
        // "If a modal task must contain subviews, provide a single path … and a clear path to completion."
        if form.pages.count > 1 {
            for (index, page) in form.pages.enumerated() where page.title == nil {
                let path = JSONPath.root.appending("pages").appending(index)
                findings.append(Finding(.warning, rule: "step-title-missing", file: loaded.file, path: path, location: loaded.location(of: path),
                                        message: "Step \(index + 1) of \(form.pages.count) has no title.", fix: "Give each step a short title so people know where they are."))
            }
        }
        return findings
    }

    func lintSet(_ forms: [LoadedForm]) -> [Finding] {
        var findings: [Finding] = []
        let byID = Dictionary(forms.map { ($0.form.id, $0) }, uniquingKeysWith: { first, _ in first })
        var seen: [String: String] = [:]
        for loaded in forms {
            if let other = seen[loaded.form.id] {
                findings.append(Finding(.error, rule: "duplicate-form-id", file: loaded.file, path: JSONPath.root.appending("id"), location: loaded.location(of: JSONPath.root.appending("id")),
                                        message: "The form id \"\(loaded.form.id)\" is also used by \(other).", fix: "Give each form its own id; versions of one form are published, not kept side by side."))
            }
            seen[loaded.form.id] = loaded.file
        }
        for loaded in forms {
            guard let parentID = loaded.form.parent else { continue }
            let path = JSONPath.root.appending("parent")
            guard let parent = byID[parentID] else {
                findings.append(Finding(.warning, rule: "parent-unknown", file: loaded.file, path: path, location: loaded.location(of: path),
                                        message: "The parent form \"\(parentID)\" is not among the linted forms, so stacking cannot be checked.", fix: "Lint the forms together, or correct \"parent\"."))
                continue
            }
            guard parent.form.presentation == .popover else { continue }
            if loaded.form.presentation == .popover {
                // "Show one popover at a time … Never show a cascade or hierarchy of popovers."
                findings.append(Finding(.error, rule: "popover-stacked", file: loaded.file, path: path, location: loaded.location(of: path),
                                        message: "This popover opens from the popover \"\(parentID)\": two popovers would be stacked.", fix: "Open it from the home screen or a sheet, or present it as a formSheet (the popover then closes first)."))
            } else {
                // "In rare cases when you need to present a card after people take an action in a popover, close the popover before displaying the card."
                findings.append(Finding(.warning, rule: "modal-from-popover", file: loaded.file, path: path, location: loaded.location(of: path),
                                        message: "This sheet opens from the popover \"\(parentID)\"; the popover closes (saving) before the sheet appears.", fix: "Open it from the home screen if people should not leave the popover."))
            }
        }
        // "Use consistent modal transition styles throughout your app."
        for group in [forms.filter { $0.form.presentation != .popover }, forms.filter { $0.form.presentation == .popover }] {
            let counts = Dictionary(grouping: group, by: \.form.effectiveTransition).mapValues(\.count)
            guard counts.count > 1 else { continue }
            let preferred = group.first?.form.presentation == .popover ? TransitionStyle.crossDissolve : .coverVertical
            let usual = counts.max { ($0.value, $0.key == preferred ? 1 : 0) < ($1.value, $1.key == preferred ? 1 : 0) }!.key
            for loaded in group where loaded.form.effectiveTransition != usual && loaded.form.transitionReason == nil {
                let path = JSONPath.root.appending("transition")
                findings.append(Finding(.error, rule: "transition-inconsistent", file: loaded.file, path: path, location: loaded.location(of: path),
                                        message: "This form uses \(loaded.form.effectiveTransition.rawValue) while the other forms use \(usual.rawValue).", fix: "Use \(usual.rawValue), or say why in \"transitionReason\"."))
            }
        }
        return findings
    }
}
