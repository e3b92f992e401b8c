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

/// Where a sheet's field area is scrolled: the row at its top (an index into ``SheetState/visibleRows``) and
/// the lines of that row scrolled past. Kept as a row rather than a count of lines, so drawing a frame
/// measures only the rows it shows, never the thousands above them.
public struct SheetScroll: Sendable, Hashable, Comparable {
    /// The index of the first row in the field area.
    public var row: Int
    /// Lines of that row scrolled past.
    public var line: Int

    /// The position `line` lines into row `row` (the top of the field area by default).
    public init(row: Int = 0, line: Int = 0) {
        self.row = row
        self.line = line
    }

    public static func < (lhs: SheetScroll, rhs: SheetScroll) -> Bool {
        (lhs.row, lhs.line) < (rhs.row, rhs.line)
    }
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
    /// The answers as shown (those of ``evaluated``: one dictionary, changed in place as keys are typed).
    public var answers: [String: AnswerValue] { evaluated.answers }
    /// The answers evaluated: relevance, computed values, repeat instances (updated per edit for what depends on it).
    public private(set) var evaluated: FormState
    /// The language the sheet shows its texts in (one of the form's `languages`); nil for the default.
    public var language: String? {
        get { evaluated.language }
        set {
            evaluated.language = newValue
            rebuildRows()
        }
    }
    /// The rows of the current step: fields (inside repeat instances too), repeat headings, instance titles
    /// and Add buttons, in order. Built again when the step changes or an edit shows or hides a field or adds,
    /// removes or moves an instance (``FormState/shapeRevision``), so a key that only moves the focus, redraws
    /// or types into a field builds nothing (a record of 5,000 instances has 30,000 rows).
    public private(set) var visibleRows: [SheetRow] = []
    /// The keys of ``visibleKeys`` as a set, built with the rows: whether a field is on the step, at once.
    private var visibleKeySet: Set<String> = []
    /// Text as typed into text-like fields, so raw input is shown exactly as typed.
    public private(set) var typed: [String: String] = [:]
    /// The path being typed into a photo, audio or file field, until Enter attaches it.
    public internal(set) var attachPaths: [String: String] = [:]
    public private(set) var page = 0 {
        didSet { if page != oldValue { rebuildRows() } }
    }
    public internal(set) var focus: SheetFocus
    /// The choice under the cursor in a multiple-choice field.
    public internal(set) var choiceCursor: [String: Int] = [:]
    /// What was typed into a choice field over an entity list (`choicesFrom`): it narrows the entities shown
    /// to the first ``entityMatches`` whose label contains it.
    public internal(set) var entitySearch: [String: String] = [:]
    /// The most entities a choice field over an entity list shows at once.
    public static let entityMatches = 8
    /// Inline errors by field, shown after a completion attempt and updated as fields change.
    public private(set) var errors: [String: String] = [:]
    /// The discard confirmation when it is up, with the selected choice.
    public private(set) var confirmation: DiscardConfirmation?
    public internal(set) var confirmationSelection = 0
    /// The question before removing an instance that holds answers, when it is up.
    public internal(set) var removal: InstanceRemoval?
    /// Where the field area was scrolled when the sheet was last drawn (``SheetView/scroll``); the next
    /// frame moves from there only as far as the focus needs.
    public var scroll = SheetScroll()
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
        let validator = FormValidator(form: form)
        self.init(evaluated: FormState(logic: validator.logic, answers: answers, metadata: metadata), validator: validator)
    }

    /// A sheet on answers evaluated already (a `FormSession`'s state as it opens): a record of 5,000
    /// instances is not evaluated a second time for its sheet.
    public init(evaluated: FormState) {
        self.init(evaluated: evaluated, validator: FormValidator(logic: evaluated.logic))
    }

    private init(evaluated: FormState, validator: FormValidator) {
        self.form = validator.form
        self.validator = validator
        self.evaluated = evaluated
        self.title = form.title
        self.completionLabel = form.completionLabel
        self.focus = .complete
        self.rebuildRows()
        self.focus = firstFocus
    }

    /// Where the focus goes on a step: its first control other than an instance's Remove (drawn on the
    /// instance's title, before its fields), so the first answer, or a repeat's Add when it has no instances;
    /// Enter there never removes anything.
    public var firstFocus: SheetFocus {
        let answerable = visibleRows.lazy.compactMap(\.focus).first { if case .removeInstance = $0 { return false } else { return true } }
        return answerable ?? buttonFocus.first ?? .complete
    }

    /// The keys of the fields shown on the current step (those inside repeat instances too).
    public var visibleKeys: [String] {
        visibleRows.compactMap { if case .field(let key, _, _, _) = $0 { return key } else { return nil } }
    }

    /// Tab order: the step's answerable fields and repeat buttons, then Back, Next, the completion
    /// button and Cancel. (Moving the focus walks the rows from the focused one instead of building this:
    /// a step of 5,000 instances has 30,000 rows.)
    public var focusOrder: [SheetFocus] {
        visibleRows.compactMap(\.focus) + buttonFocus
    }

    /// The end of the Tab order, after the rows: Back, Next, the completion button and Cancel.
    var buttonFocus: [SheetFocus] {
        var order: [SheetFocus] = []
        if page > 0 { order.append(.back) }
        if page < form.pages.count - 1 { order.append(.next) }
        return order + [.complete, .cancel]
    }

    /// The index of the row whose control is `target`, looking from where the sheet is scrolled.
    func rowIndex(of target: SheetFocus) -> Int? {
        switch target {
        case .field, .addInstance, .removeInstance:
            return visibleRows.nearestIndex(from: scroll.row) { $0.focus == target }
        case .back, .next, .cancel, .complete:
            return nil
        }
    }

    /// Whether `target` is in the Tab order (``focusOrder``).
    func canFocus(_ target: SheetFocus) -> Bool {
        buttonFocus.contains(target) || rowIndex(of: target) != nil
    }

    /// The control `step` places after (or, negative, before) `current` in the Tab order, wrapping around
    /// when `wrapping`, else nil past either end; nil when `current` is not in the order.
    func focus(from current: SheetFocus, by step: Int, wrapping: Bool = true) -> SheetFocus? {
        let buttons = buttonFocus
        let forward = step > 0
        /// The first row control from `start` on in the direction of `step`.
        func row(from start: Int) -> SheetFocus? {
            var index = start
            while visibleRows.indices.contains(index) {
                if let focus = visibleRows[index].focus { return focus }
                index += forward ? 1 : -1
            }
            return nil
        }
        let firstRow = { row(from: forward ? 0 : visibleRows.count - 1) }
        if let button = buttons.firstIndex(of: current) {
            let next = button + (forward ? 1 : -1)
            if buttons.indices.contains(next) { return buttons[next] }
            guard wrapping else { return nil }
            return firstRow() ?? (forward ? buttons.first : buttons.last)
        }
        guard let index = rowIndex(of: current) else { return nil }
        if let found = row(from: index + (forward ? 1 : -1)) { return found }
        if forward { return buttons.first }
        return wrapping ? buttons.last : nil
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

    /// How many fields of the current step show an error (drawn on every frame: it counts the errors, not
    /// the rows).
    public var stepErrorCount: Int {
        errors.keys.reduce(0) { $0 + (visibleKeySet.contains($1) ? 1 : 0) }
    }

    /// Whether the focused field takes typed text (so `?` types rather than asks for the keys).
    public var focusTakesText: Bool {
        guard case .field(let key) = focus, let field = definition(ofKey: key) else { return false }
        switch field.kind {
        case .text, .multilineText, .integer, .decimal, .date, .time, .dateTime, .location: return true
        case .photo, .audio, .file: return true
        // A choice over an entity list takes typed text as its search.
        case .singleChoice, .multipleChoice: return field.choicesFrom != nil
        default: return false
        }
    }

    /// Next: checks the current step and shows its problems at their fields with a count, staying
    /// there; Next again moves on anyway (a draft may hold anything; only completion requires a valid form).
    mutating func next() {
        // The step's fields alone, in their order: a step of a few fields is not held up by 30,000 answers on
        // another step (completion still checks the whole record).
        let issues = visibleKeys.flatMap { validator.validate(field: $0, in: evaluated) }
        errors = errors.filter { !visibleKeySet.contains($0.key) }
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
        case .multipleChoice where choices.indices.contains(index), .rank where choices.indices.contains(index):
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
            // Enter in a multiple choice over an entity list ticks or unticks the entity under the cursor.
            if case .field(let key) = focus, let field = definition(ofKey: key), field.kind == .multipleChoice, field.choicesFrom != nil {
                return edit(key, field, with: .enter)
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
        if canFocus(target) { focus = target }
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
        evaluate([key: value])
        attachPaths[key] = nil
        if errors[key] != nil {
            errors[key] = validator.validate(field: key, in: evaluated).first?.message
        }
    }

    /// Replaces the answers (after the session reverted or merged them), keeping the focus where it can.
    public mutating func reload(_ answers: [String: AnswerValue]) {
        let language = evaluated.language
        evaluated = FormState(logic: validator.logic, answers: answers, metadata: evaluated.metadata)
        evaluated.language = language
        rebuildRows()
        typed = [:]
        attachPaths = [:]
        if !canFocus(focus) { focus = firstFocus }
    }

    /// Moves the focus `step` (1 or -1) places along the Tab order, wrapping around.
    mutating func moveFocus(by step: Int) {
        focus = focus(from: focus, by: step) ?? visibleRows.lazy.compactMap(\.focus).first ?? buttonFocus.first ?? .complete
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
            if let next = focus(from: focus, by: 1, wrapping: false), case .field = next {
                focus = next
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

    /// Builds ``visibleRows`` (and the set of their keys) for the current step and answers.
    mutating func rebuildRows() {
        visibleRows = buildVisibleRows()
        var keys = Set<String>(minimumCapacity: visibleRows.count)
        for case .field(let key, _, _, _) in visibleRows { keys.insert(key) }
        visibleKeySet = keys
    }

    /// Applies edits to the evaluated answers, building the rows again only when the edits changed which
    /// fields are shown or which instances exist.
    mutating func evaluate(_ edits: [String: AnswerValue?]) {
        let shape = evaluated.shapeRevision
        evaluated.apply(edits)
        if evaluated.shapeRevision != shape { rebuildRows() }
    }

    /// Records a value locally and asks for it to be saved. A field showing an error shows the error it
    /// has now (a constraint's message included), or none.
    mutating func set(_ key: String, _ field: FieldDefinition, _ value: AnswerValue?, typedText: String? = nil) -> [SheetIntent] {
        evaluate([key: value])
        typed[key] = typedText
        if errors[key] != nil {
            errors[key] = validator.validate(field: key, in: evaluated).first?.message
        }
        return [.set(field: key, value: value)]
    }
}
