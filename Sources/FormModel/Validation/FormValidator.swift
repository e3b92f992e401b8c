/// Validates a whole form's answers, skipping fields that are not relevant.
public struct FormValidator: Sendable {
    public let form: FormDefinition
    public let relevance: Relevance

    public init(form: FormDefinition) {
        self.form = form
        self.relevance = Relevance(form: form)
    }

    /// Every issue that stands in the way of completing the form with these answers.
    ///
    /// Answers to fields the form does not have are reported under their own id, so nothing
    /// is silently dropped.
    public func validate(_ answers: [String: AnswerValue]) -> ValidationReport {
        let relevant = relevance.relevantFields(for: answers)
        var issues: [FieldIssue] = []
        for field in form.allFields where relevant.contains(field.id) {
            issues += FieldValidator.issues(for: field, answer: answers[field.id])
        }
        for id in answers.keys.sorted() where form.field(id) == nil {
            issues.append(FieldIssue(fieldID: id, code: .unknownField, message: "The form \(form.id) has no field \"\(id)\"."))
        }
        return ValidationReport(issues: issues)
    }

    /// Issues of one field given all answers (none when the field is not relevant).
    public func validate(field id: String, in answers: [String: AnswerValue]) -> [FieldIssue] {
        guard let field = form.field(id) else {
            return [FieldIssue(fieldID: id, code: .unknownField, message: "The form \(form.id) has no field \"\(id)\".")]
        }
        guard relevance.relevantFields(for: answers).contains(id) else { return [] }
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
}
