/// Validates a whole form's answers, skipping fields that are not relevant.
public struct FormValidator: Sendable {
    public let form: FormDefinition
    public let relevance: Relevance
    /// The form's fields by id, so finding one costs the same in a form of 5,000 fields as in one of 5.
    private let fieldsByID: [String: FieldDefinition]

    public init(form: FormDefinition) {
        self.form = form
        self.relevance = Relevance(form: form)
        self.fieldsByID = Dictionary(form.allFields.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// The field with `id`, like `FormDefinition.field(_:)` but without walking the form.
    public func field(_ id: String) -> FieldDefinition? {
        fieldsByID[id]
    }

    /// Every issue that stands in the way of completing the form with these answers.
    ///
    /// Answers to fields the form does not have are reported under their own id, so nothing
    /// is silently dropped.
    /// `verdicts` (from `precheck`) spares the pattern checks already made.
    public func validate(_ answers: [String: AnswerValue], verdicts: PatternVerdicts? = nil) -> ValidationReport {
        let relevant = relevance.relevantFields(for: answers)
        var issues: [FieldIssue] = []
        for field in form.allFields where relevant.contains(field.id) {
            issues += FieldValidator.issues(for: field, answer: answers[field.id], verdicts: verdicts)
        }
        for id in answers.keys.sorted() where field(id) == nil {
            issues.append(FieldIssue(fieldID: id, code: .unknownField, message: "The form \(form.id) has no field \"\(id)\"."))
        }
        return ValidationReport(issues: issues)
    }

    /// Issues of one field given all answers (none when the field is not relevant).
    public func validate(field id: String, in answers: [String: AnswerValue]) -> [FieldIssue] {
        guard let field = field(id) else {
            return [FieldIssue(fieldID: id, code: .unknownField, message: "The form \(form.id) has no field \"\(id)\".")]
        }
        guard relevance.isRelevant(id, for: answers) else { return [] }
        return FieldValidator.issues(for: field, answer: answers[id])
    }

    /// The answers a new record starts with: every field's default.
    public var defaults: [String: AnswerValue] {
        var answers: [String: AnswerValue] = [:]
        for field in form.allFields {
            if let value = field.defaultValue { answers[field.id] = value }
        }
        return answers
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
        for id in values.keys.sorted() {
            guard let value = values[id] else { continue }
            guard let field = field(id), field.kind.takesAnswer else {
                issues.append(FieldIssue(fieldID: id, code: .unknownField, message: "The form \(form.id) has no field \"\(id)\" that takes an answer."))
                continue
            }
            guard value.fits(field.kind) else {
                issues.append(FieldIssue(fieldID: id, code: .wrongType, message: "This answer is a \(value.tag), but the field expects \(FieldValidator.expectation(field.kind))."))
                continue
            }
            if case .text(let text) = value, let pattern = field.pattern, verdicts.check(text, pattern: pattern) == .tooExpensive {
                issues.append(FieldIssue(fieldID: id, code: .patternTooExpensive, message: PatternMatcher.tooExpensiveMessage))
            }
        }
        return (issues, verdicts)
    }
}
