import FormModel

/// What can hold the keyboard focus in a sheet.
public enum SheetFocus: Sendable, Hashable {
    /// The field at an answer key (`site`, `defects/<id>/severity`).
    case field(String)
    /// A repeat's Add button.
    case addInstance(group: String, parent: String)
    /// An instance's Remove button (by its key prefix).
    case removeInstance(String)
    case back
    case next
    case cancel
    case complete
}

/// What a sheet asks its owner to do; the owner carries it out through `FormSession`
/// (every `set` is made durable before the next key is handled).
public enum SheetIntent: Sendable, Hashable {
    case set(field: String, value: AnswerValue?)
    case complete
    case cancel
    case dismiss(DismissalTrigger)
    case confirm(ConfirmationChoice)
    /// Add an instance to the repeat `group` inside `parent` ("" at the top level).
    case addInstance(group: String, parent: String)
    /// Remove the instance at this key prefix (asked first when it held answers).
    case removeInstance(String)
    /// Attach the file at `path` to the photo, audio or file field at `field` (typed, then Enter).
    case attach(field: String, path: String)
}

/// The state of one presented form sheet: answers as shown, the step, the focus, inline errors and
/// the discard confirmation. Pure: keys go in, intents come out, nothing is stored here.
public struct SheetState: Sendable {
    public let form: FormDefinition
    /// The form's checks, its expressions parsed once for the sheet's life (not per key).
    public let validator: FormValidator
    public var relevance: Relevance { validator.relevance }
    public private(set) var answers: [String: AnswerValue]
    /// The answers evaluated: relevance, computed values, repeat instances (updated per edit for what depends on it).
    public private(set) var evaluated: FormState {
        didSet { visibleRows = buildVisibleRows() }
    }
    /// The language the sheet shows its texts in (one of the form's `languages`); nil for the default.
    public var language: String? {
        get { evaluated.language }
        set { evaluated.language = newValue }
    }
    /// The rows of the current step: fields (inside repeat instances too), repeat headings, instance titles
    /// and Add buttons, in order. Kept as the answers and the step change, so a key that only moves the focus
    /// or redraws builds nothing (a record of 200 instances has thousands of rows).
    public private(set) var visibleRows: [SheetRow] = []
    /// Text as typed into text-like fields, so raw input is shown exactly as typed.
    public private(set) var typed: [String: String] = [:]
    /// The path being typed into a photo, audio or file field, until Enter attaches it.
    public internal(set) var attachPaths: [String: String] = [:]
    public private(set) var page = 0 {
        didSet { if page != oldValue { visibleRows = buildVisibleRows() } }
    }
    public internal(set) var focus: SheetFocus
    /// The choice under the cursor in a multiple-choice field.
    public internal(set) var choiceCursor: [String: Int] = [:]
    /// Inline errors by field, shown after a completion attempt and updated as fields change.
    public private(set) var errors: [String: String] = [:]
    /// The discard confirmation when it is up, with the selected choice.
    public private(set) var confirmation: DiscardConfirmation?
    public internal(set) var confirmationSelection = 0
    /// The question before removing an instance that holds answers, when it is up.
    public internal(set) var removal: InstanceRemoval?
    /// Lines of the field area scrolled past when the sheet was last drawn (``SheetView/scrollTop``); the
    /// next frame moves from there only as far as the focus needs.
    public var scrollTop = 0
    /// A short notice ("Draft saved").
    public var notice: String?
    /// The title the sheet shows: the form's, unless the owner names what the person is doing
    /// (``fixing(review:)``: "Fix and Resubmit").
    public var title: String
    /// The completion button's label: the form's, unless the owner names what the person is doing.
    public var completionLabel: String
    /// Lines drawn at the top of the sheet, wrapped, above the fields (the reviewer's comment on a record
    /// opened to fix it): a heading and the text under it.
    public var note: (heading: String, text: String)?
    /// Key hints of the sheet's own, replacing the usual ones (for an app's chooser or filter).
    public var keyHints: String?
    /// The step whose problems Next has just shown: pressing Next again there moves on anyway.
    public private(set) var checkedStep: Int?

    /// A sheet on `answers` of a record with `metadata` (what `record.start` and the like read).
    public init(form: FormDefinition, answers: [String: AnswerValue], metadata: RecordMetadata = RecordMetadata()) {
        self.form = form
        self.validator = FormValidator(form: form)
        self.answers = answers
        self.evaluated = FormState(logic: validator.logic, answers: answers, metadata: metadata)
        self.title = form.title
        self.completionLabel = form.completionLabel
        self.focus = .complete
        self.visibleRows = buildVisibleRows()
        self.focus = firstFocus
    }

    /// Where the focus goes on a step: its first control other than an instance's Remove (drawn on the
    /// instance's title, before its fields), so the first answer, or a repeat's Add when it has no instances;
    /// Enter there never removes anything.
    public var firstFocus: SheetFocus {
        focusOrder.first { if case .removeInstance = $0 { return false } else { return true } } ?? .complete
    }

    /// The keys of the fields shown on the current step (those inside repeat instances too).
    public var visibleKeys: [String] {
        visibleRows.compactMap { if case .field(let key, _, _) = $0 { return key } else { return nil } }
    }

    /// Tab order: the step's answerable fields and repeat buttons, then Back, Next, the completion
    /// button and Cancel.
    public var focusOrder: [SheetFocus] {
        var order = visibleRows.compactMap(\.focus)
        if page > 0 { order.append(.back) }
        if page < form.pages.count - 1 { order.append(.next) }
        order += [.complete, .cancel]
        return order
    }

    /// The text shown in the value slot of the field at `key`.
    public func text(of field: FieldDefinition, at key: String) -> String {
        if field.isComputed {
            return evaluated.value(key)?.display(for: field) ?? ""
        }
        if field.kind.takesAttachment, let path = attachPaths[key] {
            return "attach: " + path
        }
        if field.kind.takesAttachment, answers[key] == nil, focus == .field(key) {
            return Self.attachHint
        }
        return typed[key] ?? answers[key]?.display(for: field) ?? ""
    }

    /// What an empty photo, audio or file field says while it has the focus: how a file is attached.
    public static let attachHint = "type a file's path, Enter attaches (Tab completes)"

    /// The path being typed into the focused photo, audio or file field, when one is (Tab completes it).
    public var typedAttachPath: (key: String, path: String)? {
        guard case .field(let key) = focus, let path = attachPaths[key], !path.isEmpty else { return nil }
        return (key, path)
    }

    /// Replaces the path being typed into the field at `key` (Tab's completion of it).
    public mutating func replaceAttachPath(_ key: String, with path: String) {
        attachPaths[key] = path
    }

    /// How many fields of the current step show an error.
    public var stepErrorCount: Int {
        visibleKeys.filter { errors[$0] != nil }.count
    }

    /// Whether the focused field takes typed text (so `?` types rather than asks for the keys).
    public var focusTakesText: Bool {
        guard case .field(let key) = focus, let field = definition(ofKey: key) else { return false }
        switch field.kind {
        case .text, .multilineText, .integer, .decimal, .date, .time, .dateTime, .location: return true
        case .photo, .audio, .file: return true
        default: return false
        }
    }

    /// Next: checks the current step and shows its problems at their fields with a count, staying
    /// there; Next again moves on anyway (a draft may hold anything; only completion requires a valid form).
    mutating func next() {
        let onStep = Set(visibleKeys)
        let issues = validator.validate(evaluated).issues.filter { onStep.contains($0.fieldID) }
        for field in onStep { errors[field] = nil }
        for issue in issues where errors[issue.fieldID] == nil { errors[issue.fieldID] = issue.message }
        if issues.isEmpty || checkedStep == page {
            checkedStep = nil
            turnPage(by: 1)
            return
        }
        checkedStep = page
        let count = Set(issues.map(\.fieldID)).count
        notice = "\(count) field\(count == 1 ? "" : "s") on this step to fix; Next again moves on"
        if let first = issues.first { focus = .field(first.fieldID) }
    }

    /// Chooses the option at `index` of `fieldID` (a click on a radio, a checkbox or a yes/no box).
    public mutating func choose(option index: Int, of key: String) -> [SheetIntent] {
        guard let field = definition(ofKey: key) else { return [] }
        focus(on: .field(key))
        let choices = choices(at: key)
        switch field.kind {
        case .singleChoice where choices.indices.contains(index):
            return set(key, field, .choice(choices[index].value))
        case .multipleChoice where choices.indices.contains(index):
            choiceCursor[key] = index
            return toggle(choices[index].value, at: key, in: field)
        case .boolean:
            if case .boolean(let on)? = answers[key] { return set(key, field, .boolean(!on)) }
            return set(key, field, .boolean(true))
        default:
            return []
        }
    }

    /// Handles one input event.
    public mutating func handle(_ event: InputEvent) -> [SheetIntent] {
        notice = nil
        if confirmation != nil { return handleConfirmation(event) }
        if removal != nil { return handleRemoval(event) }
        switch event {
        case .escape: return [.dismiss(.escape)]
        case .control("c"): return [.dismiss(.interrupt)]
        case .tab, .down: moveFocus(by: 1)
        case .backTab, .up: moveFocus(by: -1)
        case .enter:
            // Enter starts a new line in a multiline field; Tab moves on.
            if case .field(let key) = focus, let field = definition(ofKey: key), field.kind == .multilineText {
                return edit(key, field, with: .paste("\n"))
            }
            // Enter after a typed path attaches that file.
            if case .field(let key) = focus, let path = attachPaths[key], !path.trimmingCharacters(in: .whitespaces).isEmpty {
                attachPaths[key] = nil
                return [.attach(field: key, path: path.trimmingCharacters(in: .whitespaces))]
            }
            return activate()
        default:
            if case .field(let key) = focus, let field = definition(ofKey: key) {
                return edit(key, field, with: event)
            }
            if event == .character(" ") { return activate() }
        }
        return []
    }

    /// Moves the focus to `target` (a click, or the first error after a failed completion).
    public mutating func focus(on target: SheetFocus) {
        if case .field(let key) = target, let index = form.pageIndex(of: AnswerKey(key)?.steps.first?.group ?? key) { page = index }
        if focusOrder.contains(target) { focus = target }
    }

    /// Shows a failed completion: each error at its field, focus on the first (on its step).
    public mutating func show(_ report: ValidationReport) {
        errors = Dictionary(report.issues.map { ($0.fieldID, $0.message) }, uniquingKeysWith: { first, _ in first })
        if let first = report.firstInvalidField { focus(on: .field(first)) }
    }

    /// Puts the discard confirmation up.
    public mutating func ask(_ confirmation: DiscardConfirmation) {
        self.confirmation = confirmation
        // The safe choice is preselected: Cancel, Enter, Enter never loses work.
        confirmationSelection = confirmation.defaultIndex
    }

    /// Takes the confirmation down (after Keep Editing).
    public mutating func dismissConfirmation() {
        confirmation = nil
    }

    /// Shows an answer the app stored itself (an attachment, once its file was copied in).
    public mutating func stored(_ key: String, _ value: AnswerValue?) {
        answers[key] = value
        evaluated.apply([key: value])
        attachPaths[key] = nil
        if errors[key] != nil {
            errors[key] = validator.validate(field: key, in: evaluated).first?.message
        }
    }

    /// Replaces the answers (after the session reverted or merged them), keeping the focus where it can.
    public mutating func reload(_ answers: [String: AnswerValue]) {
        self.answers = answers
        let language = evaluated.language
        evaluated = FormState(logic: validator.logic, answers: answers, metadata: evaluated.metadata)
        evaluated.language = language
        typed = [:]
        attachPaths = [:]
        if !focusOrder.contains(focus) { focus = firstFocus }
    }

    mutating func moveFocus(by step: Int) {
        let order = focusOrder
        guard let index = order.firstIndex(of: focus) else {
            focus = order.first ?? .complete
            return
        }
        focus = order[(index + step + order.count) % order.count]
    }

    mutating func turnPage(by step: Int) {
        let target = page + step
        guard form.pages.indices.contains(target) else { return }
        if target != page { checkedStep = nil }
        page = target
        focus = firstFocus
    }

    mutating func activate() -> [SheetIntent] {
        switch focus {
        case .field:
            let order = focusOrder
            if let index = order.firstIndex(of: focus), index + 1 < order.count, case .field = order[index + 1] {
                focus = order[index + 1]
            } else if page < form.pages.count - 1 {
                next()
            } else {
                focus = .complete
            }
            return []
        case .next:
            next()
            return []
        case .back:
            turnPage(by: -1)
            return []
        case .complete: return [.complete]
        case .cancel: return [.cancel]
        case let .addInstance(group, parent): return [.addInstance(group: group, parent: parent)]
        case .removeInstance(let prefix): return requestRemoval(of: prefix)
        }
    }

    mutating func handleConfirmation(_ event: InputEvent) -> [SheetIntent] {
        guard let choices = confirmation?.choices else { return [] }
        switch event {
        case .down, .tab, .right: confirmationSelection = (confirmationSelection + 1) % choices.count
        case .up, .backTab, .left: confirmationSelection = (confirmationSelection - 1 + choices.count) % choices.count
        case .enter, .character(" "): return [.confirm(choices[confirmationSelection])]
        case .escape: return [.confirm(DiscardConfirmation.defaultChoice)]
        case .control("c"): return [.confirm(.saveDraft), .dismiss(.interrupt)]
        default: break
        }
        return []
    }

    /// Records a value locally and asks for it to be saved. A field showing an error shows the error it
    /// has now (a constraint's message included), or none.
    mutating func set(_ key: String, _ field: FieldDefinition, _ value: AnswerValue?, typedText: String? = nil) -> [SheetIntent] {
        answers[key] = value
        evaluated.apply([key: value])
        typed[key] = typedText
        if errors[key] != nil {
            errors[key] = validator.validate(field: key, in: evaluated).first?.message
        }
        return [.set(field: key, value: value)]
    }
}
