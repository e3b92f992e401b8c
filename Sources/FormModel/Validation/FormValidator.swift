/// Validates a whole form's answers, skipping fields that are not relevant: each answer against its field's
/// kind and options and its `constraint`, choices against the `choiceFilter`, and each repeat's instance count.
/// Fields of repeat instances are checked per instance and reported under their key (`defects/<id>/severity`).
public struct FormValidator: Sendable {
    /// The form whose answers are checked.
    public let form: FormDefinition
    /// The form's expressions, parsed once and shared by every `FormState` the validator builds.
    public let logic: FormLogic
    /// Which fields are shown for given answers; a field that is not shown is not checked.
    public let relevance: Relevance
    /// Whether any field of the form has a `pattern` (most forms have none: `checkPatterns` then reads nothing).
    private let hasPatterns: Bool

    /// A validator for `form`, parsing its expressions once; keep it for every record of the form.
    public init(form: FormDefinition) {
        self.init(logic: FormLogic(form: form))
    }

    /// A validator for the form of `logic`, whose expressions are parsed already (a `FormState`'s).
    public init(logic: FormLogic) {
        self.form = logic.form
        self.logic = logic
        self.relevance = Relevance(logic: logic)
        self.hasPatterns = logic.fields.byID.values.contains { $0.pattern != nil }
    }

    /// The field with `id` at any depth, like `FormDefinition.field(_:)` but without walking the form.
    public func field(_ id: String) -> FieldDefinition? {
        logic.fields.byID[id]
    }

    /// The field a record key (`site`, `defects/<id>/severity`) refers to, when the key fits the form.
    public func field(forKey key: String) -> FieldDefinition? {
        logic.fields.definition(ofKey: key)
    }

    /// Every issue that stands in the way of completing the form with these answers.
    ///
    /// Answers to fields the form does not have are reported under their own id, so nothing
    /// is silently dropped.
    /// `verdicts` (from `precheck`) spares the pattern checks already made.
    public func validate(_ answers: [String: AnswerValue], verdicts: PatternVerdicts? = nil) -> ValidationReport {
        validate(FormState(logic: logic, answers: answers), verdicts: verdicts)
    }

    /// Every issue for an evaluated state (see `validate(_:verdicts:)`).
    public func validate(_ state: FormState, verdicts: PatternVerdicts? = nil) -> ValidationReport {
        var issues: [FieldIssue] = []
        // Depth first in form order; instances in their order. The definitions are read where they are, by
        // index: a definition copied is a retain and a release of each of its strings and arrays, and a
        // record of 250 answers walks 250 of them.
        func walk(_ fields: [FieldDefinition], prefix: String) {
            for index in fields.indices {
                let key = AnswerKey.key(fields[index].id, in: prefix)
                guard state.isRelevant(key) else { continue }
                if fields[index].kind == .repeat {
                    issues += countIssues(fields[index], key: key, prefix: prefix, state: state)
                    let children = fields[index].fields ?? []
                    for instance in state.instances.live(fields[index].id, in: prefix) { walk(children, prefix: instance.prefix) }
                    continue
                }
                issues += self.issues(for: fields[index], key: key, in: state, verdicts: verdicts)
            }
        }
        for page in form.pages { walk(page.fields, prefix: "") }
        // Answers the form does not take (unknown or computed fields), in key order: each key read once.
        var unknownKeys: [String] = []
        for key in state.answers.keys {
            if key == AnswerKey.entityChange, form.entity != nil { continue }
            // Most keys are answers to fields that take them: known from the field's flags, no definition copied.
            if let facts = logic.fields.facts(ofKey: key), !facts.isComputed { continue }
            let definition = field(forKey: key)
            guard definition == nil || (definition?.isComputed == true && !logic.kept.contains(definition?.id ?? "")) else { continue }
            if definition != nil, let path = AnswerKey(key), path.isInstanceMeta { continue }
            unknownKeys.append(key)
        }
        issues += unknownKeys.sorted().map(unknown)
        return ValidationReport(issues: issues)
    }

    /// Issues of one field given all answers (none when the field is not relevant).
    public func validate(field key: String, in answers: [String: AnswerValue]) -> [FieldIssue] {
        guard field(forKey: key) != nil else { return [unknown(key)] }
        guard relevance.isRelevant(key, for: answers) else { return [] }
        return validate(field: key, in: FormState(logic: logic, answers: answers))
    }

    /// Issues of the field at `key` in an evaluated state (none when it is not relevant).
    public func validate(field key: String, in state: FormState) -> [FieldIssue] {
        guard let field = field(forKey: key) else { return [unknown(key)] }
        guard state.isRelevant(key), field.kind != .repeat else { return [] }
        return issues(for: field, key: key, in: state, verdicts: nil)
    }

    func unknown(_ key: String) -> FieldIssue {
        if let field = field(forKey: key), field.isComputed {
            return FieldIssue(fieldID: key, code: .readOnly, message: "The field \"\(key)\" of form \(form.id) is computed from other answers; it takes no answer.")
        }
        return FieldIssue(fieldID: key, code: .unknownField, message: "The form \(form.id) has no field \"\(key)\".")
    }

    func issues(for field: FieldDefinition, key: String, in state: FormState, verdicts: PatternVerdicts?) -> [FieldIssue] {
        if field.isComputed { return [] }
        let answer = state.answers[key]
        var found = FieldValidator.issues(for: field, answer: answer, verdicts: verdicts).map {
            // The form's own messages in the state's language, showing answers.
            let own = $0.code == .patternMismatch ? field.patternMessage : $0.code == .required ? field.requiredMessage : nil
            return FieldIssue(fieldID: key, code: $0.code, message: own.map { state.text($0, at: key) } ?? $0.message)
        }
        guard found.isEmpty, let answer, !answer.isBlank else {
            // Required when a condition holds: checked like a relevance condition (a failure counts as false).
            if found.isEmpty, field.kind.takesAnswer, let condition = logic.requiredExpression[field.id], state.evaluate(condition, at: key).isTruthy {
                found.append(FieldIssue(fieldID: key, code: .required, message: field.requiredMessage.map { state.text($0, at: key) }
                    ?? (field.kind.hasChoices ? "Required: choose an option." : "Required: enter a value.")))
            }
            return found
        }
        // A sealed answer was checked on the device that sealed it (its value is unreadable here): it is present.
        if case .sealed = answer { return found }
        if let source = field.choicesFrom, state.entities != nil {
            // An entity's id: one of the list's, let through by the field's filter.
            let values: [String]
            switch answer {
            case .choice(let value): values = [value]
            case .choices(let list): values = list
            case .text(let value), .raw(let value): values = [value]
            default: values = []
            }
            if let unknown = values.first(where: { !state.offersEntity($0, at: key) }) {
                found.append(FieldIssue(fieldID: key, code: .notAChoice, message: logic.choiceFilter[field.id] == nil
                    ? "\"\(unknown)\" is not an entity of the list \(source.entityList) on this device; choose one of its entities (sync to get the latest)."
                    : "\"\(unknown)\" is not among the entities of the list \(source.entityList) that fit the other answers; choose one of those."))
            }
        }
        if logic.choiceFilter[field.id] != nil, field.choicesFrom == nil {
            let offered = state.choices(for: key)
            let values: [String]
            switch answer {
            case .choice(let value): values = [value]
            case .choices(let list): values = list
            default: values = []
            }
            if values.contains(where: { value in !offered.contains { $0.value == value } }) {
                let labels = offered.map { state.text($0.label, at: key) }.joined(separator: ", ")
                found.append(FieldIssue(fieldID: key, code: .notAChoice, message: offered.isEmpty
                    ? "No choice fits the other answers; change them or clear this field."
                    : "Choose from the options that fit the other answers: \(labels)."))
            }
        }
        if found.isEmpty, field.kind == .rank, case .choices(let list) = answer {
            // A rank orders every choice offered (those its filter lets through), each once.
            let missing = state.choices(for: key).filter { !list.contains($0.value) }
            if !missing.isEmpty {
                let labels = missing.map { state.text($0.label, at: key) }.joined(separator: ", ")
                found.append(FieldIssue(fieldID: key, code: .notAChoice, message: "Put every choice in order; still to place: \(labels)."))
            }
        }
        if let constraint = logic.constraint[field.id] {
            switch state.evaluate(constraint, at: key) {
            case .failure(let reason):
                found.append(FieldIssue(fieldID: key, code: .constraintNotChecked, message: "This answer could not be checked: \(reason)"))
            case let value where !value.isTruthy:
                found.append(FieldIssue(fieldID: key, code: .constraint, message: field.constraintMessage.map { state.text($0, at: key) } ?? "This answer does not meet the form's rule (\(field.constraint ?? "")); change it."))
            default: break
            }
        }
        return found
    }

    func countIssues(_ group: FieldDefinition, key: String, prefix: String, state: FormState) -> [FieldIssue] {
        let count = state.instances.live(group.id, in: prefix).count
        let noun = group.instanceNoun.text(in: state.language).lowercased()
        var low = group.minCount
        var high = group.maxCount
        if let source = group.countFrom, let wanted = countFrom(source, at: prefix, in: state) {
            low = wanted
            high = wanted
        }
        if let low, count < low {
            return [FieldIssue(fieldID: key, code: .tooFewInstances, message: "Add \(low - count) more \(noun)\(low - count == 1 ? "" : "s"): at least \(low) \(low == 1 ? "is" : "are") needed, \(count) \(count == 1 ? "is" : "are") there.")]
        }
        if let high, count > high {
            return [FieldIssue(fieldID: key, code: .tooManyInstances, message: "Remove \(count - high) \(noun)\(count - high == 1 ? "" : "s"): at most \(high) \(high == 1 ? "is" : "are") allowed, \(count) \(count == 1 ? "is" : "are") there.")]
        }
        return []
    }

    /// The number of instances `countFrom` asks for, when its field holds a whole number.
    func countFrom(_ source: String, at prefix: String, in state: FormState) -> Int? {
        guard case .number(let value) = state.evaluate(.name([source]), at: AnswerKey.key("_", in: prefix)) else { return nil }
        return value >= 0 && value < 100_000 ? Int(value) : nil
    }

    /// The answers a new record starts with: every top-level field's default, expressions (`today()`) evaluated now.
    /// Kept calculations (`FormLogic.kept`) are computed now and start with the record too.
    public var defaults: [String: AnswerValue] {
        let defaults = defaults(for: form.allFields, in: "")
        guard !logic.kept.isEmpty else { return defaults }
        return defaults.merging(FormState(logic: logic, answers: defaults).valuesToKeep) { given, _ in given }
    }

    /// The defaults of `fields` (one instance's, or the top level's) for the instance at `prefix`.
    public func defaults(for fields: [FieldDefinition], in prefix: String, answers: [String: AnswerValue] = [:]) -> [String: AnswerValue] {
        var result: [String: AnswerValue] = [:]
        var state: FormState?
        for field in fields where field.isEditable {
            let key = AnswerKey.key(field.id, in: prefix)
            if let value = field.defaultValue {
                result[key] = value
            } else if let expression = logic.defaultExpression[field.id] {
                if state == nil { state = FormState(logic: logic, answers: answers) }
                if let value = state?.evaluate(expression, at: key).answer(for: field.kind) { result[key] = value }
            }
        }
        return result
    }

    /// The cheap, bounded check of values on their own, meant to run before a write lock is taken.
    ///
    /// Checks each value against its field's `pattern` with bounded work (`PatternMatcher`), keeping the
    /// outcomes in the returned verdicts; `validate(_:verdicts:)` then runs no regular expression for these
    /// values. The issues are those that refuse a value whatever the record's state: a field the form does not
    /// have or that takes no answer, a value of the wrong type, and `patternTooExpensive`. A value that merely
    /// does not match is left to `validate`, as drafts may hold it.
    public func precheck(_ values: [String: AnswerValue]) -> (issues: [FieldIssue], verdicts: PatternVerdicts) {
        var verdicts = PatternVerdicts()
        var issues: [FieldIssue] = []
        for key in values.keys.sorted() {
            guard let value = values[key] else { continue }
            if let issue = draftIssue(key, value) {
                issues.append(issue)
                continue
            }
            if case .text(let text) = value, let pattern = field(forKey: key)?.pattern, verdicts.check(text, pattern: pattern) == .tooExpensive {
                issues.append(FieldIssue(fieldID: key, code: .patternTooExpensive, message: PatternMatcher.tooExpensiveMessage))
            }
        }
        return (issues, verdicts)
    }

    /// Checks every text answer in `values` whose field has a `pattern`, keeping the outcomes in `verdicts`
    /// (within their budget), so that `validate(_:verdicts:)` of these values runs no regular expression.
    public func checkPatterns(_ values: [String: AnswerValue], into verdicts: inout PatternVerdicts) {
        guard hasPatterns else { return }
        // In key order (the budget runs out at the same answer every time), sorting only the answers to check.
        var checks: [(key: String, text: String, pattern: String)] = []
        for (key, value) in values {
            guard case .text(let text) = value, let pattern = field(forKey: key)?.pattern else { continue }
            checks.append((key, text, pattern))
        }
        checks.sort { $0.key < $1.key }
        for check in checks { verdicts.check(check.text, pattern: check.pattern) }
    }

    /// What refuses `value` for `key` even in a draft: a key the form does not have, a field that takes no answer,
    /// a value of the wrong type (an instance's `@position` is a whole number, its `@removed` yes or no).
    ///
    /// Clearing (`value` nil) is refused for no well-formed key, also one this version does not take: a draft
    /// moved from an earlier version of the form clears the answers that version took and this one has no field
    /// for (they stay in the record's history).
    public func draftIssue(_ key: String, _ value: AnswerValue?) -> FieldIssue? {
        if value == nil, key == AnswerKey.entityChange || AnswerKey(key) != nil { return nil }
        if key == AnswerKey.entityChange, form.entity != nil {
            // What the record did to its entity: text the sync layer reads (and checks) as a `RecordEntityChange`.
            switch value {
            case nil, .text?: return nil
            case let value?:
                return FieldIssue(fieldID: key, code: .wrongType, message: "\(key) holds the record's entity change as text, not a \(value.tag).")
            }
        }
        guard let path = AnswerKey(key), let field = field(forKey: key) else {
            return FieldIssue(fieldID: key, code: .unknownField, message: "The form \(form.id) has no field \"\(key)\" that takes an answer.")
        }
        if path.isInstanceMeta {
            switch (path.field, value) {
            case (_, nil), (AnswerKey.position, .integer?), (AnswerKey.removed, .boolean?): return nil
            default:
                return FieldIssue(fieldID: key, code: .wrongType, message: "\(path.field) of an instance holds \(path.field == AnswerKey.position ? "a whole number" : "yes or no"), not a \(value?.tag ?? "null").")
            }
        }
        if logic.kept.contains(field.id) {
            // A kept calculation's stored value: what a calculation computes.
            switch value {
            case nil, .text?, .integer?, .decimal?, .boolean?, .date?, .dateTime?, .choices?: return nil
            case let value?:
                return FieldIssue(fieldID: key, code: .wrongType, message: "The kept value of the computed field \"\(key)\" is a \(value.tag); a calculation gives text, a number, yes or no, a date, a date and time or a list.")
            }
        }
        guard field.isEditable else {
            return field.isComputed ? unknown(key) : FieldIssue(fieldID: key, code: .unknownField, message: "The form \(form.id) has no field \"\(key)\" that takes an answer.")
        }
        if let value, !value.fits(field.kind) {
            return FieldIssue(fieldID: key, code: .wrongType, message: "This answer is a \(value.tag), but the field expects \(FieldValidator.expectation(field.kind)).")
        }
        return nil
    }
}
